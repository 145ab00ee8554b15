"""What the specification asks of a bench run, checked through the real command line.

The spec's standardized artifacts are results.jsonl, summary.json and plots/ with
calibration.png, pr_curve.png, roc_curve.png and coverage_accuracy.png. A curve the labels
cannot define is still a file, a figure that says why, and summary.json's plots_note says it.
Its grounding metrics are defined over an answer's claims ("citation coverage: % of answer
claims with at least one evidence citation"), whichever pattern verified the answer.
"""

from __future__ import annotations

import json
from pathlib import Path

from assay.cli import main

from .bench_fixtures import generate_records, verify_only_records, write_jsonl

SPEC_PLOTS = ["calibration.png", "coverage_accuracy.png", "pr_curve.png", "roc_curve.png"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _bench_run(data: Path, out: Path, *extra: str, pattern: str = "entailment") -> int:
    return main(
        [
            "bench", "run", "--data", str(data), "--pattern", pattern,
            "--out_dir", str(out), "--verifier", "lexical", "--no-cache", "--no-progress",
            "--n-resamples", "20", *extra,
        ]
    )  # fmt: skip


def _assert_spec_artifacts(out: Path) -> dict[str, object]:
    for name in ("results.jsonl", "summary.json"):
        assert (out / name).is_file(), name
    assert sorted(p.name for p in (out / "plots").iterdir()) == SPEC_PLOTS
    for name in SPEC_PLOTS:
        assert (out / "plots" / name).read_bytes().startswith(PNG_SIGNATURE), name
    summary: dict[str, object] = json.loads((out / "summary.json").read_text())
    assert summary["plots"] == {
        "calibration": "plots/calibration.png",
        "pr_curve": "plots/pr_curve.png",
        "roc_curve": "plots/roc_curve.png",
        "coverage_accuracy": "plots/coverage_accuracy.png",
    }
    return summary


def test_an_unlabelled_run_still_writes_the_four_plots(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", generate_records(4))
    out = tmp_path / "run"
    assert _bench_run(data, out, "--generator", "stub/gen") == 0
    summary = _assert_spec_artifacts(out)
    assert summary["plots_note"] == (
        "every plot says why it has no curve: no answer has both a gold label and a verifier score"
    )


def test_pr_and_roc_over_one_class_are_files_that_say_why(tmp_path: Path) -> None:
    grounded = [r for r in verify_only_records(6) if r["gold_error"] is False]
    data = write_jsonl(tmp_path / "data.jsonl", grounded)
    out = tmp_path / "run"
    assert _bench_run(data, out) == 0
    summary = _assert_spec_artifacts(out)
    assert summary["plots_note"] == (
        "pr_curve.png and roc_curve.png have no curve: the 2 labelled, scored answers are all "
        "grounded; PR and ROC curves need both grounded and erroneous answers"
    )


def test_summarize_replaces_a_curve_the_results_no_longer_define(tmp_path: Path) -> None:
    """A PR curve from an earlier summary is never left beside results that cannot draw it."""
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(6))
    out = tmp_path / "run"
    assert _bench_run(data, out) == 0
    drawn = (out / "plots" / "pr_curve.png").read_bytes()
    lines = (out / "results.jsonl").read_text().splitlines()
    grounded = [line for line in lines if json.loads(line)["gold_error"] is False]
    (out / "results.jsonl").write_text("".join(line + "\n" for line in grounded))
    assert main(["bench", "summarize", str(out), "--n-resamples", "20"]) == 0
    _assert_spec_artifacts(out)
    assert (out / "plots" / "pr_curve.png").read_bytes() != drawn


def test_best_of_n_citation_coverage_counts_the_answers_claims(tmp_path: Path) -> None:
    """An answer-level verdict still reports coverage over claims, as entailment does."""
    records = verify_only_records(2)
    records[0]["answer"] = (
        "Paris is the capital of France. [cite:p1] Lyon is the third-largest city in France."
    )
    records[1]["answer"] = "Paris is the capital of France. [cite:p1]"
    data = write_jsonl(tmp_path / "data.jsonl", records)
    coverage = {}
    for pattern in ("best_of_n", "entailment"):
        out = tmp_path / pattern
        assert _bench_run(data, out, "--n", "1", pattern=pattern) == 0
        summary = json.loads((out / "summary.json").read_text())
        coverage[pattern] = summary["grounding"]["metrics"]["citation_coverage"]
    assert coverage == {"best_of_n": 2 / 3, "entailment": 2 / 3}
    first = json.loads((tmp_path / "best_of_n" / "results.jsonl").read_text().splitlines()[0])
    (check,) = first["claim_checks"]
    assert check["claim_citations"] == [["p1"], []]


def test_each_result_carries_its_answers_citation_coverage(tmp_path: Path) -> None:
    """The spec lists citation coverage among what the entailment check outputs per answer."""
    records = verify_only_records(3)
    records[0]["answer"] = (
        "Paris is the capital of France. [cite:p1] Lyon is the third-largest city in France."
    )
    records[1]["answer"] = "Paris is the capital of France. [cite:p1]"
    records[2]["answer"] = "Paris is the capital of France."
    data = write_jsonl(tmp_path / "data.jsonl", records)
    for pattern in ("entailment", "best_of_n"):
        out = tmp_path / pattern
        assert _bench_run(data, out, "--n", "1", pattern=pattern) == 0
        lines = (out / "results.jsonl").read_text().splitlines()
        coverage = {r["id"]: r["citation_coverage"] for r in map(json.loads, lines)}
        assert coverage == {"v0": 0.5, "v1": 1.0, "v2": 0.0}, pattern


def test_the_example_files_gold_spans_quote_their_evidence() -> None:
    """The spec's span is a quote of the cited snippet; the shipped examples keep to it."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    for name in ("grounded_qa.jsonl", "grounded_qa_labelled.jsonl"):
        for line in (examples / name).read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            texts = {e["evidence_id"]: e["text"] for e in record["evidence"]}
            for gold in record.get("gold_citations", []):
                if gold.get("span") is not None:
                    assert gold["span"] in texts[gold["evidence_id"]], (name, record["id"])
