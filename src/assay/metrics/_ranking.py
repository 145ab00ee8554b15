"""Threshold-free metrics of a continuous score where a higher score means "more positive".

Ties are handled like scikit-learn: examples with equal scores enter together at one
threshold, which makes the ROC area equal to the Mann-Whitney statistic with half credit for
tied positive/negative pairs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from assay.metrics._validation import (
    FloatArray,
    labels_and_scores,
    require_both_classes,
)


def _threshold_counts(
    truth: np.ndarray[Any, Any], scores: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Cumulative true and false positives at each distinct score, highest score first."""
    order = np.argsort(-scores, kind="stable")
    sorted_scores = scores[order]
    last_of_run = np.r_[np.flatnonzero(np.diff(sorted_scores)), len(scores) - 1]
    tps = np.cumsum(truth[order], dtype=np.float64)[last_of_run]
    fps = (last_of_run + 1).astype(np.float64) - tps
    return tps, fps, sorted_scores[last_of_run]


def roc_curve(y_true: Any, score: Any) -> tuple[FloatArray, FloatArray, FloatArray]:
    """False-positive rate, true-positive rate and the decreasing thresholds behind them.

    One point per distinct score (scikit-learn's ``drop_intermediate=False``), preceded by the
    point (0, 0) at threshold ``+inf``. Needs both classes.
    """
    truth, scores = labels_and_scores(y_true, score, "score")
    require_both_classes(truth, "the ROC curve")
    tps, fps, thresholds = _threshold_counts(truth, scores)
    fpr = np.r_[0.0, fps / fps[-1]]
    tpr = np.r_[0.0, tps / tps[-1]]
    return fpr, tpr, np.r_[np.inf, thresholds]


def roc_auc_score(y_true: Any, score: Any) -> float:
    """Area under the ROC curve: P(score of a positive > score of a negative), ties half."""
    fpr, tpr, _ = roc_curve(y_true, score)
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2))


def precision_recall_curve(y_true: Any, score: Any) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Precision and recall per distinct-score threshold, in scikit-learn's layout.

    Thresholds increase; ``precision`` and ``recall`` have one more element than
    ``thresholds``, ending with the point (recall 0, precision 1). Needs at least one positive.
    """
    truth, scores = labels_and_scores(y_true, score, "score")
    _require_positive(truth, "the precision-recall curve")
    tps, fps, thresholds = _threshold_counts(truth, scores)
    precision = tps / (tps + fps)
    recall = tps / tps[-1]
    return np.r_[precision[::-1], 1.0], np.r_[recall[::-1], 0.0], thresholds[::-1].copy()


def average_precision_score(y_true: Any, score: Any) -> float:
    """Step-wise area under the precision-recall curve: sum of (R_k - R_k-1) * P_k.

    The same definition as scikit-learn (no interpolation). Needs at least one positive.
    """
    truth, scores = labels_and_scores(y_true, score, "score")
    _require_positive(truth, "average precision")
    tps, fps, _ = _threshold_counts(truth, scores)
    recall_gain = np.diff(np.r_[0.0, tps]) / tps[-1]
    return float(np.sum(recall_gain * tps / (tps + fps)))


def _require_positive(truth: np.ndarray[Any, Any], metric: str) -> None:
    if not truth.any():
        raise ValueError(
            f"{metric} is undefined when y_true has no positive (1) examples; "
            f"all {len(truth)} are 0"
        )


def ranking_from_value_counts(positives: FloatArray, negatives: FloatArray) -> tuple[float, float]:
    """AUROC and average precision from per-distinct-score counts in ascending score order.

    The same values as :func:`roc_auc_score` and :func:`average_precision_score` (NaN where
    undefined), in linear time for callers that already grouped the scores.
    """
    n_pos, n_neg = float(positives.sum()), float(negatives.sum())
    if n_pos == 0:
        return float("nan"), float("nan")
    tps = np.cumsum(positives[::-1])
    precision = tps / (tps + np.cumsum(negatives[::-1]))
    auprc = float(np.sum(positives[::-1] * precision)) / n_pos
    if n_neg == 0:
        return float("nan"), auprc
    below = np.cumsum(negatives) - negatives
    return float(np.sum(positives * (below + negatives / 2))) / (n_pos * n_neg), auprc
