"""summarize_binary_detection: values, intervals from sufficient statistics, undefined metrics."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from assay.metrics import (
    METRIC_NAMES,
    average_precision_score,
    bootstrap_ci,
    expected_calibration_error,
    precision_recall_f1,
    roc_auc_score,
    summarize_binary_detection,
)
from assay.metrics._sufficient import POISSON_FROM_CLUSTERS, poisson_counts


def _detector(n: int, n_clusters: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    clusters = rng.integers(0, n_clusters, n)
    difficulty = rng.normal(size=n_clusters)[clusters]
    y = (rng.random(n) < 1 / (1 + np.exp(-(difficulty - 0.5)))).astype(int)
    p = 1 / (1 + np.exp(-((2 * y - 1) + difficulty + rng.normal(size=n) - 0.5)))
    return y, p, clusters


def test_values_match_single_metric_functions() -> None:
    y, p, clusters = _detector(2000, 300, seed=0)
    summary = summarize_binary_detection(y, p, clusters=clusters, n_resamples=200)
    metrics = summary["metrics"]
    counts = precision_recall_f1(y, p >= 0.5)
    assert metrics["precision"]["value"] == pytest.approx(counts.precision)
    assert metrics["f1"]["value"] == pytest.approx(counts.f1)
    assert metrics["auroc"]["value"] == pytest.approx(roc_auc_score(y, p))
    assert metrics["auprc"]["value"] == pytest.approx(average_precision_score(y, p))
    expected_q = expected_calibration_error(y, p, strategy="quantile")
    assert metrics["ece_quantile"]["value"] == pytest.approx(expected_q)
    assert summary["confusion"] == {
        "tp": counts.tp,
        "fp": counts.fp,
        "fn": counts.fn,
        "tn": counts.tn,
    }
    assert set(metrics) == set(METRIC_NAMES)
    for name, block in metrics.items():
        assert block["low"] <= block["value"] <= block["high"], name
        assert block["reason"] is None
    json.dumps(summary, allow_nan=False)


STATISTICS = {
    "precision": lambda a, b: precision_recall_f1(a, b >= 0.5).precision,
    "recall": lambda a, b: precision_recall_f1(a, b >= 0.5).recall,
    "auroc": roc_auc_score,
    "auprc": average_precision_score,
    "brier": lambda a, b: float(np.mean((b - a) ** 2)),
    "ece_uniform": expected_calibration_error,
}


@pytest.mark.parametrize("clustered", [True, False])
@pytest.mark.parametrize("metric", sorted(STATISTICS))
def test_intervals_agree_with_direct_bootstrap(metric: str, clustered: bool) -> None:
    """The sufficient-statistics intervals approximate a direct (cluster) bootstrap."""
    y, p, clusters = _detector(3000, 400, seed=1)
    groups = clusters if clustered else None
    fast = summarize_binary_detection(y, p, clusters=groups, n_resamples=400)
    block = fast["metrics"][metric]
    slow = bootstrap_ci(STATISTICS[metric], y, p, clusters=groups, n_resamples=400, seed=5)
    slow_width = slow.high - slow.low
    assert block["high"] - block["low"] == pytest.approx(slow_width, rel=0.3)
    assert block["low"] == pytest.approx(slow.low, abs=0.3 * slow_width)


def test_continuous_scores_with_many_distinct_values_use_cells() -> None:
    y, p, clusters = _detector(5000, 1000, seed=2)
    summary = summarize_binary_detection(y, p, clusters=clusters, n_resamples=100)
    auroc = summary["metrics"]["auroc"]
    assert auroc["value"] == pytest.approx(roc_auc_score(y, p))
    assert auroc["low"] < auroc["value"] < auroc["high"]


def test_clustered_intervals_are_wider_when_clusters_are_correlated() -> None:
    y, p, clusters = _detector(4000, 100, seed=3)
    plain = summarize_binary_detection(y, p, n_resamples=300)["metrics"]["positive_rate"]
    grouped = summarize_binary_detection(y, p, clusters=clusters, n_resamples=300)
    block = grouped["metrics"]["positive_rate"]
    assert block["high"] - block["low"] > 2 * (plain["high"] - plain["low"])
    assert grouped["n_clusters"] == len(np.unique(clusters))


def test_deterministic_for_a_seed() -> None:
    y, p, clusters = _detector(1000, 200, seed=4)
    first = summarize_binary_detection(y, p, clusters=clusters, n_resamples=150, seed=3)
    again = summarize_binary_detection(y, p, clusters=clusters, n_resamples=150, seed=3)
    other = summarize_binary_detection(y, p, clusters=clusters, n_resamples=150, seed=4)
    assert first == again
    assert first["metrics"]["auroc"] != other["metrics"]["auroc"]


def test_one_class_reports_null_with_reason() -> None:
    summary = summarize_binary_detection([0, 0, 0, 0], [0.1, 0.7, 0.2, 0.4], n_resamples=50)
    metrics = summary["metrics"]
    for name in ("recall", "f1", "auroc", "auprc", "balanced_accuracy"):
        assert metrics[name]["value"] is None
        assert "no positive" in metrics[name]["reason"]
    assert metrics["precision"]["value"] == 0.0
    assert metrics["brier"]["value"] == pytest.approx((0.01 + 0.49 + 0.04 + 0.16) / 4)
    assert metrics["positive_rate"]["value"] == 0.0
    json.dumps(summary, allow_nan=False)


@pytest.mark.parametrize("seed", [23, 57])
def test_shifted_interval_endpoints_stay_within_zero_and_one(seed: int) -> None:
    # nearly separable classes with continuous scores: AUPRC close to 1, cells in use (> 96
    # distinct scores), so its endpoints are shifted by (exact - cell value) > 0
    rng = np.random.default_rng(seed)
    n = int(rng.integers(100, 400))
    y = rng.integers(0, 2, n)
    separation = rng.uniform(0.5, 3)
    p = 1 / (1 + np.exp(-(separation * (2 * y - 1) + rng.normal(0, 1, n))))
    summary = summarize_binary_detection(y, p, n_resamples=200, seed=seed)
    for name, block in summary["metrics"].items():
        assert 0.0 <= block["low"] <= block["high"] <= 1.0, name


def test_binary_scores_are_exact_cells() -> None:
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0] * 25)
    p = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0] * 25)
    summary = summarize_binary_detection(y, p, n_resamples=100)
    assert summary["metrics"]["auroc"]["value"] == pytest.approx(roc_auc_score(y, p))


def test_no_resamples_gives_values_without_intervals() -> None:
    summary = summarize_binary_detection([0, 1, 1], [0.2, 0.6, 0.9], n_resamples=0)
    assert summary["metrics"]["accuracy"] == {
        "value": 1.0,
        "low": None,
        "high": None,
        "n_resamples": 0,
        "reason": None,
    }


def test_bad_inputs_raise() -> None:
    with pytest.raises(ValueError, match="threshold"):
        summarize_binary_detection([0, 1], [0.2, 0.6], threshold=2.0)
    with pytest.raises(ValueError, match="different lengths"):
        summarize_binary_detection([0, 1], [0.2, 0.6], clusters=[1])
    with pytest.raises(ValueError, match="probabilities"):
        summarize_binary_detection([0, 1], [0.2, 1.6])
    with pytest.raises(ValueError, match="n_resamples"):
        summarize_binary_detection([0, 1], [0.2, 0.6], n_resamples=-1)
    with pytest.raises(ValueError, match="confidence"):
        summarize_binary_detection([0, 1], [0.2, 0.6], confidence=0.0)


def test_poisson_weights_follow_poisson_one() -> None:
    weights = poisson_counts(np.random.default_rng(0), 50, 40_000).ravel()
    frequencies = np.bincount(weights.astype(int), minlength=6)[:6] / weights.size
    expected = [math.exp(-1) / math.factorial(k) for k in range(6)]
    np.testing.assert_allclose(frequencies, expected, atol=4e-4)
    assert weights.mean() == pytest.approx(1.0, abs=2e-3)


def test_many_clusters_use_poisson_weights_and_agree_with_direct_bootstrap() -> None:
    y, p, clusters = _detector(30_000, POISSON_FROM_CLUSTERS + 5_000, seed=6)
    fast = summarize_binary_detection(y, p, clusters=clusters, n_resamples=300)["metrics"]
    slow = bootstrap_ci(roc_auc_score, y, p, clusters=clusters, n_resamples=150, seed=1)
    width = slow.high - slow.low
    assert fast["auroc"]["high"] - fast["auroc"]["low"] == pytest.approx(width, rel=0.3)
    assert fast["auroc"]["n_resamples"] == 300
