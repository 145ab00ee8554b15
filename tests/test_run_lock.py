"""One writer per run directory, with real processes: a second writer is refused at once and
told who holds the directory; a lock left by a process killed with SIGKILL is taken over."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assay.errors import RunError
from assay.runs import LOCK_FILE, RunDirLock

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "examples" / "grounded_qa_labelled.jsonl"
HOLD = """
import sys, time
from pathlib import Path
from assay.runs import RunDirLock
lock = RunDirLock(Path(sys.argv[1])).acquire()
print("locked", flush=True)
time.sleep(120)
"""


def _holder(run_dir: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(run_dir)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "locked"
    return process


def _bench(run_dir: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "bench",
            "run",
            "--data",
            str(DATA),
            "--pattern",
            "entailment",
            "--verifier",
            "lexical",
            "--out_dir",
            str(run_dir),
            "--no-report",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "ASSAY_CACHE_DIR": str(cache)},
    )


def test_a_second_bench_run_is_refused_and_names_the_holder(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    holder = _holder(run_dir)
    try:
        started = time.monotonic()
        refused = _bench(run_dir, tmp_path / "cache")
        assert time.monotonic() - started < 60  # refused at once, not after the work
    finally:
        holder.kill()
        holder.wait()
    assert refused.returncode == 2, refused.stderr
    assert f"pid {holder.pid}" in refused.stderr and "another assay process" in refused.stderr
    assert not (run_dir / "results.jsonl").exists()


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    holder = _holder(run_dir)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert json.loads((run_dir / LOCK_FILE).read_text())["pid"] == holder.pid  # left behind
    done = _bench(run_dir, tmp_path / "cache")
    assert done.returncode == 0, done.stderr
    assert "took over the lock" in done.stderr and f"pid {holder.pid}" in done.stderr
    ids = [json.loads(line)["id"] for line in (run_dir / "results.jsonl").open()]
    assert len(ids) == len(set(ids)) == 71
    assert not (run_dir / LOCK_FILE).exists()  # released at the end


def test_a_second_generate_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "outputs"
    holder = _holder(out)
    try:
        refused = subprocess.run(
            [
                sys.executable,
                "-m",
                "assay",
                "generate",
                "--questions",
                str(ROOT / "examples" / "judge" / "questions.jsonl"),
                "--model",
                "stub/a",
                "--out",
                str(out),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache")},
        )
    finally:
        holder.kill()
        holder.wait()
    assert refused.returncode == 2, refused.stderr
    assert f"pid {holder.pid}" in refused.stderr
    assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE]


def test_in_process_a_held_directory_is_refused(tmp_path: Path) -> None:
    with RunDirLock(tmp_path / "run"), pytest.raises(RunError, match=f"pid {os.getpid()}"):
        RunDirLock(tmp_path / "run").acquire()
    assert not (tmp_path / "run").exists()  # made by the lock, left empty: removed
