"""The interface every verifier pattern implements, and the typed outcome it returns.

A pattern takes one :class:`~assay.verify.types.GroundedQARecord` and a
:class:`PatternContext` (the generator, the claim checker, the critic and the settings) and
returns a :class:`PatternOutcome`: the selected answer, every candidate with its score, the
verifier's ``p_error`` and pass/fail, the revision (before and after) when one ran, the
citations, the claim checks and the failure reason when a model call or a reply failed.

Two modes:

- **generate** (the record has no ``answer``): the pattern writes the answer(s) itself.
- **verify-only** (the record has an ``answer``, e.g. a labelled public dataset or the output
  of ``assay perturb``): the pattern verifies that answer and never rewrites it, because the
  record's gold label belongs to that exact text. Each pattern verifies it its own way:
  ``best_of_n`` with one answer-level verdict (extra sampled candidates, when ``n > 1``, only
  feed selection and pass@N), ``entailment`` by claim decomposition and claim checks,
  ``self_consistency`` by a critique of the answer against ``n`` sampled answers and the
  evidence.

A failure is never a verdict: when the verifier cannot score the selected answer, ``p_error``
and ``verifier_pass`` are ``None`` and ``failure`` says why; metrics count such examples and
leave them out of the detection metrics, visibly.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ...model import GenerateConfig, Model
from ..types import AnswerVerifier, ClaimCheck, ClaimChecker, ExampleCost, GroundedQARecord

PatternName = Literal["best_of_n", "entailment", "self_consistency"]
PATTERN_NAMES: tuple[PatternName, ...] = ("best_of_n", "entailment", "self_consistency")
Mode = Literal["generate", "verify_only"]


class PatternSettings(BaseModel):
    """The knobs shared by every pattern."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int = Field(default=5, ge=1, le=64)  # candidates (best_of_n), samples (self_consistency)
    seed: int = 0
    threshold: float = Field(default=0.5, ge=0.0, le=1.0)  # pass when p_error < threshold
    revise: bool = True
    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    max_tokens: int = Field(default=256, ge=8, le=4096)  # per answer
    critique_max_tokens: int = Field(default=384, ge=16, le=4096)  # per critique (JSON)

    def answer_config(self) -> GenerateConfig:
        """Sample ``i`` of any pattern uses seed ``seed + i``: patterns share cached answers."""
        return GenerateConfig(
            temperature=self.temperature, max_tokens=self.max_tokens, seed=self.seed
        )

    def passes(self, p_error: float | None) -> bool | None:
        return None if p_error is None else p_error < self.threshold


@dataclass(frozen=True)
class PatternContext:
    """What a pattern may use. Generator, checker and critic may be different models."""

    generator: Model
    checker: ClaimChecker
    critic: Model
    settings: PatternSettings
    # best_of_n's answer-level verifier; None: the claim checker applied to the whole answer
    answer_verifier: AnswerVerifier | None = None
    # entailment's claim splitter: a model (with the rules as visible fallback), None: rules
    splitter: Model | None = None


class AnswerScore(BaseModel):
    """The verifier's view of one answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answer: str
    p_error: float | None = Field(default=None, ge=0.0, le=1.0)
    verifier_pass: bool | None = None
    citations: tuple[str, ...] = ()  # cited evidence ids, markers and structured list merged
    unknown_citations: tuple[str, ...] = ()  # cited ids that name no evidence
    claim_checks: tuple[ClaimCheck, ...] = ()
    method: str = ""  # how p_error was made, e.g. "weakest-claim" or "critique"
    failure: str | None = None
    claim_splitter: str = ""  # claim checks: "rules" or "model" (how the claims were made)
    split_failure: str | None = None  # the model splitter failed and the rules were used


class Candidate(BaseModel):
    """One generated answer (or the given one), with its score or why it has none."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int
    text: str | None
    score: AnswerScore | None = None
    failure: str | None = None  # the generation call failed (the score may fail on its own)


class Critique(BaseModel):
    """The critic's findings on the selected answer (self-consistency)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    contradictions: tuple[str, ...] = ()
    missing_citations: tuple[str, ...] = ()
    unsupported_claims: tuple[str, ...] = ()
    error_probability: float | None = Field(default=None, ge=0.0, le=1.0)
    rationale: str = ""
    votes: int = 0  # critiques that parsed
    failures: tuple[str, ...] = ()  # reasons of the critiques that did not
    samples: int = 0  # other samples the critic compared the answer with
    sample_failures: tuple[str, ...] = ()  # why requested samples are missing
    unmatched_findings: tuple[str, ...] = ()  # findings that name no claim of the answer


class Revision(BaseModel):
    """A revision: the answer and its score before, and after (``None`` if it failed)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    before: AnswerScore
    after: AnswerScore | None = None
    critique_after: Critique | None = None
    failure: str | None = None


class PatternOutcome(BaseModel):
    """Everything a pattern found out about one record."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    pattern: PatternName
    mode: Mode
    selected_answer: str | None = None
    selected_index: int | None = None
    candidates: tuple[Candidate, ...] = ()
    p_error: float | None = Field(default=None, ge=0.0, le=1.0)
    verifier_pass: bool | None = None
    score_method: str = ""
    citations: tuple[str, ...] = ()
    unknown_citations: tuple[str, ...] = ()
    claim_checks: tuple[ClaimCheck, ...] = ()
    critique: Critique | None = None
    revision_used: bool = False
    revision: Revision | None = None
    failure: str | None = None
    # best_of_n: the candidate the verifier ranks first, and whether any candidate passes the
    # gate (pass@N); in verify-only mode the verdict above stays the given answer's
    best_index: int | None = None
    pass_at_n: bool | None = None
    usage: ExampleCost = Field(default_factory=ExampleCost)


class Pattern(abc.ABC):
    """A verifier pattern: question + evidence (+ answer) -> answer + verifier signals."""

    name: ClassVar[PatternName]

    @abc.abstractmethod
    async def run(self, record: GroundedQARecord, context: PatternContext) -> PatternOutcome:
        """Never raises for a model failure: it is recorded in the outcome."""


def outcome_from_score(
    name: PatternName,
    mode: Mode,
    score: AnswerScore,
    *,
    candidates: tuple[Candidate, ...],
    selected_index: int | None,
    critique: Critique | None = None,
) -> PatternOutcome:
    """An outcome whose verdict is ``score`` (the selected answer's)."""
    return PatternOutcome(
        pattern=name,
        mode=mode,
        selected_answer=score.answer,
        selected_index=selected_index,
        candidates=candidates,
        p_error=score.p_error,
        verifier_pass=score.verifier_pass,
        score_method=score.method,
        citations=score.citations,
        unknown_citations=score.unknown_citations,
        claim_checks=score.claim_checks,
        critique=critique,
        failure=score.failure,
    )
