"""Steps the patterns share: write answers, score an answer with the claim checker, revise.

How an answer's ``p_error`` is made from its claim checks (``method="weakest-claim"``):

- each claim gets ``p_ok``, the probability that it is supported *and* correctly cited:
  its ``p_supported`` against all the evidence; but when it cites snippets and none of them
  supports it, the claim is checked again against the cited snippets alone and that
  probability is used (a supported claim with the wrong citation is a grounding error);
- a claim check without a probability falls back to its label (supported 0.9, uncertain 0.5,
  unsupported 0.1) and the method says ``+label-fallback``;
- ``p_error = 1 - min(p_ok)``: the answer is as grounded as its weakest claim (a product
  would push every long answer towards "error");
- citing an evidence id the record does not have is a wrong citation by construction:
  ``p_error = 1`` (``method="unknown-citation"``);
- an answer the claim rules find no claim in but that has text ("R&B", "0.9 s.") is checked as
  one claim; an empty answer, or a claim whose check failed, gets no score: ``p_error=None``
  and the failure reason.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from ...data.citations import answer_citations, cited_ids, strip_citations
from ...model import CallFailure, Completion
from ..checkers.answer_level import CheckerAnswerVerifier
from ..claims import Decomposition, decompose, split_claims
from ..prompts import answer_messages, revise_messages
from ..types import Claim, ClaimCheck, Evidence, GroundedQARecord
from .base import AnswerScore, Candidate, PatternContext

LABEL_FALLBACK = {"supported": 0.9, "uncertain": 0.5, "unsupported": 0.1}


async def generate_candidates(
    record: GroundedQARecord, context: PatternContext, count: int, *, first_index: int = 0
) -> list[Candidate]:
    """``count`` answers, sample ``i`` seeded ``seed + i`` and numbered ``first_index + i``;
    failed calls kept with the reason."""
    if count < 1:
        return []
    config = context.settings.answer_config().model_copy(update={"n": count})
    results = await context.generator.sample(answer_messages(record), config)
    return [_candidate(first_index + i, result) for i, result in enumerate(results)]


def _candidate(index: int, result: Completion | CallFailure) -> Candidate:
    if isinstance(result, CallFailure):
        return Candidate(index=index, text=None, failure=f"generation: {result.describe()}")
    if not result.text.strip():
        return Candidate(index=index, text=result.text, failure="generation: empty answer")
    return Candidate(index=index, text=result.text.strip())


async def score_candidates(
    record: GroundedQARecord,
    context: PatternContext,
    candidates: Sequence[Candidate],
    *,
    answer_level: bool = False,
) -> list[Candidate]:
    """Each usable candidate scored by claim checks, or by one answer-level verdict."""
    scorer = score_answer_level if answer_level else score_answer

    async def one(candidate: Candidate) -> Candidate:
        if candidate.text is None or candidate.failure is not None:
            return candidate
        score = await scorer(candidate.text, record, context)
        return candidate.model_copy(update={"score": score})

    return list(await asyncio.gather(*(one(c) for c in candidates)))


async def score_answer(
    answer: str,
    record: GroundedQARecord,
    context: PatternContext,
    *,
    listed: Sequence[str] | None = None,
) -> AnswerScore:
    """Claim-check ``answer`` and turn the checks into ``p_error`` (see the module doc)."""
    evidence_ids = [e.evidence_id for e in record.evidence]
    cites = answer_citations(answer, listed, evidence_ids)
    base = AnswerScore(answer=answer, citations=cites.ids, unknown_citations=cites.unknown)
    split = await _split(answer, context)
    base = base.model_copy(update={"claim_splitter": split.method, "split_failure": split.failure})
    claims = [_with_listed(c, cites.from_list) for c in split.claims or _whole(answer)]
    if not claims:
        return base.model_copy(update={"failure": "the answer states no claim"})
    known = set(evidence_ids)
    checks = await asyncio.gather(*(_check(c, record, context, known) for c in claims))
    return _score_from_checks(base, [c for c, _ in checks], [p for _, p in checks], context)


async def _split(answer: str, context: PatternContext) -> Decomposition:
    """The claims by the rules, or by the splitter model (the rules when it fails, visibly)."""
    if context.splitter is None:
        return Decomposition(claims=tuple(split_claims(answer)), method="rules")
    return await decompose(answer, context.splitter)


async def score_answer_level(
    answer: str,
    record: GroundedQARecord,
    context: PatternContext,
    *,
    listed: Sequence[str] | None = None,
) -> AnswerScore:
    """One answer-level verdict on ``answer`` (no claim decomposition): ``p_error`` is
    ``1 - p_supported`` of the whole answer (``method="answer-level"``)."""
    evidence_ids = [e.evidence_id for e in record.evidence]
    cites = answer_citations(answer, listed, evidence_ids)
    base = AnswerScore(answer=answer, citations=cites.ids, unknown_citations=cites.unknown)
    text = strip_citations(answer).strip()
    if not text:
        return base.model_copy(update={"failure": "the answer states no claim"})
    verifier = context.answer_verifier or CheckerAnswerVerifier(context.checker)
    whole = Claim(text=" ".join(text.split()), cited_ids=cites.ids)
    started = time.perf_counter()
    check = await verifier.verify(whole, record)
    elapsed_ms = 1000 * (time.perf_counter() - started)
    claims = [_with_listed(c, cites.from_list) for c in split_claims(answer) or _whole(answer)]
    claim_citations = tuple(c.cited_ids for c in claims)
    check = check.model_copy(update={"check_ms": elapsed_ms, "claim_citations": claim_citations})
    if check.failure is not None:
        reason = f"answer-level check failed: {check.failure}"
        return base.model_copy(update={"claim_checks": (check,), "failure": reason})
    p_error = 1.0 - _probability(check)
    method = "answer-level" + ("+label-fallback" if check.p_supported is None else "")
    if cites.unknown:
        p_error, method = 1.0, "unknown-citation"
    p_error = round(min(1.0, max(0.0, p_error)), 6)
    return base.model_copy(
        update={
            "claim_checks": (check,),
            "p_error": p_error,
            "verifier_pass": context.settings.passes(p_error),
            "method": method,
        }
    )


def _whole(answer: str) -> list[Claim]:
    """A short answer the rules find no claim in ("R&B", "0.9 s.") is one claim as it is."""
    text = strip_citations(answer).strip()
    return [Claim(text=text, cited_ids=cited_ids(answer))] if text else []


def _with_listed(claim: Claim, listed: Sequence[str]) -> Claim:
    """A structured citation list applies to the claims that carry no marker of their own."""
    if claim.cited_ids or not listed:
        return claim
    return claim.model_copy(update={"cited_ids": tuple(listed)})


async def _check(
    claim: Claim, record: GroundedQARecord, context: PatternContext, known: set[str]
) -> tuple[ClaimCheck, float | None]:
    """The check against all evidence, and the claim's ``p_ok`` (``None`` when it failed)."""
    check = await _timed_check(context, claim, record.evidence)
    if check.failure is not None:
        return check, None
    p_ok = _probability(check)
    cited = [
        e for e in record.evidence if e.evidence_id in claim.cited_ids and e.evidence_id in known
    ]
    if cited and not check.cited_supporting_ids and check.label != "unsupported":
        against_cited = await _timed_check(context, claim, cited)
        # the claim's time is both checks'
        both = (check.check_ms or 0.0) + (against_cited.check_ms or 0.0)
        check = check.model_copy(update={"check_ms": both})
        if against_cited.failure is not None:
            return check.model_copy(update={"failure": against_cited.failure}), None
        p_ok = min(p_ok, _probability(against_cited))
    return check, p_ok


async def _timed_check(
    context: PatternContext, claim: Claim, evidence: Sequence[Evidence]
) -> ClaimCheck:
    started = time.perf_counter()
    check = await context.checker.check(claim, evidence)
    return check.model_copy(update={"check_ms": 1000 * (time.perf_counter() - started)})


def _probability(check: ClaimCheck) -> float:
    if check.p_supported is not None:
        return check.p_supported
    return LABEL_FALLBACK[check.label]


def _score_from_checks(
    base: AnswerScore,
    checks: list[ClaimCheck],
    p_ok: list[float | None],
    context: PatternContext,
) -> AnswerScore:
    failed = [c for c in checks if c.failure is not None]
    if failed:
        reason = f"claim check failed ({len(failed)} of {len(checks)}): {failed[0].failure}"
        return base.model_copy(update={"claim_checks": tuple(checks), "failure": reason})
    fallback = any(c.p_supported is None for c in checks)
    method = "weakest-claim" + ("+label-fallback" if fallback else "")
    p_error = 1.0 - min(p for p in p_ok if p is not None)
    if base.unknown_citations:
        p_error, method = 1.0, "unknown-citation"
    p_error = round(min(1.0, max(0.0, p_error)), 6)
    return base.model_copy(
        update={
            "claim_checks": tuple(checks),
            "p_error": p_error,
            "verifier_pass": context.settings.passes(p_error),
            "method": method,
        }
    )


async def revise_answer(
    record: GroundedQARecord, draft: str, checks: Sequence[ClaimCheck], context: PatternContext
) -> str | CallFailure:
    """The revised answer text (the generator, seed ``seed``), or the failed call."""
    config = context.settings.answer_config().model_copy(update={"temperature": 0.0})
    result = await context.generator.generate(revise_messages(record, draft, checks), config)
    return result if isinstance(result, CallFailure) else result.text.strip()
