"""Progress when stderr is a log file: periodic one-line status (done/total, rate, ETA, failed)."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

from assay.runs import Progress
from tests.judge.helpers import write_manifest, write_questions

ROOT = Path(__file__).resolve().parents[1]
STATUS = re.compile(r"^bench entailment: \d+/71 \(\d+%\), [\d.]+ ex/s, ETA \S+, failed \d+$")


def test_status_line_counts_done_failed_and_eta() -> None:
    stream = io.StringIO()
    progress = Progress(10, "judge", stream=stream, interval_s=0.0)
    progress.update(3, failed=1)
    progress.update(1)
    progress.close()
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("judge: 3/10 (30%)") and lines[0].endswith("failed 1")
    assert lines[-1].startswith("judge: 4/10 (40%)") and "ETA " in lines[-1]


def test_items_waiting_on_batch_answers_are_counted_apart() -> None:
    stream = io.StringIO()
    progress = Progress(4, "bench entailment", stream=stream, interval_s=0.0)
    progress.update(1)
    progress.update(3, waiting=3)
    progress.close()
    last = stream.getvalue().splitlines()[-1]
    assert last.startswith("bench entailment: 4/4 (100%)")
    assert last.endswith("failed 0, waiting on batch answers 3")


def test_no_lines_when_progress_is_off() -> None:
    stream = io.StringIO()
    with Progress(5, "x", show=False, stream=stream, interval_s=0.0) as progress:
        progress.update(5)
    assert stream.getvalue() == ""


def test_a_run_logged_to_a_file_prints_status_lines(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    with log.open("w") as stderr:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "assay",
                "bench",
                "run",
                "--data",
                str(ROOT / "examples" / "grounded_qa_labelled.jsonl"),
                "--pattern",
                "entailment",
                "--verifier",
                "lexical",
                "--generator",
                "stub/g",
                "--out_dir",
                str(tmp_path / "run"),
                "--no-report",
            ],
            stderr=stderr,
            stdout=subprocess.DEVNULL,
            timeout=300,
            env={"ASSAY_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"},
        )
    assert done.returncode == 0, log.read_text()
    lines = [line for line in log.read_text().splitlines() if STATUS.match(line)]
    assert lines, log.read_text()
    assert lines[-1].startswith("bench entailment: 71/71 (100%)")


def _batch_session(tmp_path: Path, command: list[str]) -> tuple[str, str]:
    """Run ``command`` as a batch session against an address nothing listens on (a batch
    session writes its requests to files and sends none); returns its stdout and stderr."""
    batch = ["--executor", "batch", "--batch-dir", str(tmp_path / "batch")]
    done = subprocess.run(
        [sys.executable, "-m", "assay", *command, "--base-url", "http://127.0.0.1:9/v1", *batch],
        capture_output=True,
        text=True,
        timeout=300,
        env={
            "ASSAY_CACHE_DIR": str(tmp_path / "cache"),
            "OPENAI_API_KEY": "unused",
            "PATH": "/usr/bin:/bin",
        },
    )
    assert done.returncode == 3, done.stderr  # 3: requests written, waiting on the batch
    return done.stdout, done.stderr


def test_generate_and_judge_count_batch_waiting_items_apart(tmp_path: Path) -> None:
    questions = write_questions(tmp_path / "questions.jsonl")
    generate = ["generate", "--questions", str(questions), "--model", "openai/m"]
    stdout, stderr = _batch_session(tmp_path, [*generate, "--out", str(tmp_path / "out")])
    assert "generate: 4/4 (100%)" in stderr and " outputs/s," in stderr
    assert "failed 0, waiting on batch answers 4" in stderr
    assert "(0 already there, 0 failed calls, 4 waiting on batch answers) of 4" in stdout

    manifest = write_manifest(tmp_path / "manifest.jsonl", ["stub/t0"])
    judge = ["judge", "run", "--questions", str(questions), "--outputs", str(manifest)]
    judge += ["--judge", "openai/j", "--out", str(tmp_path / "run")]
    stdout, stderr = _batch_session(tmp_path, judge)
    assert "judge: 4/4 (100%)" in stderr and " pairs/s," in stderr
    assert "failed 0, waiting on batch answers 4" in stderr
    # neither judged nor invalid, and the next step is the batch, not the analysis
    counts = "4 sample x judge pairs (0 already finished, 0 attempts now, 0 model calls, 4 waiting"
    assert f"{counts} on batch answers): 0 valid, 0 invalid" in stdout.splitlines()[1]
    assert "judge analyze" not in stdout
