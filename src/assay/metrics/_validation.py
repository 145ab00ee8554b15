"""Input checks shared by the metric functions.

Every check raises a ``ValueError`` whose message names the argument and says what is wrong,
so a caller sees "y_true contains values other than 0/1: [2]" rather than a numpy traceback.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


def as_1d(values: Any, name: str) -> npt.NDArray[Any]:
    """Return ``values`` as a non-empty 1-D array."""
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{name} is empty; the metric needs at least one example")
    return array


def check_same_length(**arrays: npt.NDArray[Any]) -> int:
    """Return the common length of the arrays or raise naming each length."""
    lengths = {name: len(array) for name, array in arrays.items()}
    if len(set(lengths.values())) > 1:
        described = ", ".join(f"{name} has {length}" for name, length in lengths.items())
        raise ValueError(f"inputs have different lengths: {described}")
    return next(iter(lengths.values()))


def binary_labels(values: Any, name: str) -> BoolArray:
    """Return ``values`` as booleans; accepts bool, 0/1 integers or 0.0/1.0 floats."""
    array = as_1d(values, name)
    if array.dtype == np.bool_:
        return array.astype(np.bool_)
    if not np.issubdtype(array.dtype, np.number):
        raise ValueError(f"{name} must hold 0/1 or booleans, got dtype {array.dtype}")
    if np.issubdtype(array.dtype, np.floating) and np.isnan(array).any():
        raise ValueError(f"{name} contains NaN; drop or label those examples first")
    not_binary = (array != 0) & (array != 1)  # a linear scan; np.unique would sort
    if not_binary.any():
        bad = np.unique(array[not_binary])
        raise ValueError(f"{name} contains values other than 0/1: {bad[:5].tolist()}")
    return np.asarray(array == 1, dtype=np.bool_)


def finite_scores(values: Any, name: str) -> FloatArray:
    """Return ``values`` as float64 (booleans as 0/1), rejecting NaN and infinities."""
    array = as_1d(values, name)
    if array.dtype == np.bool_:
        # a pass/fail detector's flags are a two-valued score, as scikit-learn takes them;
        # numpy does not count bool as a number, so the check below would refuse them
        return array.astype(np.float64)
    if not np.issubdtype(array.dtype, np.number) or np.issubdtype(array.dtype, np.complexfloating):
        raise ValueError(f"{name} must be real numbers, got dtype {array.dtype}")
    floats = array.astype(np.float64)
    if not np.isfinite(floats).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return floats


def probabilities(values: Any, name: str) -> FloatArray:
    """Return ``values`` as float64 probabilities in [0, 1]."""
    floats = finite_scores(values, name)
    if floats.min() < 0.0 or floats.max() > 1.0:
        raise ValueError(
            f"{name} must be probabilities in [0, 1], got values in "
            f"[{floats.min():.4g}, {floats.max():.4g}]"
        )
    return floats


def require_both_classes(y_true: BoolArray, metric: str) -> None:
    """Raise when ``y_true`` holds one class only and ``metric`` needs both."""
    n_positive = int(y_true.sum())
    if n_positive == 0 or n_positive == len(y_true):
        present = "1 (positive)" if n_positive else "0 (negative)"
        raise ValueError(
            f"{metric} is undefined when y_true contains only one class; all "
            f"{len(y_true)} examples are {present}"
        )


def binary_pair(y_true: Any, y_other: Any, other_name: str) -> tuple[BoolArray, BoolArray]:
    """Validate two binary label arrays of equal length."""
    truth = binary_labels(y_true, "y_true")
    other = binary_labels(y_other, other_name)
    check_same_length(y_true=truth, **{other_name: other})
    return truth, other


def labels_and_scores(y_true: Any, score: Any, score_name: str) -> tuple[BoolArray, FloatArray]:
    """Validate binary labels with finite scores of equal length."""
    truth = binary_labels(y_true, "y_true")
    scores = finite_scores(score, score_name)
    check_same_length(y_true=truth, **{score_name: scores})
    return truth, scores


def labels_and_probabilities(y_true: Any, prob: Any) -> tuple[BoolArray, FloatArray]:
    """Validate binary labels with probabilities of equal length."""
    truth = binary_labels(y_true, "y_true")
    probs = probabilities(prob, "prob")
    check_same_length(y_true=truth, prob=probs)
    return truth, probs


def group_codes(labels: Any, name: str) -> tuple[IntArray, int]:
    """Integer code per element (0..k-1) and the number k of distinct labels.

    Labels may be any hashable values; mixed types (e.g. str and None), which numpy cannot
    sort, are coded in order of first appearance.
    """
    array = as_1d(labels, name)
    try:
        uniques, codes = np.unique(array, return_inverse=True)
        return np.asarray(codes, dtype=np.int64), len(uniques)
    except TypeError:
        index: dict[Any, int] = {}
        coded = [index.setdefault(label, len(index)) for label in array.tolist()]
        return np.asarray(coded, dtype=np.int64), len(index)
