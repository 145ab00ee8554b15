"""Threshold metrics against scikit-learn on seeded random inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sklearn.metrics as skm

from assay.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    confusion_matrix,
    precision_recall_f1,
)


def _random_binary(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    y_true = rng.integers(0, 2, n)
    y_pred = np.where(rng.random(n) < 0.7, y_true, 1 - y_true)
    if rng.random() < 0.2:
        y_pred = np.zeros(n, dtype=int)  # no predicted positives: precision is 0 by convention
    return y_true, y_pred


@pytest.mark.parametrize("seed", range(40))
def test_precision_recall_f1_match_sklearn(seed: int) -> None:
    y_true, y_pred = _random_binary(seed)
    counts = precision_recall_f1(y_true, y_pred)
    assert counts.precision == pytest.approx(skm.precision_score(y_true, y_pred, zero_division=0))
    assert counts.recall == pytest.approx(skm.recall_score(y_true, y_pred, zero_division=0))
    assert counts.f1 == pytest.approx(skm.f1_score(y_true, y_pred, zero_division=0))
    assert counts.accuracy == pytest.approx(skm.accuracy_score(y_true, y_pred))
    tn, fp, fn, tp = skm.confusion_matrix(y_true, y_pred, labels=[0, 1]).ravel()
    assert (counts.tp, counts.fp, counts.fn, counts.tn) == (tp, fp, fn, tn)
    if 0 < y_true.sum() < len(y_true):
        expected = skm.balanced_accuracy_score(y_true, y_pred)
        assert balanced_accuracy_score(y_true, y_pred) == pytest.approx(expected)
        assert counts.balanced_accuracy == pytest.approx(expected)


def test_accepts_booleans_and_float_labels() -> None:
    counts = precision_recall_f1([True, False, True], [1.0, 1.0, 0.0])
    assert (counts.tp, counts.fp, counts.fn, counts.tn) == (1, 1, 1, 0)


def test_no_predicted_positives_gives_zero_precision() -> None:
    counts = precision_recall_f1([1, 0, 1], [0, 0, 0])
    assert counts.precision == 0.0
    assert counts.f1 == 0.0


def test_one_class_balanced_accuracy_is_nan_in_counts_and_raises_alone() -> None:
    counts = precision_recall_f1([0, 0, 0], [0, 1, 0])
    assert math.isnan(counts.balanced_accuracy)
    assert counts.to_dict()["balanced_accuracy"] is None
    with pytest.raises(ValueError, match="only one class"):
        balanced_accuracy_score([0, 0, 0], [0, 1, 0])


@pytest.mark.parametrize("seed", range(15))
def test_confusion_matrix_multiclass_matches_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, 50)
    b = rng.integers(0, 3, 50)
    labels = [2, 0, 1]
    expected = skm.confusion_matrix(a, b, labels=labels)
    np.testing.assert_array_equal(confusion_matrix(a, b, labels=labels), expected)
    np.testing.assert_array_equal(confusion_matrix(a, b), skm.confusion_matrix(a, b))
    assert accuracy_score(a, b) == pytest.approx(skm.accuracy_score(a, b))


def test_confusion_matrix_string_labels_and_unknown_label() -> None:
    matrix = confusion_matrix(["PASS", "FAIL"], ["PASS", "PASS"], labels=["PASS", "FAIL"])
    np.testing.assert_array_equal(matrix, [[1, 0], [1, 0]])
    with pytest.raises(ValueError, match="not in labels"):
        confusion_matrix([0, 1, 3], [0, 1, 1], labels=[0, 1, 2])


@pytest.mark.parametrize(
    ("y_true", "y_pred", "message"),
    [
        ([], [], "empty"),
        ([0, 1], [0, 1, 1], "different lengths"),
        ([0, 2], [0, 1], "other than 0/1"),
        ([0.0, math.nan], [0, 1], "NaN"),
        ([[0, 1]], [[0, 1]], "1-D"),
        (["a", "b"], [0, 1], "0/1 or booleans"),
    ],
)
def test_degenerate_inputs_raise(y_true: list[object], y_pred: list[object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        precision_recall_f1(y_true, y_pred)
