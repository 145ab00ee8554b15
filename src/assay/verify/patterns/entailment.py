"""Entailment / attribution check with a revision gate.

Generate mode: one answer (seed ``seed``, the same first sample as the other patterns), split
into atomic claims; each claim is checked against all the evidence and against the snippets
it cites (see :mod:`.scoring`), giving supported / unsupported / uncertain labels, the
supporting evidence ids, citation coverage and ``p_error``. The gate passes when
``p_error < threshold``. On a fail, with revision on, the generator rewrites the answer from
the claim verdicts (cite the supporting snippets, drop unsupported content) and the revised
answer is verified again: it becomes the selected answer, and the revision keeps both
versions and scores. A revision whose call fails, or whose answer cannot be scored, leaves
the original answer selected and records why.

Verify-only mode: the record's answer is checked; it is never revised (its gold label belongs
to that exact text).
"""

from __future__ import annotations

from typing import ClassVar

from ...model import CallFailure
from ..types import GroundedQARecord
from .base import (
    AnswerScore,
    Candidate,
    Pattern,
    PatternContext,
    PatternName,
    PatternOutcome,
    Revision,
)
from .base import outcome_from_score as _outcome
from .scoring import generate_candidates, revise_answer, score_answer, score_candidates


class Entailment(Pattern):
    name: ClassVar[PatternName] = "entailment"

    async def run(self, record: GroundedQARecord, context: PatternContext) -> PatternOutcome:
        if record.answer is not None:
            score = await score_answer(record.answer, record, context, listed=record.citations)
            candidate = Candidate(index=0, text=record.answer, score=score)
            return _outcome(
                self.name, "verify_only", score, candidates=(candidate,), selected_index=0
            )
        drafts = await generate_candidates(record, context, 1)
        (candidate,) = await score_candidates(record, context, drafts)
        if candidate.score is None:
            return PatternOutcome(
                pattern=self.name,
                mode="generate",
                candidates=(candidate,),
                failure=candidate.failure,
            )
        outcome = _outcome(
            self.name, "generate", candidate.score, candidates=(candidate,), selected_index=0
        )
        if outcome.verifier_pass is False and context.settings.revise:
            return await self._revise(record, context, outcome, candidate.score)
        return outcome

    async def _revise(
        self,
        record: GroundedQARecord,
        context: PatternContext,
        outcome: PatternOutcome,
        before: AnswerScore,
    ) -> PatternOutcome:
        text = await revise_answer(record, before.answer, before.claim_checks, context)
        if isinstance(text, CallFailure):
            revision = Revision(before=before, failure=f"revision: {text.describe()}")
            return outcome.model_copy(update={"revision": revision})
        if not text:
            revision = Revision(before=before, failure="revision: empty answer")
            return outcome.model_copy(update={"revision": revision})
        after = await score_answer(text, record, context)
        revision = Revision(before=before, after=after, failure=after.failure)
        if after.p_error is None:
            return outcome.model_copy(update={"revision": revision})
        revised = _outcome(
            self.name, "generate", after, candidates=outcome.candidates, selected_index=None
        )
        return revised.model_copy(update={"revision_used": True, "revision": revision})
