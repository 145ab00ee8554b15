"""Streaming tallies of summary.json: grounding, revision, cost and failure buckets.

Each is a pydantic model (it is written as is) with an ``add(result)`` method, so the summary
reads results.jsonl once and keeps counts, not results; ``finish()`` fills in the rates once all
results are in (not per result: a pydantic attribute set costs about a microsecond).

``merge(other)`` adds a tally of the results that follow (a Ray worker's batch) as if its
results had been added one by one: counts add up, listed ids keep the first ones, and sums of
floats are kept exactly (:class:`ExactSum`), so they come out the same in any grouping.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ..metrics.grounding import GroundingCounts
from .results import ResultRecord
from .types import ExampleCost

MAX_LISTED_IDS = 50  # ids listed per revision outcome (the counts are always complete)
_UNITS = 1074  # 2**-1074, the smallest float step: every finite float is a whole number of it


@dataclass
class ExactSum:
    """A sum of floats without rounding (a whole number of 2**-1074), rounded once by
    :meth:`value`: the same total whatever the order or grouping of the terms."""

    units: int = 0
    special: float = 0.0  # the sum of infinities and NaNs, should any come

    def add(self, value: float) -> None:
        if not math.isfinite(value):
            self.special += value
            return
        numerator, denominator = value.as_integer_ratio()  # the denominator: a power of 2
        self.units += numerator << (_UNITS + 1 - denominator.bit_length())

    def merge(self, other: ExactSum) -> None:
        self.units += other.units
        self.special += other.special

    def value(self) -> float:
        return self.units / (1 << _UNITS) + self.special  # int / int is correctly rounded


class GroundingStats(BaseModel):
    """Claim-level grounding of the selected answers, by :mod:`assay.metrics.grounding`.

    Claim counts come from answers with claim checks (best_of_n, entailment); the
    gold-citation counts from every answer of a record with ``gold_citations``.
    """

    model_config = ConfigDict(extra="forbid")

    answers_with_claim_checks: int = 0
    unknown_citations: int = 0
    counts: GroundingCounts = Field(default_factory=GroundingCounts)
    metrics: dict[str, float | None] = Field(default_factory=dict)
    _run: _GroundingRun = PrivateAttr(default_factory=lambda: _GroundingRun())

    def add(self, result: ResultRecord) -> None:
        run = self._run
        run.results += 1
        run.unknown_citations += len(result.unknown_citations)
        if result.gold_citations and result.selected_answer is not None:
            self.counts.add_gold(result.citations, result.gold_citations)
        if result.claim_checks:
            run.with_claim_checks += 1
            self.counts.add_checks(result.claim_checks)

    def merge(self, other: GroundingStats) -> None:
        run, theirs = self._run, other._run
        run.results += theirs.results
        run.unknown_citations += theirs.unknown_citations
        run.with_claim_checks += theirs.with_claim_checks
        for item in fields(self.counts):
            name = item.name
            setattr(self.counts, name, getattr(self.counts, name) + getattr(other.counts, name))

    def finish(self) -> None:
        run = self._run
        self.unknown_citations += run.unknown_citations
        self.answers_with_claim_checks += run.with_claim_checks
        run.unknown_citations = run.with_claim_checks = 0
        if run.results:
            self.metrics = self.counts.rates()


@dataclass
class _GroundingRun:
    """GroundingStats's counts while results come in (plain attributes: a pydantic model's
    attribute costs about a microsecond to set)."""

    results: int = 0
    unknown_citations: int = 0
    with_claim_checks: int = 0


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

    def merge(self, other: RevisionStats) -> None:
        for name in _REVISION_COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for mine, theirs in (
            (self.broken_ids, other.broken_ids),
            (self.lost_support_ids, other.lost_support_ids),
        ):
            mine.extend(theirs[: max(0, MAX_LISTED_IDS - len(mine))])

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


_REVISION_COUNTS = tuple(
    name for name, info in RevisionStats.model_fields.items() if info.annotation in (int, "int")
)


def _supported(checks: tuple[object, ...]) -> int:
    return sum(1 for c in checks if getattr(c, "label", None) == "supported")


def _note(ids: list[str], identifier: str) -> None:
    if len(ids) < MAX_LISTED_IDS:
        ids.append(identifier)


class CostStats(ExampleCost):
    """Model calls, cache hits, tokens and latency (one example's :class:`ExampleCost` summed over
    the run), in total and per example."""

    examples: int = 0
    per_example: dict[str, float] = Field(default_factory=dict)
    # time in claim checks, model-free ones included (their cost is not in calls or tokens);
    # claim_checks counts the checks that were timed (self_consistency's are not: its claim
    # verdicts come from one critique call), so check_ms_per_claim is None without them
    claim_checks: int = 0
    check_ms: float = 0.0
    check_ms_per_claim: float | None = None

    _run: _CostRun = PrivateAttr(default_factory=lambda: _CostRun())

    def add(self, result: ResultRecord) -> None:
        run, usage, checks = self._run, result.usage, result.claim_checks
        sums = run.sums
        for name in _COST_COUNTS:
            sums[name] = sums.get(name, 0) + getattr(usage, name)
        run.latency_ms.add(usage.latency_ms)
        for check in checks:
            if check.check_ms is not None:
                run.check_ms.add(check.check_ms)
                run.claim_checks += 1
        run.examples += 1

    def merge(self, other: CostStats) -> None:
        run, theirs = self._run, other._run
        for name, total in theirs.sums.items():
            run.sums[name] = run.sums.get(name, 0) + total
        run.latency_ms.merge(theirs.latency_ms)
        run.check_ms.merge(theirs.check_ms)
        run.claim_checks += theirs.claim_checks
        run.examples += theirs.examples

    def finish(self) -> None:
        run, self._run = self._run, _CostRun()
        for name, total in run.sums.items():
            setattr(self, name, getattr(self, name) + total)
        self.latency_ms += run.latency_ms.value()
        self.check_ms += run.check_ms.value()
        self.claim_checks += run.claim_checks
        self.examples += run.examples
        if self.claim_checks:
            self.check_ms_per_claim = self.check_ms / self.claim_checks
        if not self.examples:
            return
        n = self.examples
        self.per_example = {
            "model_requests": (self.calls + self.cache_hits) / n,
            "calls": self.calls / n,
            "tokens": (self.prompt_tokens + self.completion_tokens) / n,
            "latency_ms": self.latency_ms / n,
        }


_COST_COUNTS = tuple(name for name in ExampleCost.model_fields if name != "latency_ms")


@dataclass
class _CostRun:
    """CostStats's sums while results come in (plain attributes, cheap to update); the float
    ones exact."""

    sums: dict[str, int] = field(default_factory=dict)  # ExampleCost's counts
    latency_ms: ExactSum = field(default_factory=ExactSum)
    check_ms: ExactSum = field(default_factory=ExactSum)
    claim_checks: int = 0
    examples: int = 0


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


@dataclass
class BucketTally:
    """:class:`BucketStats` counted one result at a time (plain fields: cheap to update)."""

    examples: int = 0
    scored: int = 0
    flagged: int = 0
    passed: int = 0
    unscored: int = 0
    p_sum: ExactSum = field(default_factory=ExactSum)

    def add(self, result: ResultRecord) -> None:
        self.examples += 1
        if result.verifier_score is None:
            self.unscored += 1
            return
        self.scored += 1
        self.flagged += result.verifier_pass is False
        self.passed += result.verifier_pass is True
        self.p_sum.add(result.verifier_score)

    def merge(self, other: BucketTally) -> None:
        self.examples += other.examples
        self.scored += other.scored
        self.flagged += other.flagged
        self.passed += other.passed
        self.unscored += other.unscored
        self.p_sum.merge(other.p_sum)

    def stats(self) -> BucketStats:
        scored = self.scored
        return BucketStats(
            examples=self.examples,
            scored=scored,
            flagged=self.flagged,
            passed=self.passed,
            unscored=self.unscored,
            mean_p_error=self.p_sum.value() / scored if scored else None,
            flag_rate=self.flagged / scored if scored else None,
        )


class SelectionStats(BaseModel):
    """best_of_n's selection over its candidates: pass@N and which candidate ranked first.

    In verify-only mode the candidates besides the given answer only feed these numbers, never
    the detection metrics (which are about the given, labelled answer).
    """

    model_config = ConfigDict(extra="forbid")

    records: int = 0  # results with at least one scored candidate
    candidates_scored: int = 0
    pass_at_n: int = 0  # some candidate passes the gate
    given_ranked_first: int = 0  # verify-only: the given answer has the lowest p_error
    verify_only: int = 0
    pass_at_n_rate: float | None = None
    given_ranked_first_rate: float | None = None

    def add(self, result: ResultRecord) -> None:
        if result.pass_at_n is None:
            return
        self.records += 1
        self.candidates_scored += sum(
            1 for c in result.candidates if c.score is not None and c.score.p_error is not None
        )
        self.pass_at_n += result.pass_at_n
        if result.mode == "verify_only":
            self.verify_only += 1
            self.given_ranked_first += result.best_index == 0

    def merge(self, other: SelectionStats) -> None:
        for name in (
            "records",
            "candidates_scored",
            "pass_at_n",
            "verify_only",
            "given_ranked_first",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def finish(self) -> None:
        if self.records:
            self.pass_at_n_rate = self.pass_at_n / self.records
        if self.verify_only:
            self.given_ranked_first_rate = self.given_ranked_first / self.verify_only


MISSING_WORDS_LISTED = 15  # words listed per kind of flagged answer
MISSING_WORDS_KEPT = 50_000  # distinct words counted per kind: bounded memory on huge runs


class MissingWordsStats(BaseModel):
    """The claim words a model-free checker (``learned``) found nowhere in the evidence, over
    the labelled answers it flagged, by the number of answers missing each (lower case). In
    false alarms (grounded answers) they show what it could not match: a paraphrase, a word of
    the answer's own; in caught errors, what gave the errors away."""

    model_config = ConfigDict(extra="forbid")

    false_alarms: int = 0  # flagged grounded answers
    caught_errors: int = 0  # flagged answers with an error
    in_false_alarms: list[tuple[str, int]] = Field(default_factory=list)
    in_caught_errors: list[tuple[str, int]] = Field(default_factory=list)
    # more distinct words than MISSING_WORDS_KEPT: words first met after that were not counted
    capped: bool = False


@dataclass
class MissingWordsTally:
    """:class:`MissingWordsStats` counted one result at a time."""

    reported: bool = False  # some claim check kept missing words (else the stats are None)
    false_alarms: int = 0
    caught_errors: int = 0
    in_false_alarms: dict[str, int] = field(default_factory=dict)
    in_caught_errors: dict[str, int] = field(default_factory=dict)
    capped: bool = False

    def add(self, result: ResultRecord) -> None:
        words = {w.lower() for check in result.claim_checks for w in check.missing_words}
        self.reported |= bool(words)
        if result.verifier_pass is not False or result.gold_error is None:
            return
        if result.gold_error:
            self.caught_errors += 1
            self._count(self.in_caught_errors, dict.fromkeys(sorted(words), 1))
        else:
            self.false_alarms += 1
            self._count(self.in_false_alarms, dict.fromkeys(sorted(words), 1))

    def merge(self, other: MissingWordsTally) -> None:
        self.reported |= other.reported
        self.false_alarms += other.false_alarms
        self.caught_errors += other.caught_errors
        self._count(self.in_false_alarms, other.in_false_alarms)
        self._count(self.in_caught_errors, other.in_caught_errors)
        self.capped |= other.capped

    def _count(self, counts: dict[str, int], more: dict[str, int]) -> None:
        """Add ``more`` (in its order: a merge adds new words as adding one by one would)."""
        for word, n in more.items():
            if word in counts:
                counts[word] += n
            elif len(counts) < MISSING_WORDS_KEPT:
                counts[word] = n
            else:
                self.capped = True

    def stats(self) -> MissingWordsStats | None:
        if not self.reported:
            return None
        return MissingWordsStats(
            false_alarms=self.false_alarms,
            caught_errors=self.caught_errors,
            in_false_alarms=_most_answers(self.in_false_alarms),
            in_caught_errors=_most_answers(self.in_caught_errors),
            capped=self.capped,
        )


def _most_answers(counts: dict[str, int]) -> list[tuple[str, int]]:
    ranked = sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))
    return ranked[:MISSING_WORDS_LISTED]
