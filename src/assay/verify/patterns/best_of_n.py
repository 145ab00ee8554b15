"""Best-of-N with verifier rerank.

Generate mode: ``n`` answers (sample ``i`` seeded ``seed + i``); the claim checker scores each
(see :mod:`.scoring`) and the candidate with the lowest ``p_error`` is selected (ties: the
lowest index). Every candidate and its score is kept, so a run shows both generation variance
(how many candidates were grounded) and verification capacity (whether the grounded one won).
Candidates whose generation or scoring failed are kept with the reason and never selected;
when all failed, the outcome fails. Best-of-N does not revise.

Verify-only mode: the record's answer is the single candidate and its score is the verdict.
"""

from __future__ import annotations

from typing import ClassVar

from ..types import GroundedQARecord
from .base import Candidate, Pattern, PatternContext, PatternName, PatternOutcome
from .base import outcome_from_score as _outcome
from .scoring import generate_candidates, score_answer, score_candidates


class BestOfN(Pattern):
    name: ClassVar[PatternName] = "best_of_n"

    async def run(self, record: GroundedQARecord, context: PatternContext) -> PatternOutcome:
        if record.answer is not None:
            return await self._verify_only(record, context)
        drafts = await generate_candidates(record, context, context.settings.n)
        candidates = await score_candidates(record, context, drafts)
        return self._select(candidates)

    async def _verify_only(
        self, record: GroundedQARecord, context: PatternContext
    ) -> PatternOutcome:
        assert record.answer is not None
        score = await score_answer(record.answer, record, context, listed=record.citations)
        candidate = Candidate(index=0, text=record.answer, score=score)
        return _outcome(self.name, "verify_only", score, candidates=(candidate,), selected_index=0)

    def _select(self, candidates: list[Candidate]) -> PatternOutcome:
        scored = [c for c in candidates if c.score is not None and c.score.p_error is not None]
        if not scored:
            return PatternOutcome(
                pattern=self.name,
                mode="generate",
                candidates=tuple(candidates),
                failure=f"no candidate could be scored ({_first_failure(candidates)})",
            )
        best = min(scored, key=lambda c: (c.score.p_error if c.score else 1.0, c.index))
        assert best.score is not None
        return _outcome(
            self.name,
            "generate",
            best.score,
            candidates=tuple(candidates),
            selected_index=best.index,
        )


def _first_failure(candidates: list[Candidate]) -> str:
    for candidate in candidates:
        if candidate.failure is not None:
            return candidate.failure
        if candidate.score is not None and candidate.score.failure is not None:
            return candidate.score.failure
    return "no candidates"
