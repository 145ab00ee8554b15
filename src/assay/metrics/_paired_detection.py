"""Two detectors on the same labelled examples: each metric's difference with a paired interval.

Two intervals that overlap can still hide a consistent difference: the examples that are hard
for one detector are mostly hard for the other, so their metrics move together from one
resample to the next. A paired bootstrap resamples the examples (or clusters) once and
computes both detectors' metrics on that same resample, so the interval of ``B - A`` holds
only the variation of the difference.

Both detectors' sufficient-statistics matrices have one row per cluster, in the same order,
and :func:`~assay.metrics._sufficient.resampled_sums` draws its cluster weights from the seed
and the number of rows alone: with one seed, resample ``r`` weights the same clusters in
both, which is what pairs them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from assay.metrics._bootstrap import check_confidence, percentile_interval
from assay.metrics._sufficient import DetectionData, build_sums, resampled_sums
from assay.metrics._summary import (
    CLUSTER_RESAMPLING,
    METRIC_NAMES,
    detection_data,
    exact_metric_values,
    metrics_from_sums,
)
from assay.metrics._validation import FloatArray, as_1d, check_same_length

# the positive rate is the labels' own, the same for both detectors
PAIRED_METRIC_NAMES = tuple(name for name in METRIC_NAMES if name != "positive_rate")


def paired_detection_differences(
    y_true: Any,
    p_error_a: Any,
    p_error_b: Any,
    *,
    threshold_a: float = 0.5,
    threshold_b: float = 0.5,
    clusters: Any = None,
    n_resamples: int = 1000,
    seed: int = 0,
    n_bins: int = 15,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """``B - A`` for every detection metric of :func:`summarize_binary_detection`, with a
    paired percentile bootstrap interval.

    ``p_error_a`` and ``p_error_b`` are two detectors' probabilities of the positive event on
    the same examples (``y_true``), each flagging at its own threshold. Each resample draws
    clusters (examples when ``clusters`` is None) with replacement once and weights both
    detectors' statistics by it. Metrics are as in :func:`summarize_binary_detection` (the
    same score cells, so the interval endpoints are shifted by the exact full-data difference
    minus the one from sums, and kept in [-1, 1]); the point values ``a`` and ``b`` are what
    that function reports for each detector alone.

    Returns ``{n, n_clusters, metrics: {name: {a, b, difference, low, high, n_resamples,
    reason}}, bootstrap}``; ``reason`` names why a metric is undefined (one class only).
    ``n_resamples=0`` skips the intervals.
    """
    n = check_same_length(
        y_true=as_1d(y_true, "y_true"),
        p_error_a=as_1d(p_error_a, "p_error_a"),
        p_error_b=as_1d(p_error_b, "p_error_b"),
    )
    # without clusters every example is its own: the same cluster weights then pair them
    codes = np.arange(n) if clusters is None else clusters
    first = detection_data(y_true, p_error_a, threshold_a, codes, n_bins)
    second = detection_data(y_true, p_error_b, threshold_b, codes, n_bins)
    if n_resamples < 0:
        raise ValueError(f"n_resamples must be 0 (no intervals) or more, got {n_resamples}")
    check_confidence(confidence, max(n_resamples, 1))
    exact_a, exact_b = exact_metric_values(first, n_bins), exact_metric_values(second, n_bins)
    replicates = _difference_replicates(first, second, n_bins, n_resamples, seed)
    metrics = {
        name: _difference(exact_a[name], exact_b[name], replicates.get(name), confidence)
        for name in PAIRED_METRIC_NAMES
    }
    return {
        "n": len(first.truth),
        "n_clusters": first.n_clusters if clusters is not None else None,
        "difference": "B - A",
        "metrics": metrics,
        "bootstrap": {
            "method": "paired cluster percentile bootstrap"
            if clusters is not None
            else "paired percentile bootstrap",
            "resampling": CLUSTER_RESAMPLING + ", the same weights for both detectors",
            "n_resamples": n_resamples,
            "confidence": confidence,
            "seed": seed,
        },
    }


def _difference_replicates(
    first: DetectionData, second: DetectionData, n_bins: int, n_resamples: int, seed: int
) -> dict[str, tuple[FloatArray, float]]:
    """Per metric: B - A on each resample, and the full-data B - A computed from sums (the
    reference the shift to the exact difference is measured from)."""
    if n_resamples == 0:
        return {}
    sums_a, sums_b = build_sums(first, n_bins), build_sums(second, n_bins)
    full_a = metrics_from_sums(sums_a.full_data(), sums_a.layout)
    full_b = metrics_from_sums(sums_b.full_data(), sums_b.layout)
    resampled_a = metrics_from_sums(resampled_sums(sums_a, n_resamples, seed), sums_a.layout)
    resampled_b = metrics_from_sums(resampled_sums(sums_b, n_resamples, seed), sums_b.layout)
    return {
        name: (resampled_b[name] - resampled_a[name], float(full_b[name][0] - full_a[name][0]))
        for name in PAIRED_METRIC_NAMES
    }


def _difference(
    a: float | str,
    b: float | str,
    replicates: tuple[FloatArray, float] | None,
    confidence: float,
) -> dict[str, Any]:
    if isinstance(a, str) or isinstance(b, str):
        reason = a if isinstance(a, str) else b
        undefined = dict.fromkeys(("a", "b", "difference", "low", "high"))
        return {**undefined, "n_resamples": 0, "reason": reason}
    difference = float(b) - float(a)
    low = high = None
    used = 0
    if replicates is not None:
        values, from_sums = replicates
        shift = difference - from_sums
        lower, upper = percentile_interval(values, confidence)
        low, high = _shifted(lower, shift), _shifted(upper, shift)
        used = int(np.isfinite(values).sum())
    return {
        "a": float(a),
        "b": float(b),
        "difference": difference,
        "low": low,
        "high": high,
        "n_resamples": used,
        "reason": None,
    }


def _shifted(endpoint: float, shift: float) -> float | None:
    """An endpoint moved by ``shift`` and kept in [-1, 1], the range of a difference of two
    metrics in [0, 1] (None when undefined)."""
    if math.isnan(endpoint):
        return None
    return min(1.0, max(-1.0, endpoint + shift))
