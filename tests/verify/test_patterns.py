"""The three verifier patterns, end to end on the stub backend and on the embedded model."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence

import pytest

from assay.model import (
    BackendError,
    ChatMessage,
    ErrorKind,
    GenerateConfig,
    ModelOptions,
    get_model,
)
from assay.model.providers.stub import StubBackend
from assay.verify.checkers.baseline import LexicalChecker
from assay.verify.checkers.model import ModelChecker
from assay.verify.metering import MeteredModel, metering
from assay.verify.patterns import (
    PATTERN_NAMES,
    PatternContext,
    PatternOutcome,
    PatternSettings,
    get_pattern,
)
from assay.verify.patterns.critique import parse_critique
from assay.verify.patterns.self_consistency import most_consistent
from assay.verify.types import ExampleCost, GroundedQARecord

from .bench_fixtures import generate_records, verify_only_records

# scripted stubs must not be cached (two tests may script different replies to one prompt),
# and two caches on one SQLite file lock each other out
NO_CACHE = ModelOptions(cache=False)


def _record(data: dict[str, object]) -> GroundedQARecord:
    return GroundedQARecord.model_validate(data)


def _context(
    generator: str = "stub/gen",
    *,
    critic: MeteredModel | None = None,
    backend: StubBackend | None = None,
    **settings: object,
) -> PatternContext:
    model = get_model(generator, NO_CACHE, backend=backend, model_type=MeteredModel)
    return PatternContext(
        generator=model,
        checker=LexicalChecker(),
        critic=critic or model,
        settings=PatternSettings.model_validate({"n": 3, **settings}),
    )


def _run(pattern: str, record: GroundedQARecord, context: PatternContext) -> PatternOutcome:
    async def go() -> PatternOutcome:
        try:
            return await get_pattern(pattern).run(record, context)  # type: ignore[arg-type]
        finally:
            await context.generator.aclose()

    return asyncio.run(go())


def _refusing_backend() -> StubBackend:
    """A backend that fails every call: a pattern that must not generate can prove it."""

    def refuse(messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random) -> str:
        raise BackendError(ErrorKind.BAD_REQUEST, "this test expects no generation")

    return StubBackend("refuse", replies=refuse)


# ------------------------------------------------------------------------------- stub backend


@pytest.mark.parametrize("pattern", PATTERN_NAMES)
def test_every_pattern_generates_and_scores_on_the_stub(pattern: str) -> None:
    for data in generate_records(4):
        outcome = _run(pattern, _record(data), _context())
        assert outcome.mode == "generate"
        assert outcome.failure is None, outcome.failure
        assert outcome.selected_answer
        assert outcome.p_error is not None and 0.0 <= outcome.p_error <= 1.0
        assert outcome.verifier_pass == (outcome.p_error < 0.5)
        assert len(outcome.candidates) == (1 if pattern == "entailment" else 3)


def test_best_of_n_selects_the_candidate_with_the_lowest_p_error() -> None:
    outcomes = [_run("best_of_n", _record(d), _context(n=5)) for d in generate_records(6)]
    for outcome in outcomes:
        scores = [
            c.score.p_error for c in outcome.candidates if c.score and c.score.p_error is not None
        ]
        assert outcome.p_error == min(scores)
        assert outcome.candidates[outcome.selected_index or 0].score is not None
    # the seeded stub writes some ungrounded candidates: reranking has something to do
    all_scores = [c.score.p_error for o in outcomes for c in o.candidates if c.score]
    assert max(s for s in all_scores if s is not None) >= 0.5


def test_entailment_revises_a_failed_answer_and_keeps_both_versions() -> None:
    outcomes = [
        _run("entailment", _record(d), _context(seed=seed))
        for d in generate_records(4)
        for seed in range(4)
    ]
    revised = [o for o in outcomes if o.revision is not None]
    assert revised, "the seeded stub should produce at least one failing first answer"
    for outcome in revised:
        assert outcome.revision is not None
        assert outcome.revision.before.verifier_pass is False
        if outcome.revision_used:
            assert outcome.revision.after is not None
            assert outcome.selected_answer == outcome.revision.after.answer
            assert outcome.p_error == outcome.revision.after.p_error
    for outcome in outcomes:
        if outcome.revision is None:
            assert outcome.verifier_pass is True


def test_entailment_without_revision_never_revises() -> None:
    for data in generate_records(4):
        for seed in range(4):
            outcome = _run("entailment", _record(data), _context(seed=seed, revise=False))
            assert outcome.revision is None and not outcome.revision_used


def test_claim_checks_carry_labels_and_citations() -> None:
    record = _record(verify_only_records(3)[2])  # supported text, cites the wrong snippet
    outcome = _run("entailment", record, _context())
    (check,) = outcome.claim_checks
    assert check.label == "supported" and check.claim.cited_ids == ("p2",)
    assert check.cited_supporting_ids == ()
    assert outcome.p_error is not None and outcome.p_error >= 0.5, "a wrong citation is an error"


@pytest.mark.parametrize("pattern", ["best_of_n", "entailment"])
def test_verify_only_scores_the_given_answer_without_generating(pattern: str) -> None:
    backend = _refusing_backend()
    for data in verify_only_records(6):
        record = _record(data)
        # n=1: best_of_n samples no extra candidate (with n > 1 it does, for pass@N only)
        outcome = _run(pattern, record, _context("stub/refuse", backend=backend, n=1))
        assert outcome.mode == "verify_only"
        assert outcome.selected_answer == record.answer
        assert outcome.revision is None
        assert outcome.p_error is not None
    assert backend.calls == 0


def test_verify_only_lexical_scores_separate_the_labelled_answers() -> None:
    backend = _refusing_backend()
    records = [_record(d) for d in verify_only_records(6)]
    scores = {r.id: _run("entailment", r, _context("stub/r", backend=backend)) for r in records}
    grounded = [scores[r.id].p_error or 0.0 for r in records if r.gold_error is False]
    errors = [scores[r.id].p_error or 0.0 for r in records if r.gold_error is True]
    assert max(grounded) < 0.5
    assert sum(e >= 0.5 for e in errors) >= 3


def test_an_unknown_citation_is_an_error_by_construction() -> None:
    data = verify_only_records(2)[1] | {"answer": "Paris is the capital of France. [cite:p9]"}
    outcome = _run("entailment", _record(data), _context())
    assert outcome.unknown_citations == ("p9",)
    assert outcome.p_error == 1.0 and outcome.score_method == "unknown-citation"


def test_a_failing_generator_is_a_recorded_failure_not_a_score() -> None:
    backend = _refusing_backend()
    for pattern in PATTERN_NAMES:
        outcome = _run(
            pattern, _record(generate_records(1)[0]), _context("stub/r", backend=backend)
        )
        assert outcome.p_error is None and outcome.verifier_pass is None
        assert outcome.failure is not None and "bad_request" in outcome.failure


def test_a_failing_claim_check_leaves_the_answer_unscored() -> None:
    checker_backend = _refusing_backend()
    checker_model = get_model("stub/checker", NO_CACHE, backend=checker_backend)
    context = _context()
    context = PatternContext(
        generator=context.generator,
        checker=ModelChecker(checker_model),
        critic=context.critic,
        settings=context.settings,
    )
    outcome = _run("entailment", _record(verify_only_records(2)[1]), context)
    assert outcome.p_error is None and outcome.failure is not None
    assert outcome.failure.startswith("claim check failed")
    assert outcome.claim_checks[0].failure is not None


def _critic(replies: list[str]) -> MeteredModel:
    return get_model(
        "stub/critic",
        NO_CACHE,
        backend=StubBackend("critic", replies=replies),
        model_type=MeteredModel,
    )


def test_self_consistency_verify_only_critiques_the_answer_against_k_samples() -> None:
    reply = json.dumps({"contradictions": [], "missing_citations": [],
                        "unsupported_claims": ["Paris is the capital of France."],
                        "error_probability": 0.7, "rationale": "r"})  # fmt: skip
    critic = StubBackend("critic", replies=[reply])
    metered = get_model("stub/critic", NO_CACHE, backend=critic, model_type=MeteredModel)
    context = _context("stub/gen", critic=metered)
    record = _record(verify_only_records(2)[1])
    outcome = _run("self_consistency", record, context)
    assert critic.calls == 1  # one critique of the given answer against the n=3 samples
    assert outcome.critique is not None and outcome.critique.samples == 3
    assert [c.index for c in outcome.candidates] == [0, 1, 2, 3]
    assert outcome.selected_answer == record.answer and outcome.p_error == pytest.approx(0.7)
    (check,) = outcome.claim_checks  # the finding names the answer's one claim
    assert check.label == "unsupported" and check.checker == "critique"
    assert outcome.score_method == "critique"


def test_an_unusable_critique_is_a_failure_with_its_reason() -> None:
    context = _context("stub/r", backend=_refusing_backend(), critic=_critic(["no json here"]))
    context = PatternContext(
        generator=context.generator,
        checker=context.checker,
        critic=context.critic,
        settings=context.settings.model_copy(update={"n": 1}),
    )
    outcome = _run("self_consistency", _record(verify_only_records(2)[1]), context)
    assert outcome.p_error is None
    assert outcome.failure == "critique reply has no JSON object"


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("{}", "no numeric error_probability"),
        ('{"error_probability": 1.5}', "outside [0, 1]"),
        ('{"error_probability": true}', "no numeric error_probability"),
        ("[1, 2]", "no JSON object"),
        ('{"error_probability": 0.3', "no JSON object"),
    ],
)
def test_parse_critique_rejects_bad_replies(reply: str, problem: str) -> None:
    outcome = parse_critique(reply)
    assert isinstance(outcome, str) and problem in outcome


def test_most_consistent_picks_the_sample_closest_to_the_others() -> None:
    samples = [
        "Completely unrelated words here.",
        "Paris is the capital of France. [cite:p1]",
        "Paris is the capital city of France. [cite:p1]",
    ]
    assert most_consistent(samples) in (1, 2)
    assert most_consistent(["only one"]) == 0


def test_metering_counts_the_calls_of_each_example_apart() -> None:
    context = _context(n=3)

    async def one(data: dict[str, object]) -> ExampleCost:
        with metering() as meter:
            await get_pattern("best_of_n").run(_record(data), context)
        return meter

    async def both() -> list[ExampleCost]:
        try:
            return list(await asyncio.gather(*(one(d) for d in generate_records(2))))
        finally:
            await context.generator.aclose()

    first, second = asyncio.run(both())
    assert first.calls + first.cache_hits == 3
    assert second.calls + second.cache_hits == 3
    assert first.completion_tokens > 0


# ----------------------------------------------------------------------------- embedded model


@pytest.mark.slow
def test_every_pattern_runs_on_the_embedded_model() -> None:
    """SmolLM2-135M writes poor answers; the point is that every path ends in a typed outcome.

    One model for the three patterns: they share the first samples through the cache.
    """
    model = get_model("llamacpp/smollm2", model_type=MeteredModel)
    context = PatternContext(
        generator=model,
        checker=LexicalChecker(),
        critic=model,
        settings=PatternSettings(n=2, max_tokens=24, critique_max_tokens=64),
    )
    record = _record(generate_records(1)[0])

    async def all_patterns() -> list[PatternOutcome]:
        try:
            return [await get_pattern(name).run(record, context) for name in PATTERN_NAMES]
        finally:
            await model.aclose()

    for outcome in asyncio.run(all_patterns()):
        assert outcome.mode == "generate"
        assert outcome.candidates and all(c.text or c.failure for c in outcome.candidates)
        if outcome.p_error is None:
            assert outcome.failure  # a failure always says why
        else:
            assert outcome.verifier_pass == (outcome.p_error < 0.5)


def test_a_terse_answer_is_checked_as_one_claim() -> None:
    data = verify_only_records(2)[1] | {"answer": "R&B", "citations": ["p1"]}
    outcome = _run("entailment", _record(data), _context())
    (check,) = outcome.claim_checks
    assert check.claim.text == "R&B" and check.claim.cited_ids == ("p1",)
    assert outcome.p_error is not None


def test_an_empty_answer_is_unscored_with_its_reason() -> None:
    data = verify_only_records(2)[1] | {"answer": " [cite:p1] "}
    outcome = _run("entailment", _record(data), _context())
    assert outcome.p_error is None and outcome.failure == "the answer states no claim"
