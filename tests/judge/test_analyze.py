"""Analysis tables on hand-made archives: what enters statistics, and the numbers themselves."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from assay.errors import RunError
from assay.judge.analysis_types import AnalysisSettings
from assay.judge.analyze import analyze_run, summarize
from assay.judge.archive import Archive, EvaluationRecord, FailureInfo
from assay.judge.evaluations import final_evaluations
from assay.judge.findings import Check
from assay.judge.protocol import (
    DIMENSION_KEYS,
    JUDGE_CALL_FAILED,
    DecodingSettings,
    Protocol,
    verdict_for,
)
from assay.judge.run import protocol_state
from assay.judge.validate import Classification, classify
from assay.model import user

from .helpers import META, OUTPUT_TEXT, dumps, valid_body

FAST = AnalysisSettings(n_resamples=200, plots=False)


def record(
    judge: str,
    target: str,
    question: str,
    variant: str,
    dims: tuple[int, int, int, int] | None,
    attempt: int = 1,
) -> EvaluationRecord:
    """A valid evaluation with these scores, or (dims None) an invalid one."""
    method = "self_judge" if judge == target else "cross_judge"
    meta = {
        **META,
        "judge_model": judge,
        "target_model": target,
        "question_id": question,
        "prompt_variant": variant,
        "output_id": f"{target}/{question}/{variant}",
        "method": method,
    }
    body = valid_body()
    body["meta"] = meta
    if dims is not None:
        scores = dict(zip(DIMENSION_KEYS, dims, strict=True))
        body["scores"] = {**scores, "overall_score": sum(dims)}
        body["verdict"] = verdict_for(scores, Protocol().thresholds)
    reply = dumps(body) if dims is not None else "```" + dumps(body) + "```"
    classification = classify(reply, meta, OUTPUT_TEXT, Protocol())
    assert classification.valid == (dims is not None)
    return EvaluationRecord(
        fingerprint="f",
        question_id=question,
        prompt_variant=variant,
        target_model=target,
        output_id=meta["output_id"],
        judge_model=judge,
        method=method,  # type: ignore[arg-type]
        attempt=attempt,
        valid=classification.valid,
        flags=classification.flags,
        classification=classification,
        raw_reply=reply,
        constrained=False,
        messages=(user("p"),),
        evaluated_output=OUTPUT_TEXT,
    )


SCORES_J1_ON_T = {  # judge j1 on target t: question -> variant -> dims
    "Q1": {"A": (2, 2, 2, 2), "B": (1, 1, 1, 1)},
    "Q2": {"A": (2, 1, 2, 1), "B": (0, 1, 1, 1)},
    "Q3": {"A": (2, 2, 1, 2), "B": (2, 2, 0, 2)},
}


def records() -> list[EvaluationRecord]:
    out = [
        record("j1", "t", q, v, dims)
        for q, by_variant in SCORES_J1_ON_T.items()
        for v, dims in by_variant.items()
    ]
    out.append(record("j1", "t", "Q4", "A", None))  # invalid: a code fence
    out += [record("t", "t", q, "A", (2, 2, 2, 2)) for q in ("Q1", "Q2", "Q3")]  # self
    out += [record("j2", "t", q, "A", (2, 2, 2, 1)) for q in ("Q1", "Q2", "Q3")]
    out.append(record("j2", "t", "Q4", "A", None))
    out.append(record("j2", "t", "Q4", "A", (1, 1, 1, 1), attempt=2))  # re-ask fixed it
    return out


def test_final_evaluation_is_the_valid_attempt() -> None:
    finals = final_evaluations(records())
    q4 = [r for r in finals if r.question_id == "Q4"]
    assert sorted((r.judge_model, r.valid, r.attempt) for r in q4) == [
        ("j1", False, 1),
        ("j2", True, 2),
    ]


def test_counts_and_first_attempt_validity() -> None:
    summary = summarize(records(), FAST)
    counts = summary.counts
    assert (counts.records, counts.work_items, counts.valid, counts.invalid) == (15, 14, 13, 1)
    assert (counts.first_attempts, counts.first_attempt_valid) == (14, 12)
    assert counts.by_method == {
        "cross_judge": {"valid": 10, "work_items": 11},
        "self_judge": {"valid": 3, "work_items": 3},
    }


def failed_call(judge: str, target: str, question: str, variant: str) -> EvaluationRecord:
    """An attempt whose model call failed after every retry: no reply, JUDGE_CALL_FAILED."""
    check = Check(name="model_call", passed=False, flag=JUDGE_CALL_FAILED, detail="down")
    classification = Classification(
        valid=False, flags=(JUDGE_CALL_FAILED,), checks=(check,), parse="none"
    )
    return record(judge, target, question, variant, None).model_copy(
        update={
            "flags": classification.flags,
            "classification": classification,
            "raw_reply": None,
            "call_failure": FailureInfo(kind="connection", message="down", attempts=4),
        }
    )


def test_a_failed_call_is_not_the_judges_first_attempt() -> None:
    # the server went down under Q5's first call; the run after judged it validly at once
    retried = [
        failed_call("j1", "t", "Q5", "A"),
        record("j1", "t", "Q5", "A", (2, 2, 2, 2), attempt=2),
    ]
    summary = summarize([*records(), *retried], FAST)
    counts = summary.counts
    assert (counts.first_attempts, counts.first_attempt_valid) == (15, 13)
    rows = summary.invalid_rates
    row = next(r for r in rows if r.judge_model == "j1" and r.prompt_variant == "A")
    assert (row.first_attempt_n, row.first_attempt_invalid) == (5, 1)  # Q1-Q5; Q4 invalid


def test_scores_use_valid_evaluations_only_and_keep_methods_apart() -> None:
    rows = summarize(records(), FAST).scores
    j1_a = {r.dimension: r for r in rows if (r.judge_model, r.prompt_variant) == ("j1", "A")}
    assert j1_a["overall_score"].n == 3  # Q4's invalid evaluation is not a score
    assert j1_a["overall_score"].mean == pytest.approx((8 + 6 + 7) / 3)
    assert (
        j1_a["overall_score"].ci_low <= j1_a["overall_score"].mean <= j1_a["overall_score"].ci_high
    )
    assert j1_a["FORMAT_COMPLIANCE"].mean == 2.0
    assert {r.method for r in rows if r.judge_model == "t"} == {"self_judge"}


def test_verdicts_and_invalid_rates() -> None:
    summary = summarize(records(), FAST)
    j1_b = next(r for r in summary.verdicts if (r.judge_model, r.prompt_variant) == ("j1", "B"))
    assert j1_b.counts == {"PASS": 0, "PARTIAL": 2, "FAIL": 1}  # 4, 6 with a zero, 3
    j1_a = next(
        r for r in summary.invalid_rates if (r.judge_model, r.prompt_variant) == ("j1", "A")
    )
    assert (j1_a.n, j1_a.invalid, j1_a.rate) == (4, 1, 0.25)
    assert j1_a.flags == {"PROTOCOL_VIOLATION": 1}
    j2 = next(r for r in summary.invalid_rates if r.judge_model == "j2")
    assert (j2.invalid, j2.first_attempt_invalid, j2.first_attempt_n) == (0, 1, 4)


def test_variant_effect_is_paired_by_question() -> None:
    rows = summarize(records(), FAST).variant_effects
    overall = next(r for r in rows if r.judge_model == "j1" and r.dimension == "overall_score")
    assert (overall.baseline, overall.variant, overall.n_pairs) == ("A", "B", 3)
    diffs = [4 - 8, 3 - 6, 6 - 7]
    assert overall.mean_difference == pytest.approx(np.mean(diffs))
    assert min(diffs) <= overall.ci_low <= overall.ci_high <= max(diffs)


def test_self_preference_pairs_self_with_mean_cross() -> None:
    rows = summarize(records(), FAST).self_preference
    overall = next(r for r in rows if r.dimension == "overall_score")
    # self gives 8 on Q1-Q3 A; cross: j1 gives 8, 6, 7 and j2 gives 7, 7, 7
    cross = [(8 + 7) / 2, (6 + 7) / 2, (7 + 7) / 2]
    assert overall.n_pairs == 3 and overall.cross_judges == ("j1", "j2")
    assert overall.self_mean == 8.0 and overall.cross_mean == pytest.approx(np.mean(cross))
    assert overall.difference == pytest.approx(8 - np.mean(cross))
    assert overall.judging == "not blind"


def test_self_preference_reports_the_judging_mode() -> None:
    aliases = {"target_model": "model-00000000", "output_id": "output-000000000000"}
    blind = [r.model_copy(update={"aliases": aliases}) for r in records()]
    rows = summarize(blind, FAST).self_preference
    assert rows and {r.judging for r in rows} == {"blind"}
    mixed = [
        r.model_copy(update={"aliases": aliases}) if r.method == "self_judge" else r
        for r in records()
    ]
    assert {r.judging for r in summarize(mixed, FAST).self_preference} == {"mixed"}


def test_agreement_matches_scikit_learn() -> None:
    rows = summarize(records(), FAST).agreement
    kappa = next(
        r
        for r in rows
        if r.scope == "cross_only"
        and r.statistic == "cohen_kappa_quadratic"
        and r.dimension == "overall_score"
    )
    j1 = [8, 6, 7]  # Q1-Q3 A, where both cross judges are valid (Q4: j1 invalid)
    j2 = [7, 7, 7]
    expected = cohen_kappa_score(j1, j2, weights="quadratic", labels=list(range(9)))
    assert kappa.judges == ("j1", "j2") and kappa.n_units == 3
    assert kappa.value == pytest.approx(expected)
    alpha = next(
        r
        for r in rows
        if r.scope == "all_methods"
        and r.statistic == "krippendorff_alpha_ordinal"
        and r.dimension == "SEMANTIC_FIDELITY"
    )
    assert alpha.judges == ("j1", "j2", "t") and alpha.n_units == 3
    constant = next(
        r for r in rows if r.scope == "cross_only" and r.dimension == "FORMAT_COMPLIANCE"
    )
    assert constant.value is None and "undefined" in constant.note  # both judges all 2s


def test_analyze_run_writes_summary_report_and_plots(tmp_path: Path) -> None:
    state = protocol_state(Protocol(), DecodingSettings())
    archive = Archive.open(tmp_path / "run", state)
    for item in records():
        archive.add(item.model_copy(update={"fingerprint": state.fingerprint}))
    result = analyze_run(tmp_path / "run", AnalysisSettings(n_resamples=100))
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["kind"] == "judge" and summary["fingerprint"] == state.fingerprint
    assert summary["thresholds"]["pass_min"] == 7
    assert len(result.summary.plots) == 3
    report = (tmp_path / "run" / "results_analysis.md").read_text()
    assert "## Cross-judging (primary)" in report and "## Self-preference" in report
    assert "Invalid evaluations are not FAIL" in report


def test_empty_archive_analyses_without_numbers(tmp_path: Path) -> None:
    Archive.open(tmp_path / "run", protocol_state(Protocol(), DecodingSettings()))
    result = analyze_run(tmp_path / "run", FAST)
    assert result.summary.counts.work_items == 0 and math.isnan(result.summary.counts.valid_rate)
    assert (
        json.loads((tmp_path / "run" / "summary.json").read_text())["counts"]["valid_rate"] is None
    )


def test_analyze_needs_a_run_dir(tmp_path: Path) -> None:
    with pytest.raises(RunError):
        analyze_run(tmp_path, FAST)


@pytest.mark.parametrize("field", ["verdict", "flags"])
def test_null_verdict_or_flags_is_invalid_and_every_evaluation_is_counted(field: str) -> None:
    """Issue 14 #6: a reply with ``"verdict": null`` once passed as valid, and the verdict
    table then had n=5 with counts summing to 3. Now it is invalid, and every valid
    evaluation has a verdict the table counts."""
    records = [record("j1", "t", f"Q{i}", "A", (2, 2, 2, 2)) for i in range(5)]
    for index in (1, 3):
        body = json.loads(records[index].raw_reply or "")
        body[field] = None
        reply = dumps(body)
        meta = body["meta"]
        classification = classify(reply, meta, OUTPUT_TEXT, Protocol())
        assert not classification.valid and "UNPARSABLE_OUTPUT" in classification.flags
        records[index] = records[index].model_copy(
            update={
                "valid": False,
                "flags": classification.flags,
                "classification": classification,
                "raw_reply": reply,
            }
        )
    summary = summarize(records, FAST)
    assert summary.counts.valid == 3 and summary.counts.invalid == 2
    for row in summary.verdicts:
        assert sum(row.counts.values()) == row.n
    assert sum(row.n for row in summary.verdicts) == summary.counts.valid


def test_the_final_attempt_is_the_first_valid_else_the_last() -> None:
    from typing import NamedTuple

    class Attempt(NamedTuple):
        work_key: tuple[str, str, str, str, str]
        attempt: int
        valid: bool
        tag: str

    def key(q: str) -> tuple[str, str, str, str, str]:
        return (q, "v", "t", "o", "j")

    attempts = [
        Attempt(key("a"), 2, True, "a2"),
        Attempt(key("b"), 1, False, "b1"),
        Attempt(key("a"), 1, False, "a1"),
        Attempt(key("a"), 3, True, "a3"),
        Attempt(key("b"), 2, False, "b2"),
        Attempt(key("c"), 1, False, "c1"),
        Attempt(key("c"), 1, False, "c1-again"),  # a duplicate attempt: the later line counts
        Attempt(key("d"), 2, True, "d2"),
        Attempt(key("d"), 1, True, "d1"),
    ]
    finals = final_evaluations(attempts)
    assert [f.tag for f in finals] == ["a2", "b2", "c1-again", "d1"]  # first-seen order


def test_a_judge_that_gave_every_output_one_score_is_named() -> None:
    same = [record("j1", "t", f"Q{i}", "A", (1, 1, 1, 1)) for i in range(10)]
    summary = summarize(same, FAST)
    assert summary.notes == (
        "j1 gave all 10 of its valid evaluations the same scores (D1-D4 1/1/1/1): it told none "
        "of the outputs apart, so its means, variant effects and agreement say nothing about "
        "them",
    )
    assert summarize(same[:9], FAST).notes == ()  # too few to tell
    varied = [*same, record("j1", "t", "Q10", "A", (2, 1, 1, 1))]
    assert summarize(varied, FAST).notes == ()
    assert summarize(records(), FAST).notes == ()
