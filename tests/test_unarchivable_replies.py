"""Replies an archive could not hold (issue 14 #1, #2), from a real server to real processes:
a lone surrogate or deep nesting in a judge or checker reply neither stops the run nor bricks
its folder; every record written reads back, and a rerun continues."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.judge.archive import iter_archive
from tests.helpers.fault_server import OK, fault_server
from tests.test_failed_calls import (  # noqa: F401 (judge_outputs is a fixture)
    ROOT,
    assay,
    judge_outputs,
)
from tests.verify.bench_fixtures import verify_only_records, write_jsonl

QUESTIONS = ROOT / "examples" / "judge" / "questions.jsonl"
DEEP = '{"a":' * 300 + "1" + "}" * 300
SURROGATE = 'Before \ud800 after {"verdict": "PASS"}'
HOSTILE = {"lone-surrogate": SURROGATE, "deep-nesting": DEEP}


@pytest.mark.parametrize("reply", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_judge_run_archives_hostile_replies_and_resumes(
    tmp_path: Path,
    judge_outputs: Path,  # noqa: F811
    reply: str,
) -> None:
    out = tmp_path / "judge"
    with fault_server([OK], reply_text=reply) as server:
        command: list[str | Path] = [
            *("judge", "run", "--questions", QUESTIONS, "--outputs", judge_outputs),
            *("--judge", "openai/judge", "--out", out, "--base-url", server.base_url),
            *("--judge-attempts", "1"),
        ]
        first = assay(tmp_path, *command)
        assert first.returncode == 0, first.stderr
        assert "internal error" not in first.stderr
        asked = len(server.requests)
        again = assay(tmp_path, *command)
        assert again.returncode == 0, again.stderr
        assert len(server.requests) == asked  # nothing re-asked: every record was finished
    validate = assay(tmp_path, "judge", "validate", out)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    analyze = assay(tmp_path, "judge", "analyze", out, "--no-report")
    assert analyze.returncode == 0, analyze.stderr
    stored = list(iter_archive(out))
    assert stored and all(not i.in_valid_archive for i in stored)
    records = [i.record for i in stored if i.record is not None]
    assert len(records) == len(stored) and all(not r.valid for r in records)
    assert all(r.raw_reply == reply for r in records)  # the raw reply, exactly


@pytest.mark.parametrize("reply", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_bench_run_survives_hostile_checker_replies(tmp_path: Path, reply: str) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(3))
    out = tmp_path / "run"
    with fault_server([OK], reply_text=reply) as server:
        command: list[str | Path] = [
            *("bench", "run", "--data", data, "--pattern", "entailment", "--out_dir", out),
            *("--verifier", "openai/x", "--base-url", server.base_url),
            *("--no-report", "--no-progress"),
        ]
        first = assay(tmp_path, *command)
        assert "internal error" not in first.stderr
        assert first.returncode == 0, first.stderr
        asked = len(server.requests)
        again = assay(tmp_path, *command)
        assert again.returncode == 0, again.stderr
        assert len(server.requests) == asked
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3


@pytest.mark.parametrize("layout", ["shards", "files"])
def test_an_unreadable_record_is_reported_then_quarantined_and_redone(
    tmp_path: Path,
    judge_outputs: Path,  # noqa: F811
    layout: str,
) -> None:
    out = tmp_path / "judge"
    command: list[str | Path] = [
        *("judge", "run", "--questions", QUESTIONS, "--outputs", judge_outputs),
        *("--judge", "stub/judge", "--out", out, "--archive-layout", layout),
    ]
    assert assay(tmp_path, *command).returncode == 0
    victim = next(iter_archive(out)).path
    if layout == "files":
        victim.write_text('{"schema_version": 1, "torn', encoding="utf-8")
    else:  # the first line of a shard, damaged in place (a complete line that does not parse)
        _first, *rest = victim.read_text(encoding="utf-8").splitlines(keepends=True)
        victim.write_text('{"schema_version": 1, "torn\n' + "".join(rest), encoding="utf-8")
    finished = len([i for i in iter_archive(out) if i.record is not None])

    analyze = assay(tmp_path, "judge", "analyze", out, "--no-report")
    assert analyze.returncode == 0, analyze.stderr
    assert "skipped 1 unreadable record(s)" in analyze.stderr and victim.name in analyze.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["skipped_unreadable"]) == 1

    again = assay(tmp_path, *command)
    assert again.returncode == 0, again.stderr
    assert "unreadable record moved to" in again.stderr
    assert (out / "quarantine" / victim.relative_to(out)).exists()
    assert victim.exists()  # judged again
    assert len([i for i in iter_archive(out) if i.record is not None]) == finished + 1
    assert assay(tmp_path, "judge", "validate", out).returncode == 0
