"""Best-of-N with an answer-level verifier.

Every candidate gets **one** answer-level verdict on its faithfulness and attribution (see
:mod:`assay.verify.checkers.answer_level`: a single next-token label question where the
backend gives logprobs, else JSON; the model-free checkers applied to the whole answer). There
is no claim decomposition here: that is ``entailment``'s mechanism.

Generate mode: ``n`` answers (sample ``i`` seeded ``seed + i``), each verified; the candidate
with the lowest ``p_error`` is selected (ties: the lowest index). Every candidate and its score
is kept, so a run shows both generation variance (how many candidates were grounded) and
verification capacity (whether the grounded one won). Candidates whose generation or scoring
failed are kept with the reason and never selected; when all failed, the outcome fails.
Best-of-N does not revise.

Verify-only mode: the record's answer is candidate 0 and **its** verdict is the outcome's
(``p_error``, ``verifier_pass``: what the labelled metrics measure). With ``n > 1`` the
generator also writes ``n - 1`` candidates (seeds ``seed..seed+n-2``, indices ``1..n-1``),
verified the same way; they only decide ``best_index`` (the candidate the verifier ranks first)
and ``pass_at_n`` (some candidate passes the gate), never the labelled verdict.
"""

from __future__ import annotations

from typing import ClassVar

from ..types import GroundedQARecord
from .base import Candidate, Pattern, PatternContext, PatternName, PatternOutcome
from .base import outcome_from_score as _outcome
from .scoring import generate_candidates, score_answer_level, score_candidates


class BestOfN(Pattern):
    name: ClassVar[PatternName] = "best_of_n"

    async def run(self, record: GroundedQARecord, context: PatternContext) -> PatternOutcome:
        if record.answer is not None:
            return await self._verify_only(record, context)
        drafts = await generate_candidates(record, context, context.settings.n)
        candidates = await score_candidates(record, context, drafts, answer_level=True)
        return self._select(candidates)

    async def _verify_only(
        self, record: GroundedQARecord, context: PatternContext
    ) -> PatternOutcome:
        assert record.answer is not None
        score = await score_answer_level(record.answer, record, context, listed=record.citations)
        given = Candidate(index=0, text=record.answer, score=score)
        extras = await generate_candidates(record, context, context.settings.n - 1, first_index=1)
        extras = await score_candidates(record, context, extras, answer_level=True)
        candidates = (given, *extras)
        outcome = _outcome(self.name, "verify_only", score, candidates=candidates, selected_index=0)
        return outcome.model_copy(
            update={"best_index": _best_index(candidates), "pass_at_n": _any_pass(candidates)}
        )

    def _select(self, candidates: list[Candidate]) -> PatternOutcome:
        scored = _scored(candidates)
        if not scored:
            return PatternOutcome(
                pattern=self.name,
                mode="generate",
                candidates=tuple(candidates),
                failure=f"no candidate could be scored ({_first_failure(candidates)})",
            )
        best = min(scored, key=lambda c: (c.score.p_error if c.score else 1.0, c.index))
        assert best.score is not None
        outcome = _outcome(
            self.name,
            "generate",
            best.score,
            candidates=tuple(candidates),
            selected_index=best.index,
        )
        return outcome.model_copy(
            update={"best_index": best.index, "pass_at_n": _any_pass(candidates)}
        )


def _scored(candidates: tuple[Candidate, ...] | list[Candidate]) -> list[Candidate]:
    return [c for c in candidates if c.score is not None and c.score.p_error is not None]


def _best_index(candidates: tuple[Candidate, ...]) -> int | None:
    scored = _scored(candidates)
    if not scored:
        return None
    return min(scored, key=lambda c: (c.score.p_error if c.score else 1.0, c.index)).index


def _any_pass(candidates: tuple[Candidate, ...] | list[Candidate]) -> bool | None:
    """pass@N: some scored candidate passes the gate (None when none was scored)."""
    scored = _scored(candidates)
    if not scored:
        return None
    return any(c.score is not None and c.score.verifier_pass for c in scored)


def _first_failure(candidates: list[Candidate]) -> str:
    for candidate in candidates:
        if candidate.failure is not None:
            return candidate.failure
        if candidate.score is not None and candidate.score.failure is not None:
            return candidate.score.failure
    return "no candidates"
