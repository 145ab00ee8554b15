"""What the importer tests read back from the CLI: its one error line, the lines it wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The error line the CLI printed: no traceback, at most a hint after it."""
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 or lines[1].startswith("  hint:"), captured.err
    return lines[0]


def records(path: Path) -> list[dict[str, Any]]:
    """Each line of a JSON lines file the CLI wrote."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
