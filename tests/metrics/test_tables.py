"""Agreement statistics from per-cluster tables: the tables' sums give exactly what the
row-wise functions give, and the table bootstrap resamples clusters as `bootstrap_ci` does."""

from __future__ import annotations

import numpy as np
import pytest

from assay import metrics


def _codes(rng: np.random.Generator, n: int, n_clusters: int) -> np.ndarray:
    return rng.integers(0, n_clusters, size=n)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_summed_confusion_tables_give_cohens_kappa(weights: str | None) -> None:
    rng = np.random.default_rng(3)
    truth, predicted = rng.integers(0, 3, size=500), rng.integers(0, 3, size=500)
    clusters = _codes(rng, 500, 40)
    tables = metrics.confusion_tables(truth, predicted, clusters, 40, 3)
    assert tables.shape == (40, 3, 3)
    summed = tables.sum(axis=0)
    assert (summed == metrics.confusion_matrix(truth, predicted, labels=[0, 1, 2])).all()
    assert metrics.kappa_from_confusion(summed, weights=weights) == pytest.approx(  # type: ignore[arg-type]
        metrics.cohen_kappa_score(truth, predicted, weights=weights, labels=[0, 1, 2])  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_summed_coincidence_tables_give_krippendorffs_alpha(level: str) -> None:
    rng = np.random.default_rng(4)
    ratings = rng.integers(0, 4, size=(3, 300)).astype(float)  # values 0-3 of a 0-8 scale
    ratings[rng.random(ratings.shape) < 0.3] = np.nan  # missing; some units not pairable
    clusters = _codes(rng, 300, 25)
    scale = list(range(9))
    tables = metrics.coincidence_tables(ratings, scale, clusters, 25)
    alpha = metrics.alpha_from_coincidences(tables.sum(axis=0), scale, level=level)  # type: ignore[arg-type]
    assert alpha == pytest.approx(metrics.krippendorff_alpha(ratings, level=level))  # type: ignore[arg-type]


def test_no_pairable_unit_is_named_as_such() -> None:
    lone = np.array([[0.0, np.nan], [np.nan, 1.0]])
    tables = metrics.coincidence_tables(lone, [0, 1], [0, 1], 2)
    with pytest.raises(ValueError, match="at least one unit rated by two or more raters"):
        metrics.alpha_from_coincidences(tables.sum(axis=0), [0, 1])


def test_the_table_bootstrap_resamples_clusters_like_the_row_bootstrap() -> None:
    rng = np.random.default_rng(5)
    clusters = _codes(rng, 2000, 150)
    truth = rng.integers(0, 3, size=2000)
    # agreement that varies by cluster, so the cluster bootstrap is wider than the row one
    predicted = np.where(rng.random(2000) < (clusters % 5) / 5, truth, rng.integers(0, 3, 2000))
    tables = metrics.confusion_tables(truth, predicted, clusters, 150, 3)

    def accuracy(table: np.ndarray) -> float:
        return float(np.trace(table) / table.sum())

    fast = metrics.cluster_table_ci(tables, accuracy, n_resamples=3000, seed=1, n_rows=2000)
    slow = metrics.bootstrap_ci(
        lambda t, p: float(np.mean(t == p)), truth, predicted, clusters=clusters,
        n_resamples=3000, seed=1,
    )  # fmt: skip
    assert fast.value == slow.value and fast.n == 2000 and fast.n_clusters == 150
    width = slow.high - slow.low
    assert abs(fast.low - slow.low) < 0.1 * width and abs(fast.high - slow.high) < 0.1 * width
    again = metrics.cluster_table_ci(tables, accuracy, n_resamples=3000, seed=1, n_rows=2000)
    assert (again.low, again.high) == (fast.low, fast.high)


def test_undefined_resamples_are_skipped_and_none_defined_raises() -> None:
    tables = np.array([[1.0], [0.0], [0.0]])  # a statistic defined only with cluster 0 drawn

    def needs_first(table: np.ndarray) -> float:
        if table[0] == 0:
            raise ValueError("undefined")
        return float(table[0])

    estimate = metrics.cluster_table_ci(tables, needs_first, n_resamples=500, seed=0)
    # cluster 0 is missing from a resample of three with probability (2/3)^3
    assert 0 < estimate.n_resamples < 500 and estimate.n_resamples_requested == 500
    calls = []

    def defined_once(table: np.ndarray) -> float:  # on the full data only
        calls.append(1)
        if len(calls) > 1:
            raise ValueError("undefined")
        return 1.0

    with pytest.raises(ValueError, match="undefined on all 50 bootstrap resamples"):
        metrics.cluster_table_ci(np.ones((2, 1)), defined_once, n_resamples=50)
