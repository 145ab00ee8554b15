"""One writer per run directory: an advisory lock that a second process sees at once.

Two processes appending to one results file or archive would double or interleave records, so
every command that writes a run directory holds :class:`RunDirLock` for as long as it writes.
The lock is ``fcntl.flock`` on ``<run_dir>/.assay.lock``: the kernel drops it when its holder
dies, even by ``kill -9``, so a stale lock never blocks a later run. The file also names its
holder (pid, host, command, start time), which is what a refused process prints, and a later
process that finds a holder's name in a file it could lock knows it took over a stale lock.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import socket
import sys
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from ..errors import RunError
from ..redact import public_command

LOCK_FILE = ".assay.lock"


class RunDirLock:
    """Held while a command writes ``run_dir``; refuses at once if another process holds it."""

    def __init__(self, run_dir: Path, *, busy_hint: str | None = None) -> None:
        self.run_dir = run_dir
        # what the refusal advises: a run can go to another directory, an import cannot
        self.busy_hint = (
            busy_hint or "wait for it to finish, or give this run another output directory"
        )
        self.path = run_dir / LOCK_FILE
        self.stale_holder: dict[str, Any] | None = None  # set when a dead holder's lock was taken
        self._handle: IO[str] | None = None
        self._created_dir = False

    def acquire(self) -> RunDirLock:
        if self._handle is not None:
            return self
        if self.run_dir.exists() and not self.run_dir.is_dir():
            raise RunError(f"{self.run_dir} is a file, not a run directory")
        self._created_dir = not self.run_dir.exists()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(handle)
            handle.close()
            raise RunError(
                f"{self.run_dir} is being written by another assay process: {_describe(holder)}",
                hint=self.busy_hint,
            ) from None
        self.stale_holder = _read_holder(handle) or None
        _write_holder(handle)
        self._handle = handle
        return self

    def release(self) -> None:
        """Unlock; the lock file goes, and so does the directory if this lock made it empty."""
        if self._handle is None:
            return
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
        self._handle.close()
        self._handle = None
        if self._created_dir:
            with contextlib.suppress(OSError):  # not empty: the run wrote something
                self.run_dir.rmdir()

    @property
    def stale_note(self) -> str | None:
        if self.stale_holder is None:
            return None
        return "took over the lock of a process that ended without releasing it: " + _describe(
            self.stale_holder
        )

    def __enter__(self) -> RunDirLock:
        return self.acquire()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def check_not_being_written(run_dir: Path) -> None:
    """For a command that only reads ``run_dir``: refuse while another process writes it (a
    read then sees part of the run). Takes no lock and writes nothing, so a run on read-only
    storage can still be read."""
    try:
        handle = (run_dir / LOCK_FILE).open("r", encoding="utf-8")
    except OSError:  # no lock file (nobody writes), or not ours to open
        return
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunError(
                f"{run_dir} is being written by another assay process: "
                f"{_describe(_read_holder(handle))}",
                hint="wait for it to finish; what it has written so far is not the whole run",
            ) from None
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _write_holder(handle: IO[str]) -> None:
    holder = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": " ".join(public_command(sys.argv)),
        "since": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    handle.seek(0)
    handle.truncate()
    handle.write(json.dumps(holder) + "\n")
    handle.flush()


def _read_holder(handle: IO[str]) -> dict[str, Any]:
    handle.seek(0)
    try:
        holder = json.loads(handle.read() or "{}")
    except json.JSONDecodeError:
        return {}
    return holder if isinstance(holder, dict) else {}


def _describe(holder: dict[str, Any]) -> str:
    if not holder:
        return "holder unknown (it is still starting)"
    return (
        f"pid {holder.get('pid')} on {holder.get('host')}, since {holder.get('since')}: "
        f"{holder.get('command')}"
    )
