"""Calibration metrics against plain loop-based computations and scikit-learn's Brier."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.metrics as skm

from assay.metrics import (
    brier_score_loss,
    expected_calibration_error,
    maximum_calibration_error,
    reliability_curve,
)
from assay.metrics._calibration import BinStrategy


def _loop_bin_gaps(y: np.ndarray, p: np.ndarray, edges: list[float]) -> list[tuple[int, float]]:
    """(count, |mean p - frequency|) per non-empty bin; lo <= p < hi, last bin closed."""
    result = []
    for b in range(len(edges) - 1):
        lo, hi = edges[b], edges[b + 1]
        last = b == len(edges) - 2
        members = [i for i in range(len(p)) if lo <= p[i] < hi or (last and p[i] == hi)]
        if members:
            mean_p = sum(p[i] for i in members) / len(members)
            freq = sum(y[i] for i in members) / len(members)
            result.append((len(members), abs(mean_p - freq)))
    return result


def _quantile_edges(p: np.ndarray, n_bins: int) -> list[float]:
    # One vectorised call: np.quantile of a scalar q can round the interpolation differently.
    edges = [float(e) for e in np.quantile(p, np.linspace(0.0, 1.0, n_bins + 1))]
    edges[0], edges[-1] = 0.0, 1.0
    for k in range(1, len(edges)):
        edges[k] = max(edges[k], edges[k - 1])
    return edges


def _data(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    p = rng.random(n) ** 2
    if seed % 3 == 0:
        p = np.round(p, 1)  # values on bin edges and ties
    return (rng.random(n) < p).astype(int), p


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("n_bins", [1, 5, 15])
def test_ece_and_mce_match_loop(seed: int, n_bins: int) -> None:
    y, p = _data(seed)
    strategies: tuple[tuple[BinStrategy, list[float]], ...] = (
        ("uniform", [k / n_bins for k in range(n_bins + 1)]),
        ("quantile", _quantile_edges(p, n_bins)),
    )
    for strategy, edges in strategies:
        gaps = _loop_bin_gaps(y, p, edges)
        expected_ece = sum(count * gap for count, gap in gaps) / len(p)
        ece = expected_calibration_error(y, p, n_bins=n_bins, strategy=strategy)
        mce = maximum_calibration_error(y, p, n_bins=n_bins, strategy=strategy)
        assert ece == pytest.approx(expected_ece, abs=1e-12)
        assert mce == pytest.approx(max(gap for _, gap in gaps), abs=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_brier_matches_sklearn(seed: int) -> None:
    y, p = _data(seed)
    assert brier_score_loss(y, p) == pytest.approx(skm.brier_score_loss(y, p, labels=[0, 1]))


def test_reliability_curve_marks_empty_bins() -> None:
    curve = reliability_curve([0, 1, 1], [0.05, 0.95, 1.0], n_bins=10)
    assert curve.counts.tolist() == [1, 0, 0, 0, 0, 0, 0, 0, 0, 2]
    assert curve.empty.sum() == 8
    assert np.isnan(curve.mean_predicted[1])
    assert curve.observed_frequency[9] == 1.0
    as_dict = curve.to_dict()
    assert as_dict["mean_predicted"][1] is None
    assert len(as_dict["bin_edges"]) == 11


def test_perfectly_calibrated_bins_have_zero_error() -> None:
    y = [0, 0, 0, 1] * 5
    p = [0.25] * 20
    assert expected_calibration_error(y, p) == pytest.approx(0.0)


@pytest.mark.parametrize(
    ("prob", "message"),
    [
        ([0.5, 1.2], "probabilities in \\[0, 1\\]"),
        ([-0.1, 0.5], "probabilities in \\[0, 1\\]"),
        ([0.5, float("nan")], "NaN"),
        ([0.5], "different lengths"),
    ],
)
def test_bad_probabilities_raise(prob: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        expected_calibration_error([0, 1], prob)


def test_bad_binning_options_raise() -> None:
    with pytest.raises(ValueError, match="strategy"):
        expected_calibration_error([0, 1], [0.1, 0.9], strategy="equal")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_bins"):
        expected_calibration_error([0, 1], [0.1, 0.9], n_bins=0)
