"""``assay.integrations.mlflow.GroundedClaims``: assay's learned checker as an MLflow GenAI
scorer, run by the real ``mlflow.genai.evaluate`` (a local SQLite tracking store) on rows that
give their passages and on a traced RAG app whose RETRIEVER span returns MLflow documents,
checked against ``assay bench run`` on the same answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mlflow
import pytest
from mlflow.entities import Document, Feedback

from assay.integrations.mlflow import GroundedClaims
from assay.verify.calibration import read_calibration
from tests.helpers.bench_scores import learned_calibration
from tests.helpers.eiffel_tower import CONTEXTS, QUESTION, SCORED_ANSWERS, bench_p_errors

ANSWERS = SCORED_ANSWERS


@pytest.fixture(autouse=True)
def tracking_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    monkeypatch.chdir(tmp_path)  # an artifact root MLflow makes (./mlruns) lands there
    monkeypatch.setenv("MLFLOW_GENAI_EVAL_MAX_WORKERS", "2")
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'mlflow.db'}")
    mlflow.set_experiment("assay")
    yield
    mlflow.set_tracking_uri(previous)


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> dict[str, float | None]:
    return bench_p_errors(tmp_path_factory.mktemp("bench"), ANSWERS)


def feedbacks(results: Any, name: str = "grounded_claims") -> list[dict[str, Any]]:
    """Each row's assessment of the scorer as the results table holds it, in the rows' order."""
    found = []
    for assessments in results.result_df["assessments"]:
        (mine,) = [a for a in assessments if a["assessment_name"] == name]
        found.append(mine)
    return found


def test_rows_with_their_passages_get_the_verdict_bench_run_gives(
    bench: dict[str, float | None],
) -> None:
    names = list(ANSWERS)
    data = [
        {"inputs": {"question": QUESTION, "context": CONTEXTS}, "outputs": ANSWERS[name]}
        for name in names
    ]
    results = mlflow.genai.evaluate(data=data, scorers=[GroundedClaims()])
    for name, feedback in zip(names, feedbacks(results), strict=True):
        p_error = bench[name]
        assert p_error is not None
        assert feedback["feedback"]["value"] is (p_error < 0.5)
        metadata = feedback["metadata"]
        assert float(metadata["p_error"]) == pytest.approx(p_error, abs=1e-12)
        assert metadata["checker"].startswith("learned-") and metadata["threshold"] == "0.5"
        assert json.loads(metadata["claims"])[0]["label"] in ("supported", "unsupported")
    grounded = [bench[n] is not None and bench[n] < 0.5 for n in names]  # type: ignore[operator]
    assert results.metrics["grounded_claims/mean"] == pytest.approx(sum(grounded) / len(names))
    bad = feedbacks(results)[names.index("ungrounded")]["rationale"]
    assert "claim 1: 'The Eiffel Tower is in Lyon.': unsupported" in bad
    assert "not in the evidence: Lyon" in bad


@mlflow.trace(span_type="RETRIEVER")
def retrieve(question: str) -> list[Document]:
    return [Document(page_content=text, id=str(n)) for n, text in enumerate(CONTEXTS, 1)]


def test_a_traced_rag_app_is_checked_against_what_its_retriever_returned(
    bench: dict[str, float | None],
) -> None:
    """No passages in the rows: the scorer reads the documents the RETRIEVER span returned
    (their ids as citations: `[cite:2]` is the second document)."""

    def rag_app(question: str, answer: str) -> str:
        retrieve(question)
        return answer

    names = list(ANSWERS)
    data = [{"inputs": {"question": QUESTION, "answer": ANSWERS[name]}} for name in names]
    results = mlflow.genai.evaluate(data=data, scorers=[GroundedClaims()], predict_fn=rag_app)
    for name, feedback in zip(names, feedbacks(results), strict=True):
        assert float(feedback["metadata"]["p_error"]) == pytest.approx(bench[name], abs=1e-12)


def check(scorer: GroundedClaims, answer: Any, **inputs: Any) -> Feedback:
    return scorer(inputs=inputs, outputs=answer)


def metadata(feedback: Feedback) -> dict[str, str]:
    assert feedback.metadata is not None
    return feedback.metadata


def test_an_answer_it_cannot_score_gets_an_error_and_no_value() -> None:
    feedback = check(GroundedClaims(), "   ", context=CONTEXTS)
    assert feedback.value is None and feedback.error is not None
    assert feedback.error.error_code == "UNSCORABLE"
    assert feedback.error.error_message == "the answer states no claim"
    data = [
        {"inputs": {"context": CONTEXTS}, "outputs": "   "},
        {"inputs": {"context": CONTEXTS}, "outputs": ANSWERS["grounded"]},
    ]
    results = mlflow.genai.evaluate(data=data, scorers=[GroundedClaims()])
    assert results.metrics["grounded_claims/mean"] == 1.0  # the unscored row is no verdict


@pytest.mark.parametrize(
    ("inputs", "answer", "message"),
    [
        ({"question": QUESTION}, "It is in Paris.", "inputs.context: missing"),
        ({"context": []}, "It is in Paris.", "got an empty list"),
        ({"context": CONTEXTS}, 3, "outputs: expected the answer"),
        ({"context": CONTEXTS}, {"text": "x"}, "got dict"),
    ],
)
def test_a_row_without_passages_or_answer_is_a_value_error_naming_it(
    inputs: dict[str, Any], answer: Any, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        check(GroundedClaims(), answer, **inputs)


def test_the_answer_may_come_in_a_dict_and_the_passages_under_another_key(
    bench: dict[str, float | None],
) -> None:
    scorer = GroundedClaims(context_key="documents", name="grounding")
    documents = [{"text": text} for text in CONTEXTS]
    answer = {"response": ANSWERS["ungrounded"]}
    feedback = check(scorer, answer, query=QUESTION, documents=documents)
    assert feedback.name == "grounding" and feedback.value is False
    assert float(metadata(feedback)["p_error"]) == pytest.approx(bench["ungrounded"], abs=1e-12)


def test_a_threshold_and_a_calibration_set_the_operating_point(tmp_path: Path) -> None:
    strict = check(GroundedClaims(threshold=0.01), ANSWERS["grounded"], context=CONTEXTS)
    assert strict.value is False and "threshold 0.01" in (strict.rationale or "")
    path = learned_calibration(tmp_path)
    fitted = read_calibration(path)
    for answer in ANSWERS.values():
        raw = float(metadata(check(GroundedClaims(), answer, context=CONTEXTS))["p_error"])
        calibrated = check(GroundedClaims(calibration=str(path)), answer, context=CONTEXTS)
        p_error = float(fitted.apply([raw])[0])
        assert float(metadata(calibrated)["p_error"]) == pytest.approx(p_error)
        assert float(metadata(calibrated)["raw_p_error"]) == pytest.approx(raw)
        assert calibrated.value is (p_error < fitted.threshold)
        assert "(calibrated; the checker's own" in (calibrated.rationale or "")
    with pytest.raises(ValueError, match="threshold must be between 0 and 1"):
        GroundedClaims(threshold=2)
    with pytest.raises(ValueError, match="not both"):
        GroundedClaims(threshold=0.3, calibration=str(path))
