"""This repository's ``src`` as it was at a revision, for benchmarks that run an earlier
version beside this tree."""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def source_at(revision: str, into: Path) -> Path:
    """``src`` at ``revision`` (``git archive``), unpacked under ``into``; returns its path."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", revision, "src"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"
