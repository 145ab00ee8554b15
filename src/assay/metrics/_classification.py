"""Threshold metrics for binary detectors and confusion matrices.

The positive class is ``1``/``True``. In the verifier benchmark that is "the answer has a
grounding error", so precision is the share of flagged answers that really are wrong.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from assay.metrics._validation import (
    as_1d,
    binary_pair,
    check_same_length,
    require_both_classes,
)


@dataclass(frozen=True)
class BinaryCounts:
    """Confusion counts of a binary detector and the rates derived from them.

    Rates whose denominator is zero follow scikit-learn's ``zero_division=0``: precision with
    no predicted positives is 0.0, recall with no actual positives is 0.0, and F1 is 0.0 when
    both are. ``balanced_accuracy`` needs both classes in ``y_true``; it is NaN otherwise
    (``to_dict`` turns NaN into ``None``).
    """

    tp: int
    fp: int
    fn: int
    tn: int
    precision: float
    recall: float
    f1: float
    accuracy: float
    balanced_accuracy: float

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    def to_dict(self) -> dict[str, int | float | None]:
        """JSON-ready mapping; NaN becomes ``None``."""
        return {
            k: None if isinstance(v, float) and math.isnan(v) else v
            for k, v in asdict(self).items()
        }


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


def counts_to_rates(tp: int, fp: int, fn: int, tn: int) -> BinaryCounts:
    """Build :class:`BinaryCounts` from the four confusion counts."""
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    has_both = (tp + fn) > 0 and (fp + tn) > 0
    balanced = (recall + _ratio(tn, tn + fp)) / 2 if has_both else math.nan
    return BinaryCounts(
        tp=tp,
        fp=fp,
        fn=fn,
        tn=tn,
        precision=precision,
        recall=recall,
        f1=_ratio(2 * tp, 2 * tp + fp + fn),
        accuracy=(tp + tn) / (tp + fp + fn + tn),
        balanced_accuracy=balanced,
    )


def precision_recall_f1(y_true: Any, y_pred: Any) -> BinaryCounts:
    """Precision, recall, F1, accuracy and balanced accuracy of binary predictions.

    ``y_true`` and ``y_pred`` hold 0/1 or booleans; 1 is the positive class. See
    :class:`BinaryCounts` for the zero-denominator conventions.
    """
    truth, pred = binary_pair(y_true, y_pred, "y_pred")
    tp = int(np.count_nonzero(truth & pred))
    fp = int(np.count_nonzero(~truth & pred))
    fn = int(np.count_nonzero(truth & ~pred))
    return counts_to_rates(tp, fp, fn, len(truth) - tp - fp - fn)


def balanced_accuracy_score(y_true: Any, y_pred: Any) -> float:
    """Mean of the true-positive rate and the true-negative rate (needs both classes)."""
    truth, _ = binary_pair(y_true, y_pred, "y_pred")
    require_both_classes(truth, "balanced accuracy")
    return precision_recall_f1(y_true, y_pred).balanced_accuracy


def accuracy_score(y_true: Any, y_pred: Any) -> float:
    """Share of positions where ``y_pred`` equals ``y_true`` (any label type)."""
    truth = as_1d(y_true, "y_true")
    pred = as_1d(y_pred, "y_pred")
    check_same_length(y_true=truth, y_pred=pred)
    return float(np.mean(truth == pred))


def confusion_matrix(
    y_true: Any, y_pred: Any, *, labels: Sequence[Any] | None = None
) -> npt.NDArray[np.int64]:
    """Counts with rows = true label and columns = predicted label, in ``labels`` order.

    ``labels`` defaults to the sorted union of both arrays. A value outside ``labels`` raises
    (scikit-learn drops it silently, which hides typos such as a score of 3 on a 0-2 scale).
    """
    truth = as_1d(y_true, "y_true")
    pred = as_1d(y_pred, "y_pred")
    check_same_length(y_true=truth, y_pred=pred)
    order = np.unique(np.concatenate([truth, pred])) if labels is None else np.asarray(labels)
    if order.ndim != 1 or order.size == 0:
        raise ValueError("labels must be a non-empty 1-D sequence")
    if np.unique(order).size != order.size:
        raise ValueError(f"labels contain duplicates: {order.tolist()}")
    true_codes = _codes(truth, order, "y_true")
    pred_codes = _codes(pred, order, "y_pred")
    k = order.size
    flat = np.bincount(true_codes * k + pred_codes, minlength=k * k)
    return flat.reshape(k, k).astype(np.int64)


def _codes(values: npt.NDArray[Any], labels: npt.NDArray[Any], name: str) -> npt.NDArray[np.intp]:
    """Position of each value in ``labels``; raises on values not listed."""
    sorter = np.argsort(labels, kind="stable")
    positions = np.searchsorted(labels, values, sorter=sorter)
    positions = np.clip(positions, 0, labels.size - 1)
    codes = sorter[positions]
    unknown = labels[codes] != values
    if unknown.any():
        raise ValueError(
            f"{name} contains values not in labels {labels.tolist()}: "
            f"{np.unique(values[unknown])[:5].tolist()}"
        )
    return codes
