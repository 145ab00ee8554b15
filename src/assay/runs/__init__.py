"""Run directories: append-only results, resumption, run logs and fingerprints."""

from ._execute import run_all
from ._fingerprint import canonical_json, fingerprint
from ._jsonl import (
    JsonlWriter,
    parse_record_line,
    partial_tail,
    read_jsonl,
    read_jsonl_lines,
    read_numbered_jsonl,
    read_numbered_lines,
    repair_partial_tail,
)
from ._lock import LOCK_FILE, RunDirLock, check_not_being_written
from ._paths import inside, safe_filename
from ._progress import Progress
from ._runlog import (
    RUN_FILE,
    RunKind,
    RunLog,
    RunLogger,
    RunStatus,
    atomic_target,
    atomic_temp,
    check_run_kind,
    read_run_json,
    read_run_log,
    read_state_file,
    remove_stale_temps,
    utc_now,
    write_atomic,
)
from ._served import NOT_REPORTED, served_identity, served_warnings

__all__ = [
    "LOCK_FILE",
    "NOT_REPORTED",
    "RUN_FILE",
    "JsonlWriter",
    "Progress",
    "RunDirLock",
    "RunKind",
    "RunLog",
    "RunLogger",
    "RunStatus",
    "atomic_target",
    "atomic_temp",
    "canonical_json",
    "check_not_being_written",
    "check_run_kind",
    "fingerprint",
    "inside",
    "parse_record_line",
    "partial_tail",
    "read_jsonl",
    "read_jsonl_lines",
    "read_numbered_jsonl",
    "read_numbered_lines",
    "read_run_json",
    "read_run_log",
    "read_state_file",
    "remove_stale_temps",
    "repair_partial_tail",
    "run_all",
    "safe_filename",
    "served_identity",
    "served_warnings",
    "utc_now",
    "write_atomic",
]
