"""What served a run's replies, end to end: real `assay generate`, `judge run` and `bench run`
processes against a loopback server that changes the model name or system fingerprint of its
replies after a number of them (as a hosted API does when it moves a model to another build),
and against llama-cpp-python's server, which reports no fingerprint. run.json's ``served``
counts each, over every session of the run; a change is a warning on the terminal and in the
run log."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import assay as assay_api
from assay.judge.archive import load_records
from assay.runs import NOT_REPORTED
from tests.helpers.fault_server import OK, SERVER_ERROR, fault_server
from tests.test_failed_calls import (  # noqa: F401 (a fixture)
    CLAIM_SUPPORTED,
    ROOT,
    assay,
    judge_outputs,
)
from tests.verify.bench_fixtures import verify_only_records, write_jsonl

QUESTIONS = ROOT / "examples" / "judge" / "questions.jsonl"
CELLS = 8  # 4 questions x 2 variants
CHANGED = "the system_fingerprint changed during the run"


def _generate(out: Path, base_url: str, cache: Path, model: str = "openai/gpt-x") -> list[Any]:
    return [
        *("generate", "--questions", QUESTIONS, "--model", model, "--out", out),
        *("--base-url", base_url, "--max-attempts", "1", "--cache-path", cache),
        *("--max-tokens", "8"),
    ]


def _run_json(run_dir: Path) -> dict[str, Any]:
    return dict(json.loads((run_dir / "run.json").read_text(encoding="utf-8")))


def _last_log_line(run_dir: Path) -> dict[str, Any]:
    lines = (run_dir / "run_log.jsonl").read_text(encoding="utf-8").splitlines()
    return dict(json.loads(lines[-1]))


def test_generate_counts_fingerprints_over_sessions_and_warns_of_the_change(
    tmp_path: Path,
) -> None:
    out, cache = tmp_path / "outputs", tmp_path / "cache.sqlite"
    served = [("gpt-x-0613", "fp_a"), ("gpt-x-0613", "fp_b")]
    script = [*[OK] * 5, SERVER_ERROR]  # five outputs, then the server fails: a resumed run
    with fault_server(script, served=served, served_changes_after=5) as server:
        first = assay(tmp_path, *_generate(out, server.base_url, cache))
        assert first.returncode == 1, first.stderr  # three failed calls
        assert _run_json(out)["served"] == {
            "openai/gpt-x": {
                "replies": 5,
                "model_names": {"gpt-x-0613": 5},
                "system_fingerprints": {"fp_a": 5},
            }
        }
        assert "warning:" not in first.stderr

        server.switch_to([OK])  # the three are answered now, by another backend configuration
        second = assay(tmp_path, *_generate(out, server.base_url, cache))
        assert second.returncode == 0, second.stderr
        entry = _run_json(out)["served"]["openai/gpt-x"]
        assert entry["replies"] == CELLS
        assert entry["system_fingerprints"] == {"fp_a": 5, "fp_b": 3}
        assert entry["model_names"] == {"gpt-x-0613": CELLS}
        assert f"warning: openai/gpt-x: {CHANGED} (fp_a for 5 replies, fp_b for 3 replies)" in (
            second.stderr
        )
        assert CHANGED in entry["warning"]
        assert _last_log_line(out)["served"]["openai/gpt-x"] == entry

        # a new run answered from the cache counts each reply as what first served it
        again = assay(tmp_path, *_generate(tmp_path / "again", server.base_url, cache))
        assert again.returncode == 0, again.stderr
        assert server.replies_served == CELLS  # no call was made
    assert _run_json(tmp_path / "again")["served"]["openai/gpt-x"] == entry
    assert CHANGED in again.stderr


def test_judge_run_warns_when_the_served_model_name_changes(
    tmp_path: Path,
    judge_outputs: Path,  # noqa: F811
) -> None:
    out = tmp_path / "judge"
    served = [("judge-0613", "fp_a"), ("judge-1106", "fp_b")]
    with fault_server([OK], served=served, served_changes_after=3) as server:
        result = assay(
            tmp_path,
            *("judge", "run", "--questions", QUESTIONS, "--outputs", judge_outputs),
            *("--judge", "openai/judge", "--out", out, "--base-url", server.base_url),
            "--no-cache",
        )
        replies = server.replies_served
    assert result.returncode == 0, result.stderr
    entry = _run_json(out)["served"]["openai/judge"]
    assert entry["replies"] == replies
    assert entry["model_names"] == {"judge-0613": 3, "judge-1106": replies - 3}
    assert entry["system_fingerprints"] == {"fp_a": 3, "fp_b": replies - 3}
    warning = "warning: openai/judge: the served model name changed during the run"
    assert warning in result.stderr
    assert (
        "the served model name changed" in _last_log_line(out)["served"]["openai/judge"]["warning"]
    )
    # each archived judgment names what served its reply, not only the run's counts
    calls = [record.call for record in load_records(out)]
    assert len(calls) == replies and all(call is not None for call in calls)
    served_each = Counter((call.reported_model, call.system_fingerprint) for call in calls if call)
    assert served_each == {("judge-0613", "fp_a"): 3, ("judge-1106", "fp_b"): replies - 3}
    frame = assay_api.load_run(out).to_pandas()  # and so does each row of the export
    assert (
        Counter(zip(frame["served_model"], frame["served_fingerprint"], strict=True)) == served_each
    )


def test_bench_run_records_each_models_fingerprints_and_warns_of_the_change(
    tmp_path: Path,
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(3))
    out = tmp_path / "run"
    served = [("x-0613", "fp_a"), ("x-0613", "fp_b")]
    with fault_server([OK], reply_text=CLAIM_SUPPORTED, served=served) as server:
        result = assay(
            tmp_path,
            *("bench", "run", "--data", data, "--pattern", "entailment", "--out_dir", out),
            *("--generator", "openai/x", "--verifier", "openai/x", "--no-report"),
            *("--claim-check", "json", "--no-progress", "--base-url", server.base_url),
            *("--cache-path", tmp_path / "responses.sqlite"),
        )
        replies = server.replies_served
    assert result.returncode == 0, result.stderr
    entry = _run_json(out)["served"]["openai/x"]
    assert entry["system_fingerprints"] == {"fp_a": 1, "fp_b": replies - 1}
    assert f"warning: openai/x: {CHANGED}" in result.stderr
    assert _last_log_line(out)["served"]["openai/x"] == entry
    # the report's reproducibility facts show it, marked
    from assay.report._html_common import reproducibility

    facts = {fact.label: fact for fact in reproducibility(_run_json(out), out)}
    fact = facts["served: openai/x"]
    assert fact.badge == "warn" and isinstance(fact.value, str)
    assert f"fp_b={replies - 1}" in fact.value and CHANGED in fact.value


@pytest.mark.slow
def test_a_server_without_fingerprints_is_recorded_as_not_reporting_them(
    tmp_path: Path, llama_server: str
) -> None:
    out = tmp_path / "outputs"
    command = _generate(out, llama_server, tmp_path / "cache.sqlite", model="openai/smollm2")
    result = assay(tmp_path, *command)
    assert result.returncode == 0, result.stderr
    entry = _run_json(out)["served"]["openai/smollm2"]
    assert entry["replies"] == CELLS
    assert entry["system_fingerprints"] == NOT_REPORTED
    assert sum(entry["model_names"].values()) == CELLS  # it names the model it served
    assert "warning" not in entry and "warning:" not in result.stderr
