"""CSV files of the importers that read them (``aggrefact``, ``deepeval``, ``ragas``,
``table``): rows with a header, each named by the line it starts on (a quoted field may span
lines), one located error for a file that is not CSV of that shape; lists in cells.
"""

from __future__ import annotations

import ast
import csv
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ...errors import InputError, shown
from ..jsonl import check_input_file, decode_line, open_lines
from ._common import Row, _article

CSV_FIELD_LIMIT = 64 * 1024 * 1024


def csv_rows(path: Path, dataset: str) -> Iterator[tuple[int, Row]]:
    """(first line of the row, row) of a CSV file with a header; a quoted field may span lines,
    so a row is named by the line it starts on."""
    check_input_file(path, hint=f"SRC is the path of {_article(dataset)} {dataset} file")
    # a grounding document can be a whole web page: far above csv's default 128 KiB field limit
    csv.field_size_limit(max(csv.field_size_limit(), CSV_FIELD_LIMIT))
    start, found = 1, False
    try:
        with open_lines(path) as handle:
            # strict: a quoted field the file ends inside (a file cut short) is an error, not
            # a last row that silently keeps the rest of the file as its value
            rows = csv.reader(_text_lines(handle, path), strict=True)
            header = next(rows, None)
            if header is None:
                raise InputError("no records: the file is empty (expected a CSV header)", path=path)
            _check_header(header, path)
            start = rows.line_num + 1
            for values in rows:
                if any(v.strip() for v in values):
                    found = True
                    yield start, _csv_row(header, values, path, start)
                start = rows.line_num + 1
    except csv.Error as error:
        raise InputError(_csv_error(error), path=path, line=start) from None
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(f"not a readable CSV file: {error}", path=path, line=start) from None
    if not found:
        raise InputError("no records: the CSV file has a header and no row", path=path)


def _csv_error(error: csv.Error) -> str:
    if str(error) == "unexpected end of data":
        return (
            "not a readable CSV file: a quoted field of the row that starts on this line is "
            "never closed (the file ends inside it: was it cut short?)"
        )
    if str(error).endswith("expected after '\"'"):
        return (
            "not a readable CSV file: a quoted field's closing quote is followed by more text "
            "in the row that starts on this line (a quote inside a quoted field is written "
            'twice: "")'
        )
    return f"not a readable CSV file: {error}"


def _text_lines(handle: BinaryIO, path: Path) -> Iterator[str]:
    """The file's physical lines, each decoded on its own and keeping its line end (csv needs
    it), so that a byte that is not UTF-8 is named by its own line, as in JSON lines. Decoding
    the file in blocks named the row being parsed when a block failed, which can be hundreds
    of lines before the byte: a quoted field may hold line breaks."""
    number = 0
    for block in handle:  # ends at each \n
        # a bare \r ends a line too (old Mac files), as in a text file opened with newline="";
        # bytes.splitlines splits at \r, \n and \r\n only, never inside a UTF-8 character
        for raw in block.splitlines(keepends=True):
            number += 1
            yield decode_line(raw, path, number)  # also drops a byte order mark on line 1


def _check_header(header: list[str], path: Path) -> None:
    """Refuse a column named twice: each row becomes a dict by column name, in which the last
    of the two would silently win."""
    first: dict[str, int] = {}
    for column, name in enumerate(header, start=1):
        if name in first:
            raise InputError(
                f"the header names the column {shown(name)} twice (columns {first[name]} and "
                f"{column}); give each column a name of its own",
                path=path,
                line=1,
                field=name or None,
            )
        first[name] = column


def _csv_row(header: list[str], values: list[str], path: Path, line: int) -> Row:
    if len(values) != len(header):
        raise InputError(
            f"the row has {len(values)} values for the header's {len(header)} columns",
            path=path,
            line=line,
        )
    return dict(zip(header, values, strict=True))


def python_list(value: Any) -> list[Any] | None:
    """The list a CSV cell holds as Python's text of it (``['a', 'b']``, as ragas and pandas
    write a list), else None. ``literal_eval`` reads literals only: nothing in the cell is
    run."""
    if not isinstance(value, str) or not value.lstrip().startswith("["):
        return None
    try:
        parsed = ast.literal_eval(value.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return parsed if isinstance(parsed, list) else None


def list_cell(value: str) -> list[Any] | None:
    """The list a CSV cell holds as JSON text (``["a", "b"]``, with JSON's ``null``, ``true``)
    or as Python's text of it (``['a', 'b']``), else None."""
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return python_list(value)
    return parsed if isinstance(parsed, list) else None
