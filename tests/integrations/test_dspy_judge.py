"""``assay.integrations.dspy.StrictJudgeMetric``: assay's judge protocol as a DSPy metric, in
DSPy's own ``Evaluate``, judged by assay's stub judge (the protocol's stub replies, a flawed one
now and then): valid replies score ``overall_score / 8``, invalid ones are the example's error,
never a score."""

from __future__ import annotations

from typing import Any

import dspy
import pytest

from assay.integrations.dspy import JudgeGaveNoScore, StrictJudgeMetric
from assay.judge.protocol import DIMENSION_KEYS, Thresholds, verdict_for
from assay.judge.run import JudgeRunConfig

ANSWER = "Apples, pears and plums are fruits that grow on trees."
QUESTIONS = [f"Name three fruits that grow on trees ({i})." for i in range(24)]


class FixedAnswer(dspy.Module):  # type: ignore[misc]
    def forward(self, question: str) -> dspy.Prediction:
        return dspy.Prediction(answer=ANSWER)


def _examples() -> list[Any]:
    return [dspy.Example(question=q).with_inputs("question") for q in QUESTIONS]


def _check_protocol(metric: StrictJudgeMetric, example: Any, score: float) -> None:
    record = metric.judgment(example, dspy.Prediction(answer=ANSWER))
    judged = record.classification
    assert judged.scores is not None and judged.overall_score is not None
    assert judged.overall_score == sum(judged.scores[key] for key in DIMENSION_KEYS)
    assert judged.verdict == verdict_for(judged.scores, Thresholds())
    assert score == pytest.approx(judged.overall_score / 8)


def test_evaluate_scores_valid_judgments_and_leaves_invalid_ones_as_errors(
    caplog: pytest.LogCaptureFixture,
) -> None:
    metric = StrictJudgeMetric("stub/judge")
    evaluate = dspy.Evaluate(devset=_examples(), num_threads=2, failure_score=-1.0)
    result = evaluate(FixedAnswer(), metric=metric)
    scores = [score for _, _, score in result.results]
    failed = [s for s in scores if s == -1.0]
    assert failed and len(failed) < len(scores)  # the stub's flawed replies: never a score
    assert "assay judge: no score: invalid after 1 ask: flags" in caplog.text
    for example, _, score in result.results:
        if score != -1.0:
            _check_protocol(metric, example, score)  # the cache answers the same reply again


def test_two_asks_score_every_example_and_a_trace_asks_for_a_pass() -> None:
    metric = StrictJudgeMetric("stub/judge", config=JudgeRunConfig(max_attempts=2))
    verdicts = []
    for example in _examples():
        prediction = dspy.Prediction(answer=ANSWER)
        score = metric(example, prediction)
        assert isinstance(score, float)
        _check_protocol(metric, example, score)
        passed = metric(example, prediction, trace=[])
        verdicts.append(metric.judgment(example, prediction).classification.verdict)
        assert passed is (verdicts[-1] == "PASS")
    assert "PASS" in verdicts and set(verdicts) - {"PASS"}  # both kinds among them


def test_a_predictor_name_asks_for_the_judgment_as_feedback() -> None:
    metric = StrictJudgeMetric("stub/judge", config=JudgeRunConfig(max_attempts=2))
    example = _examples()[0]
    feedback = metric(example, dspy.Prediction(answer=ANSWER), [], "respond", [])
    assert isinstance(feedback, dspy.Prediction)
    record = metric.judgment(example, dspy.Prediction(answer=ANSWER))
    judged = record.classification
    first = feedback.feedback.splitlines()[0]
    assert first == f"{judged.verdict}: overall_score {judged.overall_score} (stub/judge)"
    assert all(f"{e.dimension}: {e.quote!r}" in feedback.feedback for e in judged.evidence)


def test_missing_fields_and_unscored_judgments_raise_saying_which() -> None:
    metric = StrictJudgeMetric("stub/judge")
    with pytest.raises(ValueError, match=r"prediction\.answer: missing"):
        metric(dspy.Example(question="q"), dspy.Prediction())
    with pytest.raises(ValueError, match=r"example\.question: a int, not text"):
        metric(dspy.Example(question=3), dspy.Prediction(answer=ANSWER))
    raised = 0
    for example in _examples():
        try:
            metric(example, dspy.Prediction(answer=ANSWER))
        except JudgeGaveNoScore as unscored:
            assert "invalid after 1 ask: flags" in str(unscored)
            raised += 1
    assert raised
