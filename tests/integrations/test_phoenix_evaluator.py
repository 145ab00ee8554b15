"""``assay.integrations.phoenix.GroundedClaimsEvaluator``: assay's learned checker as a Phoenix
code evaluator, run by the real ``phoenix.evals`` (``evaluate``, ``evaluate_dataframe``,
``bind_evaluator``), checked against ``assay bench run`` on the same answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from langchain_core.documents import Document
from phoenix.evals import Score, bind_evaluator, evaluate_dataframe

from assay.integrations.phoenix import GroundedClaimsEvaluator, UnscorableAnswer
from assay.verify.calibration import read_calibration
from tests.helpers.bench_scores import learned_calibration
from tests.helpers.eiffel_tower import CONTEXTS, QUESTION, SCORED_ANSWERS, bench_p_errors

ANSWERS = SCORED_ANSWERS


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> dict[str, float | None]:
    return bench_p_errors(tmp_path_factory.mktemp("bench"), ANSWERS)


def evaluate(evaluator: GroundedClaimsEvaluator, answer: str, context: Any = None) -> Score:
    record = {
        "input": QUESTION,
        "output": answer,
        "context": CONTEXTS if context is None else context,
    }
    (score,) = evaluator.evaluate(record)
    return score


def p_error(score: Score) -> float:
    assert score.score is not None
    return 1.0 - score.score


def test_each_score_is_one_minus_the_p_error_bench_run_gives(
    bench: dict[str, float | None],
) -> None:
    for name, answer in ANSWERS.items():
        score = evaluate(GroundedClaimsEvaluator(), answer)
        expected = bench[name]
        assert expected is not None
        assert p_error(score) == pytest.approx(expected, abs=1e-12)
        assert score.label == ("faithful" if expected < 0.5 else "unfaithful")
        assert (score.name, score.kind, score.direction) == ("grounded_claims", "code", "maximize")
        assert score.metadata["checker"].startswith("learned-")
        assert score.metadata["p_error"] == pytest.approx(expected, abs=1e-12)
    bad = evaluate(GroundedClaimsEvaluator(), ANSWERS["ungrounded"]).explanation or ""
    assert "claim 1: 'The Eiffel Tower is in Lyon.': unsupported" in bad
    assert "not in the evidence: Lyon" in bad


def test_evaluate_dataframe_scores_each_row_and_records_a_failure_as_a_failure(
    bench: dict[str, float | None],
) -> None:
    names = list(ANSWERS)
    frame = pd.DataFrame(
        {
            "input": [QUESTION] * (len(names) + 1),
            "output": [ANSWERS[n] for n in names] + ["   "],
            "context": [CONTEXTS] * (len(names) + 1),
        }
    )
    out = evaluate_dataframe(
        dataframe=frame, evaluators=[GroundedClaimsEvaluator()], hide_tqdm_bar=True, max_retries=0
    )
    scores = out["grounded_claims_score"].tolist()
    for name, score in zip(names, scores, strict=False):
        assert 1.0 - score["score"] == pytest.approx(bench[name], abs=1e-12)
    details = out["grounded_claims_execution_details"].tolist()
    assert [d["status"] for d in details] == ["COMPLETED"] * len(names) + ["FAILED"]
    assert scores[-1] is None  # no verdict for the answer with no claim
    assert details[-1]["exceptions"] == ["UnscorableAnswer('the answer states no claim')"]


def test_other_column_names_and_library_documents_as_context(
    bench: dict[str, float | None],
) -> None:
    documents = [Document(id=str(n), page_content=text) for n, text in enumerate(CONTEXTS, 1)]
    frame = pd.DataFrame(
        {"question": [QUESTION], "answer": [ANSWERS["cited"]], "docs": [documents]}
    )
    evaluator = bind_evaluator(
        evaluator=GroundedClaimsEvaluator(),
        input_mapping={"input": "question", "output": "answer", "context": "docs"},
    )
    out = evaluate_dataframe(
        dataframe=frame, evaluators=[evaluator], hide_tqdm_bar=True, max_retries=0
    )
    (score,) = out["grounded_claims_score"].tolist()
    assert 1.0 - score["score"] == pytest.approx(bench["cited"], abs=1e-12)


def test_what_cannot_be_scored_raises_with_its_reason() -> None:
    with pytest.raises(UnscorableAnswer, match="the answer states no claim"):
        evaluate(GroundedClaimsEvaluator(), "   ")
    with pytest.raises(ValueError, match="context: expected the evidence passages"):
        evaluate(GroundedClaimsEvaluator(), "It is in Paris.", context=[])


def test_a_threshold_and_a_calibration_set_the_operating_point(tmp_path: Path) -> None:
    strict = evaluate(GroundedClaimsEvaluator(threshold=0.01), ANSWERS["grounded"])
    assert strict.label == "unfaithful" and "threshold 0.01" in (strict.explanation or "")
    path = learned_calibration(tmp_path)
    fitted = read_calibration(path)
    for answer in ANSWERS.values():
        raw = p_error(evaluate(GroundedClaimsEvaluator(), answer))
        calibrated = evaluate(GroundedClaimsEvaluator(calibration=path), answer)
        expected = float(fitted.apply([raw])[0])
        assert p_error(calibrated) == pytest.approx(expected)
        assert calibrated.metadata["raw_p_error"] == pytest.approx(raw)
        wanted = "faithful" if expected < fitted.threshold else "unfaithful"
        assert calibrated.label == wanted
    with pytest.raises(ValueError, match="threshold must be between 0 and 1"):
        GroundedClaimsEvaluator(threshold=2)
    with pytest.raises(ValueError, match="not both"):
        GroundedClaimsEvaluator(threshold=0.3, calibration=path)
