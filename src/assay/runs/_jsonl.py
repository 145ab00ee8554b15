"""Append-only JSONL files: each finished record is written and flushed at once, so an
interrupted run keeps everything finished, and a resumed run knows what to skip."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO

from pydantic import BaseModel

from ..data.jsonl import complete_line, json_problem, whole_record
from ..errors import InputError
from ..json_safe import model_json

_BLOCK = 1 << 16  # bytes read at a time when looking for the last line


def repair_partial_tail(path: Path) -> int:
    """Make the file end in a newline before it is appended to: a last line a crash left
    without its newline gets one when it is a whole record (:func:`whole_record`), and is cut
    when it was cut short. Returns the bytes cut."""
    if not path.exists():
        return 0
    size = path.stat().st_size
    if size == 0:
        return 0
    with path.open("rb+") as handle:
        tail = _tail_without_newline(handle, size)
        if tail is None:
            return 0
        start, line = tail
        if whole_record(line):
            handle.write(b"\n")  # the read left the position at the end
            return 0
        handle.truncate(start)
        return size - start


def _tail_without_newline(handle: BinaryIO, size: int) -> tuple[int, bytes] | None:
    """Where the file's last line starts and its bytes, when it lacks its newline."""
    start = _last_line_start(handle, size)
    if start == size:
        return None
    handle.seek(start)
    return start, handle.read()


def _last_line_start(handle: BinaryIO, size: int) -> int:
    """Where the file's last line starts (``size`` when it ends in a newline), read backwards
    a block at a time: a shard holds up to 256 MB."""
    end = size
    while end > 0:
        begin = max(0, end - _BLOCK)
        handle.seek(begin)
        block = handle.read(end - begin)
        if end == size and block.endswith(b"\n"):
            return size
        newline = block.rfind(b"\n")
        if newline >= 0:
            return begin + newline + 1
        end = begin
    return 0


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The complete records of an append-only file (a partial last line is ignored); a line
    that is not a JSON object is an InputError naming the file and the line."""
    for _, data in read_numbered_jsonl(path):
        yield data


def read_numbered_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`read_jsonl` with each record's line number in the file (blank lines count)."""
    for number, line in read_numbered_lines(path):
        yield number, parse_record_line(line, path, number)


def parse_record_line(line: str, path: Path, number: int) -> dict[str, Any]:
    """One line of a file assay wrote, as an object; anything else is a located InputError."""
    return parse_json_object(line, path, number)


def parse_json_object(text: str, path: Path, line: int | None = None) -> dict[str, Any]:
    """JSON text assay wrote (one line of a file, numbered ``line``, or a whole file) as an
    object; anything else is an InputError naming the file and the line."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        where = error.lineno if line is None else line
        raise InputError(f"invalid JSON ({json_problem(error)})", path=path, line=where) from None
    except (RecursionError, ValueError) as error:
        raise InputError(f"unreadable JSON ({error})", path=path, line=line) from None
    if not isinstance(data, dict):
        kind = "an array" if isinstance(data, list) else type(data).__name__
        raise InputError(f"expected a JSON object, got {kind}", path=path, line=line)
    return data


def read_jsonl_lines(path: Path) -> Iterator[str]:
    """The lines :func:`read_jsonl` parses, as text (without the newline)."""
    for _, line in read_numbered_lines(path):
        yield line


def read_numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each complete, non-blank line; numbers count every line of
    the file (blank ones too), as an editor does. A last line without its newline is read when
    it is a whole record (:func:`whole_record`) and left out when a crash cut it short:
    :func:`partial_tail` tells whether there is one."""
    if not path.exists():
        return
    if path.is_dir():
        raise InputError("is a directory, not a file", path=path)
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip() or not complete_line(raw):
                continue
            try:
                yield number, raw.removesuffix(b"\n").decode("utf-8")
            except UnicodeDecodeError as error:
                raise InputError(
                    f"not UTF-8 text (byte {error.start + 1} of the line)", path=path, line=number
                ) from None


def partial_tail(path: Path) -> bool:
    """Whether the file ends in a line a crash cut short (what readers leave out); a whole
    record without its newline is not one."""
    size = path.stat().st_size if path.is_file() else 0
    if size == 0:
        return False
    with path.open("rb") as handle:
        tail = _tail_without_newline(handle, size)
    return tail is not None and not whole_record(tail[1])


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
