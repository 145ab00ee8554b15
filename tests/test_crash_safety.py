"""``kill -9`` at any moment: the resumed run has every record once, whole, and finishes.

Real runs (``assay judge run``, ``assay bench run`` in subprocesses) against a loopback server
whose every reply takes a little while, killed with SIGKILL several times at different points
while they write, then resumed to the end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from assay.judge.archive import load_records, recheck_archive
from tests.conftest import REPO_ROOT
from tests.helpers.fault_server import HANG, fault_server
from tests.judge.helpers import write_questions

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

BENCH_DATA = REPO_ROOT / "examples" / "grounded_qa_labelled.jsonl"
BENCH_RECORDS = 71
TARGETS = [f"target/t{i}" for i in range(12)]  # x 4 cells: 48 pairs to judge
KILL_AFTER = (3, 15, 30)  # records on disk when each kill comes


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1"}


def _kill_when(command: list[str], progress: Callable[[], int], at_least: int) -> None:
    """Start ``command``, SIGKILL it once ``progress()`` reaches ``at_least`` (or it ends)."""
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env()
    )
    deadline = time.monotonic() + 120
    while progress() < at_least and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert process.poll() is None, "the run ended before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)


def _judge_command(base_url: str, tmp_path: Path) -> list[str]:
    manifest = tmp_path / "outputs.jsonl"
    lines = [
        {
            "question_id": question,
            "prompt_variant": variant,
            "target_model": target,
            "output_id": f"{target}/{question}/{variant}",
            "text": f"Output of {target} for {question} {variant}.",
        }
        for target in TARGETS
        for question in ("Q1", "Q2")
        for variant in ("A", "B")
    ]
    manifest.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    questions = write_questions(tmp_path / "questions.jsonl")
    return [
        *(sys.executable, "-m", "assay", "judge", "run"),
        *("--questions", str(questions), "--outputs", str(manifest)),
        *("--judge", "openai/slow", "--base-url", base_url, "--no-cache"),
        *("--concurrency", "8", "--out", str(tmp_path / "run")),
    ]


def test_a_judge_run_killed_mid_write_resumes_without_torn_or_duplicated_records(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "run"
    with fault_server([HANG], hang_s=0.05) as server:
        command = _judge_command(server.base_url, tmp_path)
        for count in KILL_AFTER:
            _kill_when(command, lambda: len(load_records(run_dir)), count)
        final = subprocess.run(
            command, capture_output=True, text=True, env=_env(), timeout=300, check=False
        )
    assert final.returncode == 0, final.stderr
    report = recheck_archive(run_dir)
    assert not report.unreadable and not report.duplicated_attempts, report
    assert report.consistent, report
    records = load_records(run_dir)
    per_pair = Counter(record.work_key for record in records)
    assert len(per_pair) == len(TARGETS) * 4  # every pair finished
    assert set(per_pair.values()) == {1}  # once each: one ask, one record


def _bench_command(base_url: str, out_dir: Path) -> list[str]:
    return [
        *(sys.executable, "-m", "assay", "bench", "run", "--data", str(BENCH_DATA)),
        *("--pattern", "entailment", "--verifier", "openai/slow", "--base-url", base_url),
        *("--concurrency", "4", "--no-cache", "--no-progress", "--no-report"),
        *("--max_examples", "0", "--out_dir", str(out_dir)),
    ]


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True) if path.exists() else []


def test_a_bench_run_killed_mid_write_resumes_without_torn_or_duplicated_lines(
    tmp_path: Path,
) -> None:
    out_dir = tmp_path / "run"
    results = out_dir / "results.jsonl"
    with fault_server([HANG], hang_s=0.02) as server:
        command = _bench_command(server.base_url, out_dir)
        for count in KILL_AFTER:
            _kill_when(command, lambda: len(_lines(results)), count)
        final = subprocess.run(
            command, capture_output=True, text=True, env=_env(), timeout=600, check=False
        )
    assert final.returncode == 0, final.stderr
    lines = _lines(results)
    assert all(line.endswith(b"\n") for line in lines)  # no torn line left behind
    ids = [json.loads(line)["id"] for line in lines]  # every line is whole JSON
    assert len(ids) == len(set(ids)) == BENCH_RECORDS  # each record once, all finished
