"""Batch files: model calls written as OpenAI Batch API input instead of being sent.

With a :class:`BatchWriter` attached, :class:`~assay.model.Model` answers a call that misses the
response cache by writing it as one line of batch input JSONL (``custom_id``, ``method``,
``url``, ``body``) and returning a :class:`~assay.model.CallFailure` of kind ``deferred``. The
runs that call models check :func:`batch_scope` (or the result) and leave deferred work
unwritten: it is neither finished nor failed, only waiting for its answer.

``custom_id`` is the call's response-cache key, so one output line answers exactly one call:
:func:`import_batch_output` stores each answer under its key, and the next run of the same
command finds it in the cache. OpenAI's Batch API and ``vllm run-batch`` read and write this
format. Calls to in-process models (:data:`~assay.model.IN_PROCESS_PROVIDERS`: ``llamacpp/``,
``stub/``) have no batch form: they run live.
"""

from __future__ import annotations

import contextvars
import datetime as dt
import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, ClassVar

from ..errors import InputError
from ._types import CallFailure, ErrorKind

#: A provider's limits for one batch input file (OpenAI: 50,000 requests, 200 MB).
MAX_REQUESTS_PER_FILE = 50_000
MAX_BYTES_PER_FILE = 200_000_000  # decimal megabytes: under the limit whichever is meant
INPUT_PREFIX = "input-"
CHAT_COMPLETIONS_URL = "/v1/chat/completions"


@dataclass
class BatchScope:
    """How many calls made inside one unit of work (a record, a sample) were deferred."""

    deferred: int = 0


_SCOPE: contextvars.ContextVar[BatchScope | None] = contextvars.ContextVar(
    "assay_batch_scope", default=None
)


@contextmanager
def batch_scope() -> Iterator[BatchScope]:
    """Count the deferred calls of this block (this task and the tasks it starts)."""
    scope = BatchScope()
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)


def calls_deferred() -> bool:
    """Whether a call of the current unit of work waits in a batch file.

    A step whose input depends on earlier answers asks this first: sent now, it would be a
    request built on a missing answer, paid for and thrown away.
    """
    scope = _SCOPE.get()
    return scope is not None and scope.deferred > 0


def is_deferred(result: object) -> bool:
    return isinstance(result, CallFailure) and result.kind is ErrorKind.DEFERRED


def deferred_failure(sample_index: int) -> CallFailure:
    scope = _SCOPE.get()
    if scope is not None:
        scope.deferred += 1
    return CallFailure(
        kind=ErrorKind.DEFERRED,
        message="written to a batch input file; import its output, then rerun",
        attempts=0,
        sample_index=sample_index,
    )


@dataclass
class BatchFiles:
    """What a :class:`BatchWriter` wrote."""

    requests: int = 0
    files: list[Path] = field(default_factory=list)


class BatchWriter:
    """Writes deferred calls into ``directory/input-<time>-<part>.jsonl``, one line each.

    A call asked twice in one session (two records sharing an answer) is written once. A file
    is closed and a new one started before it would pass ``max_requests`` lines or
    ``max_bytes`` bytes. Use :meth:`shared` so every model of a process writes one file set.
    """

    _shared: ClassVar[dict[Path, BatchWriter]] = {}
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self,
        directory: Path,
        *,
        max_requests: int = MAX_REQUESTS_PER_FILE,
        max_bytes: int = MAX_BYTES_PER_FILE,
    ) -> None:
        self.directory = directory
        self.max_requests = max_requests
        self.max_bytes = max_bytes
        self.written = BatchFiles()
        self._stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
        self._seen: set[str] = set()
        self._handle: IO[bytes] | None = None
        self._lines = 0
        self._bytes = 0
        self._lock = threading.Lock()

    @classmethod
    def shared(cls, directory: Path) -> BatchWriter:
        resolved = directory.expanduser().resolve()
        with cls._shared_lock:
            writer = cls._shared.get(resolved)
            if writer is None:
                writer = cls._shared[resolved] = cls(resolved)
            return writer

    @classmethod
    def forget(cls, directory: Path) -> None:
        """Drop the process-wide writer of ``directory`` (closing it): the next session
        starts a new file set."""
        with cls._shared_lock:
            writer = cls._shared.pop(directory.expanduser().resolve(), None)
        if writer is not None:
            writer.close()

    def add(self, custom_id: str, body: dict[str, Any], url: str = CHAT_COMPLETIONS_URL) -> None:
        line = _request_line(custom_id, body, url)
        with self._lock:
            if custom_id in self._seen:
                return
            self._seen.add(custom_id)
            handle = self._handle_for(len(line))
            handle.write(line)
            handle.flush()  # a crash keeps every whole line written so far
            self._lines += 1
            self._bytes += len(line)
            self.written.requests += 1

    def _handle_for(self, size: int) -> IO[bytes]:
        full = self._lines >= self.max_requests or self._bytes + size > self.max_bytes
        if self._handle is not None and full and self._lines:
            self._handle.close()
            self._handle = None
        if self._handle is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            part = len(self.written.files) + 1
            path = self.directory / f"{INPUT_PREFIX}{self._stamp}-{part:03d}.jsonl"
            self._handle = path.open("xb")
            self.written.files.append(path)
            self._lines = self._bytes = 0
        return self._handle

    def close(self) -> BatchFiles:
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None
        return self.written


def _request_line(custom_id: str, body: dict[str, Any], url: str) -> bytes:
    request = {"custom_id": custom_id, "method": "POST", "url": url, "body": body}
    text = json.dumps(request, ensure_ascii=False, separators=(",", ":"))
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate in a prompt: escaped, the line stays UTF-8
        return (json.dumps(request, separators=(",", ":")) + "\n").encode("ascii")


def input_files(directory: Path) -> list[Path]:
    """The batch input files assay wrote in ``directory``, oldest first."""
    return sorted(directory.glob(f"{INPUT_PREFIX}*.jsonl"))


def requested_ids(paths: Sequence[Path]) -> set[str]:
    """Every ``custom_id`` of the batch input files; a line that cannot be a request (not
    UTF-8, not a JSON object, no ``custom_id``) is one error naming its file and line. A last
    line a session killed mid-write cut short is left out: it asked nothing (the rerun writes
    that request again); a whole one that lacks only its newline is a request."""
    from ..data.jsonl import complete_line, decode_line, iter_lines, json_problem

    hint = "restore the file as the run wrote it, or move it out of the batch directory"
    ids: set[str] = set()
    for path in paths:
        for number, raw in iter_lines(path):
            if not raw.strip() or not complete_line(raw):
                continue
            try:
                line = json.loads(decode_line(raw, path, number))
            except json.JSONDecodeError as error:
                problem = f"not a batch request: not JSON ({json_problem(error)})"
                raise InputError(problem, path=path, line=number, hint=hint) from None
            except InputError as error:  # not UTF-8
                raise InputError(error.reason, path=path, line=number, hint=hint) from None
            key = line.get("custom_id") if isinstance(line, dict) else None
            if not isinstance(key, str) or not key:
                problem = "not a batch request: " + (
                    "no custom_id" if isinstance(line, dict) else "not a JSON object"
                )
                field = "custom_id" if isinstance(line, dict) else None
                raise InputError(problem, path=path, line=number, field=field, hint=hint)
            ids.add(key)
    return ids
