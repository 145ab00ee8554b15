"""Reading JSONL input files with located errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import InputError


def iter_json_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line; one InputError naming file and line
    for text that is not UTF-8, a line that is not JSON, or JSON that is not an object."""
    try:
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    yield number, _object(line, path, number)
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text: {error}", path=path) from None


def _object(line: str, path: Path, number: int) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as error:
        raise InputError(f"not valid JSON: {error.msg}", path=path, line=number) from None
    if not isinstance(data, dict):
        raise InputError("expected a JSON object", path=path, line=number)
    return data
