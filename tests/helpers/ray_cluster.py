"""Stopping one local Ray cluster of the tests (Linux)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path


def stop_cluster(temp_dir: str, timeout_s: float = 30.0) -> None:
    """Kill the processes of the cluster started with ``RAY_TMPDIR=temp_dir``, found by that
    variable in their environment. ``ray stop`` would stop every Ray process of the user on the
    machine, other test runs' and benchmarks' clusters too."""
    wanted = f"RAY_TMPDIR={temp_dir}".encode()
    mine: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:  # gone, or not ours to read
            continue
        if wanted in environ:
            mine.append(int(entry.name))
    for pid in mine:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(_alive(pid) for pid in mine):
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; its parent (init) reaps it
