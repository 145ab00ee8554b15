"""``assay.integrations.llama_index.GroundedClaimsEvaluator``: assay's learned checker as a
LlamaIndex evaluator, on real ``Response`` objects with source nodes, through LlamaIndex's own
``evaluate_response`` and ``BatchEvalRunner``, checked against ``assay bench run`` on the same
answers."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from llama_index.core.base.response.schema import Response
from llama_index.core.evaluation import BatchEvalRunner, EvaluationResult
from llama_index.core.schema import NodeWithScore, TextNode

from assay.integrations.llama_index import GroundedClaimsEvaluator
from assay.verify.calibration import read_calibration
from tests.helpers.bench_scores import learned_calibration
from tests.helpers.eiffel_tower import CONTEXTS, QUESTION, SCORED_ANSWERS, bench_p_errors

ANSWERS = SCORED_ANSWERS


def response(answer: str) -> Response:
    nodes = [NodeWithScore(node=TextNode(text=text), score=0.9) for text in CONTEXTS]
    return Response(response=answer, source_nodes=nodes)


def evaluate_all(evaluator: GroundedClaimsEvaluator) -> dict[str, EvaluationResult]:
    return {
        name: evaluator.evaluate_response(query=QUESTION, response=response(answer))
        for name, answer in ANSWERS.items()
    }


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> dict[str, float | None]:
    return bench_p_errors(tmp_path_factory.mktemp("bench"), ANSWERS)


def test_each_score_is_one_minus_the_p_error_bench_run_gives(
    bench: dict[str, float | None],
) -> None:
    results = evaluate_all(GroundedClaimsEvaluator())
    for name, result in results.items():
        p_error = bench[name]
        assert p_error is not None and result.score is not None
        assert result.score == pytest.approx(1.0 - p_error, abs=1e-12)
        assert result.passing is (p_error < 0.5) and not result.invalid_result
        assert result.contexts == CONTEXTS and result.query == QUESTION
    bad = results["ungrounded"].feedback or ""
    assert bad.splitlines()[0].startswith("p_error ") and "(not grounded: threshold 0.5" in bad
    assert "claim 1: 'The Eiffel Tower is in Lyon.': unsupported" in bad
    assert "not in the evidence: Lyon" in bad
    assert results["grounded"].passing and results["cited"].passing


def test_batch_eval_runner_runs_it_over_many_responses(bench: dict[str, float | None]) -> None:
    runner = BatchEvalRunner({"assay": GroundedClaimsEvaluator()}, workers=2)
    names = list(ANSWERS)
    out = runner.evaluate_responses(
        queries=[QUESTION] * len(names), responses=[response(ANSWERS[n]) for n in names]
    )
    scores = [result.score for result in out["assay"]]
    assert scores == pytest.approx([1.0 - (bench[n] or 0.0) for n in names], abs=1e-12)


def test_what_cannot_be_scored_is_an_invalid_result_with_its_reason() -> None:
    result = GroundedClaimsEvaluator().evaluate(query=QUESTION, response="  ", contexts=CONTEXTS)
    assert result.invalid_result and result.invalid_reason == "the answer states no claim"
    assert (result.passing, result.score) == (None, None)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"response": "It is in Paris.", "contexts": []}, "contexts: missing"),
        ({"response": "It is in Paris.", "contexts": None}, "contexts: missing"),
        ({"response": None, "contexts": CONTEXTS}, "response: missing"),
    ],
)
def test_a_missing_field_is_a_value_error_naming_it(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        GroundedClaimsEvaluator().evaluate(query=QUESTION, **fields)  # type: ignore[arg-type]


def test_it_runs_inside_a_running_event_loop() -> None:
    evaluator = GroundedClaimsEvaluator()
    expected = evaluator.evaluate(query=QUESTION, response=ANSWERS["grounded"], contexts=CONTEXTS)

    async def notebook_cell() -> EvaluationResult:
        return evaluator.evaluate(query=QUESTION, response=ANSWERS["grounded"], contexts=CONTEXTS)

    assert asyncio.run(notebook_cell()) == expected


def test_a_threshold_and_a_calibration_set_the_operating_point(tmp_path: Path) -> None:
    strict = GroundedClaimsEvaluator(threshold=0.01).evaluate_response(
        query=QUESTION, response=response(ANSWERS["grounded"])
    )
    assert strict.passing is False and "threshold 0.01" in (strict.feedback or "")
    path = learned_calibration(tmp_path)
    fitted = read_calibration(path)
    raw = evaluate_all(GroundedClaimsEvaluator())
    calibrated = evaluate_all(GroundedClaimsEvaluator(calibration=path))
    for name in ANSWERS:
        before, after = raw[name].score, calibrated[name].score
        assert before is not None and after is not None
        p_error = float(fitted.apply([1.0 - before])[0])
        assert after == pytest.approx(1.0 - p_error)
        assert calibrated[name].passing is (p_error < fitted.threshold)
        assert "(calibrated; the checker's own" in (calibrated[name].feedback or "")
    with pytest.raises(ValueError, match="threshold must be between 0 and 1"):
        GroundedClaimsEvaluator(threshold=2)
    with pytest.raises(ValueError, match="not both"):
        GroundedClaimsEvaluator(threshold=0.3, calibration=path)


def test_it_has_no_prompt_to_show_or_replace() -> None:
    evaluator = GroundedClaimsEvaluator()
    assert evaluator.get_prompts() == {}
    evaluator.update_prompts({})
