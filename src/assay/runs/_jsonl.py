"""Append-only JSONL files: each finished record is written and flushed at once, so an
interrupted run keeps everything finished, and a resumed run knows what to skip."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import BaseModel

from ..json_safe import model_json


def repair_partial_tail(path: Path) -> int:
    """Cut a last line that a crash left unfinished (no trailing newline). Returns bytes cut."""
    if not path.exists():
        return 0
    size = path.stat().st_size
    if size == 0:
        return 0
    with path.open("rb+") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return 0
        data = path.read_bytes()
        keep = data.rfind(b"\n") + 1
        handle.truncate(keep)
        return size - keep


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The complete records of an append-only file (a partial last line is ignored)."""
    for line in read_jsonl_lines(path):
        yield json.loads(line)


def read_jsonl_lines(path: Path) -> Iterator[str]:
    """The lines :func:`read_jsonl` parses, as text (without the newline)."""
    if not path.exists():
        return
    with path.open("r", encoding="utf-8") as handle:
        for line in handle:
            if line.endswith("\n") and line.strip():
                yield line[:-1]


class JsonlWriter:
    """Appends records and flushes each one; safe to reopen on a file from an earlier run."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        repair_partial_tail(path)
        self.path = path
        self._handle = path.open("a", encoding="utf-8")

    def append(self, record: BaseModel | dict[str, Any]) -> None:
        if isinstance(record, BaseModel):
            line = model_json(record)
        else:
            line = json.dumps(record, ensure_ascii=False, sort_keys=True)
            try:
                line.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate: escape, so the line can be read back
                line = json.dumps(record, ensure_ascii=True, sort_keys=True)
        self.append_line(line)

    def append_line(self, line: str) -> None:
        """Append one line that is already a record's JSON (made by :meth:`append`'s rules)."""
        self._handle.write(line + "\n")
        self._handle.flush()

    def append_lines(self, lines: list[str]) -> None:
        """Append lines made by :meth:`append`'s rules and flush once: for a batch finished as
        a whole (a Ray batch), where a crash mid-way loses only that batch, which reruns."""
        if lines:
            self._handle.write("\n".join(lines) + "\n")
            self._handle.flush()

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
