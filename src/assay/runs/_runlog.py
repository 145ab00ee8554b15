"""The run log: who ran what, with which settings, when, and how it ended.

``run.json`` holds the latest state of the run; ``run_log.jsonl`` gets one line per session
(start, then end), so a resumed run shows each of its sessions.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .. import __version__
from ..redact import public_command
from ._jsonl import JsonlWriter

RunStatus = Literal["started", "success", "cancelled", "error"]


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


class RunLog(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    kind: str
    status: RunStatus = "started"
    assay_version: str = __version__
    python: str = Field(default_factory=lambda: sys.version.split()[0])
    platform: str = Field(default_factory=platform.platform)
    # URLs on the command line (--base-url) are stored without their credentials.
    command: list[str] = Field(default_factory=lambda: public_command(sys.argv))
    started_at: str = Field(default_factory=utc_now)
    ended_at: str | None = None
    fingerprint: str | None = None
    models: dict[str, dict[str, str]] = Field(default_factory=dict)
    decoding: dict[str, Any] = Field(default_factory=dict)
    tool_access: str = "none"
    sample_count: int = 0
    finished_count: int = 0
    usage: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)


class RunLogger:
    """Writes run.json atomically and appends a line per session event to run_log.jsonl."""

    def __init__(self, run_dir: Path, log: RunLog) -> None:
        self.run_dir = run_dir
        self.log = log
        run_dir.mkdir(parents=True, exist_ok=True)
        self._events = JsonlWriter(run_dir / "run_log.jsonl")
        self._write("start")

    def finish(self, status: RunStatus, *, error: str | None = None, **updates: Any) -> None:
        self.log = self.log.model_copy(
            update={"status": status, "ended_at": utc_now(), "error": error, **updates}
        )
        self._write("end")
        self._events.close()

    def update(self, **updates: Any) -> None:
        self.log = self.log.model_copy(update=updates)
        write_atomic(self.run_dir / "run.json", self.log.model_dump_json(indent=2))

    def _write(self, event: str) -> None:
        write_atomic(self.run_dir / "run.json", self.log.model_dump_json(indent=2))
        self._events.append({"event": event, "at": utc_now(), **self.log.model_dump(mode="json")})


def write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file and rename, so a reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)  # left only when the write or the rename failed
