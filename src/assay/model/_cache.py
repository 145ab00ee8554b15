"""On-disk response cache (SQLite).

The key is a SHA-256 over a canonical JSON of everything that decides a reply: provider, model,
the backend's identity (base URL, model file), messages, every generation parameter, and the
sample index. Only successes are stored: a failure is retried on the next run.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._types import ChatMessage, Completion, GenerateConfig

DEFAULT_CACHE_DIR_ENV = "ASSAY_CACHE_DIR"


def default_cache_path() -> Path:
    base = os.environ.get(DEFAULT_CACHE_DIR_ENV)
    root = Path(base) if base else Path.home() / ".cache" / "assay"
    return root / "responses.sqlite"


def cache_key(
    *,
    backend_name: str,
    identity: dict[str, str],
    messages: Sequence[ChatMessage],
    config: GenerateConfig,
    sample_index: int,
) -> str:
    payload: dict[str, Any] = {
        "v": 1,
        "backend": backend_name,
        "identity": identity,
        "messages": [m.model_dump() for m in messages],
        "config": config.model_dump(mode="json", by_alias=True),
        "sample_index": sample_index,
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """A key -> Completion store. Writes are committed in small batches for throughput."""

    def __init__(self, path: Path, *, commit_every: int = 64) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._pending = 0
        self._commit_every = commit_every
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, completion TEXT NOT NULL)"
        )
        self._db.execute("BEGIN")

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._db.execute(
                "SELECT completion FROM responses WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        return Completion.model_validate_json(row[0])

    def put(self, key: str, completion: Completion) -> None:
        stored = completion.model_copy(update={"cached": False}).model_dump_json()
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, completion) VALUES (?, ?)", (key, stored)
            )
            self._pending += 1
            if self._pending >= self._commit_every:
                self._commit_locked()

    def flush(self) -> None:
        with self._lock:
            self._commit_locked()

    def _commit_locked(self) -> None:
        self._db.execute("COMMIT")
        self._db.execute("BEGIN")
        self._pending = 0

    def __len__(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            self._db.execute("COMMIT")
            self._db.close()
