"""The run log: who ran what, with which settings, when, and how it ended.

``run.json`` holds the latest state of the run; ``run_log.jsonl`` gets one line per session
(start, then end), so a resumed run shows each of its sessions.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import re
import sys
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .. import __version__
from ..errors import InputError, RunError, describe_problem, describe_validation, field_path
from ..redact import public_command
from ._jsonl import JsonlWriter, parse_json_object

RunStatus = Literal["started", "success", "cancelled", "error"]
RunKind = Literal["bench", "judge", "generate", "robustness"]
RUN_FILE = "run.json"
# What each kind of run leaves in its directory besides run.json: how a directory whose
# run.json is gone is still known to hold a run.
RUN_MARKERS: dict[str, tuple[str, ...]] = {
    "bench": ("results.jsonl",),
    "judge": ("protocol.json", "valid_evaluations", "invalid_evaluations"),
    "generate": ("manifest.jsonl", "generation_failures.jsonl"),
}


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
    # per model: the replies of every session so far and what served them (see _served)
    served: dict[str, dict[str, Any]] = Field(default_factory=dict)
    error: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    # a shard's run (`--shard K/N`): index, count, and the items of all shards together
    shard: dict[str, int] | None = None
    # a run merged from shards: each shard's directory, shard, fingerprint, host and times
    merged_from: list[dict[str, Any]] | None = None


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


_TEMP_NAME = re.compile(r"^\.(.+)\.(\d+)\.tmp$")  # the file it stands for, the pid


def atomic_temp(path: Path) -> Path:
    """The temporary file ``path`` is written through before it is renamed into place."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def atomic_target(path: str) -> str:
    """The file a temporary file of :func:`atomic_temp` stands for (``path`` itself
    otherwise): an error about the temporary file names the file the user asked for."""
    folder, slash, name = path.rpartition("/")
    match = _TEMP_NAME.match(name)
    return f"{folder}{slash}{match.group(1)}" if match else path


def remove_stale_temps(folder: Path) -> list[Path]:
    """Remove the temporary files of :func:`atomic_temp` in ``folder`` (not below it) that a
    killed process left behind; a file whose process is still alive is left alone."""
    removed = []
    for path in sorted(folder.glob(".*.tmp")) if folder.is_dir() else []:
        match = _TEMP_NAME.match(path.name)
        if match and not _process_alive(int(match.group(2))):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # someone else's process, or not a pid this system can hold: keep it
    return True


def write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file and rename, so a reader never sees half a file."""
    tmp = atomic_temp(path)
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)  # left only when the write or the rename failed


def read_run_json(run_dir: Path) -> dict[str, Any] | None:
    """The run directory's run.json as an object (None when there is none); a file that
    cannot be read, is not JSON or not an object is an InputError naming it."""
    path = run_dir / RUN_FILE
    if not path.exists():
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except IsADirectoryError:
        raise InputError("is a directory, not a file", path=path) from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {error.start + 1})", path=path) from None
    except OSError as error:
        raise InputError(f"cannot read the file: {error.strerror}", path=path) from None
    return parse_json_object(text, path)


_State = TypeVar("_State", bound=BaseModel)


def read_state_file(path: Path, model: type[_State], what: str, wrong: str) -> _State | None:
    """A JSON file a run keeps (its protocol, its coverage report) as ``model``: None when
    the run has none; a file that cannot be read is a RunError saying it ``cannot read
    {what}``, one that is not a ``model`` names each bad field after ``path (wrong)``."""
    if not path.is_file():
        return None
    try:
        return model.model_validate_json(path.read_bytes())
    except OSError as error:
        raise RunError(f"{path}: cannot read {what}: {error.strerror}") from None
    except ValidationError as error:
        raise RunError(describe_validation(error, f"{path} ({wrong})")) from None


def read_run_log(run_dir: Path) -> RunLog | None:
    """run.json as a :class:`RunLog` (None when there is none), or a located InputError."""
    data = read_run_json(run_dir)
    if data is None:
        return None
    try:
        return RunLog.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        field = field_path(first["loc"]) or None
        raise InputError(describe_problem(first), path=run_dir / RUN_FILE, field=field) from None


def check_run_kind(
    run_dir: Path, kind: RunKind, *, option: str, needs_log: bool = True
) -> RunLog | None:
    """What a command that writes ``run_dir`` as a ``kind`` run checks before writing: the
    directory holds no run of another kind, and its run.json (which holds the settings a
    resumed run must match) is readable. A directory with a run's output but no run.json is
    refused when ``needs_log`` (the settings could not be checked). Returns the earlier log."""
    if not run_dir.is_dir():
        return None
    previous = read_run_log(run_dir)
    if previous is not None:
        if previous.kind != kind:
            raise RunError(
                f"{run_dir} holds a {previous.kind!r} run, not a {kind} run ({run_dir / RUN_FILE})",
                hint=f"give this {kind} run another {option}",
            )
        return previous
    for other, markers in RUN_MARKERS.items():
        found = [name for name in markers if (run_dir / name).exists()]
        if not found:
            continue
        if other != kind:
            raise RunError(
                f"{run_dir} holds the output of a {other!r} run ({run_dir / found[0]}), "
                f"not a {kind} run",
                hint=f"give this {kind} run another {option}",
            )
        if needs_log:
            raise RunError(
                f"{run_dir / RUN_FILE}: missing, but {run_dir / found[0]} holds an earlier "
                "run's output: its settings cannot be checked, so it is not resumed",
                hint=f"restore {RUN_FILE}, or give this run another {option}",
            )
    return None
