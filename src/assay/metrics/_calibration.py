"""Calibration of predicted probabilities of the positive event (``y_true == 1``).

Binning: ``strategy="uniform"`` uses ``n_bins`` equal-width bins on [0, 1]; ``"quantile"`` uses
edges at the empirical quantiles of ``prob`` (equal-mass bins). A bin holds ``lo <= p < hi``
except the last, which also holds its upper edge. Tied probabilities can make quantile edges
coincide; such bins are empty, marked as empty and skipped by the errors.

ECE = sum over non-empty bins of (count / n) * |mean predicted - observed frequency|.
MCE = the largest of those gaps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from assay.metrics._validation import FloatArray, labels_and_probabilities

BinStrategy = Literal["uniform", "quantile"]


@dataclass(frozen=True)
class ReliabilityCurve:
    """Per-bin statistics of a reliability diagram.

    ``mean_predicted`` and ``observed_frequency`` are NaN for empty bins, which ``empty``
    marks; ``to_dict`` writes them as ``None``.
    """

    bin_edges: FloatArray
    mean_predicted: FloatArray
    observed_frequency: FloatArray
    counts: npt.NDArray[np.int64]
    strategy: BinStrategy

    @property
    def empty(self) -> npt.NDArray[np.bool_]:
        return np.asarray(self.counts == 0)

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    def gaps(self) -> FloatArray:
        """|mean predicted - observed frequency| per bin (NaN where empty)."""
        return np.asarray(np.abs(self.mean_predicted - self.observed_frequency))

    def to_dict(self) -> dict[str, Any]:
        def clean(values: FloatArray) -> list[float | None]:
            return [None if math.isnan(v) else float(v) for v in values]

        return {
            "strategy": self.strategy,
            "bin_edges": [float(e) for e in self.bin_edges],
            "mean_predicted": clean(self.mean_predicted),
            "observed_frequency": clean(self.observed_frequency),
            "counts": [int(c) for c in self.counts],
        }


def calibration_bin_edges(prob: FloatArray, *, n_bins: int, strategy: BinStrategy) -> FloatArray:
    """Bin edges for ``prob`` (already validated) under ``strategy``."""
    if not isinstance(n_bins, int | np.integer) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    if strategy == "uniform":
        # k / n_bins, not linspace: linspace gives 0.6000000000000001 for 3/5, which would put
        # a probability reported as exactly 0.6 into the lower bin.
        return np.arange(n_bins + 1) / n_bins
    if strategy == "quantile":
        edges = np.quantile(prob, np.linspace(0.0, 1.0, n_bins + 1))
        edges[0], edges[-1] = 0.0, 1.0
        return np.asarray(np.maximum.accumulate(edges))
    raise ValueError(f"strategy must be 'uniform' or 'quantile', got {strategy!r}")


def assign_bins(prob: FloatArray, edges: FloatArray) -> npt.NDArray[np.intp]:
    """Bin index of each probability: ``lo <= p < hi``, the last bin closed on the right."""
    return np.searchsorted(edges[1:-1], prob, side="right")


def reliability_curve(
    y_true: Any, prob: Any, *, n_bins: int = 15, strategy: BinStrategy = "uniform"
) -> ReliabilityCurve:
    """Mean predicted probability and observed frequency of ``y_true == 1`` per bin."""
    truth, probs = labels_and_probabilities(y_true, prob)
    edges = calibration_bin_edges(probs, n_bins=n_bins, strategy=strategy)
    bins = assign_bins(probs, edges)
    counts = np.bincount(bins, minlength=n_bins).astype(np.int64)
    sum_prob = np.bincount(bins, weights=probs, minlength=n_bins)
    sum_true = np.bincount(bins, weights=truth.astype(np.float64), minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_predicted = np.where(counts > 0, sum_prob / counts, np.nan)
        observed = np.where(counts > 0, sum_true / counts, np.nan)
    return ReliabilityCurve(edges, mean_predicted, observed, counts, strategy)


def expected_calibration_error(
    y_true: Any, prob: Any, *, n_bins: int = 15, strategy: BinStrategy = "uniform"
) -> float:
    """Count-weighted mean gap between confidence and frequency over the bins (lower is better)."""
    curve = reliability_curve(y_true, prob, n_bins=n_bins, strategy=strategy)
    filled = ~curve.empty
    return float(np.sum(curve.counts[filled] * curve.gaps()[filled]) / curve.n)


def maximum_calibration_error(
    y_true: Any, prob: Any, *, n_bins: int = 15, strategy: BinStrategy = "uniform"
) -> float:
    """Largest gap between confidence and frequency over the non-empty bins."""
    curve = reliability_curve(y_true, prob, n_bins=n_bins, strategy=strategy)
    return float(np.max(curve.gaps()[~curve.empty]))


def brier_score_loss(y_true: Any, prob: Any) -> float:
    """Mean squared difference between ``prob`` and the 0/1 outcome (lower is better)."""
    truth, probs = labels_and_probabilities(y_true, prob)
    return float(np.mean((probs - truth) ** 2))
