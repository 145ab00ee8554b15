"""Streaming tallies of summary.json: grounding, revision, cost and failure buckets.

Each is a pydantic model (it is written as is) with an ``add(result)`` method, so the summary
reads results.jsonl once and keeps counts, not results.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .results import ResultRecord

MAX_LISTED_IDS = 50  # ids listed per revision outcome (the counts are always complete)


def _rate(part: float, whole: float) -> float | None:
    return part / whole if whole else None


class GroundingStats(BaseModel):
    """Claim-level grounding of the selected answers (answers with claim checks only)."""

    model_config = ConfigDict(extra="forbid")

    answers_with_claim_checks: int = 0
    claims: int = 0
    claims_failed: int = 0
    labels: dict[str, int] = Field(default_factory=dict)
    claims_with_citation: int = 0
    citations: int = 0
    citations_supporting: int = 0
    unknown_citations: int = 0
    gold_citation_hits: int = 0
    gold_citations: int = 0
    cited_ids: int = 0
    metrics: dict[str, float | None] = Field(default_factory=dict)

    def add(self, result: ResultRecord) -> None:
        self.unknown_citations += len(result.unknown_citations)
        if result.gold_citations and result.selected_answer is not None:
            cited = set(result.citations)
            self.gold_citations += len(result.gold_citations)
            self.gold_citation_hits += len(cited & set(result.gold_citations))
            self.cited_ids += len(cited)
        if not result.claim_checks:
            return
        self.answers_with_claim_checks += 1
        for check in result.claim_checks:
            self._add_check(check.label, check.claim.cited_ids, check.cited_supporting_ids)
            self.claims_failed += check.failure is not None
        self._refresh()

    def _add_check(self, label: str, cited: tuple[str, ...], supporting: tuple[str, ...]) -> None:
        self.claims += 1
        self.labels[label] = self.labels.get(label, 0) + 1
        self.claims_with_citation += bool(cited)
        self.citations += len(cited)
        self.citations_supporting += len(supporting)

    def _refresh(self) -> None:
        checked = self.claims - self.claims_failed
        self.metrics = {
            "citation_coverage": _rate(self.claims_with_citation, self.claims),
            "supported_claim_rate": _rate(self.labels.get("supported", 0), checked),
            "uncertain_rate": _rate(self.labels.get("uncertain", 0), checked),
            "citation_precision": _rate(self.citations_supporting, self.citations),
            "gold_citation_precision": _rate(self.gold_citation_hits, self.cited_ids),
            "gold_citation_recall": _rate(self.gold_citation_hits, self.gold_citations),
        }


class RevisionStats(BaseModel):
    """What revisions did. ``fixed``/``broken`` need oracle labels before and after."""

    model_config = ConfigDict(extra="forbid")

    attempted: int = 0
    used: int = 0
    failed: int = 0
    passed_after: int = 0
    labelled_pairs: int = 0
    fixed: int = 0
    broken: int = 0
    unchanged_error: int = 0
    unchanged_grounded: int = 0
    supported_claims_lost: int = 0
    broken_ids: list[str] = Field(default_factory=list)
    lost_support_ids: list[str] = Field(default_factory=list)

    def add(self, result: ResultRecord) -> None:
        revision = result.revision
        if revision is None:
            return
        self.attempted += 1
        self.used += result.revision_used
        self.failed += revision.failure is not None
        if revision.after is None:
            return
        self.passed_after += bool(revision.after.verifier_pass)
        if _supported(revision.after.claim_checks) < _supported(revision.before.claim_checks):
            self.supported_claims_lost += 1
            _note(self.lost_support_ids, result.id)
        self._add_labels(result)

    def _add_labels(self, result: ResultRecord) -> None:
        before = result.oracle_before_revision
        if not result.revision_used or before is None or before.has_error is None:
            return
        if result.gold_error is None or result.label_source != "oracle":
            return
        self.labelled_pairs += 1
        if before.has_error and not result.gold_error:
            self.fixed += 1
        elif not before.has_error and result.gold_error:
            self.broken += 1
            _note(self.broken_ids, result.id)
        elif before.has_error:
            self.unchanged_error += 1
        else:
            self.unchanged_grounded += 1


def _supported(checks: tuple[object, ...]) -> int:
    return sum(1 for c in checks if getattr(c, "label", None) == "supported")


def _note(ids: list[str], identifier: str) -> None:
    if len(ids) < MAX_LISTED_IDS:
        ids.append(identifier)


class CostStats(BaseModel):
    """Model calls, cache hits, tokens and latency, in total and per example."""

    model_config = ConfigDict(extra="forbid")

    examples: int = 0
    calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    per_example: dict[str, float] = Field(default_factory=dict)

    def add(self, result: ResultRecord) -> None:
        usage = result.usage
        self.examples += 1
        self.calls += usage.calls
        self.cache_hits += usage.cache_hits
        self.failures += usage.failures
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.latency_ms += usage.latency_ms
        n = self.examples
        self.per_example = {
            "model_requests": (self.calls + self.cache_hits) / n,
            "calls": self.calls / n,
            "tokens": (self.prompt_tokens + self.completion_tokens) / n,
            "latency_ms": self.latency_ms / n,
        }


class BucketStats(BaseModel):
    """One failure bucket: how often the verifier flagged its answers."""

    model_config = ConfigDict(extra="forbid")

    examples: int = 0
    scored: int = 0
    flagged: int = 0
    passed: int = 0
    unscored: int = 0
    mean_p_error: float | None = None
    flag_rate: float | None = None
    _p_sum: float = 0.0

    def add(self, result: ResultRecord) -> None:
        self.examples += 1
        if result.verifier_score is None:
            self.unscored += 1
            return
        self.scored += 1
        self.flagged += result.verifier_pass is False
        self.passed += result.verifier_pass is True
        self._p_sum += result.verifier_score
        self.mean_p_error = self._p_sum / self.scored
        self.flag_rate = self.flagged / self.scored
