"""Ranking metrics and curves against scikit-learn, including tied scores."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sklearn.metrics as skm

from assay.metrics import (
    average_precision_score,
    precision_recall_curve,
    roc_auc_score,
    roc_curve,
)


def _labels_and_scores(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 80))
    y = rng.integers(0, 2, n)
    y[0], y[1] = 0, 1
    score = rng.normal(size=n) + y
    if seed % 2:
        score = np.round(score, 1)  # many ties
    return y, score


@pytest.mark.parametrize("seed", range(40))
def test_auroc_and_average_precision_match_sklearn(seed: int) -> None:
    y, score = _labels_and_scores(seed)
    assert roc_auc_score(y, score) == pytest.approx(skm.roc_auc_score(y, score))
    assert average_precision_score(y, score) == pytest.approx(skm.average_precision_score(y, score))


@pytest.mark.parametrize("seed", range(20))
def test_curves_match_sklearn(seed: int) -> None:
    y, score = _labels_and_scores(seed)
    for mine, theirs in zip(
        roc_curve(y, score), skm.roc_curve(y, score, drop_intermediate=False), strict=True
    ):
        np.testing.assert_allclose(mine, theirs)
    for mine, theirs in zip(
        precision_recall_curve(y, score), skm.precision_recall_curve(y, score), strict=True
    ):
        np.testing.assert_allclose(mine, theirs)


def test_perfect_and_reversed_ranking() -> None:
    assert roc_auc_score([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9]) == 1.0
    assert roc_auc_score([0, 0, 1, 1], [0.9, 0.8, 0.2, 0.1]) == 0.0
    assert roc_auc_score([0, 1], [0.5, 0.5]) == 0.5


def test_boolean_flags_are_scores_of_zero_and_one() -> None:
    # pairs: flagged positive vs unflagged negative 2 x 2 = 4 wins, the other 2 x 1 + 1 x 2 = 4
    # pairs tied (half each), the flagged negative vs the unflagged positive 1 loss: 6 / 9
    y = [1, 1, 1, 0, 0, 0]
    flags = [True, True, False, True, False, False]
    assert roc_auc_score(y, flags) == pytest.approx(6 / 9)
    # one threshold: 3 flagged, 2 right, recall 2/3 -> AP = 2/3 * 2/3 + 1/3 * 3/6
    assert average_precision_score(y, flags) == pytest.approx(4 / 9 + 1 / 6)


def test_average_precision_with_only_positives_is_one() -> None:
    assert average_precision_score([1, 1], [0.2, 0.4]) == 1.0


@pytest.mark.parametrize(
    ("y", "score", "message"),
    [
        ([1, 1, 1], [0.1, 0.2, 0.3], "only one class"),
        ([0, 0], [0.1, 0.2], "only one class"),
        ([0, 1], [0.1, math.nan], "NaN or infinite"),
        ([0, 1], [0.1], "different lengths"),
        ([], [], "empty"),
    ],
)
def test_auroc_degenerate_inputs_raise(y: list[int], score: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        roc_auc_score(y, score)


def test_average_precision_needs_a_positive() -> None:
    with pytest.raises(ValueError, match="no positive"):
        average_precision_score([0, 0], [0.1, 0.2])
