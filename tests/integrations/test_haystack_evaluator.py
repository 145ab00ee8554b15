"""``assay.integrations.haystack.GroundedClaimsEvaluator``: assay's learned checker as a
Haystack evaluator component, run in a real Haystack ``Pipeline`` (sync and async), saved and
loaded with the pipeline, and checked against ``assay bench run`` on the same answers."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest
from haystack import Document, Pipeline

from assay.integrations.haystack import GroundedClaimsEvaluator
from assay.verify.calibration import read_calibration
from tests.helpers.bench_scores import learned_calibration
from tests.helpers.eiffel_tower import CONTEXTS, QUESTION, SCORED_ANSWERS, bench_p_errors

ANSWERS = SCORED_ANSWERS
NAMES = list(ANSWERS)


def inputs(answers: list[str], contexts: list[Any] | None = None) -> dict[str, Any]:
    return {
        "questions": [QUESTION] * len(answers),
        "contexts": [contexts or CONTEXTS] * len(answers),
        "predicted_answers": answers,
    }


def pipeline(evaluator: GroundedClaimsEvaluator) -> Pipeline:
    built = Pipeline()
    built.add_component("grounded", evaluator)
    return built


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> dict[str, float | None]:
    return bench_p_errors(tmp_path_factory.mktemp("bench"), ANSWERS)


def test_a_pipeline_scores_each_answer_one_minus_bench_runs_p_error(
    bench: dict[str, float | None],
) -> None:
    out = pipeline(GroundedClaimsEvaluator()).run(
        {"grounded": inputs([ANSWERS[n] for n in NAMES])}
    )["grounded"]
    expected = [1.0 - (bench[name] or 0.0) for name in NAMES]
    assert out["individual_scores"] == pytest.approx(expected, abs=1e-12)
    assert out["score"] == pytest.approx(sum(expected) / len(expected))
    results = dict(zip(NAMES, out["results"], strict=True))
    assert [results[n]["passing"] for n in NAMES] == [True, False, True]
    bad = results["ungrounded"]
    assert bad["status"] == "evaluated" and bad["p_error"] == bench["ungrounded"]
    assert bad["statements"] == ["The Eiffel Tower is in Lyon.", "It was completed in 1925."]
    assert len(bad["statement_scores"]) == 2 and "not in the evidence: Lyon" in bad["explanation"]


def test_documents_as_contexts_and_their_ids_as_citations() -> None:
    documents = [Document(id=f"doc-{n}", content=text) for n, text in enumerate(CONTEXTS, 1)]
    cited = "It was completed in 1889 [cite:doc-2]."
    out = GroundedClaimsEvaluator().run(**inputs([cited], documents))
    (result,) = out["results"]
    assert result["passing"] and "supporting ids doc-2" in result["explanation"]


def test_what_cannot_be_scored_is_an_error_result_and_left_out_of_the_mean() -> None:
    out = GroundedClaimsEvaluator().run(**inputs(["  ", ANSWERS["grounded"]]))
    empty, grounded = out["results"]
    assert empty["status"] == "error" and empty["reason"] == "the answer states no claim"
    assert math.isnan(out["individual_scores"][0])
    assert out["score"] == out["individual_scores"][1] == grounded["score"]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"contexts": []}, "the inputs must be lists of one length: questions 1, contexts 0"),
        ({"contexts": [[]]}, r"contexts\[0\]: expected the evidence passages"),
    ],
)
def test_inputs_of_another_shape_are_a_value_error_naming_them(
    fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        GroundedClaimsEvaluator().run(**(inputs([ANSWERS["grounded"]]) | fields))


def test_the_async_run_and_a_pipeline_saved_and_loaded_give_the_same() -> None:
    evaluator = GroundedClaimsEvaluator(threshold=0.3)
    expected = evaluator.run(**inputs([ANSWERS[n] for n in NAMES]))
    built = pipeline(evaluator)
    awaited = asyncio.run(built.run_async({"grounded": inputs([ANSWERS[n] for n in NAMES])}))
    assert awaited["grounded"] == expected
    text = built.dumps()
    loaded = Pipeline.loads(text, allowed_modules=["assay.integrations.haystack"])
    again = loaded.run({"grounded": inputs([ANSWERS[n] for n in NAMES])})["grounded"]
    assert again == expected and again["results"][0]["threshold"] == 0.3


def test_a_calibration_sets_the_operating_point(tmp_path: Path) -> None:
    path = learned_calibration(tmp_path)
    fitted = read_calibration(path)
    answers = inputs([ANSWERS[n] for n in NAMES])
    raw = GroundedClaimsEvaluator().run(**answers)
    calibrated = GroundedClaimsEvaluator(calibration=path).run(**answers)
    for before, after in zip(raw["results"], calibrated["results"], strict=True):
        p_error = float(fitted.apply([before["p_error"]])[0])
        assert after["p_error"] == pytest.approx(p_error)
        assert after["passing"] is (p_error < fitted.threshold)
        assert after["threshold"] == fitted.threshold
    with pytest.raises(ValueError, match="not both"):
        GroundedClaimsEvaluator(threshold=0.3, calibration=path)
