"""SIGTERM stops a command the way Ctrl-C does.

Batch schedulers, container runtimes and ``kill`` ask a process to stop with SIGTERM, which
Python's default leaves to the operating system: the process dies where it stands, its run
log still says "started" and nothing says why. While a command runs, :func:`sigterm_as_interrupt`
turns SIGTERM into the interrupt Ctrl-C gives: the run's calls are cancelled, what finished
is kept, the run log says "cancelled", and the command exits 143 (128 + SIGTERM) with one
line. A second SIGTERM, like a second Ctrl-C, stops at once.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any


class Terminated(KeyboardInterrupt):
    """Raised for a SIGTERM where Ctrl-C would raise KeyboardInterrupt."""


_received = False


def sigterm_received() -> bool:
    """Whether the interrupt that stopped the command was a SIGTERM."""
    return _received


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM as Ctrl-C inside the block; the handler before it is put back after it (a
    command run in-process, as the tests and notebooks do, leaves its host as it was)."""
    global _received
    if threading.current_thread() is not threading.main_thread():  # Python's rule
        yield
        return
    _received = False
    before = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    global _received
    _received = True
    on_interrupt: Any = signal.getsignal(signal.SIGINT)
    if callable(on_interrupt) and on_interrupt is not signal.default_int_handler:
        # asyncio's runner: it cancels the run's main task, the clean path Ctrl-C takes
        on_interrupt(signal.SIGINT, frame)
        return
    raise Terminated
