"""Failed model calls, end to end (issue 14 #4, #8): real `assay` processes against a loopback
fault-injecting server. A run with failed calls exits 1 and prints the count and the command
that retries them; the next run retries exactly those (they were never cached) and appends
their new results; a run after that makes no call at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.verify.results import iter_results
from tests.helpers.fault_server import OK, SERVER_ERROR, FaultServer, fault_server
from tests.verify.bench_fixtures import verify_only_records, write_jsonl

ROOT = Path(__file__).resolve().parents[1]
CLAIM_SUPPORTED = json.dumps({"label": "supported", "supporting_ids": [], "rationale": "ok"})


def assay(tmp_path: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache"), "OPENAI_API_KEY": "sk-t"}
    return subprocess.run(
        [sys.executable, "-m", "assay.cli", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env=env,
        timeout=300,
    )


def _model_args(server: FaultServer, tmp_path: Path) -> list[str | Path]:
    return [
        "--base-url",
        server.base_url,
        "--max-attempts",
        "1",
        "--cache-path",
        tmp_path / "responses.sqlite",
    ]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_bench_run_retries_failed_calls_on_the_next_run(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(3))
    out = tmp_path / "run"
    with fault_server([SERVER_ERROR], reply_text=CLAIM_SUPPORTED) as server:
        command: list[str | Path] = [
            *("bench", "run", "--data", data, "--pattern", "entailment", "--out_dir", out),
            *("--generator", "openai/x", "--verifier", "openai/x", "--no-report"),
            # the fault server writes JSON replies without logprobs: the JSON claim check
            *("--claim-check", "json", "--no-progress"),
            *_model_args(server, tmp_path),
        ]
        first = assay(tmp_path, *command)
        assert first.returncode == 1, first.stderr
        assert "3 example(s) with model calls that failed" in first.stderr
        # why, once per cause, not per wrapper ("claim check failed (1 of 2)")
        reason = "call failed: server_error after 1 attempt(s): HTTP 500: boom"
        assert f"failure reasons: {reason} (3)" in first.stdout
        assert "assay bench run --data" in first.stderr
        summary = json.loads((out / "summary.json").read_text())
        assert summary["counts"]["examples_with_failed_calls"] == 3
        assert summary["counts"]["scored"] == 0 and summary["counts"]["verifier_failures"] == 0
        assert summary["counts"]["failure_reasons"]
        # the report says why as well, in the same words
        assert assay(tmp_path, "report", out).returncode == 0
        page = (out / "report.html").read_text(encoding="utf-8")
        assert f"failure reasons: {reason} (3)" in page
        calls_failed = len(server.requests)
        assert calls_failed > 0

        server.switch_to([OK])
        second = assay(tmp_path, *command)
        assert second.returncode == 0, second.stderr
        failed_bodies = [body for _, body in server.requests[:calls_failed]]
        retried_bodies = [body for _, body in server.requests[calls_failed:]]
        assert all(body in retried_bodies for body in failed_bodies)  # every failed call again
        calls_done = len(server.requests)
        lines = _lines(out / "results.jsonl")
        assert len(lines) == 6  # append-only: the retried results follow the failed ones
        current = list(iter_results(out / "results.jsonl"))
        assert sorted(r.id for r in current) == ["v0", "v1", "v2"]
        assert all(r.complete and r.scored for r in current), [
            (r.failure, r.complete, r.scored) for r in current
        ]
        summary = json.loads((out / "summary.json").read_text())
        assert summary["counts"]["results"] == 3
        assert summary["counts"]["examples_with_failed_calls"] == 0
        assert summary["counts"]["scored"] == 3

        third = assay(tmp_path, *command)
        assert third.returncode == 0, third.stderr
        assert len(server.requests) == calls_done  # finished work: no call
        assert "0 run now, 3 already done" in third.stdout


@pytest.fixture()
def judge_outputs(tmp_path: Path) -> Path:
    outputs = tmp_path / "outputs"
    questions = ROOT / "examples" / "judge" / "questions.jsonl"
    made = assay(tmp_path, "generate", "--questions", questions, "--model", "stub/target")
    assert made.returncode == 2  # --out is required: checks the usage error path too
    made = assay(
        tmp_path,
        *("generate", "--questions", questions, "--model", "stub/target", "--out", outputs),
        "--no-cache",
    )
    assert made.returncode == 0, made.stderr
    return outputs


def test_a_failed_generation_is_grouped_by_its_cause(tmp_path: Path) -> None:
    # nothing listens on port 9: every generation call fails to connect
    run = assay(
        tmp_path,
        *("bench", "run", "--data", ROOT / "examples" / "grounded_qa.jsonl"),
        *("--pattern", "entailment", "--generator", "openai/x", "--verifier", "lexical"),
        *("--base-url", "http://127.0.0.1:9/v1", "--max-attempts", "1", "--max_examples", "2"),
        *("--out_dir", tmp_path / "run", "--no-report", "--no-progress"),
    )
    assert run.returncode == 1, run.stderr
    reasons = json.loads((tmp_path / "run" / "summary.json").read_text())["counts"]
    [(reason, count)] = reasons["failure_reasons"].items()
    # the step and the call's cause, not the bare word "generation"
    assert reason.startswith("generation: connection after 1 attempt(s): cannot reach"), reason
    assert count == 2
    assert f"failure reasons: {reason} (2)" in run.stdout


def test_judge_run_exits_1_with_the_retry_command_then_retries(
    tmp_path: Path, judge_outputs: Path
) -> None:
    questions = ROOT / "examples" / "judge" / "questions.jsonl"
    out = tmp_path / "judge"
    with fault_server([SERVER_ERROR]) as server:
        command: list[str | Path] = [
            *("judge", "run", "--questions", questions, "--outputs", judge_outputs),
            *("--judge", "openai/judge", "--out", out),
            *_model_args(server, tmp_path),
        ]
        first = assay(tmp_path, *command)
        assert first.returncode == 1, first.stderr
        pairs = len(server.requests)
        assert f"{pairs} judge call(s) failed" in first.stderr
        assert f"\n  server_error after 1 attempt(s): HTTP 500: boom ({pairs})\n" in first.stderr
        assert f"{pairs} invalid ({pairs} of them failed calls)" in first.stdout
        assert "assay judge run --questions" in first.stderr

        server.switch_to([OK])  # replies, though not valid evaluations: no failed call
        second = assay(tmp_path, *command)
        assert second.returncode == 0, second.stderr
        assert len(server.requests) == 2 * pairs


def test_generate_exits_1_with_the_retry_command(tmp_path: Path) -> None:
    questions = ROOT / "examples" / "judge" / "questions.jsonl"
    with fault_server([SERVER_ERROR]) as server:
        result = assay(
            tmp_path,
            *("generate", "--questions", questions, "--model", "openai/target"),
            *("--out", tmp_path / "outputs"),
            *_model_args(server, tmp_path),
        )
    assert result.returncode == 1
    assert "model call(s) failed after every retry" in result.stderr
    assert "assay generate --questions" in result.stderr


def test_the_retry_command_never_shows_credentials(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(1))
    with fault_server([SERVER_ERROR]) as server:
        port = server.server_address[1]
        url = f"http://user:hunter2-pass@127.0.0.1:{port}/v1?api_key=sk-in-url-123"
        result = assay(
            tmp_path,
            *("bench", "run", "--data", data, "--pattern", "entailment"),
            *("--out_dir", tmp_path / "run", "--no-report", "--no-progress"),
            *("--generator", "openai/x", "--verifier", "openai/x", "--base-url", url),
            *("--max-attempts", "1", "--no-cache"),
        )
    assert result.returncode == 1, result.stderr
    # every file the run wrote, the plots' PNGs too (bytes: a secret in a PNG's text chunk counts)
    stored = b"".join(p.read_bytes() for p in (tmp_path / "run").rglob("*") if p.is_file())
    for secret in ("hunter2", "sk-in-url-123"):
        assert secret not in result.stderr + result.stdout
        assert secret.encode() not in stored
    assert f"http://127.0.0.1:{port}/v1" in result.stderr
