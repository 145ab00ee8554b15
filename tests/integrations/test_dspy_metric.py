"""``assay.integrations.dspy.GroundedAnswerMetric``: assay's learned checker as a DSPy metric, in
DSPy's own ``Evaluate``, ``BootstrapFewShot`` and ``GEPA``, its scores checked against ``assay
bench run`` on the same answers. The programs that call a model call the embedded SmolLM2
through a real ``llama_cpp.server`` on loopback (DSPy's LiteLLM client, OpenAI-compatible)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy.utils.exceptions import AdapterParseError

from assay import BenchRun, load_run
from assay.cli import main
from assay.integrations.dspy import GroundedAnswerMetric, UnscorableAnswer
from assay.integrations.phoenix import UnscorableAnswer as PhoenixUnscorable
from tests.helpers.bench_scores import learned_calibration
from tests.helpers.eiffel_tower import CONTEXTS, QUESTION, SCORED_ANSWERS, bench_p_errors
from tests.helpers.reset_proxy import reset_proxy
from tests.helpers.servers import start_llama_server

QUESTIONS = [QUESTION, "How tall is the Eiffel Tower?", "Where is the Eiffel Tower?"]


class FixedAnswers(dspy.Module):  # type: ignore[misc]
    """A program that answers each question with a given text, retrieving CONTEXTS."""

    def __init__(self, answers: dict[str, str]) -> None:
        super().__init__()
        self.answers = answers

    def forward(self, question: str) -> dspy.Prediction:
        return dspy.Prediction(context=CONTEXTS, answer=self.answers[question])


class AnswerFromContext(dspy.Module):  # type: ignore[misc]
    """The smallest RAG program: a fixed retrieval, then one predictor a model answers."""

    def __init__(self) -> None:
        super().__init__()
        self.respond = dspy.Predict("context, question -> answer")

    def forward(self, question: str) -> dspy.Prediction:
        answer = self.respond(context=CONTEXTS, question=question).answer
        return dspy.Prediction(context=CONTEXTS, answer=answer)


class LenientAdapter(dspy.ChatAdapter):  # type: ignore[misc]
    """DSPy's chat adapter, taking a reply without DSPy's field markers as the answer itself.

    SmolLM2 writes the markers for some prompts and not others, and which depends on the
    server's state; with this adapter every call gives the program an answer, so the tests
    check the metric inside DSPy rather than how well the small model keeps DSPy's format."""

    def parse(self, signature: Any, completion: str) -> dict[str, Any]:
        try:
            parsed: dict[str, Any] = super().parse(signature, completion)
        except AdapterParseError:
            return dict.fromkeys(signature.output_fields, completion)
        return parsed


def _examples(questions: list[str]) -> list[Any]:
    return [dspy.Example(question=q).with_inputs("question") for q in questions]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> dict[str, float | None]:
    return bench_p_errors(tmp_path_factory.mktemp("bench"), SCORED_ANSWERS)


def _smollm2_lm(base_url: str, max_tokens: int) -> Any:
    """SmolLM2 behind ``base_url`` as DSPy's LM (greedy, no DSPy cache). LiteLLM sends
    ``max_tokens`` as ``max_completion_tokens``, which llama_cpp.server does not read (a reply
    then runs on for thousands of tokens), so it goes in the body as well."""
    return dspy.LM(
        "openai/smollm2",
        api_base=base_url,
        api_key="unused",
        temperature=0.0,
        max_tokens=max_tokens,
        extra_body={"max_tokens": max_tokens},
        cache=False,
    )


@pytest.fixture(scope="module")
def smollm2() -> Iterator[Any]:
    """The embedded model behind a loopback server of this module's own (a context of 4,096
    tokens: GEPA's reflection prompt holds a program's inputs, outputs and feedback), through
    the reset proxy: each answer depends on its request alone, not on what the server answered
    before."""
    with start_llama_server(n_ctx=4096) as served, reset_proxy(served) as base_url:
        lm = _smollm2_lm(base_url, 40)
        with dspy.context(lm=lm, adapter=LenientAdapter()):
            yield lm


def test_evaluate_averages_one_minus_the_p_error_bench_run_gives(
    bench: dict[str, float | None],
) -> None:
    by_question = dict(zip(QUESTIONS, SCORED_ANSWERS.values(), strict=True))
    names = dict(zip(QUESTIONS, SCORED_ANSWERS, strict=True))
    evaluate = dspy.Evaluate(devset=_examples(QUESTIONS), num_threads=2)
    result = evaluate(FixedAnswers(by_question), metric=GroundedAnswerMetric())
    expected = {q: 1.0 - (bench[names[q]] or 0.0) for q in QUESTIONS}
    for example, prediction, score in result.results:
        assert prediction.answer == by_question[example.question]
        assert score == pytest.approx(expected[example.question], abs=1e-12)
    average = 100 * sum(expected.values()) / len(expected)
    assert result.score == pytest.approx(round(average, 2))
    assert bench["grounded"] is not None and bench["ungrounded"] is not None
    assert bench["grounded"] < 0.5 < bench["ungrounded"]  # the cases differ in verdict


def test_results_dspy_saves_import_as_records_bench_run_scores_alike(tmp_path: Path) -> None:
    """``Evaluate(save_as_json=...)`` rows read by ``assay import table``: bench run gives
    every answer the p_error whose complement the metric gave."""
    by_question = dict(zip(QUESTIONS, SCORED_ANSWERS.values(), strict=True))
    saved = tmp_path / "dspy_results.json"
    devset = [
        dspy.Example(question=q, answer="a reference answer").with_inputs("question")
        for q in QUESTIONS
    ]
    evaluate = dspy.Evaluate(devset=devset, save_as_json=str(saved))
    evaluate(FixedAnswers(by_question), metric=GroundedAnswerMetric())
    records, run = tmp_path / "records.jsonl", tmp_path / "run"
    fields = ["--answer", "pred_answer", "--evidence", "context", "--question", "question"]
    argv = ["import", "table", str(saved), "--out", str(records), *fields]
    assert main([*argv, "--reference", "example_answer"]) == 0
    bench = ["bench", "run", "--data", str(records), "--pattern", "entailment"]
    assert main([*bench, "--verifier", "learned", "--out_dir", str(run), "--no-report"]) == 0
    loaded = load_run(run)
    assert isinstance(loaded, BenchRun) and len(loaded.results) == len(QUESTIONS)
    for result in loaded.results:
        assert result.meta is not None
        metric_score = result.meta["GroundedAnswerMetric"]  # the column DSPy saved
        assert result.verifier_score == pytest.approx(1.0 - metric_score, abs=1e-12)


def test_a_trace_asks_a_verdict_and_a_predictor_name_asks_feedback(
    bench: dict[str, float | None],
) -> None:
    metric = GroundedAnswerMetric()
    example = dspy.Example(question=QUESTION).with_inputs("question")
    ungrounded = dspy.Prediction(answer=SCORED_ANSWERS["ungrounded"], context=CONTEXTS)
    grounded = dspy.Prediction(answer=SCORED_ANSWERS["grounded"], context=CONTEXTS)
    assert metric(example, grounded, trace=[]) is True
    assert metric(example, ungrounded, trace=[]) is False
    feedback = metric(example, ungrounded, [], "respond", [])
    assert isinstance(feedback, dspy.Prediction)
    assert feedback.score == pytest.approx(1.0 - (bench["ungrounded"] or 0.0), abs=1e-12)
    lines = feedback.feedback.splitlines()
    assert lines[0].startswith("p_error ") and "(not grounded: threshold 0.5" in lines[0]
    assert "claim 1: 'The Eiffel Tower is in Lyon.': unsupported" in feedback.feedback
    assert "not in the evidence: Lyon" in feedback.feedback


def test_passages_come_from_the_prediction_else_the_example() -> None:
    metric = GroundedAnswerMetric(evidence="passages")
    answer = SCORED_ANSWERS["ungrounded"]
    own = dspy.Example(question=QUESTION, passages=["The Eiffel Tower is in Lyon, France."])
    retrieved = dspy.Prediction(answer="The Eiffel Tower is in Lyon.", passages=CONTEXTS)
    # the prediction's passages (what the program retrieved) win over the example's
    assert metric.decision(own, retrieved).grounded is False
    without = dspy.Prediction(answer="The Eiffel Tower is in Lyon.")
    assert metric.decision(own, without).grounded is True
    with pytest.raises(ValueError, match="passages: missing: neither the prediction nor"):
        metric(dspy.Example(question=QUESTION), dspy.Prediction(answer=answer))


@pytest.mark.parametrize(
    ("prediction", "message"),
    [
        ({"context": CONTEXTS}, r"prediction\.answer: missing"),
        ({"answer": 3, "context": CONTEXTS}, r"prediction\.answer: a int, not text"),
        ({"answer": "  ", "context": CONTEXTS}, "no score: the answer states no claim"),
        ({"answer": "It is in Paris.", "context": []}, r"prediction\.context: expected"),
    ],
)
def test_what_cannot_be_scored_raises_a_value_error_saying_why(
    prediction: dict[str, Any], message: str
) -> None:
    example = dspy.Example(question=QUESTION)
    with pytest.raises(ValueError, match=message):
        GroundedAnswerMetric()(example, dspy.Prediction(**prediction))


def test_an_answer_with_no_claim_is_unscorable_as_in_the_phoenix_evaluator() -> None:
    empty = dspy.Prediction(answer="", context=CONTEXTS)
    with pytest.raises(UnscorableAnswer, match="the answer states no claim"):
        GroundedAnswerMetric()(dspy.Example(question=QUESTION), empty)
    assert UnscorableAnswer is PhoenixUnscorable  # one exception for every such tool


def test_evaluate_counts_an_unscorable_answer_as_its_error_not_a_score(
    caplog: pytest.LogCaptureFixture,
) -> None:
    answers = dict(zip(QUESTIONS, ["", *list(SCORED_ANSWERS.values())[:2]], strict=True))
    evaluate = dspy.Evaluate(devset=_examples(QUESTIONS), num_threads=1, failure_score=-1.0)
    result = evaluate(FixedAnswers(answers), metric=GroundedAnswerMetric())
    scores = {example.question: score for example, _, score in result.results}
    assert scores[QUESTION] == -1.0  # DSPy's failure_score, set apart from every real score
    assert all(0.0 <= scores[q] <= 1.0 for q in QUESTIONS[1:])
    assert "the answer states no claim" in caplog.text


def test_a_threshold_and_a_calibration_set_the_operating_point(tmp_path: Path) -> None:
    example = dspy.Example(question=QUESTION)
    grounded = dspy.Prediction(answer=SCORED_ANSWERS["grounded"], context=CONTEXTS)
    strict = GroundedAnswerMetric(threshold=0.01)
    assert strict(example, grounded, trace=[]) is False
    assert "threshold 0.01" in strict.decision(example, grounded).explanation
    path = learned_calibration(tmp_path)
    calibrated = GroundedAnswerMetric(calibration=path).decision(example, grounded)
    assert "(calibrated; the checker's own" in calibrated.explanation
    with pytest.raises(ValueError, match="not both"):
        GroundedAnswerMetric(threshold=0.3, calibration=path)


def test_it_runs_inside_a_running_event_loop() -> None:
    metric = GroundedAnswerMetric()
    example = dspy.Example(question=QUESTION)
    grounded = dspy.Prediction(answer=SCORED_ANSWERS["grounded"], context=CONTEXTS)
    expected = metric(example, grounded)

    async def notebook_cell() -> Any:
        return metric(example, grounded)

    assert asyncio.run(notebook_cell()) == expected


def test_a_program_on_a_real_model_is_scored_on_what_it_answered(
    smollm2: Any, tmp_path: Path
) -> None:
    evaluate = dspy.Evaluate(devset=_examples(QUESTIONS[1:]), num_threads=1)
    result = evaluate(AnswerFromContext(), metric=GroundedAnswerMetric())
    answered = {
        example.question: (prediction.answer, score)
        for example, prediction, score in result.results
        if prediction.get("answer") is not None
    }
    assert answered, "the model answered none of the questions"
    bench = bench_p_errors(tmp_path, {q: answer for q, (answer, _) in answered.items()})
    for question, (_, score) in answered.items():
        p_error = bench[question]
        assert p_error is not None and score == pytest.approx(1.0 - p_error, abs=1e-12)


def test_bootstrap_keeps_a_demonstration_only_when_its_answer_is_grounded(smollm2: Any) -> None:
    """The threshold decides which of the model's own answers become demonstrations."""
    kept = {}
    for threshold in (0.0, 1.0):  # nothing is grounded below 0; anything scored is below 1
        metric = GroundedAnswerMetric(threshold=threshold)
        optimizer = dspy.BootstrapFewShot(metric=metric, max_labeled_demos=0, max_rounds=1)
        compiled = optimizer.compile(AnswerFromContext(), trainset=_examples(QUESTIONS[:2]))
        kept[threshold] = len(compiled.respond.demos)
    assert kept == {0.0: 0, 1.0: 2}


def test_gepa_reflects_on_the_checker_s_feedback(smollm2: Any) -> None:
    """GEPA asks the metric for a predictor's feedback and puts it in its reflection prompt."""
    reflection = _smollm2_lm(smollm2.kwargs["api_base"], 30)
    optimizer = dspy.GEPA(
        metric=GroundedAnswerMetric(),
        max_metric_calls=3,
        reflection_lm=reflection,
        reflection_minibatch_size=1,
        num_threads=1,
        use_merge=False,
    )
    train = _examples(QUESTIONS[2:])
    optimizer.compile(AnswerFromContext(), trainset=train, valset=train)
    prompts = [m["content"] for call in reflection.history for m in call["messages"]]
    assert any("not in the evidence:" in p and "checker learned-" in p for p in prompts)
