"""Claim checkers: the lexical baseline, and the model checker (stub, embedded model)."""

from __future__ import annotations

import asyncio
import math

import pytest

from assay.model import (
    BackendError,
    Completion,
    ErrorKind,
    ModelOptions,
    TokenLogprob,
    TopLogprob,
    get_model,
)
from assay.model.providers.stub import StubBackend
from assay.verify.checkers.baseline import LexicalChecker
from assay.verify.checkers.model import (
    ModelChecker,
    ModelCheckerConfig,
    claim_check_messages,
    label_probability,
)
from assay.verify.stub_replies import RESPONDERS
from assay.verify.types import Claim, ClaimCheck, Evidence

EVIDENCE = (
    Evidence(
        evidence_id="e1",
        title="Harbour Bridge",
        text="The Harbour Bridge opened to traffic in 1932. Its main span is 503 metres long.",
    ),
    Evidence(evidence_id="e2", text="The bridge was designed by John Bradfield and is not tolled."),
    Evidence(evidence_id="e3", text="Ferries cross the harbour every twenty minutes."),
)


def _check(text: str, cited: tuple[str, ...] = ()) -> tuple[str, float, tuple[str, ...]]:
    result = LexicalChecker().check_sync(Claim(text=text, cited_ids=cited), EVIDENCE)
    assert result.checker == "lexical" and result.probability_source == "heuristic"
    assert result.p_supported is not None
    return result.label, result.p_supported, result.supporting_ids


def test_paraphrase_of_evidence_is_supported_with_its_ids() -> None:
    label, p, ids = _check("The Harbour Bridge was opened in 1932.")
    assert label == "supported" and p > 0.6
    assert ids == ("e1",)


def test_wrong_number_is_unsupported() -> None:
    right = _check("The main span of the bridge is 503 metres long.")
    wrong = _check("The main span of the bridge is 803 metres long.")
    assert right[0] == "supported"
    assert wrong[0] == "unsupported" and wrong[1] < right[1]


def test_unknown_name_lowers_support() -> None:
    right = _check("The bridge was designed by John Bradfield.")
    wrong = _check("The bridge was designed by Gustave Eiffel.")
    assert right[0] == "supported" and wrong[0] != "supported"


def test_negation_mismatch_lowers_support() -> None:
    plain = _check("Ferries cross the harbour every twenty minutes.")
    negated = _check("Ferries do not cross the harbour every twenty minutes.")
    assert negated[1] < plain[1]


def test_unrelated_claim_is_unsupported() -> None:
    label, p, ids = _check("Penguins live mostly in the southern hemisphere.")
    assert label == "unsupported" and p < 0.4 and ids == ()


def test_cited_supporting_ids_are_the_cited_ids_that_support() -> None:
    claim = Claim(text="The Harbour Bridge opened in 1932.", cited_ids=("e3", "e1"))
    result = asyncio.run(LexicalChecker().check(claim, EVIDENCE))
    assert result.cited_supporting_ids == ("e1",)


def test_labels_follow_the_documented_bands() -> None:
    checker = LexicalChecker()
    assert checker.label_of(0.9) == "supported"
    assert checker.label_of(0.5) == "uncertain"
    assert checker.label_of(0.1) == "unsupported"


# ------------------------------------------------------------------------------ model checker


def _model_check(
    replies: list[str] | None, claim: Claim, *, votes: int = 1, mode: str = "auto"
) -> ClaimCheck:
    backend = StubBackend("x", replies=replies, task_responders=RESPONDERS)
    model = get_model("stub/x", ModelOptions(cache=False), backend=backend)
    config = ModelCheckerConfig(probability=mode)  # type: ignore[arg-type]
    return asyncio.run(ModelChecker(model, votes=votes, config=config).check(claim, EVIDENCE))


SUPPORTED = Claim(text="The Harbour Bridge opened to traffic in 1932.", cited_ids=("e1",))
UNSUPPORTED = Claim(text="The bridge was designed by Gustave Eiffel in 1850.", cited_ids=("e2",))


def test_model_checker_on_the_default_stub_responder() -> None:
    good = _model_check(None, SUPPORTED)
    bad = _model_check(None, UNSUPPORTED)
    assert good.checker == "model:stub/x" and good.failure is None
    assert good.probability_source == "logprobs" and good.p_supported is not None
    assert good.label == "supported" and good.cited_supporting_ids == ("e1",)
    assert bad.label == "unsupported" and bad.supporting_ids == ()
    assert bad.p_supported is not None and bad.p_supported < good.p_supported


def test_model_checker_prompt_is_tagged_and_lists_cited_evidence_first() -> None:
    messages = claim_check_messages(UNSUPPORTED, EVIDENCE)
    assert messages[0].content.startswith("[assay:claim_check]")
    lines = messages[1].content.splitlines()
    assert lines[0] == f"Claim: {UNSUPPORTED.text}"
    assert lines[3].startswith("[e2] (cited) ") and lines[4].startswith("[e1] ")


def test_unparsable_reply_and_failed_call_are_recorded_as_uncertain() -> None:
    garbled = _model_check(["I think it is probably fine"], SUPPORTED)
    assert garbled.label == "uncertain" and garbled.p_supported is None
    assert garbled.failure is not None and garbled.failure.startswith("unparsable reply")
    bad_label = _model_check(['{"label": "maybe", "supporting_ids": []}'], SUPPORTED)
    assert bad_label.label == "uncertain" and "maybe" in (bad_label.failure or "")

    def broken(*_: object) -> str:
        raise BackendError(ErrorKind.BAD_REQUEST, "scripted outage")

    model = get_model("stub/y", ModelOptions(cache=False), backend=StubBackend("y", replies=broken))
    failed = asyncio.run(ModelChecker(model).check(SUPPORTED, EVIDENCE))
    assert failed.label == "uncertain" and "scripted outage" in (failed.failure or "")


def test_votes_give_the_share_of_supported_votes() -> None:
    yes = '{"label": "supported", "supporting_ids": ["e1", "e9"], "rationale": "r"}'
    no = '{"label": "unsupported", "supporting_ids": [], "rationale": "r"}'
    result = _model_check([yes, no, yes, "garbage"], SUPPORTED, votes=4, mode="votes")
    assert result.probability_source == "votes"
    assert result.p_supported == pytest.approx(
        2 / 3, abs=1e-6
    )  # the garbage vote is left out, and said so
    assert result.label == "supported" and result.supporting_ids == ("e1",)  # e9 is unknown
    assert "1 of 4 votes failed" in result.rationale


def test_stated_mode_has_no_probability() -> None:
    no = '{"label": "unsupported", "supporting_ids": [], "rationale": "r"}'
    result = _model_check([no], SUPPORTED, mode="stated")
    assert (result.label, result.p_supported, result.probability_source) == (
        "unsupported",
        None,
        "stated",
    )


def test_logprob_probability_reads_the_label_token_alternatives() -> None:
    text = '{"label": "supported", "supporting_ids": []}'
    tokens = ['{"', "label", '":', ' "', "supported", '",', ' "supporting_ids": []}']
    top = (TopLogprob(token="supported", logprob=math.log(0.6)),
           TopLogprob(token="uns", logprob=math.log(0.2)),
           TopLogprob(token="Supp", logprob=math.log(0.1)))  # fmt: skip
    logprobs = tuple(
        TokenLogprob(token=t, logprob=-0.1, top=top if t == "supported" else ()) for t in tokens
    )
    completion = Completion(text=text, finish_reason="stop", logprobs=logprobs)
    assert label_probability(completion) == (0.6 + 0.1) / (0.6 + 0.1 + 0.2)
    only_one = tuple(
        TokenLogprob(token=t, logprob=-0.1, top=top[:1] + top[2:] if t == "supported" else ())
        for t in tokens
    )
    bound = label_probability(completion.model_copy(update={"logprobs": only_one}))
    assert bound == (0.6 + 0.1) / (0.6 + 0.1 + 0.1)  # unseen label: at most the smallest listed


@pytest.mark.slow
def test_model_checker_on_the_embedded_model_gives_logprob_probability() -> None:
    model = get_model("llamacpp/smollm2")
    checker = ModelChecker(model, config=ModelCheckerConfig(max_tokens=40))

    async def run() -> ClaimCheck:
        try:
            return await checker.check(SUPPORTED, EVIDENCE)
        finally:
            await model.aclose()

    result = asyncio.run(run())
    assert result.checker == "model:llamacpp/smollm2"
    # the schema grammar puts the label first, so even a reply cut at max_tokens has it
    assert result.failure is None, result.failure
    assert result.probability_source == "logprobs"
    assert result.p_supported is not None and 0.0 <= result.p_supported <= 1.0
    p = result.p_supported
    assert result.label == ("supported" if p >= 0.6 else "unsupported" if p <= 0.4 else "uncertain")
    assert set(result.supporting_ids) <= {"e1", "e2", "e3"}
