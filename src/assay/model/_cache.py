"""On-disk response cache (SQLite).

The key is a SHA-256 over a canonical JSON of everything that decides a reply: provider, model,
the backend's identity (base URL, model file), messages, every generation parameter, and the
sample index. Only successes are stored as replies: a failure is retried on the next run.

A second table holds the errors imported from batch output files (``assay batch import``), under
the same keys: a batch run delivers each one once, as a typed call failure, and the run after
it writes that call into a new batch file (the batch form of a retry).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from ..errors import ConfigError
from ..json_safe import load_model, model_json
from ._types import CallFailure, ChatMessage, Completion, GenerateConfig

DEFAULT_CACHE_DIR_ENV = "ASSAY_CACHE_DIR"


def default_cache_path() -> Path:
    """``$ASSAY_CACHE_DIR``, else ``$XDG_CACHE_HOME/assay`` (the freedesktop convention, which
    sandboxes and CI images set to keep caches apart), else ``~/.cache/assay``."""
    base = os.environ.get(DEFAULT_CACHE_DIR_ENV)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if base:
        root = Path(base)
    elif xdg and Path(xdg).is_absolute():  # the spec says a relative value is to be ignored
        root = Path(xdg) / "assay"
    else:
        root = Path.home() / ".cache" / "assay"
    return root / "responses.sqlite"


def cache_key(
    *,
    backend_name: str,
    identity: dict[str, str],
    messages: Sequence[ChatMessage],
    config: GenerateConfig,
    sample_index: int,
) -> str:
    settings = config.model_dump(mode="json", by_alias=True)
    if not settings["logprob_tokens"]:  # keys made before this setting existed stay valid
        del settings["logprob_tokens"]
    payload: dict[str, Any] = {
        "v": 1,
        "backend": backend_name,
        "identity": identity,
        "messages": [m.model_dump() for m in messages],
        "config": settings,
        "sample_index": sample_index,
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # surrogatepass: a prompt quoting a model's lone surrogate still has a key (other text
    # encodes as plain UTF-8, so every existing key stays the same)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


class ResponseCache:
    """A key -> Completion store.

    Writes are buffered and committed in short batches (every ``commit_every`` puts or
    ``commit_interval_s`` seconds, and on :meth:`flush`): transactions stay short, so other
    processes sharing the file are never locked out for long. Within one process, use
    :meth:`shared` so every model on the same file shares one connection and one buffer.
    """

    _shared: ClassVar[dict[Path, ResponseCache]] = {}
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self, path: Path, *, commit_every: int = 64, commit_interval_s: float = 1.0
    ) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._pending: dict[str, str] = {}
        self._pending_failures: dict[str, str] = {}
        self._commit_every = commit_every
        self._commit_interval_s = commit_interval_s
        self._last_commit = time.monotonic()
        if path.is_dir():
            raise ConfigError(f"{path}: is a directory, not a response cache file")
        db = sqlite3.connect(str(path), check_same_thread=False, timeout=_BUSY_TIMEOUT_S)
        try:
            _when_unlocked(lambda: _prepare(db))
        except sqlite3.DatabaseError as error:  # another kind of file under the cache's name
            db.close()
            raise ConfigError(
                f"{path}: not a response cache (an SQLite database): {error}",
                hint="give --cache-path a new file name, or the cache file assay wrote",
            ) from None
        self._db: sqlite3.Connection | None = db

    @classmethod
    def shared(cls, path: Path) -> ResponseCache:
        """The process-wide cache object for ``path`` (created on first use)."""
        resolved = path.expanduser().resolve()
        with cls._shared_lock:
            cache = cls._shared.get(resolved)
            if cache is None or cache._db is None:
                cache = cls._shared[resolved] = cls(resolved)
            return cache

    def get(self, key: str) -> Completion | None:
        with self._lock:
            stored = self._pending.get(key)
            if stored is None:
                row = (
                    self._connection()
                    .execute("SELECT completion FROM responses WHERE key = ?", (key,))
                    .fetchone()
                )
                stored = None if row is None else row[0]
        return None if stored is None else load_model(Completion, stored)

    def put(self, key: str, completion: Completion) -> None:
        stored = model_json(completion.model_copy(update={"cached": False}))
        with self._lock:
            self._pending[key] = stored
            due = time.monotonic() - self._last_commit >= self._commit_interval_s
            if len(self._pending) >= self._commit_every or due:
                self._commit_locked()

    def put_failure(self, key: str, failure: CallFailure) -> None:
        """Keep an error imported from a batch output file until a run takes it."""
        stored = model_json(failure)
        with self._lock:
            self._pending_failures[key] = stored
            if len(self._pending_failures) >= self._commit_every:
                self._commit_locked()

    def take_failure(self, key: str) -> CallFailure | None:
        """The imported batch error of ``key``, removed: it is delivered once."""
        with self._lock:
            stored = self._pending_failures.pop(key, None)
            if stored is None:
                with self._connection() as db:
                    row = db.execute(
                        "SELECT failure FROM batch_failures WHERE key = ?", (key,)
                    ).fetchone()
                    if row is not None:
                        db.execute("DELETE FROM batch_failures WHERE key = ?", (key,))
                stored = None if row is None else row[0]
        return None if stored is None else load_model(CallFailure, stored)

    def flush(self) -> None:
        with self._lock:
            self._commit_locked()

    def _commit_locked(self) -> None:
        if self._pending:
            with self._connection() as db:
                db.executemany(
                    "INSERT OR REPLACE INTO responses (key, completion) VALUES (?, ?)",
                    self._pending.items(),
                )
            self._pending.clear()
        if self._pending_failures:
            with self._connection() as db:
                db.executemany(
                    "INSERT OR REPLACE INTO batch_failures (key, failure) VALUES (?, ?)",
                    self._pending_failures.items(),
                )
            self._pending_failures.clear()
        self._last_commit = time.monotonic()

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError(f"the response cache {self.path} is closed")
        return self._db

    def __len__(self) -> int:
        with self._lock:
            self._commit_locked()
            row = self._connection().execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._commit_locked()
                self._db.close()
                self._db = None


_BUSY_TIMEOUT_S = 30.0


def _prepare(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    with db:
        db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, completion TEXT NOT NULL)"
        )
        db.execute(
            "CREATE TABLE IF NOT EXISTS batch_failures "
            "(key TEXT PRIMARY KEY, failure TEXT NOT NULL)"
        )


def _when_unlocked(step: Callable[[], None]) -> None:
    """Run ``step``, again while the file is locked. Switching a new file to WAL needs it alone,
    and SQLite answers "database is locked" at once, without waiting out its busy timeout,
    when several processes (Ray workers starting together) open the same new cache."""
    deadline = time.monotonic() + _BUSY_TIMEOUT_S
    delay = 0.01
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.2)
