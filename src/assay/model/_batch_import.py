"""``assay batch import``: batch output and error files into the response cache.

Each line of an OpenAI batch output (or error) file answers one request by its ``custom_id``,
the call's cache key. A 200 response's body goes into the cache as the call's reply; an error
(an ``error`` object, or a response with another status) becomes a typed
:class:`~assay.model.CallFailure`, kept apart until a run takes it. A line that cannot be used
(not JSON, no ``custom_id``, an id no request of the batch directory has, an id already
answered by an earlier line, a ``status_code`` that is no HTTP status, a body that does not
parse as a chat completion) is reported with its file and line and skipped: every other line
is imported. A line with an ``error`` object failed, whatever status its response has: the
failure carries the error's code and message (OpenAI's batch output format).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SHOWN_CHARS, shown
from ._cache import ResponseCache
from ._types import BackendError, CallFailure, Completion, ErrorKind

# OpenAI's batch error codes (and vLLM's) that say more than the HTTP status would
_ERROR_CODES = {
    "batch_expired": ErrorKind.TIMEOUT,
    "batch_cancelled": ErrorKind.CANCELLED,
    "rate_limit_exceeded": ErrorKind.RATE_LIMIT,
    "context_length_exceeded": ErrorKind.CONTEXT_LENGTH,
    "invalid_request_error": ErrorKind.BAD_REQUEST,
    "model_not_found": ErrorKind.NOT_FOUND,
    "server_error": ErrorKind.SERVER_ERROR,
}


@dataclass
class ImportReport:
    """What an import stored, and every line it skipped, as ``file:line: reason``."""

    answers: int = 0
    failures: int = 0
    problems: list[str] = field(default_factory=list)
    unknown_ids: int = 0  # of the problems: a custom_id no request of the batch directory has


class _Skip(Exception):
    """A line that is reported and skipped."""


class _UnknownId(_Skip):
    """A line answering no request of the batch directory (another directory's batch?)."""


def import_batch_output(
    cache: ResponseCache, paths: Sequence[Path], requested: set[str]
) -> ImportReport:
    """Store every usable line of ``paths`` (output files, then error files) in ``cache``.

    ``requested`` is every ``custom_id`` the batch input files asked for.
    """
    report = ImportReport()
    first_seen: dict[str, str] = {}
    for path in paths:
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                where = f"{path}:{number}"
                try:
                    key, answer = _read_line(raw, requested, first_seen)
                except _Skip as skip:
                    report.problems.append(f"{where}: {skip}")
                    report.unknown_ids += isinstance(skip, _UnknownId)
                    continue
                first_seen[key] = where
                if isinstance(answer, Completion):
                    cache.put(key, answer)
                    report.answers += 1
                else:
                    cache.put_failure(key, answer)
                    report.failures += 1
    cache.flush()
    return report


def _read_line(
    raw: bytes, requested: set[str], first_seen: dict[str, str]
) -> tuple[str, Completion | CallFailure]:
    try:
        line = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise _Skip(f"not JSON ({error})") from None
    if not isinstance(line, dict):
        raise _Skip("not a JSON object")
    key = line.get("custom_id")
    if not isinstance(key, str) or not key:
        raise _Skip("no custom_id")
    if key not in requested:
        raise _UnknownId(
            f"unknown custom_id {shown(key)}: no request of the batch directory has it"
        )
    if key in first_seen:
        raise _Skip(f"duplicate custom_id {shown(key)}: already answered at {first_seen[key]}")
    return key, _answer(line)


def _answer(line: dict[str, Any]) -> Completion | CallFailure:
    from .providers.openai import completion_from_body

    response = line.get("response")
    error = line.get("error")
    if error is not None:  # the Batch API's word that the request failed, whatever the status
        if not isinstance(error, dict | str):
            raise _Skip(f"error {_as_json(error)} is not an error object")
        return _failure(_status(response), error, response)
    if not isinstance(response, dict) or "status_code" not in response:
        raise _Skip("neither a response with a status_code nor an error")
    status = _status(response)
    if status is None:
        raise _Skip(f"status_code {_as_json(response['status_code'])} is not an HTTP status")
    if status == 200:
        try:
            return completion_from_body(response.get("body"))
        except BackendError as problem:
            raise _Skip(f"response body does not parse: {problem.message}") from None
    return _failure(status, None, response)


def _as_json(value: Any) -> str:
    """A value of a line as the file spells it (``true``, not Python's ``True``), cut short."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}…"


def _status(response: Any) -> int | None:
    """The response's HTTP status; None when it has none, or one that is no status (``true``
    is an int to Python, ``"200"`` a string)."""
    status = response.get("status_code") if isinstance(response, dict) else None
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        return None
    return status


def _failure(status: int | None, error: Any, response: Any) -> CallFailure:
    """A typed failure: the error code's kind when it names one, else the HTTP status's. An
    ``error`` object is what failed (a status beside it, even 200, says nothing more)."""
    from .providers.openai import status_kind

    body = response.get("body") if isinstance(response, dict) else None
    code, message = _error_parts(error if error is not None else body)
    kind = _ERROR_CODES.get(code or "")
    failed_status = None if error is not None and status == 200 else status
    if kind is None:
        kind = (
            status_kind(failed_status, message) if failed_status is not None else ErrorKind.BACKEND
        )
    where = f"HTTP {status}" if error is None else f"batch error {code or 'without a code'}"
    text = " ".join(message.split())[:300] or "(no detail given)"
    return CallFailure(kind=kind, message=f"batch: {where}: {text}", attempts=1)


def _error_parts(error: Any) -> tuple[str | None, str]:
    """(code, message) of an error object, of ``{"error": {...}}``, or of a bare string."""
    if isinstance(error, dict) and isinstance(error.get("error"), dict | str):
        error = error["error"]
    if isinstance(error, str):
        return None, error
    if isinstance(error, dict):
        code = error.get("code") or error.get("type")
        return (str(code) if code else None), str(error.get("message") or "")
    return None, "" if error is None else str(error)
