"""JSON files that hold one array of objects (deepeval's ``json`` datasets, a table of the user's
own): each object with the line it starts on, checked as a JSON line is, so a bad value is
located the same way. A gzip file is read as what it holds.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from pathlib import Path

from ...errors import InputError
from ..jsonl import open_lines, parse_json_line
from ._common import Row, _article

HEAD_BYTES = 4096


def starts_with_array(path: Path) -> bool:
    """Whether the file's first character (after a byte order mark and blanks) is ``[``: one
    JSON array rather than JSON lines, told by the content, not the name."""
    try:
        with open_lines(path) as handle:
            head = handle.read(HEAD_BYTES)
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(f"cannot read the file: {error}", path=path, line=1) from None
    return head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")[:1] == "["


def json_array_rows(path: Path, dataset: str) -> Iterator[tuple[int, Row]]:
    """(line the object starts on, object) for each item of the file's JSON array."""
    text = _read_text(path)
    decoder = json.JSONDecoder()
    index = _skip_space(text, text.index("[") + 1)
    lines = _LineCounter(text)
    if text[index : index + 1] == "]":
        raise InputError("no records: the JSON array is empty", path=path)
    while True:
        line = lines.at(index)
        try:
            _, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError as error:
            raise InputError(f"invalid JSON ({error.msg})", path=path, line=error.lineno) from None
        item = parse_json_line(text[index:end], path, line)
        if not isinstance(item, dict):
            raise InputError(
                f"{_article(dataset)} {dataset} row must be a JSON object, got "
                f"{type(item).__name__}",
                path=path,
                line=line,
            )
        yield line, item
        index = _skip_space(text, end)
        following = text[index : index + 1]
        if following == "]":
            _refuse_trailing(text, index + 1, path, lines)
            return
        if following != ",":
            raise InputError(
                "invalid JSON (expected ',' or the end of the array after an object)",
                path=path,
                line=lines.at(index),
            )
        index = _skip_space(text, index + 1)


def _refuse_trailing(text: str, index: int, path: Path, lines: _LineCounter) -> None:
    after = _skip_space(text, index)
    if after < len(text):
        raise InputError(
            "invalid JSON (more after the end of the array)", path=path, line=lines.at(after)
        )


def _read_text(path: Path) -> str:
    try:
        with open_lines(path) as handle:
            raw = handle.read()
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(f"cannot read the file: {error}", path=path) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise InputError("not UTF-8 text", path=path, line=line) from None
    return text.removeprefix("\ufeff")


def _skip_space(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    return index


class _LineCounter:
    """Line numbers of increasing positions in one text, counted once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.position = 0
        self.line = 1

    def at(self, index: int) -> int:
        self.line += self.text.count("\n", self.position, index)
        self.position = index
        return self.line
