"""Grounding metrics over claim checks: coverage, support, citation precision and recall.

Pure functions. Each takes the claim checks of one answer or of many (pooled, i.e.
micro-averaged: every claim or citation weighs the same) and raises ``ValueError`` naming the
missing denominator when a metric is undefined (no claims, no citations). :class:`GroundingCounts`
accumulates the same counts one answer at a time and reports ``None`` for undefined rates, for
streaming summaries.

Definitions (a claim's citations are the evidence ids the answer cites for it):

- citation coverage = claims with at least one citation / claims; a check of a whole answer
  (``claim_citations`` set: best_of_n's answer-level verdict) counts the answer's own claims
  here, each with its citations, so the rate is over claims whatever the verifier's unit
- supported-claim rate = claims labelled ``supported`` / claims
- uncertain rate = claims labelled ``uncertain`` / claims (checker failures are uncertain
  claims and are counted here, never dropped)
- citation precision = citations whose evidence supports the claim (the cited id is among the
  checker's ``supporting_ids`` or ``cited_supporting_ids``) / citations, each claim's cited ids
  counted once
- against gold: precision = cited ids in ``gold_citations`` / cited ids, recall = gold ids
  cited / gold ids, per answer over distinct ids, pooled over answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol


class _CitedClaim(Protocol):
    @property
    def cited_ids(self) -> Sequence[str]: ...


class ClaimCheck(Protocol):
    """What these metrics read of a claim check (the verifier's ``ClaimCheck`` has it).

    Structural, so that the metrics stay below the layers that define the checks.
    """

    @property
    def claim(self) -> _CitedClaim: ...
    @property
    def label(self) -> str: ...
    @property
    def supporting_ids(self) -> Sequence[str]: ...
    @property
    def cited_supporting_ids(self) -> Sequence[str]: ...
    @property
    def failure(self) -> str | None: ...
    @property
    def claim_citations(self) -> Sequence[Sequence[str]] | None: ...


def _rate(numerator: int, denominator: int, what: str) -> float:
    if denominator == 0:
        raise ValueError(f"no {what}: the metric is undefined")
    return numerator / denominator


def citation_coverage(checks: Sequence[ClaimCheck]) -> float:
    cited = [bool(ids) for check in checks for ids in _coverage_claims(check)]
    return _rate(sum(cited), len(cited), "claims")


def _coverage_claims(check: ClaimCheck) -> Sequence[Sequence[str]]:
    """The cited ids of each claim the check covers: its own claim, or an answer's claims."""
    if check.claim_citations is not None:
        return check.claim_citations
    return [check.claim.cited_ids]


def supported_claim_rate(checks: Sequence[ClaimCheck]) -> float:
    return _rate(sum(c.label == "supported" for c in checks), len(checks), "claims")


def uncertain_rate(checks: Sequence[ClaimCheck]) -> float:
    return _rate(sum(c.label == "uncertain" for c in checks), len(checks), "claims")


def failure_rate(checks: Sequence[ClaimCheck]) -> float:
    return _rate(sum(c.failure is not None for c in checks), len(checks), "claims")


def citation_precision(checks: Sequence[ClaimCheck]) -> float:
    """Citations naming evidence that supports their claim / all citations."""
    total = sum(len(set(c.claim.cited_ids)) for c in checks)
    good = sum(_supporting_citations(c) for c in checks)
    return _rate(good, total, "citations")


def _supporting_citations(check: ClaimCheck) -> int:
    supporting = set(check.supporting_ids) | set(check.cited_supporting_ids)
    return len(set(check.claim.cited_ids) & supporting)


@dataclass(frozen=True)
class GoldCitationScore:
    precision: float
    recall: float
    hits: int
    cited: int
    gold: int


def gold_citation_scores(
    answers: Iterable[tuple[Iterable[str], Iterable[str]]],
) -> GoldCitationScore:
    """Pooled precision and recall of cited ids against gold ids over ``(cited, gold)`` pairs."""
    hits = cited_total = gold_total = 0
    for cited, gold in answers:
        cited_set, gold_set = set(cited), set(gold)
        hits += len(cited_set & gold_set)
        cited_total += len(cited_set)
        gold_total += len(gold_set)
    return GoldCitationScore(
        precision=_rate(hits, cited_total, "cited evidence ids"),
        recall=_rate(hits, gold_total, "gold citations"),
        hits=hits,
        cited=cited_total,
        gold=gold_total,
    )


@dataclass
class GroundingCounts:
    """Counts for all of the above, added one answer at a time (constant memory)."""

    claims: int = 0
    # citation coverage's denominator: claims, counting an answer-level check's claims apart
    coverage_claims: int = 0
    claims_with_citation: int = 0
    supported: int = 0
    unsupported: int = 0
    uncertain: int = 0
    failures: int = 0
    citations: int = 0
    supporting_citations: int = 0
    gold_hits: int = 0
    cited_ids: int = 0
    gold_ids: int = 0

    def add_checks(self, checks: Sequence[ClaimCheck]) -> None:
        for check in checks:
            self.claims += 1
            for ids in _coverage_claims(check):
                self.coverage_claims += 1
                self.claims_with_citation += bool(ids)
            self.supported += check.label == "supported"
            self.unsupported += check.label == "unsupported"
            self.uncertain += check.label == "uncertain"
            self.failures += check.failure is not None
            self.citations += len(set(check.claim.cited_ids))
            self.supporting_citations += _supporting_citations(check)

    def add_gold(self, cited: Iterable[str], gold: Iterable[str]) -> None:
        cited_set, gold_set = set(cited), set(gold)
        self.gold_hits += len(cited_set & gold_set)
        self.cited_ids += len(cited_set)
        self.gold_ids += len(gold_set)

    def rates(self) -> dict[str, float | None]:
        """Every rate, ``None`` where the denominator is zero."""
        return {
            "citation_coverage": _maybe(self.claims_with_citation, self.coverage_claims),
            "supported_claim_rate": _maybe(self.supported, self.claims),
            "uncertain_rate": _maybe(self.uncertain, self.claims),
            "failure_rate": _maybe(self.failures, self.claims),
            "citation_precision": _maybe(self.supporting_citations, self.citations),
            "gold_citation_precision": _maybe(self.gold_hits, self.cited_ids),
            "gold_citation_recall": _maybe(self.gold_hits, self.gold_ids),
        }


def _maybe(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None
