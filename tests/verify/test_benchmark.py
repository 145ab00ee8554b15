"""The benchmark runner: artifacts, resumption, zero-call reruns, summary recomputation."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assay.errors import InputError, RunError
from assay.metrics import summarize_binary_detection
from assay.model import BackendError, ChatMessage, ErrorKind, GenerateConfig, ModelOptions
from assay.model.providers.stub import StubBackend
from assay.runs import read_jsonl
from assay.verify.benchmark import BenchmarkConfig, run_benchmark
from assay.verify.results import ResultRecord, failure_bucket, iter_results
from assay.verify.summary import BenchSummary, build_summary, first_pass

from .bench_fixtures import (
    generate_records,
    mixed_file,
    tally_in_batches,
    verify_only_records,
    write_jsonl,
)


def _config(data: Path, out: Path, **changes: Any) -> BenchmarkConfig:
    settings: dict[str, Any] = {
        "data": data,
        "out_dir": out,
        "pattern": "best_of_n",
        "n": 3,
        "generator": "stub/gen",
        "verifier": "lexical",
        "n_resamples": 50,
        "model_options": ModelOptions(cache=False),
    }
    return BenchmarkConfig.model_validate(settings | changes)


class Counting:
    """Backends by name that count every call a run makes (the cache is off in these tests)."""

    def __init__(self, *names: str) -> None:
        self.backends = {name: StubBackend(name.partition("/")[2]) for name in names}

    @property
    def calls(self) -> int:
        return sum(b.calls for b in self.backends.values())


class StopAfter(Exception):
    pass


def _refuse(messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random) -> str:
    raise BackendError(ErrorKind.BAD_REQUEST, "refused by the test")


def _results(out: Path) -> list[dict[str, Any]]:
    return list(read_jsonl(out / "results.jsonl"))


@pytest.mark.parametrize("pattern", ["best_of_n", "entailment", "self_consistency"])
def test_a_run_writes_every_artifact(tmp_path: Path, pattern: str) -> None:
    data = mixed_file(tmp_path / "data.jsonl", generated=4, verified=6)
    out = tmp_path / "run"
    report = run_benchmark(_config(data, out, pattern=pattern, oracle="stub/oracle"))
    assert report.selected == 10 and report.ran == 10 and report.calls > 0
    for name in ("results.jsonl", "summary.json", "run.json", "run_log.jsonl"):
        assert (out / name).is_file(), name
    for plot in ("calibration", "pr_curve", "roc_curve", "coverage_accuracy"):
        assert (out / "plots" / f"{plot}.png").stat().st_size > 1000
    results = [ResultRecord.model_validate(r) for r in _results(out)]
    assert sorted(r.id for r in results) == sorted(
        [f"g{i}" for i in range(4)] + [f"v{i}" for i in range(6)]
    )
    sources = {r.id[0]: r.label_source for r in results}
    assert sources == {"g": "oracle", "v": "dataset"}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["kind"] == "bench" and summary["score_event"].startswith("p_error")
    assert summary["labels"]["by_source"] == {"dataset": 6, "oracle": 4}
    assert summary["config"]["pattern"] == pattern
    assert json.loads((out / "run.json").read_text())["status"] == "success"
    if any(r.revision_used for r in results):
        pairs = [first_pass(r) for r in results]
        expected = sum(label is not None and p is not None for label, p in pairs)
        assert summary["detection_first_pass"]["n"] == expected
        revised = [r for r in results if r.revision_used]
        assert all(first_pass(r)[1] == r.revision.before.p_error for r in revised if r.revision)
    else:
        assert summary["detection_first_pass"] is None


def test_results_carry_the_fields_the_spec_names(tmp_path: Path) -> None:
    data = mixed_file(tmp_path / "data.jsonl", generated=2, verified=2)
    run_benchmark(_config(data, tmp_path / "run"))
    for line in _results(tmp_path / "run"):
        for field in (
            "id", "question", "selected_answer", "candidates", "verifier_score",
            "verifier_pass", "revision_used", "citations", "claim_checks", "gold_error",
            "label_source", "failure_bucket", "usage",
        ):  # fmt: skip
            assert field in line, field


def test_a_rerun_of_a_finished_run_makes_no_call(tmp_path: Path) -> None:
    data = mixed_file(tmp_path / "data.jsonl", generated=3, verified=2)
    out = tmp_path / "run"
    first = Counting("stub/gen")
    run_benchmark(_config(data, out), backends=first.backends)
    before = (out / "results.jsonl").read_bytes()
    again = Counting("stub/gen")
    report = run_benchmark(_config(data, out), backends=again.backends)
    assert first.calls > 0
    assert again.calls == 0 and report.calls == 0 and report.ran == 0
    assert report.already_done == 5
    assert (out / "results.jsonl").read_bytes() == before


def test_an_interrupted_run_resumes_without_recomputing(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", generate_records(8))
    out = tmp_path / "run"
    seen: list[str] = []

    def stop_after_three(result: ResultRecord) -> None:
        seen.append(result.id)
        if len(seen) == 3:
            raise StopAfter

    interrupted = Counting("stub/gen")
    with pytest.raises(StopAfter):
        run_benchmark(
            _config(data, out, concurrency=1),
            on_result=stop_after_three,
            backends=interrupted.backends,
        )
    kept = _results(out)
    assert [r["id"] for r in kept] == seen
    assert json.loads((out / "run.json").read_text())["status"] == "error"

    resumed = Counting("stub/gen")
    report = run_benchmark(_config(data, out), backends=resumed.backends)
    assert report.already_done == 3 and report.ran == 5
    assert resumed.calls == 5 * 3  # n=3 answers for each of the five records left
    ids = [r["id"] for r in _results(out)]
    assert sorted(ids) == sorted(f"g{i}" for i in range(8)) and len(ids) == len(set(ids))
    assert _results(out)[:3] == kept


def test_max_examples_then_the_full_file_keeps_the_first_results(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", generate_records(6))
    out = tmp_path / "run"
    run_benchmark(_config(data, out, max_examples=2))
    first_two = (out / "results.jsonl").read_bytes()
    counting = Counting("stub/gen")
    report = run_benchmark(_config(data, out, max_examples=None), backends=counting.backends)
    assert report.already_done == 2 and report.ran == 4 and counting.calls == 4 * 3
    assert (out / "results.jsonl").read_bytes().startswith(first_two)


def test_a_run_directory_refuses_other_settings(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", generate_records(2))
    out = tmp_path / "run"
    run_benchmark(_config(data, out))
    with pytest.raises(RunError, match="other settings"):
        run_benchmark(_config(data, out, n=4))


def test_bad_input_stops_before_any_model_call(tmp_path: Path) -> None:
    records = generate_records(3)
    del records[1]["question"]
    data = write_jsonl(tmp_path / "data.jsonl", records)
    counting = Counting("stub/gen")
    with pytest.raises(InputError) as caught:
        run_benchmark(_config(data, tmp_path / "run"), backends=counting.backends)
    assert caught.value.line == 2 and caught.value.field == "question"
    assert counting.calls == 0
    assert not (tmp_path / "run").exists()  # nothing written for input that cannot run


def test_skip_invalid_runs_the_rest_and_lists_what_it_skipped(tmp_path: Path) -> None:
    records = generate_records(3)
    records[1]["evidence"] = []
    data = write_jsonl(tmp_path / "data.jsonl", records)
    out = tmp_path / "run"
    report = run_benchmark(_config(data, out, skip_invalid=True))
    assert report.selected == 2 and report.skipped_invalid == 1
    (skipped,) = read_jsonl(out / "skipped_records.jsonl")
    assert skipped["line"] == 2 and "evidence" in str(skipped["field"])


def test_summary_equals_a_recomputation_from_results(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(24))
    out = tmp_path / "run"
    run_benchmark(_config(data, out, pattern="entailment", n_resamples=200))
    summary = json.loads((out / "summary.json").read_text())
    results = list(iter_results(out / "results.jsonl"))
    used = [r for r in results if r.gold_error is not None and r.verifier_score is not None]
    expected = summarize_binary_detection(
        np.array([r.gold_error for r in used]),
        np.array([r.verifier_score for r in used]),
        threshold=0.5,
        clusters=np.array([r.cluster for r in used], dtype=object),
        n_resamples=200,
        seed=0,
    )
    got = summary["detection"]
    assert got["n"] == len(used) == 24 and got["n_clusters"] == 8
    for name, block in expected["metrics"].items():
        assert got["metrics"][name] == pytest.approx(block), name
    assert summary["counts"]["used_for_detection"] == 24
    flagged = sum(r.verifier_pass is False for r in results)
    assert got["confusion"]["tp"] + got["confusion"]["fp"] == flagged
    buckets = summary["buckets"]
    for bucket in {r.failure_bucket for r in results}:
        members = [r for r in results if r.failure_bucket == bucket]
        assert buckets[bucket]["examples"] == len(members)
        assert buckets[bucket]["flagged"] == sum(r.verifier_pass is False for r in members)
    gate = summary["selective"]["gate"]
    passed = [r for r in used if r.verifier_pass]
    assert gate["coverage"] == pytest.approx(len(passed) / len(used))
    assert gate["accuracy_of_passed"] == pytest.approx(
        sum(not r.gold_error for r in passed) / len(passed)
    )
    rebuilt = build_summary(out, plots=False)
    assert rebuilt.detection == BenchSummary.model_validate(summary).detection


def test_failed_calls_are_counted_apart_and_left_out(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(6))
    out = tmp_path / "run"
    failing = StubBackend("checker", replies=_refuse)
    report = run_benchmark(
        _config(data, out, pattern="entailment", verifier="stub/checker"),
        backends={"stub/checker": failing},
    )
    assert report.failed == 6
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"]["examples_with_failed_calls"] == 6
    assert summary["counts"]["verifier_failures"] == 0 and summary["counts"]["scored"] == 0
    assert summary["counts"]["used_for_detection"] == 0
    assert summary["detection"] is None and "no answer" in summary["detection_note"]
    for line in _results(out):
        assert line["verifier_score"] is None and line["failure"].startswith("claim check failed")
        assert "bad_request" in line["failure"]


def test_self_consistency_records_its_critique(tmp_path: Path) -> None:
    data = mixed_file(tmp_path / "data.jsonl", generated=2, verified=2)
    out = tmp_path / "run"
    run_benchmark(_config(data, out, pattern="self_consistency", n=2))
    for line in _results(out):
        assert line["critique"] is not None
        assert line["critique"]["votes"] >= 1 or line["failure"]


def test_injected_labels_are_recognised_from_perturb_ids(tmp_path: Path) -> None:
    records = verify_only_records(2)
    records[0] |= {"id": "x::contradiction", "error_type": "contradiction"}
    data = write_jsonl(tmp_path / "data.jsonl", records)
    out = tmp_path / "run"
    run_benchmark(_config(data, out, pattern="entailment"))
    sources = {r["id"]: r["label_source"] for r in _results(out)}
    assert sources == {"x::contradiction": "injected", "v1": "dataset"}


@pytest.mark.parametrize(
    ("error", "error_type", "bucket"),
    [
        (False, None, "grounded"),
        (True, "wrong_citation", "wrong_citation"),
        (True, "Overgeneralisation", "overgeneralization"),
        (True, "not_supported", "unsupported_claim"),
        (True, "Partial", "other"),
        (True, None, "other"),
        (None, "contradiction", None),
    ],
)
def test_failure_buckets(error: bool | None, error_type: str | None, bucket: str | None) -> None:
    assert failure_bucket(error, error_type) == bucket


@pytest.mark.slow
def test_a_run_on_the_embedded_model(tmp_path: Path) -> None:
    data = mixed_file(tmp_path / "data.jsonl", generated=1, verified=0)
    out = tmp_path / "run"
    config = _config(
        data,
        out,
        pattern="entailment",
        generator="llamacpp/smollm2",
        max_tokens=24,
        revise=False,
        model_options=ModelOptions(),
    )
    report = run_benchmark(config)
    assert report.ran == 1 and report.calls <= 1  # the answer may be cached by another test
    (line,) = _results(out)
    assert line["usage"]["calls"] + line["usage"]["cache_hits"] == 1
    assert line["mode"] == "generate" and line["candidates"][0]["text"] is not None
    assert (line["verifier_score"] is None) == (line["failure"] is not None)
    rerun = run_benchmark(config)
    assert rerun.calls == 0 and rerun.ran == 0


def test_a_rerun_retries_failed_examples_and_supersedes_their_lines(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(4))
    out = tmp_path / "run"
    config = _config(data, out, pattern="entailment", verifier="stub/checker")
    failing = StubBackend("checker", replies=_refuse)
    assert run_benchmark(config, backends={"stub/checker": failing}).failed == 4
    working = StubBackend("checker")
    second = run_benchmark(config, backends={"stub/checker": working})
    assert second.failed == 0 and second.ran == 4 and working.calls > 0
    assert len(_results(out)) == 8  # append-only: the failed lines stay, superseded
    current = list(iter_results(out / "results.jsonl"))
    assert [r.id for r in current] == ["v0", "v1", "v2", "v3"]
    assert all(r.complete for r in current)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"]["results"] == 4
    assert summary["counts"]["examples_with_failed_calls"] == 0
    third = run_benchmark(config, backends={"stub/checker": StubBackend("checker")})
    assert third.ran == 0 and third.calls == 0


def _varied_results(tmp_path: Path) -> list[ResultRecord]:
    """Results of several patterns and outcomes: scored, revised, unlabelled, failed calls."""
    verified = write_jsonl(tmp_path / "verified.jsonl", verify_only_records(30))
    mixed = mixed_file(tmp_path / "mixed.jsonl", generated=16, verified=4)
    failing = StubBackend("checker", replies=_refuse)
    runs: list[tuple[Path, dict[str, Any], dict[str, Any]]] = [
        (verified, {"pattern": "entailment"}, {}),
        (mixed, {"pattern": "entailment", "oracle": "stub/oracle"}, {}),
        (mixed, {"pattern": "entailment", "oracle": "stub/oracle", "seed": 1}, {}),
        (mixed, {"pattern": "best_of_n", "oracle": "stub/oracle"}, {}),
        (mixed, {"pattern": "self_consistency"}, {}),
        (
            verified,
            {"pattern": "entailment", "verifier": "stub/checker", "max_examples": 4},
            {"stub/checker": failing},
        ),
    ]
    results: list[ResultRecord] = []
    for index, (data, changes, backends) in enumerate(runs):
        out = tmp_path / f"run{index}"
        run_benchmark(_config(data, out, **changes), backends=backends)
        results += iter_results(out / "results.jsonl")
    return results


def test_a_tally_merged_from_batches_equals_one_fed_result_by_result(tmp_path: Path) -> None:
    """A Ray run merges its workers' tallies of their batches: the summary must be exactly
    the one of the same results added one by one, however they are grouped."""
    results = _varied_results(tmp_path)
    whole = build_summary(tmp_path, results=results, plots=False, n_resamples=20)
    assert whole.revision.attempted and whole.counts["examples_with_failed_calls"]
    assert whole.counts["unlabelled"] and whole.selection is not None
    expected = whole.model_dump(mode="json", exclude={"created_at"})
    for size in (1, 3, 7, len(results)):
        merged = tally_in_batches(results, size)
        summary = build_summary(tmp_path, plots=False, n_resamples=20, tally=merged)
        got = summary.model_dump(mode="json", exclude={"created_at", "money"})
        assert got == {k: v for k, v in expected.items() if k != "money"}, size
        assert json.dumps(got) == json.dumps({k: v for k, v in expected.items() if k != "money"})
