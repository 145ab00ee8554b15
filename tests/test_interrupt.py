"""Ctrl-C during a run: a clean stop with exit code 130, nothing finished lost, resumable."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.helpers.fault_server import HANG, fault_server
from tests.helpers.signals import default_sigint

DATA = REPO_ROOT / "examples" / "grounded_qa_labelled.jsonl"


def _bench_command(base_url: str, out_dir: Path) -> list[str]:
    return [
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
        "openai/slow",
        "--base-url",
        base_url,
        "--concurrency",
        "2",
        "--no-cache",
        "--no-progress",
        "--max_examples",
        "0",
        "--out_dir",
        str(out_dir),
    ]


def _finished_ids(results: Path) -> list[str]:
    lines = results.read_text(encoding="utf-8").splitlines() if results.exists() else []
    return [json.loads(line)["id"] for line in lines]  # every line must be whole JSON


def _signal_state(process: subprocess.Popen[str]) -> str:
    """The child's state and signal masks (from /proc), for a failure message."""
    if process.poll() is not None:
        return f"the child had already exited ({process.returncode})"
    try:
        status = Path(f"/proc/{process.pid}/status").read_text()
    except OSError as error:
        return f"no /proc status: {error}"
    return " ".join(line for line in status.splitlines() if line.startswith(("State", "Sig")))


def test_sigint_stops_cleanly_and_the_rerun_resumes(tmp_path: Path) -> None:
    out_dir = tmp_path / "run"
    results = out_dir / "results.jsonl"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    # Every call takes 0.3 s on this server, so the run is mid-way when interrupted.
    with fault_server([HANG], hang_s=0.3) as server:
        process = subprocess.Popen(
            _bench_command(server.base_url, out_dir),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            preexec_fn=default_sigint,
        )
        started = time.monotonic()
        while len(_finished_ids(results)) < 3 and time.monotonic() < started + 120:
            time.sleep(0.2)
        seen = _signal_state(process)  # what the child does with SIGINT as it is sent
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
        assert process.returncode == 130, (
            f"exit {process.returncode} after {time.monotonic() - started:.1f} s; {seen}\n"
            f"stdout: {stdout[-800:]}\nstderr: {stderr[-800:]}"
        )
        assert "interrupted" in stderr and "Traceback" not in stderr
        kept = _finished_ids(results)
        assert 3 <= len(kept) < 71
        assert json.loads((out_dir / "run.json").read_text())["status"] == "cancelled"

        calls_before = len(server.requests)
        server.hang_s = 0.0  # the delay only had to hold the first run mid-way
        rerun = subprocess.run(
            _bench_command(server.base_url, out_dir),
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
            check=False,
        )
        assert rerun.returncode == 0, rerun.stderr
        final = _finished_ids(results)
        assert sorted(final) == sorted(set(final)) and len(final) == 71
        assert final[: len(kept)] == kept  # what was finished is kept as it was
        # The rerun asked the server exactly the calls of the records that were not finished
        # (no cache: each of them is redone whole, and its line counts its calls).
        lines = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
        redone = [line for line in lines if line["id"] not in set(kept)]
        assert len(redone) == 71 - len(kept)
        expected_calls = sum(line["usage"]["calls"] for line in redone)
        assert expected_calls > 0
        assert len(server.requests) - calls_before == expected_calls


def test_sigint_with_an_embedded_model_call_in_flight_stops_at_once(tmp_path: Path) -> None:
    """The llama.cpp call runs in a native thread; Ctrl-C must not wait for the run's
    remaining calls (each a long JSON generation) nor hang on the one in flight."""
    outputs = tmp_path / "outputs"
    generate = [sys.executable, "-m", "assay", "generate", "--model", "stub/t", "--no-cache"]
    questions = REPO_ROOT / "examples" / "judge" / "questions.jsonl"
    subprocess.run(
        [*generate, "--questions", str(questions), "--out", str(outputs)],
        check=True,
        capture_output=True,
    )
    judged = tmp_path / "judged"
    judge = [sys.executable, "-m", "assay", "judge", "run", "--questions", str(questions)]
    judge += ["--outputs", str(outputs), "--judge", "llamacpp/smollm2", "--no-cache"]
    process = subprocess.Popen(
        [*judge, "--out", str(judged)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=default_sigint,
    )
    # the archive's protocol is written before the first call; the model then loads and the
    # first of eight judge calls (each tens of seconds of generation here) is under way
    started = time.monotonic()
    while not (judged / "protocol.json").exists() and time.monotonic() < started + 120:
        time.sleep(0.2)
    time.sleep(5)
    seen = _signal_state(process)
    process.send_signal(signal.SIGINT)
    sent = time.monotonic()
    _, stderr = process.communicate(timeout=120)
    waited = time.monotonic() - sent
    assert process.returncode == 130, f"exit {process.returncode}; {seen}\n{stderr[-800:]}"
    assert "interrupted: finished work is kept" in stderr and "Traceback" not in stderr
    assert waited < 30, f"{waited:.1f} s from SIGINT to exit"
    assert json.loads((judged / "run.json").read_text())["status"] == "cancelled"


def _sigint_ignored() -> None:
    """``preexec_fn``: SIGINT ignored, as in a job started with ``cmd &`` or ``nohup``, which
    SIGTERM is what stops (a scheduler's cancel, a container's stop, ``kill``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop_with_sigterm(
    command: list[str], started_when: Callable[[], bool], sigint: Callable[[], None]
) -> tuple[subprocess.Popen[str], str, float]:
    """Run ``command``, SIGTERM it once ``started_when()``; the process, its stderr and the
    seconds from the signal to its exit."""
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=sigint,
    )
    deadline = time.monotonic() + 120
    while not started_when() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
    seen = _signal_state(process)
    process.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 143, f"exit {process.returncode}; {seen}\n{stderr[-800:]}"
    return process, stderr, time.monotonic() - sent


@pytest.mark.parametrize(
    "sigint", [default_sigint, _sigint_ignored], ids=["foreground", "background-job"]
)
def test_sigterm_stops_like_ctrl_c_and_the_rerun_resumes(
    tmp_path: Path, sigint: Callable[[], None]
) -> None:
    """Before, SIGTERM killed the run where it stood: no word, run.json still "started"."""
    out_dir = tmp_path / "run"
    results = out_dir / "results.jsonl"
    with fault_server([HANG], hang_s=0.3) as server:
        _, stderr, waited = _stop_with_sigterm(
            _bench_command(server.base_url, out_dir),
            lambda: len(_finished_ids(results)) >= 3,
            sigint,
        )
        assert stderr.strip().splitlines()[-1] == (
            "terminated (SIGTERM): finished work is kept; run the same command again to resume"
        )
        assert "Traceback" not in stderr and waited < 30
        kept = _finished_ids(results)
        assert 3 <= len(kept) < 71
        run = json.loads((out_dir / "run.json").read_text())
        assert run["status"] == "cancelled"
        server.hang_s = 0.0  # the delay only had to hold the first run mid-way
        rerun = subprocess.run(
            _bench_command(server.base_url, out_dir), capture_output=True, text=True, timeout=600
        )
    assert rerun.returncode == 0, rerun.stderr
    final = _finished_ids(results)
    assert len(final) == len(set(final)) == 71 and final[: len(kept)] == kept


def test_sigterm_stops_a_judge_run_with_its_calls_cancelled(tmp_path: Path) -> None:
    outputs = tmp_path / "outputs"
    questions = REPO_ROOT / "examples" / "judge" / "questions.jsonl"
    generate = [sys.executable, "-m", "assay", "generate", "--model", "stub/t", "--no-cache"]
    generate += ["--questions", str(questions), "--out", str(outputs)]
    subprocess.run(generate, check=True, capture_output=True)
    judged = tmp_path / "judged"
    with fault_server([HANG], hang_s=30) as server:
        judge = [sys.executable, "-m", "assay", "judge", "run", "--questions", str(questions)]
        judge += ["--outputs", str(outputs), "--judge", "openai/slow", "--no-cache"]
        judge += ["--base-url", server.base_url, "--out", str(judged)]
        _, stderr, waited = _stop_with_sigterm(judge, lambda: bool(server.requests), default_sigint)
    assert "terminated (SIGTERM): finished work is kept" in stderr and "Traceback" not in stderr
    # the call in flight (30 s on this server) is cancelled, not waited for
    assert waited < 20, f"{waited:.1f} s from SIGTERM to exit"
    assert json.loads((judged / "run.json").read_text())["status"] == "cancelled"
