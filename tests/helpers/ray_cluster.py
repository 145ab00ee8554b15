"""A short temp dir for one local Ray cluster of the tests and benchmarks, stopping that
cluster, and finding its busy workers (Linux)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def cluster_temp_dir() -> Iterator[Path]:
    """A ``RAY_TMPDIR`` of a cluster's own, short: Ray's Unix socket paths under it must fit in
    107 bytes, which pytest's temp dirs (pytest-xdist's worker directories more so) do not leave
    room for. At the end the cluster started in it is stopped and the directory removed."""
    temp = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
    try:
        yield temp
    finally:
        stop_cluster(str(temp))  # this cluster only (`ray stop` would stop every one)
        shutil.rmtree(temp, ignore_errors=True)


def stop_cluster(temp_dir: str, timeout_s: float = 30.0) -> None:
    """Kill the processes of the cluster started with ``RAY_TMPDIR=temp_dir``: those with that
    variable in their environment and their descendants (the raylet's agents, whose process
    titles overwrite their environment). ``ray stop`` would stop every Ray process of the user
    on the machine, other test runs' and benchmarks' clusters too."""
    mine = _cluster_processes(temp_dir)
    for pid in mine:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(_alive(pid) for pid in mine):
        time.sleep(0.05)


def busy_workers(temp_dir: str, task: str) -> list[int]:
    """The worker processes of the cluster started with ``RAY_TMPDIR=temp_dir`` that are
    running ``task`` now (Ray titles such a process ``ray::TASK``). Other clusters on the
    machine (other test runs') are not looked at."""
    found = []
    for pid in _cluster_processes(temp_dir):
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if title.startswith(f"ray::{task}".encode()):
            found.append(pid)
    return found


def _cluster_processes(temp_dir: str) -> set[int]:
    """The processes with ``RAY_TMPDIR=temp_dir`` in their environment and their descendants
    (the raylet's agents, whose process titles overwrite their environment), but this one."""
    environs, parents = _processes()
    mine = {pid for pid, env in environs.items() if env.get(b"RAY_TMPDIR") == temp_dir.encode()}
    grown = True
    while grown:
        children = {pid for pid, parent in parents.items() if parent in mine} - mine
        mine |= children
        grown = bool(children)
    mine.discard(os.getpid())
    return mine


def _processes() -> tuple[dict[int, dict[bytes, bytes]], dict[int, int]]:
    """Every readable process's environment, and every process's parent, but this one's."""
    environs: dict[int, dict[bytes, bytes]] = {}
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        pid = int(entry.name)
        try:
            parents[pid] = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            raw = (entry / "environ").read_bytes()
        except (OSError, ValueError, IndexError):  # gone, or not ours to read
            continue
        pairs = (item.partition(b"=") for item in raw.split(b"\0") if item)
        environs[pid] = {key: value for key, _, value in pairs}
    return environs, parents


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; its parent (init) reaps it


# Ray's own lines on a driver's stderr: its log (``2026-11-25 10:00:00,123 INFO ...``) and the
# cluster's messages (``(raylet) A worker died ...``, coloured on a terminal)
_RAY_LINE = re.compile(r"(\x1b\[[\d;]*m)?\(raylet|\d{4}-\d\d-\d\d [\d:,]+\s+[A-Z]+ ")


def assay_lines(err: str) -> list[str]:
    """A driver's stderr without Ray's own lines: what assay printed."""
    return [line for line in err.splitlines() if not _RAY_LINE.match(line)]
