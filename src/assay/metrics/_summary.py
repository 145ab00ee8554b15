"""One JSON-ready block of detection metrics with bootstrap intervals.

See :func:`summarize_binary_detection`. The intervals come from per-cluster sufficient
statistics (``_sufficient``), so a million examples with a thousand resamples take seconds.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from assay.metrics._bootstrap import check_confidence, percentile_interval
from assay.metrics._calibration import (
    brier_score_loss,
    calibration_bin_edges,
    expected_calibration_error,
    maximum_calibration_error,
)
from assay.metrics._classification import precision_recall_f1
from assay.metrics._ranking import ranking_from_value_counts
from assay.metrics._sufficient import (
    DetectionData,
    SumLayout,
    build_sums,
    resampled_sums,
)
from assay.metrics._validation import (
    FloatArray,
    check_same_length,
    group_codes,
    labels_and_probabilities,
)

NO_POSITIVES = "y_true has no positive (1) examples"
NO_NEGATIVES = "y_true has no negative (0) examples"
CLUSTER_RESAMPLING = (
    "cluster weights (multinomial draw counts; Poisson(1) from 20,000 clusters on) applied "
    "to per-cluster sufficient statistics"
)
EXAMPLE_RESAMPLING = (
    "multinomial counts over examples grouped by label, score cell and score to 1/4096, "
    "applied to per-group mean sufficient statistics"
)
METRIC_NAMES = (
    "precision",
    "recall",
    "f1",
    "accuracy",
    "balanced_accuracy",
    "auroc",
    "auprc",
    "ece_uniform",
    "ece_quantile",
    "mce",
    "brier",
    "positive_rate",
    "flag_rate",
)


def summarize_binary_detection(
    y_true: Any,
    p_error: Any,
    *,
    threshold: float = 0.5,
    clusters: Any = None,
    n_resamples: int = 1000,
    seed: int = 0,
    n_bins: int = 15,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Detection metrics of a probabilistic detector, each with a bootstrap interval.

    ``y_true`` is 1 where the positive event happened (in the verifier benchmark: the answer
    has a grounding error) and ``p_error`` is the predicted probability of that event. An
    example is flagged when ``p_error >= threshold``.

    Returns a JSON-ready dict: ``metrics`` maps each name in ``METRIC_NAMES`` to
    ``{value, low, high, n_resamples, reason}``; ``reason`` is ``None`` unless the metric is
    undefined on this data (e.g. recall with no positives), in which case the numbers are
    ``None``. Precision with no flagged examples is 0.0 (scikit-learn's zero_division=0).
    ``confusion`` holds tp/fp/fn/tn. ECE is given for equal-width and equal-mass bins; MCE and
    the reliability bins use equal-width bins.

    Intervals: percentile bootstrap over clusters (over examples when ``clusters`` is None),
    computed from per-cluster sufficient statistics times random cluster weights: multinomial
    draw counts, or independent Poisson(1) weights from 20,000 clusters on. Equal-mass ECE
    edges are fixed at the full-data quantiles. ``assay.metrics._sufficient`` documents the
    score cells used for AUROC/AUPRC and the endpoint shift. Deterministic for a ``seed``.
    ``n_resamples=0`` skips the intervals.
    """
    data = detection_data(y_true, p_error, threshold, clusters, n_bins)
    if n_resamples < 0:
        raise ValueError(f"n_resamples must be 0 (no intervals) or more, got {n_resamples}")
    check_confidence(confidence, max(n_resamples, 1))
    exact = exact_metric_values(data, n_bins)
    metrics = {
        name: _undefined(reason) for name, reason in exact.items() if isinstance(reason, str)
    }
    defined = {k: float(v) for k, v in exact.items() if not isinstance(v, str)}
    intervals = _intervals(data, defined, n_bins, n_resamples, seed, confidence)
    for name, value in defined.items():
        low, high, used = intervals.get(name, (None, None, 0))
        metrics[name] = {
            "value": value,
            "low": low,
            "high": high,
            "n_resamples": used,
            "reason": None,
        }
    counts = precision_recall_f1(data.truth, data.flagged)
    return {
        "n": len(data.truth),
        "n_clusters": data.n_clusters if data.clustered else None,
        "positive_event": "y_true == 1",
        "probability_of": "y_true == 1",
        "threshold": threshold,
        "flag_rule": "p_error >= threshold",
        "n_bins": n_bins,
        "confusion": {"tp": counts.tp, "fp": counts.fp, "fn": counts.fn, "tn": counts.tn},
        "metrics": {name: metrics[name] for name in METRIC_NAMES},
        "bootstrap": _bootstrap_settings(data.clustered, n_resamples, confidence, seed),
    }


def _bootstrap_settings(
    clustered: bool, n_resamples: int, confidence: float, seed: int
) -> dict[str, Any]:
    return {
        "method": "cluster percentile bootstrap" if clustered else "percentile bootstrap",
        "resampling": CLUSTER_RESAMPLING if clustered else EXAMPLE_RESAMPLING,
        "n_resamples": n_resamples,
        "confidence": confidence,
        "seed": seed,
    }


def detection_data(
    y_true: Any, p_error: Any, threshold: float, clusters: Any, n_bins: int
) -> DetectionData:
    truth, prob = labels_and_probabilities(y_true, p_error)
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold}")
    distinct, value_index = np.unique(prob, return_inverse=True)
    if clusters is None:
        codes, n_clusters = np.arange(len(truth), dtype=np.intp), len(truth)
    else:
        cluster_codes, n_clusters = group_codes(clusters, "clusters")
        check_same_length(y_true=truth, clusters=cluster_codes)
        codes = cluster_codes.astype(np.intp)
    return DetectionData(
        truth=truth,
        prob=prob,
        flagged=prob >= threshold,
        cluster_codes=codes,
        n_clusters=n_clusters,
        clustered=clusters is not None,
        distinct=distinct,
        inverse=value_index.astype(np.intp),
        uniform_edges=calibration_bin_edges(prob, n_bins=n_bins, strategy="uniform"),
        quantile_edges=calibration_bin_edges(prob, n_bins=n_bins, strategy="quantile"),
    )


def exact_metric_values(data: DetectionData, n_bins: int) -> dict[str, float | str]:
    """Full-data value of each metric, or the reason it is undefined."""
    truth, prob, n = data.truth, data.prob, len(data.truth)
    n_pos = int(truth.sum())
    counts = precision_recall_f1(truth, data.flagged)
    missing = NO_POSITIVES if n_pos == 0 else NO_NEGATIVES if n_pos == n else None
    size = len(data.distinct)
    positives = np.bincount(data.inverse, weights=truth.astype(np.float64), minlength=size)
    negatives = np.bincount(data.inverse, minlength=size) - positives
    auroc, auprc = ranking_from_value_counts(
        positives.astype(np.float64), negatives.astype(np.float64)
    )
    values: dict[str, float | str] = {
        "precision": counts.precision,
        "recall": counts.recall if n_pos else NO_POSITIVES,
        "f1": counts.f1 if n_pos else NO_POSITIVES,
        "accuracy": counts.accuracy,
        "balanced_accuracy": missing or counts.balanced_accuracy,
        "auroc": missing or auroc,
        "auprc": auprc if n_pos else NO_POSITIVES,
        "brier": brier_score_loss(truth, prob),
        "positive_rate": n_pos / n,
        "flag_rate": float(data.flagged.mean()),
        "mce": maximum_calibration_error(truth, prob, n_bins=n_bins),
        "ece_uniform": expected_calibration_error(truth, prob, n_bins=n_bins),
        "ece_quantile": expected_calibration_error(truth, prob, n_bins=n_bins, strategy="quantile"),
    }
    return values


def _undefined(reason: str) -> dict[str, Any]:
    return {"value": None, "low": None, "high": None, "n_resamples": 0, "reason": reason}


def _intervals(
    data: DetectionData,
    exact: dict[str, float],
    n_bins: int,
    n_resamples: int,
    seed: int,
    confidence: float,
) -> dict[str, tuple[float | None, float | None, int]]:
    """Shifted percentile interval and the number of usable resamples per defined metric."""
    if n_resamples == 0:
        return {}
    matrix = build_sums(data, n_bins)
    full = metrics_from_sums(matrix.full_data(), matrix.layout)
    replicates = metrics_from_sums(resampled_sums(matrix, n_resamples, seed), matrix.layout)
    result: dict[str, tuple[float | None, float | None, int]] = {}
    for name, value in exact.items():
        shift = value - float(full[name][0])
        low, high = percentile_interval(replicates[name], confidence)
        used = int(np.isfinite(replicates[name]).sum())
        result[name] = (_shifted(low, shift), _shifted(high, shift), used)
    return result


def _shifted(endpoint: float, shift: float) -> float | None:
    """An interval endpoint moved by ``shift``, kept in [0, 1] (None when undefined).

    Every summary metric is a rate, an area or a calibration gap in [0, 1]. The shift corrects
    the centre of the cell approximation (average precision of continuous scores), not its
    range: near-perfect rankings otherwise gave an AUPRC upper end above 1.
    """
    if math.isnan(endpoint):
        return None
    return min(1.0, max(0.0, endpoint + shift))


def _divide(numerator: FloatArray, denominator: FloatArray, *, empty: float) -> FloatArray:
    safe = np.where(denominator > 0, denominator, 1.0)
    return np.asarray(np.where(denominator > 0, numerator / safe, empty))


def metrics_from_sums(sums: FloatArray, layout: SumLayout) -> dict[str, FloatArray]:
    """Every summary metric for each row of sufficient statistics (NaN where undefined)."""
    cell = layout.expand(sums)
    tp, fp, fn, tn = cell.tp, cell.fp, cell.fn, cell.tn
    n = tp + fp + fn + tn
    positives, negatives = tp + fn, fp + tn
    recall = _divide(tp, positives, empty=np.nan)
    specificity = _divide(tn, negatives, empty=np.nan)
    metrics = {
        "precision": _divide(tp, tp + fp, empty=0.0),
        "recall": recall,
        "f1": np.where(positives > 0, _divide(2 * tp, 2 * tp + fp + fn, empty=0.0), np.nan),
        "accuracy": (tp + tn) / n,
        "balanced_accuracy": (recall + specificity) / 2,
        "brier": cell.squared_error / n,
        "positive_rate": positives / n,
        "flag_rate": (tp + fp) / n,
    }
    metrics["ece_uniform"], metrics["mce"] = _bin_errors(*cell.uniform, n)
    metrics["ece_quantile"] = _bin_errors(*cell.quantile, n)[0]
    metrics.update(_ranking_from_cells(cell.cell_pos, cell.cell_neg, layout.cell_concordance))
    return metrics


def _bin_errors(
    count: FloatArray, positive: FloatArray, prob_sum: FloatArray, n: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """ECE and MCE from per-bin count, positives and summed probability."""
    gap = np.abs(prob_sum - positive)
    per_bin = np.where(count > 0, gap / np.where(count > 0, count, 1.0), 0.0)
    return gap.sum(axis=1) / n, per_bin.max(axis=1)


def _ranking_from_cells(
    pos: FloatArray, neg: FloatArray, concordance: FloatArray
) -> dict[str, FloatArray]:
    """AUROC and average precision from per-cell positive and negative counts."""
    n_pos, n_neg = pos.sum(axis=1), neg.sum(axis=1)
    below = np.cumsum(neg, axis=1) - neg
    concordant = np.sum(pos * (below + concordance * neg), axis=1)
    auroc = _divide(concordant, n_pos * n_neg, empty=np.nan)
    pos_desc, neg_desc = pos[:, ::-1], neg[:, ::-1]
    tps = np.cumsum(pos_desc, axis=1)
    precision = _divide(tps, tps + np.cumsum(neg_desc, axis=1), empty=0.0)
    auprc = _divide(np.sum(pos_desc * precision, axis=1), n_pos, empty=np.nan)
    return {"auroc": auroc, "auprc": auprc}
