"""Run directories: append-only results, resumption, run logs and fingerprints."""

from ._execute import run_all
from ._fingerprint import canonical_json, fingerprint
from ._jsonl import JsonlWriter, read_jsonl, read_jsonl_lines, repair_partial_tail
from ._lock import LOCK_FILE, RunDirLock
from ._paths import inside, safe_filename
from ._progress import Progress
from ._runlog import RunLog, RunLogger, RunStatus, utc_now, write_atomic

__all__ = [
    "LOCK_FILE",
    "JsonlWriter",
    "Progress",
    "RunDirLock",
    "RunLog",
    "RunLogger",
    "RunStatus",
    "canonical_json",
    "fingerprint",
    "inside",
    "read_jsonl",
    "read_jsonl_lines",
    "repair_partial_tail",
    "run_all",
    "safe_filename",
    "utc_now",
    "write_atomic",
]
