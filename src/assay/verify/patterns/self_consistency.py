"""Self-consistency with critique gating.

Generate mode: ``n`` samples (seeds ``seed..seed+n-1``); the selected sample is the one most
consistent with the others (highest mean word-set overlap; ties: lowest index). The critic
sees every sample and the selected one, lists contradictions between samples, sentences
without a citation and unsupported claims, and states ``error_probability``: that is
``p_error`` (``probability_source`` "stated"), and the gate passes when it is below the
threshold. On a fail, with revision on, the generator fixes the selected answer from the
critique's findings (add citations, remove unsupported content) and the critic judges the
revised answer alone.

Verify-only mode (SelfCheckGPT-style): the generator writes ``K = n`` answers to the same
question and evidence (seeds ``seed..seed+K-1``, the same first samples the other patterns
draw); the critic sees the given answer as sample 1, the ``K`` samples after it, and the
evidence, and lists the given answer's contradictions (with the evidence or with the samples),
its claims that neither the evidence nor any sample supports, and its sentences without a
citation, and states ``error_probability``: that is ``p_error`` of the given answer, which is
never revised. Samples whose generation failed are left out (``Critique.sample_failures``).

In both modes the critique's findings are matched to the answer's claims
(:func:`.critique.finding_checks`), which gives the claim checks the grounding metrics are
computed on (citation coverage, supported-claim rate, citation precision).

Citing an evidence id the record does not have makes ``p_error = 1`` whatever the critic
says (a wrong citation by construction), as in the other patterns.
"""

from __future__ import annotations

import re
from typing import ClassVar

from ...data.citations import answer_citations
from ...model import CallFailure, calls_deferred
from ..types import GroundedQARecord
from .base import (
    AnswerScore,
    Candidate,
    Critique,
    Mode,
    Pattern,
    PatternContext,
    PatternName,
    PatternOutcome,
    Revision,
    outcome_from_score,
)
from .critique import answer_claims, critique, critique_notes, finding_checks
from .scoring import generate_candidates, revise_answer

_WORD = re.compile(r"[a-z0-9]+")


class SelfConsistency(Pattern):
    name: ClassVar[PatternName] = "self_consistency"

    async def run(self, record: GroundedQARecord, context: PatternContext) -> PatternOutcome:
        if record.answer is not None:
            return await self._verify_only(record, context)
        candidates = await generate_candidates(record, context, context.settings.n)
        usable = [c for c in candidates if c.failure is None and c.text]
        if not usable or calls_deferred():  # a critique of some samples only would be wasted
            failure = f"no usable sample ({candidates[0].failure})"
            return PatternOutcome(
                pattern=self.name, mode="generate", candidates=tuple(candidates), failure=failure
            )
        chosen = most_consistent([c.text or "" for c in usable])
        texts = [c.text or "" for c in usable]
        found = await critique(record, texts, chosen, context)
        score = _score(record, texts[chosen], found, context)
        unmatched = _unmatched(score, found, record)
        update = {"unmatched_findings": unmatched, "samples": len(texts) - 1}
        found = found.model_copy(update=update)
        selected = usable[chosen].index
        scored = tuple(
            c.model_copy(update={"score": score}) if c.index == selected else c for c in candidates
        )
        outcome = self._outcome("generate", score, found, scored, selected)
        if outcome.verifier_pass is False and context.settings.revise:
            return await self._revise(record, context, outcome, score, found)
        return outcome

    async def _verify_only(
        self, record: GroundedQARecord, context: PatternContext
    ) -> PatternOutcome:
        assert record.answer is not None
        samples = await generate_candidates(record, context, context.settings.n, first_index=1)
        texts = [c.text for c in samples if c.failure is None and c.text is not None]
        found = await critique(record, [record.answer, *texts], 0, context)
        found = found.model_copy(
            update={
                "samples": len(texts),
                "sample_failures": tuple(c.failure for c in samples if c.failure is not None),
            }
        )
        score = _score(record, record.answer, found, context, listed=record.citations)
        given = Candidate(index=0, text=record.answer, score=score)
        found = found.model_copy(update={"unmatched_findings": _unmatched(score, found, record)})
        return self._outcome("verify_only", score, found, (given, *samples), 0)

    def _outcome(
        self,
        mode: Mode,
        score: AnswerScore,
        found: Critique,
        candidates: tuple[Candidate, ...],
        selected: int | None,
    ) -> PatternOutcome:
        return outcome_from_score(
            self.name, mode, score, candidates=candidates, selected_index=selected, critique=found
        )

    async def _revise(
        self,
        record: GroundedQARecord,
        context: PatternContext,
        outcome: PatternOutcome,
        before: AnswerScore,
        found: Critique,
    ) -> PatternOutcome:
        text = await revise_answer(record, before.answer, critique_notes(found), context)
        if isinstance(text, CallFailure) or not text:
            reason = "empty answer" if not isinstance(text, CallFailure) else text.describe()
            revision = Revision(before=before, failure=f"revision: {reason}")
            return outcome.model_copy(update={"revision": revision})
        found_after = await critique(record, [text], 0, context)
        after = _score(record, text, found_after, context)
        revision = Revision(
            before=before, after=after, critique_after=found_after, failure=after.failure
        )
        if after.p_error is None:
            return outcome.model_copy(update={"revision": revision})
        revised = self._outcome("generate", after, found_after, outcome.candidates, None)
        return revised.model_copy(update={"revision_used": True, "revision": revision})


def _score(
    record: GroundedQARecord,
    answer: str,
    found: Critique,
    context: PatternContext,
    *,
    listed: tuple[str, ...] | None = None,
) -> AnswerScore:
    cites = answer_citations(answer, listed, (e.evidence_id for e in record.evidence))
    base = AnswerScore(answer=answer, citations=cites.ids, unknown_citations=cites.unknown)
    if found.error_probability is None:
        reason = found.failures[0] if found.failures else "no critique"
        return base.model_copy(update={"failure": reason})
    p_error, method = found.error_probability, "critique"
    if cites.unknown:
        p_error, method = 1.0, "unknown-citation"
    checks, _ = finding_checks(answer_claims(answer, cites.from_list), found, _ids(record))
    return base.model_copy(
        update={
            "claim_checks": checks,
            "p_error": p_error,
            "verifier_pass": context.settings.passes(p_error),
            "method": method,
        }
    )


def _ids(record: GroundedQARecord) -> list[str]:
    return [e.evidence_id for e in record.evidence]


def _unmatched(score: AnswerScore, found: Critique, record: GroundedQARecord) -> tuple[str, ...]:
    claims = [c.claim for c in score.claim_checks]
    return finding_checks(claims, found, _ids(record))[1] if claims else ()


def most_consistent(texts: list[str]) -> int:
    """The index of the text with the highest mean word-set overlap (Jaccard) with the others."""
    if len(texts) == 1:
        return 0
    words = [set(_WORD.findall(re.sub(r"\[cite:[^\]]*\]", " ", t.lower()))) for t in texts]

    def agreement(i: int) -> float:
        others = [j for j in range(len(texts)) if j != i]
        return sum(_jaccard(words[i], words[j]) for j in others) / len(others)

    return max(range(len(texts)), key=lambda i: (agreement(i), -i))


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0
