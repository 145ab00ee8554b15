"""Reading JSONL input files with located errors.

Every way a data file can be wrong ends in one :class:`InputError` naming the file, the line
and, where there is one, the field; never in an internal error or a crash mid-run:

- a directory, a missing file, an empty file;
- a gzip file is read as what it holds (by its magic bytes, whatever its name); a corrupt
  one is refused;
- bytes that are not UTF-8; a line that is not JSON, or not a JSON object;
- JSON that parses but cannot be processed safely: an integer of more digits than Python
  converts (4,300), nesting deeper than :data:`MAX_DEPTH`, ``NaN``/``Infinity`` (not JSON),
  a lone UTF-16 surrogate (``"\\ud800"``: no UTF-8 file or archive could hold it);
- a key given twice in one object (``{"question_id": "Q1", "question_id": "Q2"}``): json
  would keep the last value and say nothing.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, cast

from ..errors import InputError

#: Nesting levels an input object may have (records and questions need fewer than ten).
MAX_DEPTH = 64

_GZIP_MAGIC = b"\x1f\x8b"
# a key followed by a value json cannot take (an integer too long to convert, NaN or
# Infinity): names the field of that error
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def whole_record(raw: bytes | str) -> bool:
    """Whether a last line without its newline holds a whole record (a JSON object): a
    process killed after writing a line and before its newline leaves one. A line cut short
    never does: the closing brace of the object is its last character."""
    try:
        return isinstance(json.loads(raw), dict)
    except (ValueError, RecursionError):  # not JSON (a UnicodeDecodeError is a ValueError)
        return False


def complete_line(raw: bytes | str) -> bool:
    """Whether an append-only file's line is one readers take: it ends in its newline, or it
    is the last line and holds a whole record (:func:`whole_record`); a line a crash cut
    short is left out (the rerun redoes its work)."""
    if isinstance(raw, bytes):
        return raw.endswith(b"\n") or whole_record(raw)
    return raw.endswith("\n") or whole_record(raw)


def check_input_file(path: Path, *, hint: str | None = None) -> None:
    """A clear error for a path that is not a readable file."""
    if path.is_dir():
        raise InputError(
            "is a directory, not a file", path=path, hint=hint or "give a JSONL file inside it"
        )
    if not path.is_file():
        raise InputError("file not found", path=path, hint=hint)


def open_lines(path: Path) -> BinaryIO:
    """``path`` opened for reading bytes; a gzip file is opened through gzip."""
    check_input_file(path)
    with path.open("rb") as probe:
        compressed = probe.read(2) == _GZIP_MAGIC
    if compressed:
        return cast(BinaryIO, gzip.GzipFile(path, "rb"))
    return path.open("rb")


def iter_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """``(line number, raw line)`` of a plain or gzip file; a corrupt gzip file is refused."""
    number = 0
    try:
        with open_lines(path) as handle:
            for number, raw in enumerate(handle, start=1):
                yield number, raw
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(f"cannot read the file: {error}", path=path, line=number + 1) from None


def decode_line(raw: bytes, path: Path, number: int) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            f"not UTF-8 text (byte {error.start + 1} of the line)", path=path, line=number
        ) from None
    return text.removeprefix("\ufeff") if number == 1 else text


def iter_json_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line; one InputError naming file, line and
    field for anything that is not a safe JSON object, and for a file with no object at all."""
    found = False
    for number, raw in iter_lines(path):
        line = decode_line(raw, path, number)
        if line.strip():
            found = True
            yield number, parse_object_line(line, path, number)
    if not found:
        raise InputError("the file is empty (no JSON object in it)", path=path)


def parse_object_line(line: str, path: Path | str, number: int) -> dict[str, Any]:
    data = parse_json_line(line, path, number)
    if not isinstance(data, dict):
        # a whole file written by json.dump(records, f) is one array on line 1
        hint = (
            f"the file looks like one JSON array; {_ONE_OBJECT_PER_LINE}"
            if number == 1 and isinstance(data, list)
            else None
        )
        raise InputError(
            f"expected a JSON object, got {_json_type(data)}", path=path, line=number, hint=hint
        )
    return data


def parse_json_line(line: str, path: Path | str, number: int) -> Any:
    """One line of JSON, checked for what would break a run later (see the module doc)."""
    try:
        data = json.loads(line, parse_constant=_refuse_constant, object_pairs_hook=_unique_keys)
    except _DuplicateKey as error:
        raise InputError(
            "the key is given twice in one object (JSON would keep only the last value)",
            path=path,
            line=number,
            field=str(error),
        ) from None
    except json.JSONDecodeError as error:
        raise InputError(
            f"invalid JSON ({json_problem(error)})",
            path=path,
            line=number,
            hint=_shape_hint(line, path, number),
        ) from None
    except RecursionError:
        raise InputError(
            f"nested too deeply (more than {MAX_DEPTH} levels)", path=path, line=number
        ) from None
    except ValueError as error:  # an integer longer than Python converts, or NaN/Infinity
        raise InputError(
            _value_problem(error), path=path, line=number, field=_unreadable_field(line)
        ) from None
    check_parsed(
        data,
        path,
        number,
        surrogates=bool(_ESCAPED_SURROGATE.search(line)),
        depth=may_nest_too_deep(line),
    )
    return data


def check_parsed(
    data: Any, path: Path | str, number: int, *, surrogates: bool = True, depth: bool = True
) -> None:
    """Refuse parsed data nested deeper than MAX_DEPTH or holding a lone surrogate (from JSON
    or YAML alike); ``surrogates=False`` and ``depth=False`` skip a walk the text rules out."""
    if depth and (deep := too_deep(data)) is not None:
        raise InputError(
            f"nested too deeply (more than {MAX_DEPTH} levels)",
            path=path,
            line=number,
            field=deep or None,
        )
    if surrogates and (where := _lone_surrogate(data)) is not None:
        raise InputError(
            "holds a lone UTF-16 surrogate (an escape like \\ud800 without its pair): "
            "not text any file can store",
            path=path,
            line=number,
            field=where or None,
        )


_ONE_OBJECT_PER_LINE = "assay reads JSON Lines: each record one JSON object on a line of its own"


def _shape_hint(line: str, path: Path | str, number: int) -> str | None:
    """What a file that is not JSON Lines most likely is, from its first bad line: one JSON
    array, a pretty-printed object spread over lines, or a CSV/TSV table."""
    text = line.strip()
    if number == 1 and text.startswith("["):
        return f"the file looks like one JSON array; {_ONE_OBJECT_PER_LINE}"
    if text in ("{", "}", "},") or (text.startswith('"') and text.endswith((",", "{", "["))):
        return f"a record spreads over several lines (pretty-printed JSON); {_ONE_OBJECT_PER_LINE}"
    if number == 1 and (
        Path(str(path)).suffix.lower() in (".csv", ".tsv") or not text.startswith("{")
    ):
        return (
            f"the file looks like a table (CSV or TSV), not JSON; {_ONE_OBJECT_PER_LINE}, "
            "its fields named as the docs list them"
        )
    return None


def json_problem(error: json.JSONDecodeError) -> str:
    """``Unterminated string starting at column 5``: json's message and where (its own
    messages may end in "at", which must not be doubled)."""
    return f"{error.msg.removesuffix(' at')} at column {error.colno}"


class _NotJson(ValueError):
    pass


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return data


def _refuse_constant(name: str) -> Any:
    raise _NotJson(name)


def _value_problem(error: ValueError) -> str:
    if isinstance(error, _NotJson):
        return f"{error} is not a JSON number (write null, or a number)"
    return "an integer with more digits than can be read (4,300 at most)"


class _Unreadable:
    """Stands in for a value json cannot give (NaN, a 5,000-digit integer) in a second parse
    whose only purpose is to find where that value sits."""


def _unreadable_int(digits: str) -> Any:
    try:
        return int(digits)
    except ValueError:
        return _Unreadable()


def _unreadable_field(line: str) -> str | None:
    """The full path (``meta.w``, ``scores[2]``) of the first NaN, infinity or overlong
    integer in ``line``."""
    try:
        data = json.loads(line, parse_constant=lambda _: _Unreadable(), parse_int=_unreadable_int)
    except (ValueError, RecursionError):  # the first parse got past both; kept for safety
        return None
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, _Unreadable):
            return path or None
        stack.extend(reversed(list(_children(node, path))))
    return None


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _children(node: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield (f"{path}.{key}" if path else str(key)), value
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield f"{path}[{index}]", value


def may_nest_too_deep(text: str) -> bool:
    """Whether JSON ``text`` could hold anything deeper than MAX_DEPTH: nesting never exceeds
    the count of opening brackets, so most texts need no :func:`too_deep` walk."""
    return text.count("{") + text.count("[") > MAX_DEPTH


def too_deep(data: Any) -> str | None:
    """The path of the first container nested deeper than MAX_DEPTH, or None."""
    stack: list[tuple[Any, str, int]] = [(data, "", 1)]
    while stack:
        node, path, depth = stack.pop()
        if not isinstance(node, dict | list):
            continue
        if depth > MAX_DEPTH:
            return path if len(path) <= 60 else path[:60] + "..."
        stack.extend((child, child_path, depth + 1) for child_path, child in _children(node, path))
    return None


def _lone_surrogate(data: Any) -> str | None:
    """The path of the first key or string holding a lone surrogate, or None."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, str):
            if not _encodable(node):
                return path
            continue
        if isinstance(node, dict) and not all(_encodable(str(key)) for key in node):
            return path
        stack.extend((child, child_path) for child_path, child in _children(node, path))
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
