"""Typed values of the verifier benchmark. Every arrow in the pipeline carries one of these.

Conventions fixed here and used everywhere:

- The positive class is **"the answer has a grounding error"**. ``gold_error=True`` means error.
- A verifier score is ``p_error`` (probability that the answer has a grounding error), and
  every artifact says so (:data:`SCORE_EVENT`).
- A claim label is ``supported`` / ``unsupported`` / ``uncertain``; uncertain is a real outcome
  and is counted, never dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..data.records import Evidence, GoldCitation, GroundedQARecord

__all__ = [
    "SCORE_EVENT",
    "AnswerVerifier",
    "Claim",
    "ClaimCheck",
    "ClaimChecker",
    "ClaimLabel",
    "ErrorBucket",
    "Evidence",
    "ExampleCost",
    "GoldCitation",
    "GroundedQARecord",
    "LabelSource",
    "SecondOpinion",
]

SCORE_EVENT = "p_error: probability that the answer has a grounding error"

ClaimLabel = Literal["supported", "unsupported", "uncertain"]
LabelSource = Literal["dataset", "injected", "oracle", "none"]
ErrorBucket = Literal[
    "grounded",
    "unsupported_claim",
    "wrong_citation",
    "overgeneralization",
    "evidence_omission",
    "contradiction",
    "other",
]


class Claim(BaseModel):
    """An atomic claim of an answer, with the evidence ids the answer cites for it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    cited_ids: tuple[str, ...] = ()


class SecondOpinion(BaseModel):
    """Another checker's probability for the same claim, recorded beside the verdict.

    It never changes the verdict; the summary reports its detection metrics apart
    (``detection_second_opinion``), so two checkers are compared on the same claims.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    checker: str
    p_supported: float | None = Field(default=None, ge=0.0, le=1.0)
    probability_source: str | None = None
    failure: str | None = None


class ClaimCheck(BaseModel):
    """The verdict on one claim."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    claim: Claim
    label: ClaimLabel
    p_supported: float | None = Field(default=None, ge=0.0, le=1.0)
    # where p_supported came from: "logprobs", "votes", "heuristic", "stated", or None
    probability_source: str | None = None
    supporting_ids: tuple[str, ...] = ()  # evidence ids found to support the claim
    cited_supporting_ids: tuple[str, ...] = ()  # cited ids that support it
    checker: str = ""
    rationale: str = ""
    failure: str | None = None  # a model call or parse failure, with its reason
    # wall time of the check (for a model checker: its call, cache hits included); what a
    # model-free checker costs, which no call count shows. None: no check was timed (the
    # claim's verdict was read off self_consistency's critique, one call for all claims)
    check_ms: float | None = Field(default=None, ge=0.0)
    # what a model-free checker matched: the evidence window its verdict rests on, and the
    # features that moved its score most (name, signed contribution to the logit)
    evidence_window: str | None = None
    deciding_features: tuple[tuple[str, float], ...] = ()
    # the claim's words the evidence lacks (even as a synonym), heaviest first, as written
    missing_words: tuple[str, ...] = ()
    second_opinion: SecondOpinion | None = None
    # an answer-level check (best_of_n) judges the whole answer as one claim; citation coverage
    # is defined over the answer's claims, so such a check keeps the cited ids of each claim
    # the rules split the answer into. None for the check of one claim
    claim_citations: tuple[tuple[str, ...], ...] | None = None

    @classmethod
    def failed(cls, claim: Claim, checker: str, reason: str) -> ClaimCheck:
        """A check that could not be made: ``uncertain``, no probability, the reason kept, so
        that it is counted as a failure and never as a score."""
        return cls(claim=claim, label="uncertain", checker=checker, failure=reason)


def band_label(p_supported: float, supported_above: float, unsupported_below: float) -> ClaimLabel:
    """A probability's label: supported at or above ``supported_above``, unsupported at or
    below ``unsupported_below``, uncertain between."""
    if p_supported >= supported_above:
        return "supported"
    if p_supported <= unsupported_below:
        return "unsupported"
    return "uncertain"


class ExampleCost(BaseModel):
    """Cost of one example: model calls, tokens, latency (results' ``usage`` field). The model
    layer's :class:`assay.model.Usage` is the running meter of one model over a run."""

    model_config = ConfigDict(extra="forbid")

    calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0


class ClaimChecker(Protocol):
    """Checks one claim against the evidence of its record."""

    name: str

    async def check(self, claim: Claim, evidence: Sequence[Evidence]) -> ClaimCheck: ...


class AnswerVerifier(Protocol):
    """Checks a whole answer (its faithfulness and its citations) in one verdict.

    The verdict is a :class:`ClaimCheck` whose claim is the whole answer (citation markers
    removed, ``cited_ids`` = every id the answer cites) and whose ``p_supported`` is the
    probability that the answer has no grounding error.
    """

    name: str

    async def verify(self, answer: Claim, record: GroundedQARecord) -> ClaimCheck: ...
