"""``summary.json`` and ``plots/`` of a bench run, rebuilt from ``results.jsonl`` alone.

The results are read once, streaming; only the numbers the metrics need are kept (one label,
one score and one cluster id per scored example), so a summary of a million results fits in
a few hundred megabytes at most.

Which answers the detection metrics use: those with a gold label *and* a verifier score. An
answer whose verifier failed is counted under ``counts.verifier_failures`` (with the reasons)
and left out; an example with a model call that failed after every retry is counted under
``counts.examples_with_failed_calls`` and left out of every metric but cost (the next run
redoes it); an unlabelled answer is counted under ``counts.unlabelled``. Nothing is imputed.

``detection`` is about the selected (final) answers, the ones the gate passes or blocks. When
revisions were used, ``detection_first_pass`` is about the first answers, before revision
(labelled by the oracle's ``oracle_before_revision``): the verifier as a detector of the
generator's raw errors, which revision would otherwise hide.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..model import runs_in_process
from ..runs import read_run_json, utc_now, write_atomic
from ..runs.prices import Money, read_run_prices, run_money
from .results import RESULTS_FILE, ResultRecord, iter_results
from .summary_parts import (
    BucketStats,
    BucketTally,
    CostStats,
    GroundingStats,
    MissingWordsStats,
    MissingWordsTally,
    RevisionStats,
    SelectionStats,
)
from .types import SCORE_EVENT

SUMMARY_FILE = "summary.json"
SUMMARY_SCHEMA_VERSION = 1
PLOTS_DIR = "plots"
CURVE_POINTS = 201  # coverage curve points kept in summary.json (the plot uses every point)
GATE_THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


class DetectionInputs:
    """The arrays the detection metrics need, grown one answer at a time."""

    def __init__(self) -> None:
        self.truth: list[bool] = []
        self.p_error: list[float] = []
        self.clusters: list[str] = []

    def add(self, error: bool | None, p_error: float | None, cluster: str) -> None:
        if error is None or p_error is None:
            return
        self.truth.append(error)
        self.p_error.append(p_error)
        self.clusters.append(cluster)

    def merge(self, other: DetectionInputs) -> None:
        self.truth += other.truth
        self.p_error += other.p_error
        self.clusters += other.clusters

    def arrays(self) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        return np.asarray(self.truth, dtype=bool), np.asarray(self.p_error, dtype=float)


def first_pass(result: ResultRecord) -> tuple[bool | None, float | None]:
    """(label, p_error) of the first answer the verifier judged, before any revision."""
    revision = result.revision
    if not result.revision_used or revision is None:
        return result.gold_error, result.verifier_score
    before = result.oracle_before_revision
    return (None if before is None else before.has_error), revision.before.p_error


class BenchSummary(BaseModel):
    """The whole of summary.json."""

    model_config = ConfigDict(extra="forbid")

    kind: str = "bench"
    schema_version: int = SUMMARY_SCHEMA_VERSION
    score_event: str = SCORE_EVENT
    positive_class: str = "the answer has a grounding error (gold_error = true)"
    created_at: str = Field(default_factory=utc_now)
    pattern: str | None = None
    threshold: float | None = None
    counts: dict[str, Any]
    labels: dict[str, Any]
    detection: dict[str, Any] | None = None
    detection_note: str | None = None
    # the verifier on the first answers (before revision); None when nothing was revised
    detection_first_pass: dict[str, Any] | None = None
    # the second opinion of a combined verifier (learned+<model>) on the same answers
    detection_second_opinion: dict[str, Any] | None = None
    selective: dict[str, Any] | None = None
    uncertain_rate: float | None = None  # uncertain claim labels / claims checked
    grounding: GroundingStats
    revision: RevisionStats
    # best_of_n: pass@N and the candidate ranked first (None for the other patterns)
    selection: SelectionStats | None = None
    cost: CostStats
    buckets: dict[str, BucketStats]
    plots: dict[str, str] = Field(default_factory=dict)
    plots_note: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    run: dict[str, Any] = Field(default_factory=dict)
    # the calibration applied to p_error and the threshold (``bench calibrate``), if any
    calibration: dict[str, Any] | None = None
    # cost in money under the run's price table (``--prices``), or why it is unknown
    money: Money | None = None
    # the claim words a model-free checker did not find, in the answers it flagged
    missing_words: MissingWordsStats | None = None


#: counts key: examples with a model call that failed after every retry (redone by the next run)
FAILED_CALLS = "examples_with_failed_calls"


class SummaryTally:
    """Everything summary.json counts, fed one result at a time (in results.jsonl's order of
    current lines, which :func:`build_summary` reads), or a tally of the results that follow
    at a time (:meth:`merge`: a Ray worker counts its batch, the driver merges the batches in
    the order it writes them)."""

    def __init__(self) -> None:
        self.detection = DetectionInputs()
        self.first_pass = DetectionInputs()
        self.second_opinion = DetectionInputs()
        self.revised = 0
        self.grounding = GroundingStats()
        self.revision = RevisionStats()
        self.selection = SelectionStats()
        self.cost = CostStats()
        self.buckets: dict[str, BucketTally] = {}
        self.missing_words = MissingWordsTally()
        self.counter: Counter[str] = Counter()
        self.failure_reasons: Counter[str] = Counter()
        self.sources: Counter[str] = Counter()
        self.sources_used: Counter[str] = Counter()
        self.patterns: Counter[str] = Counter()
        self.thresholds: set[float] = set()

    def add(self, result: ResultRecord) -> None:
        self.counter["results"] += 1
        self.counter[f"mode_{result.mode}"] += 1
        self.patterns[result.pattern] += 1
        self.thresholds.add(result.threshold)
        self.cost.add(result)  # the calls were spent, whatever came of them
        if not result.complete:
            # A model call failed after every retry: not a score, not a verifier failure
            # either; the next run redoes the example.
            self.counter[FAILED_CALLS] += 1
            self.failure_reasons[_reason_key(first_failure(result))] += 1
            return
        self.sources[result.label_source] += 1
        self._count_outcome(result)
        self.detection.add(result.gold_error, result.verifier_score, result.cluster)
        self.first_pass.add(*first_pass(result), result.cluster)
        self.second_opinion.add(result.gold_error, second_opinion_p_error(result), result.cluster)
        self.revised += result.revision_used
        self.grounding.add(result)
        self.revision.add(result)
        self.selection.add(result)
        bucket = result.failure_bucket or "unlabelled"
        if (stats := self.buckets.get(bucket)) is None:
            stats = self.buckets[bucket] = BucketTally()
        stats.add(result)
        self.missing_words.add(result)

    def merge(self, other: SummaryTally) -> None:
        """Add ``other``, a tally of the results after this one's: the same as adding them one
        by one (nothing of the summary depends on how they were grouped)."""
        for name in ("detection", "first_pass", "second_opinion"):
            getattr(self, name).merge(getattr(other, name))
        self.revised += other.revised
        self.grounding.merge(other.grounding)
        self.revision.merge(other.revision)
        self.selection.merge(other.selection)
        self.cost.merge(other.cost)
        self.missing_words.merge(other.missing_words)
        for bucket, stats in other.buckets.items():
            if (mine := self.buckets.get(bucket)) is None:
                mine = self.buckets[bucket] = BucketTally()
            mine.merge(stats)
        for counter in ("counter", "failure_reasons", "sources", "sources_used", "patterns"):
            getattr(self, counter).update(getattr(other, counter))
        self.thresholds |= other.thresholds

    def finish(self) -> None:
        """The rates, once every result is in."""
        self.grounding.finish()
        self.selection.finish()
        self.cost.finish()

    def _count_outcome(self, result: ResultRecord) -> None:
        if result.verifier_score is None:
            self.counter["verifier_failures"] += 1
            self.failure_reasons[_reason_key(result.failure)] += 1
        else:
            self.counter["scored"] += 1
        if result.gold_error is None:
            self.counter["unlabelled"] += 1
        elif result.verifier_score is not None:
            self.counter["used_for_detection"] += 1
            self.sources_used[result.label_source] += 1


def second_opinion_p_error(result: ResultRecord) -> float | None:
    """The second opinion's p_error for an answer: 1 - its lowest p(supported) over the claims.

    None when no claim has a second-opinion probability (no second opinion was asked)."""
    probabilities = [
        c.second_opinion.p_supported
        for c in result.claim_checks
        if c.second_opinion is not None and c.second_opinion.p_supported is not None
    ]
    return 1.0 - min(probabilities) if probabilities else None


def first_failure(result: ResultRecord) -> str:
    """The first failure reason recorded anywhere in an example."""
    reasons = [
        result.failure,
        *(c.failure for c in result.candidates),
        *(c.failure for c in result.claim_checks),
        result.revision.failure if result.revision else None,
        *(result.critique.failures if result.critique else ()),
        result.oracle.failure if result.oracle else None,
    ]
    return next((r for r in reasons if r), "a model call failed")


_CALL_FAILED = "call failed: "
# the parts of a reason that vary per example: the count of a claim-check wrapper
# (``claim check failed (1 of 2): ``) and the reply quoted after a missing probability
_COUNTED_WRAPPER = re.compile(r"^[\w ]+ failed \(\d+ of \d+\): ")
_QUOTED_REPLY = re.compile(r"\s*\(replied .*\)$", re.DOTALL)
# a step's failed call, as the generation, the oracle, a revision or a claim splitter record
# it ("generation: connection after 1 attempt(s): cannot reach ...", "openai/x: timeout after
# 3 attempt(s): ..."): grouped by the step and the call's cause
_STEP_CALL_FAILED = re.compile(r"^([^\n]+?): (\w+ after \d+ attempt\(s\): .*)$", re.DOTALL)


def _reason_key(failure: str | None) -> str:
    """Failure reasons grouped by their cause, which says what to fix, without the details
    that vary per example: a failed call by what failed (``not_found after 1 attempt(s): HTTP
    404: ...``), a claim check by its own reason (``no probability: neither label token
    ...``), anything else by its leading words."""
    text = _COUNTED_WRAPPER.sub("", failure or "unknown")
    if _CALL_FAILED in text:
        text = _CALL_FAILED + text.rsplit(_CALL_FAILED, 1)[1].strip()
        return text[:200]
    if text.startswith("no probability: "):
        return _QUOTED_REPLY.sub("", text)[:200]
    if step := _STEP_CALL_FAILED.match(text):
        return f"{step[1]}: {step[2].strip()}"[:200]
    return text.split(":")[0].strip()[:80] or "unknown"


def build_summary(
    run_dir: Path,
    *,
    config: dict[str, Any] | None = None,
    n_resamples: int | None = None,
    seed: int = 0,
    plots: bool = True,
    results: Iterable[ResultRecord] | None = None,
    tally: SummaryTally | None = None,
    is_slice: bool = False,
) -> BenchSummary:
    """Recompute the summary of ``run_dir`` from its results.jsonl (and plots, unless told not);
    ``results`` summarises those instead (a slice of the run); ``tally`` is one already fed
    with the run's current results, in file order (not yet finished), or with a slice's
    (``is_slice``: a slice has no money of its own)."""
    if tally is None:
        tally = SummaryTally()
        for result in iter_results(run_dir / RESULTS_FILE) if results is None else results:
            tally.add(result)
    tally.finish()
    run = read_run_json(run_dir) or {}
    config = config if config is not None else dict(run.get("config") or {})
    resamples = n_resamples if n_resamples is not None else int(config.get("n_resamples", 1000))
    threshold = _one_threshold(tally.thresholds)
    applied = _apply_calibration(run_dir, tally)
    if applied is not None and threshold is not None:
        threshold = float(applied["threshold"])
    summary = BenchSummary(
        pattern=_single(tally.patterns),
        threshold=threshold,
        counts=_counts(tally),
        labels=_labels(tally),
        uncertain_rate=tally.grounding.metrics.get("uncertain_rate"),
        grounding=tally.grounding,
        revision=tally.revision,
        selection=tally.selection if tally.selection.records else None,
        cost=tally.cost,
        buckets={name: tally.buckets[name].stats() for name in sorted(tally.buckets)},
        config=config,
        run={k: v for k, v in run.items() if k != "config"},
        calibration=applied,
        money=None if is_slice or results is not None else _money(run_dir, config, tally),
        missing_words=tally.missing_words.stats(),
    )
    if threshold is None:
        return summary.model_copy(update={"detection_note": "no scored results"})
    return _with_detection(summary, tally, run_dir, threshold, resamples, seed, plots)


def _money(run_dir: Path, config: dict[str, Any], tally: SummaryTally) -> Money:
    """The whole run's cost (slices have none: sessions' tokens are not split by record)."""
    batch = config.get("executor") == "batch"
    table = read_run_prices(run_dir)
    return run_money(run_dir, table, tally.cost.examples, batch=batch, in_process=runs_in_process)


def _apply_calibration(run_dir: Path, tally: SummaryTally) -> dict[str, Any] | None:
    """Map the detection scores through the run's calibration file, if it has one."""
    from .calibration import CALIBRATION_FILE, calibration_record, run_calibration

    calibration = run_calibration(run_dir)
    if calibration is None:
        return None
    for inputs in (tally.detection, tally.first_pass):
        if inputs.p_error:
            inputs.p_error = [float(p) for p in calibration.apply(inputs.p_error)]
    return calibration_record(calibration, run_dir / CALIBRATION_FILE)


def _with_detection(
    summary: BenchSummary,
    tally: SummaryTally,
    run_dir: Path,
    threshold: float,
    n_resamples: int,
    seed: int,
    plots: bool,
) -> BenchSummary:
    truth, p_error = tally.detection.arrays()
    if truth.size == 0:
        note = "no answer has both a gold label and a verifier score: detection not computed"
        no_labels: dict[str, Any] = {"detection_note": note, "plots_note": note}
        if plots:
            no_labels["plots"], no_labels["plots_note"] = _plots(run_dir, truth, p_error, threshold)
        return summary.model_copy(update=no_labels)
    options: dict[str, Any] = {"threshold": threshold, "n_resamples": n_resamples, "seed": seed}
    detection = _detect(tally.detection, **options)
    detection["label_sources"] = dict(tally.sources_used)
    selective = _selective(truth, p_error, threshold)
    update: dict[str, Any] = {"detection": detection, "selective": selective}
    if tally.revised and tally.first_pass.truth:
        update["detection_first_pass"] = _detect(tally.first_pass, **options)
    if tally.second_opinion.truth:
        update["detection_second_opinion"] = _detect(tally.second_opinion, **options)
    if plots:
        update["plots"], update["plots_note"] = _plots(run_dir, truth, p_error, threshold)
    return summary.model_copy(update=update)


def _plots(
    run_dir: Path, truth: np.ndarray[Any, Any], p_error: np.ndarray[Any, Any], threshold: float
) -> tuple[dict[str, str], str | None]:
    from .plots import write_plots

    return write_plots(run_dir / PLOTS_DIR, truth, p_error, threshold=threshold)


def _detect(
    inputs: DetectionInputs, *, threshold: float, n_resamples: int, seed: int
) -> dict[str, Any]:
    from ..metrics import summarize_binary_detection

    truth, p_error = inputs.arrays()
    return summarize_binary_detection(
        truth,
        p_error,
        threshold=threshold,
        clusters=np.asarray(inputs.clusters, dtype=object),
        n_resamples=n_resamples,
        seed=seed,
    )


def _selective(
    truth: np.ndarray[Any, Any], p_error: np.ndarray[Any, Any], threshold: float
) -> dict[str, Any]:
    """Keep the answers the verifier is surest are grounded first; accuracy = grounded."""
    from ..metrics import area_under_risk_coverage, risk_coverage_curve

    correct, confidence = ~truth, 1.0 - p_error
    curve = risk_coverage_curve(correct, confidence)
    keep = np.unique(np.linspace(0, len(curve.coverage) - 1, CURVE_POINTS).astype(int))
    return {
        "correct_event": "the answer is grounded (gold_error = false)",
        "confidence": "1 - p_error",
        "gate": _gate(truth, p_error, threshold),
        "thresholds": [_gate(truth, p_error, t) for t in GATE_THRESHOLDS],
        "aurc": area_under_risk_coverage(correct, confidence),
        "accuracy_at_coverage": {
            f"{c:.1f}": curve.accuracy_at_coverage(c) for c in (0.2, 0.5, 0.8, 1.0)
        },
        "curve": {
            "coverage": [float(v) for v in curve.coverage[keep]],
            "accuracy": [float(v) for v in curve.accuracy[keep]],
        },
    }


def _gate(
    truth: np.ndarray[Any, Any], p_error: np.ndarray[Any, Any], threshold: float
) -> dict[str, Any]:
    """What gating at ``threshold`` does: the share answered and how many of those are grounded,
    with the detector's precision and recall at the same cut."""
    passed = p_error < threshold
    flagged_errors = int((~passed & truth).sum())
    return {
        "threshold": threshold,
        "coverage": float(passed.mean()),
        "accuracy_of_passed": float((~truth[passed]).mean()) if passed.any() else None,
        "precision": flagged_errors / int((~passed).sum()) if (~passed).any() else None,
        "recall": flagged_errors / int(truth.sum()) if truth.any() else None,
    }


def _counts(tally: SummaryTally) -> dict[str, Any]:
    counts: dict[str, Any] = {
        key: tally.counter.get(key, 0)
        for key in (
            "results",
            "scored",
            "verifier_failures",
            FAILED_CALLS,
            "unlabelled",
            "used_for_detection",
        )
    }
    counts["modes"] = {
        k.removeprefix("mode_"): v for k, v in tally.counter.items() if k.startswith("mode_")
    }
    counts["failure_reasons"] = dict(tally.failure_reasons.most_common())
    return counts


def failure_reasons_line(counts: dict[str, Any]) -> str | None:
    """``failure reasons: REASON (N); ...`` from a summary's counts, most frequent first, or
    None when nothing failed (one wording for the CLI's headline and the report)."""
    reasons = counts.get("failure_reasons")
    if not reasons:
        return None
    return "failure reasons: " + "; ".join(f"{reason} ({n})" for reason, n in reasons.items())


def _labels(tally: SummaryTally) -> dict[str, Any]:
    return {
        "by_source": dict(tally.sources),
        "used_for_detection": dict(tally.sources_used),
        "sources_meaning": {
            "dataset": "the input file's gold_error",
            "injected": "made by assay perturb (known by construction)",
            "oracle": "the oracle model's verdict on the generated answer",
            "none": "no label: left out of detection metrics",
        },
    }


def _single(counter: Counter[str]) -> str | None:
    if len(counter) <= 1:
        return next(iter(counter), None)
    return "mixed: " + ", ".join(sorted(counter))


def _one_threshold(thresholds: set[float]) -> float | None:
    if not thresholds:
        return None
    if len(thresholds) > 1:
        from ..errors import RunError

        raise RunError(f"results.jsonl mixes thresholds {sorted(thresholds)}")
    return next(iter(thresholds))


def refresh_money(run_dir: Path) -> BenchSummary:
    """summary.json with its money recomputed (after a price table was given to the run)."""
    summary = BenchSummary.model_validate_json((run_dir / SUMMARY_FILE).read_text("utf-8"))
    updated = with_current_money(run_dir, summary)
    write_atomic(run_dir / SUMMARY_FILE, updated.model_dump_json(indent=2))
    return updated


def with_current_money(run_dir: Path, summary: BenchSummary) -> BenchSummary:
    """``summary`` with its money as today's rules and the run's price table give it, from the
    tokens in run_log.jsonl: a summary written by an older assay (a local model's money then
    unknown) reads like a new one. Without a run log the summary's own money stands."""
    if not (run_dir / "run_log.jsonl").is_file():
        return summary
    batch = summary.config.get("executor") == "batch"
    table = read_run_prices(run_dir)
    money = run_money(
        run_dir, table, summary.cost.examples, batch=batch, in_process=runs_in_process
    )
    return summary.model_copy(update={"money": money})


def write_summary(run_dir: Path, **options: Any) -> BenchSummary:
    """Build the summary (and plots) and write summary.json atomically."""
    summary = build_summary(run_dir, **options)
    write_atomic(run_dir / SUMMARY_FILE, summary.model_dump_json(indent=2))
    return summary
