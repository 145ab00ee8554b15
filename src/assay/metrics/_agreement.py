"""Agreement between raters: Cohen's kappa for two raters, Krippendorff's alpha for many."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from assay.metrics._classification import confusion_matrix
from assay.metrics._validation import FloatArray, as_1d, check_same_length

KappaWeights = Literal["linear", "quadratic"] | None
AlphaLevel = Literal["nominal", "ordinal", "interval"]


def cohen_kappa_score(
    a: Any, b: Any, *, weights: KappaWeights = None, labels: Sequence[Any] | None = None
) -> float:
    """Cohen's kappa between two raters' labels of the same items (matches scikit-learn).

    ``weights``: ``None`` counts any disagreement fully; ``"linear"`` and ``"quadratic"``
    weight a disagreement by the distance between the label positions in ``labels`` (sorted
    union of both raters by default), for ordinal scales such as 0/1/2 rubric scores.
    """
    first = as_1d(a, "a")
    second = as_1d(b, "b")
    check_same_length(a=first, b=second)
    observed = confusion_matrix(first, second, labels=labels).astype(np.float64)
    return kappa_from_confusion(observed, weights=weights)


def kappa_from_confusion(observed: Any, *, weights: KappaWeights = None) -> float:
    """Cohen's kappa of a confusion matrix (rows one rater's labels, columns the other's, in
    the order of the scale): what :func:`cohen_kappa_score` computes from the labels."""
    observed = np.asarray(observed, dtype=np.float64)
    total = observed.sum()
    if total == 0.0:
        raise ValueError("Cohen's kappa is undefined: no item was rated by both raters")
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / total
    penalty = _kappa_weights(observed.shape[0], weights)
    chance_disagreement = float(np.sum(penalty * expected))
    if chance_disagreement == 0.0:
        raise ValueError(
            "Cohen's kappa is undefined: both raters used a single, identical label, so "
            "chance agreement is perfect"
        )
    return 1.0 - float(np.sum(penalty * observed)) / chance_disagreement


def _kappa_weights(k: int, weights: KappaWeights) -> FloatArray:
    distance = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(np.float64)
    if weights is None:
        return (distance > 0).astype(np.float64)
    if weights == "linear":
        return distance
    if weights == "quadratic":
        return distance**2
    raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")


def krippendorff_alpha(ratings: Any, *, level: AlphaLevel = "nominal") -> float:
    """Krippendorff's alpha for a raters x units table with ``np.nan`` for missing ratings.

    Computed from the coincidence matrix (Krippendorff 2011, "Computing Krippendorff's
    Alpha-Reliability"): alpha = 1 - (n - 1) * sum(o_ck * d_ck) / sum(n_c * n_k * d_ck), where
    units with fewer than two ratings are not pairable and are dropped. ``level`` picks the
    squared difference d_ck: nominal (0/1), ordinal (ranks by value counts) or interval
    ((c - k)^2).
    """
    table = _rating_table(ratings)
    values, counts = _unit_value_counts(table)
    return alpha_from_coincidences(_coincidences(counts), values, level=level)


def alpha_from_coincidences(
    coincidence: Any, values: Any, *, level: AlphaLevel = "nominal"
) -> float:
    """Krippendorff's alpha of a coincidence matrix over ``values`` (ascending): what
    :func:`krippendorff_alpha` computes from the ratings. A value no unit holds (a zero row
    and column) changes nothing, so a table over a fixed scale serves any subset of units."""
    coincidence = np.asarray(coincidence, dtype=np.float64)
    if not coincidence.any():
        raise ValueError("Krippendorff's alpha needs at least one unit rated by two or more raters")
    marginals = coincidence.sum(axis=1)
    distance = _alpha_distance(np.asarray(values, dtype=np.float64), marginals, level)
    expected = float(np.sum(np.outer(marginals, marginals) * distance))
    if expected == 0.0:
        raise ValueError("Krippendorff's alpha is undefined: every pairable rating has one value")
    n_pairable = float(marginals.sum())
    return 1.0 - (n_pairable - 1.0) * float(np.sum(coincidence * distance)) / expected


def _rating_table(ratings: Any) -> FloatArray:
    try:
        table = np.asarray(ratings, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"ratings must be numbers with np.nan for missing: {error}") from None
    if table.ndim != 2:
        raise ValueError(f"ratings must be 2-D (raters x units), got shape {table.shape}")
    if np.isinf(table).any():
        raise ValueError("ratings contain infinite values")
    return table


def _unit_value_counts(table: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Distinct values and a units x values count table of the pairable units."""
    present = ~np.isnan(table)
    pairable_units = present.sum(axis=0) >= 2
    if not pairable_units.any():
        raise ValueError("Krippendorff's alpha needs at least one unit rated by two or more raters")
    kept = table[:, pairable_units]
    values = np.unique(kept[~np.isnan(kept)])
    counts = np.zeros((kept.shape[1], values.size))
    raters, units = np.nonzero(~np.isnan(kept))
    np.add.at(counts, (units, np.searchsorted(values, kept[raters, units])), 1.0)
    return values, counts


def _coincidences(counts: FloatArray) -> FloatArray:
    """o_ck = sum over units of (n_uc * n_uk - [c == k] * n_uc) / (m_u - 1)."""
    pair_weight = 1.0 / (counts.sum(axis=1) - 1.0)
    weighted = counts * pair_weight[:, None]
    return np.asarray(weighted.T @ counts - np.diag(weighted.sum(axis=0)))


def _alpha_distance(values: FloatArray, marginals: FloatArray, level: AlphaLevel) -> FloatArray:
    if level == "nominal":
        return 1.0 - np.eye(values.size)
    if level == "interval":
        return np.asarray(np.subtract.outer(values, values) ** 2)
    if level == "ordinal":
        cumulative = np.cumsum(marginals)
        c, k = np.meshgrid(np.arange(values.size), np.arange(values.size), indexing="ij")
        low, high = np.minimum(c, k), np.maximum(c, k)
        between = cumulative[high] - cumulative[low] + marginals[low]
        return np.asarray((between - (marginals[low] + marginals[high]) / 2.0) ** 2)
    raise ValueError(f"level must be 'nominal', 'ordinal' or 'interval', got {level!r}")
