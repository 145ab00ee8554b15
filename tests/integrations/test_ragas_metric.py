"""``assay.integrations.ragas.GroundedClaims``: assay's learned checker as a metric of a real
``ragas.evaluate`` run (ragas 0.4.3, no LLM, no embeddings) beside ragas' own ``ExactMatch``,
over a dataset ragas wrote and read back, checked against ``assay bench run`` on the same
answers."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from assay.verify.calibration import read_calibration
from tests.helpers.bench_scores import learned_calibration
from tests.helpers.eiffel_tower import CONTEXTS, QUESTION, SCORED_ANSWERS
from tests.helpers.eiffel_tower import bench_p_errors as eiffel_p_errors
from tests.helpers.ragas_env import run_ragas

ANSWERS = {**SCORED_ANSWERS, "empty": " "}
REFERENCE = ANSWERS["grounded"]

SCRIPT = """
import asyncio
import json
from ragas import EvaluationDataset, SingleTurnSample, evaluate
from ragas.metrics import ExactMatch
from assay.integrations.ragas import GroundedClaims

QUESTION, CONTEXTS, ANSWERS, REFERENCE = {question!r}, {contexts!r}, {answers!r}, {reference!r}
CALIBRATION = {calibration!r}
rows = [
    {{"user_input": QUESTION, "retrieved_contexts": CONTEXTS, "response": answer,
      "reference": REFERENCE}}
    for answer in ANSWERS.values()
]
EvaluationDataset.from_list(rows).to_jsonl("dataset.jsonl")
dataset = EvaluationDataset.from_jsonl("dataset.jsonl")
metric = GroundedClaims()
result = evaluate(dataset, metrics=[metric, ExactMatch()], show_progress=False)
out = {{
    "scores": result.scores,
    "explanations": [metric.explain(sample) for sample in dataset],
    "details": [metric.details(sample) for sample in dataset],
}}

no_contexts = EvaluationDataset.from_list(
    [{{"user_input": QUESTION, "retrieved_contexts": [], "response": ANSWERS["grounded"]}}]
)
lenient = evaluate(no_contexts, metrics=[GroundedClaims()], show_progress=False)
out["no_contexts_score"] = lenient.scores[0]["assay_grounded_claims"]
try:
    evaluate(no_contexts, metrics=[GroundedClaims()], show_progress=False, raise_exceptions=True)
except Exception as error:
    out["no_contexts_error"] = str(error)
try:
    GroundedClaims(threshold=2)
except ValueError as error:
    out["bad_threshold"] = str(error)
out["strict"] = GroundedClaims(threshold=0.01).explain(dataset[0])
calibrated = GroundedClaims(calibration=CALIBRATION)
out["calibrated_scores"] = [
    s["assay_grounded_claims"]
    for s in evaluate(dataset, metrics=[calibrated], show_progress=False).scores
]
out["calibrated_details"] = [calibrated.details(sample) for sample in dataset]
out["calibrated_explanations"] = [calibrated.explain(sample) for sample in dataset]


async def in_a_notebook():  # a running event loop, as in Jupyter
    return metric.explain(dataset[1])


out["in_a_loop"] = asyncio.run(in_a_notebook())
json.dump(out, open("ragas_result.json", "w"))
"""


@pytest.fixture(scope="module")
def ragas_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    calibration = learned_calibration(tmp_path_factory.mktemp("calibration"))
    script = SCRIPT.format(
        question=QUESTION, contexts=CONTEXTS, answers=ANSWERS, reference=REFERENCE,
        calibration=str(calibration),
    )  # fmt: skip
    result: dict[str, Any] = run_ragas(script, tmp_path_factory.mktemp("ragas"))
    result["calibration_file"] = str(calibration)
    return result


def by_name(values: list[Any]) -> dict[str, Any]:
    return dict(zip(ANSWERS, values, strict=True))


def bench_p_errors(tmp_path: Path) -> dict[str, float | None]:
    """``p_error`` of ``bench run --verifier learned`` for each answer that can be scored."""
    return eiffel_p_errors(tmp_path, SCORED_ANSWERS)


def test_each_score_is_one_minus_the_p_error_bench_run_gives(
    ragas_run: dict[str, Any], tmp_path: Path
) -> None:
    bench = bench_p_errors(tmp_path)
    scored = bench.keys()
    scores = by_name(ragas_run["scores"])
    for name in scored:
        p_error = bench[name]
        assert p_error is not None
        assert scores[name]["assay_grounded_claims"] == pytest.approx(1 - p_error, abs=1e-12)
        assert by_name(ragas_run["details"])[name]["p_error"] == p_error
    assert scores["grounded"]["assay_grounded_claims"] > 0.5
    assert scores["ungrounded"]["assay_grounded_claims"] < 0.5
    # ragas' own metric ran beside it, on the same samples
    assert [s["exact_match"] for s in ragas_run["scores"]] == [1.0, 0.0, 0.0, 0.0]


def test_the_explanation_gives_p_error_and_each_claims_evidence_window(
    ragas_run: dict[str, Any],
) -> None:
    explanations = by_name(ragas_run["explanations"])
    p_bad = by_name(ragas_run["details"])["ungrounded"]["p_error"]
    bad = explanations["ungrounded"]
    assert bad.splitlines()[0].startswith(f"p_error {p_bad:.3f} (not grounded: threshold 0.5")
    assert "claim 1: 'The Eiffel Tower is in Lyon.': unsupported" in bad
    assert "evidence window: 'The Eiffel Tower is a wrought-iron lattice tower in Paris" in bad
    assert "not in the evidence: Lyon" in bad
    claims = by_name(ragas_run["details"])["grounded"]["claims"]
    assert [c["supporting_ids"] for c in claims] == [["1"], ["2"]]
    assert ragas_run["strict"].startswith("p_error") and "threshold 0.01" in ragas_run["strict"]
    assert ragas_run["in_a_loop"] == explanations["ungrounded"]


def test_what_cannot_be_scored_is_nan_and_a_sample_without_contexts_names_the_field(
    ragas_run: dict[str, Any],
) -> None:
    empty = by_name(ragas_run["scores"])["empty"]["assay_grounded_claims"]
    assert math.isnan(empty)
    assert by_name(ragas_run["explanations"])["empty"] == "no score: the answer states no claim"
    assert by_name(ragas_run["details"])["empty"] == {
        "p_error": None,
        "failure": "the answer states no claim",
    }
    assert math.isnan(ragas_run["no_contexts_score"])
    assert ragas_run["no_contexts_error"].startswith("retrieved_contexts: expected the evidence")
    assert ragas_run["bad_threshold"] == "threshold must be between 0 and 1, got 2"


def test_a_calibration_gives_the_score_its_map_gives(ragas_run: dict[str, Any]) -> None:
    fitted = read_calibration(Path(ragas_run["calibration_file"]))
    raw = by_name(ragas_run["details"])
    calibrated = by_name(ragas_run["calibrated_details"])
    scores = by_name(ragas_run["calibrated_scores"])
    for name in ("grounded", "ungrounded", "cited"):
        p_error = float(fitted.apply([raw[name]["p_error"]])[0])
        assert scores[name] == pytest.approx(1.0 - p_error)
        assert calibrated[name]["raw_p_error"] == raw[name]["p_error"]
        assert calibrated[name]["threshold"] == fitted.threshold
        assert calibrated[name]["calibration"] == fitted.fingerprint()
        explained = by_name(ragas_run["calibrated_explanations"])[name]
        assert "(calibrated; the checker's own" in explained.splitlines()[0]
    assert math.isnan(scores["empty"])
