"""Progress of a long run: a bar on a terminal, a status line every few seconds in a log.

Long runs are usually logged to a file (``assay bench run ... 2> run.log``), where a bar that
redraws itself shows nothing useful. When stderr is not a terminal, :class:`Progress` prints one
plain line every ``interval_s`` seconds instead: done/total, rate, ETA and failures (and, in a
batch session, how many items wait on batch answers: taken up, not finished).
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


class Progress:
    """Counts finished, failed and waiting items; shows them as a bar or as periodic log
    lines."""

    def __init__(
        self,
        total: int,
        description: str,
        *,
        show: bool | None = None,
        stream: TextIO | None = None,
        interval_s: float = 5.0,
        unit: str = "item",
    ) -> None:
        self.total = total
        self.description = description
        self.done = 0
        self.failed = 0
        self.waiting = 0  # taken up, but waiting on answers written to a batch file
        self._stream = stream if stream is not None else sys.stderr
        self._interval_s = interval_s
        self._unit = unit
        self._start = time.monotonic()
        self._last_line = self._start
        enabled = show if show is not None else True
        self._bar = self._terminal_bar() if enabled and self._stream.isatty() else None
        self._log = enabled and self._bar is None and total > 0

    def _terminal_bar(self) -> Any:
        from tqdm import tqdm

        return tqdm(
            total=self.total,
            desc=self.description,
            unit=self._unit,
            file=self._stream,
            smoothing=0.1,
        )

    def update(self, n: int = 1, *, failed: int = 0, waiting: int = 0) -> None:
        self.done += n
        self.failed += failed
        self.waiting += waiting
        if self._bar is not None:
            self._bar.update(n)
            if failed or waiting:
                self._bar.set_postfix(self._counts(), refresh=False)
            return
        now = time.monotonic()
        if self._log and now - self._last_line >= self._interval_s:
            self._last_line = now
            self._print_line(now)

    def status_line(self, now: float | None = None) -> str:
        elapsed = (now if now is not None else time.monotonic()) - self._start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = self.total - self.done
        eta = _duration(left / rate) if rate > 0 else "?"
        percent = 100.0 * self.done / self.total if self.total else 100.0
        waiting = f", waiting on batch answers {self.waiting}" if self.waiting else ""
        return (
            f"{self.description}: {self.done}/{self.total} ({percent:.0f}%), "
            f"{rate:.2f} {self._unit}/s, ETA {eta}, failed {self.failed}{waiting}"
        )

    def _counts(self) -> dict[str, int]:
        """The bar's postfix: failures, and items waiting on batch answers when there are."""
        counts = {"failed": self.failed} if self.failed else {}
        if self.waiting:
            counts["waiting"] = self.waiting
        return counts

    def _print_line(self, now: float) -> None:
        print(self.status_line(now), file=self._stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        elif self._log and self.done:
            self._print_line(time.monotonic())

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"
