"""Bootstrap intervals: coverage sanity, clustering, determinism, skipped resamples."""

from __future__ import annotations

import json

import numpy as np
import pytest

from assay.metrics import Estimate, bootstrap_ci, cluster_mean_ci, roc_auc_score


def _mean(values: np.ndarray) -> float:
    return float(np.mean(values))


def _clustered_data(n_clusters: int, per_cluster: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Outcomes whose rate is shared within a cluster (strong intra-cluster correlation)."""
    rng = np.random.default_rng(seed)
    cluster_rate = rng.random(n_clusters)
    clusters = np.repeat(np.arange(n_clusters), per_cluster)
    outcomes = (rng.random(len(clusters)) < cluster_rate[clusters]).astype(float)
    return outcomes, clusters


def test_interval_contains_value_and_shrinks_with_more_data() -> None:
    rng = np.random.default_rng(0)
    small = bootstrap_ci(_mean, rng.normal(size=100), n_resamples=400)
    large = bootstrap_ci(_mean, rng.normal(size=10_000), n_resamples=400)
    for estimate in (small, large):
        assert estimate.low <= estimate.value <= estimate.high
    assert (large.high - large.low) < (small.high - small.low) / 5


def test_interval_width_matches_standard_error() -> None:
    data = np.random.default_rng(1).normal(size=2000)
    estimate = bootstrap_ci(_mean, data, n_resamples=1000, confidence=0.95)
    expected_half_width = 1.96 * data.std() / np.sqrt(len(data))
    assert (estimate.high - estimate.low) / 2 == pytest.approx(expected_half_width, rel=0.15)


def test_clustered_interval_is_wider_for_correlated_clusters() -> None:
    outcomes, clusters = _clustered_data(n_clusters=50, per_cluster=20, seed=2)
    plain = bootstrap_ci(_mean, outcomes, n_resamples=500)
    clustered = bootstrap_ci(_mean, outcomes, clusters=clusters, n_resamples=500)
    assert clustered.value == plain.value
    assert (clustered.high - clustered.low) > 2 * (plain.high - plain.low)
    assert clustered.n_clusters == 50
    assert clustered.method == "cluster percentile bootstrap"


def test_deterministic_for_a_seed() -> None:
    data = np.random.default_rng(3).random(200)
    first = bootstrap_ci(_mean, data, seed=7, n_resamples=100)
    assert bootstrap_ci(_mean, data, seed=7, n_resamples=100) == first
    assert bootstrap_ci(_mean, data, seed=8, n_resamples=100) != first


def test_undefined_resamples_are_skipped_and_counted() -> None:
    y = np.array([1] + [0] * 9)
    score = np.linspace(1, 0, 10)  # the single positive has the highest score
    estimate = bootstrap_ci(roc_auc_score, y, score, n_resamples=200)
    assert 0 < estimate.n_resamples < 200  # ~35% of resamples miss the single positive
    assert estimate.n_resamples_requested == 200
    assert estimate.value == 1.0


def test_to_dict_is_json_ready() -> None:
    estimate = bootstrap_ci(_mean, [1.0, 2.0, 3.0], n_resamples=10)
    payload = json.loads(json.dumps(estimate.to_dict()))
    assert set(payload) >= {"value", "low", "high", "n", "n_resamples", "confidence", "method"}
    assert isinstance(estimate, Estimate)


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci(_mean, [1.0, 2.0], confidence=1.5)
    with pytest.raises(ValueError, match="clusters has 1 labels"):
        bootstrap_ci(_mean, [1.0, 2.0], clusters=[0])
    with pytest.raises(ValueError, match="different lengths"):
        bootstrap_ci(lambda a, b: 0.0, [1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="undefined on all"):
        bootstrap_ci(lambda a: 1.0 if len(set(a)) == 2 else _raise(), [0.0, 1.0], n_resamples=1)
    with pytest.raises(ValueError, match="empty"):
        bootstrap_ci(_mean, [])


def _raise() -> float:
    raise ValueError("one class")


def test_cluster_labels_of_mixed_types_are_accepted() -> None:
    labels = np.array(["q1", None, "q1", 3], dtype=object)
    estimate = bootstrap_ci(_mean, [1.0, 0.0, 1.0, 0.0], clusters=labels, n_resamples=50)
    assert estimate.n_clusters == 3


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_cluster_mean_ci_rejects_values_that_are_not_finite(bad: float) -> None:
    with pytest.raises(ValueError, match="NaN or infinite"):
        cluster_mean_ci([1.0, bad, 2.0], ["a", "b", "b"])


def test_cluster_mean_ci_counts_booleans_as_zero_and_one() -> None:
    estimate = cluster_mean_ci([True, False, True, True], ["a", "a", "b", "c"])
    assert estimate.value == 0.75
