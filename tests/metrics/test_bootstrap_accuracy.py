"""The fast bootstrap's promise: its interval endpoints are within 0.01 of a plain bootstrap.

The plain bootstrap recomputes each metric with its own function on 10,000 resamples of the
examples (or of whole clusters); the fast one works from per-cluster sums. At n >= 1,000 every
endpoint of every metric below must agree within 0.01 (measured agreement is about 0.001).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from assay.metrics import (
    average_precision_score,
    balanced_accuracy_score,
    bootstrap_ci,
    brier_score_loss,
    cluster_mean_ci,
    expected_calibration_error,
    precision_recall_f1,
    roc_auc_score,
    summarize_binary_detection,
)

RESAMPLES = 10_000
TOLERANCE = 0.01

PLAIN: dict[str, Callable[[Any, Any], float]] = {
    "auroc": roc_auc_score,
    "auprc": average_precision_score,
    "precision": lambda y, p: precision_recall_f1(y, p >= 0.5).precision,
    "recall": lambda y, p: precision_recall_f1(y, p >= 0.5).recall,
    "f1": lambda y, p: precision_recall_f1(y, p >= 0.5).f1,
    "balanced_accuracy": lambda y, p: balanced_accuracy_score(y, p >= 0.5),
    "brier": brier_score_loss,
    "ece_uniform": lambda y, p: expected_calibration_error(y, p, n_bins=15),
}


def _detector(n: int, n_clusters: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    clusters = rng.integers(0, n_clusters, n)
    difficulty = rng.normal(size=n_clusters)[clusters]
    y = (rng.random(n) < 1 / (1 + np.exp(-(difficulty - 0.5)))).astype(int)
    p = 1 / (1 + np.exp(-((2 * y - 1) + difficulty + rng.normal(size=n) - 0.5)))
    return y, p, clusters


@pytest.mark.parametrize(
    ("n", "n_clusters", "rounded"),
    [(1000, None, False), (1000, 150, False), (1200, None, True)],
    ids=["examples", "clusters", "few-distinct-scores"],
)
def test_fast_endpoints_within_001_of_a_plain_bootstrap(
    n: int, n_clusters: int | None, rounded: bool
) -> None:
    y, p, clusters = _detector(n, n_clusters or n, seed=3)
    if rounded:  # few distinct scores: the exact-cells path
        p = np.round(p * 20) / 20
    groups = clusters if n_clusters else None
    fast = summarize_binary_detection(y, p, clusters=groups, n_resamples=RESAMPLES, seed=0)
    for name, metric in PLAIN.items():
        plain = bootstrap_ci(metric, y, p, clusters=groups, n_resamples=RESAMPLES, seed=1)
        got = fast["metrics"][name]
        assert got["low"] == pytest.approx(plain.low, abs=TOLERANCE), name
        assert got["high"] == pytest.approx(plain.high, abs=TOLERANCE), name


@pytest.mark.parametrize("n_clusters", [150, 30_000], ids=["multinomial", "poisson"])
def test_cluster_mean_endpoints_within_001_of_a_plain_cluster_bootstrap(n_clusters: int) -> None:
    rng = np.random.default_rng(5)
    n = max(1000, n_clusters * 2)
    clusters = rng.integers(0, n_clusters, n)
    scores = np.clip(
        np.round(rng.normal(1.2, 0.6, n_clusters)[clusters] + rng.normal(0, 0.5, n)), 0, 2
    )
    plain = bootstrap_ci(np.mean, scores, clusters=clusters, n_resamples=RESAMPLES, seed=1)
    fast = cluster_mean_ci(scores, clusters, n_resamples=RESAMPLES, seed=2)
    assert fast.value == pytest.approx(plain.value)
    assert abs(fast.low - plain.low) <= TOLERANCE and abs(fast.high - plain.high) <= TOLERANCE
    assert fast.n_clusters == plain.n_clusters and fast.n == n
