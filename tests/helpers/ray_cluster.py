"""Stopping one local Ray cluster of the tests and benchmarks (Linux)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path


def stop_cluster(temp_dir: str, timeout_s: float = 30.0) -> None:
    """Kill the processes of the cluster started with ``RAY_TMPDIR=temp_dir``: those with that
    variable in their environment, and the agents their raylet started (which have
    ``RAY_RAYLET_PID`` instead). ``ray stop`` would stop every Ray process of the user on the
    machine, other test runs' and benchmarks' clusters too."""
    environs = _environs()
    mine = {pid for pid, env in environs.items() if env.get(b"RAY_TMPDIR") == temp_dir.encode()}
    mine |= {
        pid
        for pid, env in environs.items()
        if (raylet := env.get(b"RAY_RAYLET_PID", b"")).isdigit() and int(raylet) in mine
    }
    for pid in mine:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(_alive(pid) for pid in mine):
        time.sleep(0.05)


def _environs() -> dict[int, dict[bytes, bytes]]:
    """Every readable process's environment but this one's."""
    found: dict[int, dict[bytes, bytes]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            raw = (entry / "environ").read_bytes()
        except OSError:  # gone, or not ours to read
            continue
        pairs = (item.partition(b"=") for item in raw.split(b"\0") if item)
        found[int(entry.name)] = {key: value for key, _, value in pairs}
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; its parent (init) reaps it
