"""Percentile bootstrap confidence intervals, optionally resampling whole clusters.

Why clusters: several answers or claims often come from one question; they share its
difficulty, so they are not independent. Resampling examples one by one then gives intervals
that are too narrow. With ``clusters`` (one group label per example) each resample draws
``n_clusters`` clusters with replacement and keeps all their examples.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from assay.metrics._validation import as_1d, check_same_length, finite_scores, group_codes

IndexArray = npt.NDArray[np.intp]


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a bootstrap confidence interval.

    ``n_resamples`` counts the resamples the interval was computed from; resamples on which
    the statistic was undefined (it raised ``ValueError``, e.g. one class only) are skipped,
    so it can be below ``n_resamples_requested``.
    """

    value: float
    low: float
    high: float
    n: int
    n_resamples: int
    confidence: float
    method: str
    n_resamples_requested: int = 0
    n_clusters: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping; NaN becomes ``None``."""
        return {
            k: None if isinstance(v, float) and math.isnan(v) else v
            for k, v in asdict(self).items()
        }


@dataclass(frozen=True)
class ClusterIndex:
    """Example positions grouped by cluster, for drawing whole clusters quickly."""

    order: IndexArray
    starts: IndexArray
    sizes: IndexArray

    @classmethod
    def from_labels(cls, clusters: Any, n: int) -> ClusterIndex:
        codes, _ = group_codes(clusters, "clusters")
        if len(codes) != n:
            raise ValueError(f"clusters has {len(codes)} labels but the data has {n} rows")
        order = np.argsort(codes, kind="stable")
        sizes = np.bincount(codes)
        starts = np.r_[0, np.cumsum(sizes)[:-1]]
        return cls(order=order, starts=starts.astype(np.intp), sizes=sizes.astype(np.intp))

    @property
    def n_clusters(self) -> int:
        return len(self.sizes)

    def draw(self, rng: np.random.Generator) -> IndexArray:
        """Example positions of ``n_clusters`` clusters drawn with replacement."""
        chosen = rng.integers(0, self.n_clusters, size=self.n_clusters)
        sizes = self.sizes[chosen]
        first_out = np.cumsum(sizes) - sizes
        offsets = np.repeat(self.starts[chosen] - first_out, sizes) + np.arange(sizes.sum())
        return np.asarray(self.order[offsets], dtype=np.intp)


def check_confidence(confidence: float, n_resamples: int) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")


def percentile_interval(
    replicates: npt.NDArray[np.float64], confidence: float
) -> tuple[float, float]:
    """Central ``confidence`` interval of the finite replicates (NaN, NaN if there are none)."""
    finite = replicates[np.isfinite(replicates)]
    if finite.size == 0:
        return math.nan, math.nan
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    return float(low), float(high)


def bootstrap_ci(
    statistic: Callable[..., float],
    *arrays: Any,
    clusters: Any = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Estimate:
    """Percentile bootstrap interval of ``statistic(*arrays)``.

    ``value`` is the statistic on the full data (a ``ValueError`` there propagates). Each
    resample draws rows (or whole clusters when ``clusters`` is given) with replacement using
    ``numpy.random.default_rng(seed)``, so the result is deterministic for a seed. Resamples
    where the statistic raises ``ValueError`` are skipped and not counted in ``n_resamples``.

    Cost is ``n_resamples`` calls of ``statistic`` on data of the original size. For the
    standard detection metrics on large data use :func:`summarize_binary_detection`, which
    computes all intervals from per-cluster sufficient statistics instead.
    """
    check_confidence(confidence, n_resamples)
    if not arrays:
        raise ValueError("bootstrap_ci needs at least one data array")
    columns = [as_1d(a, f"arrays[{i}]") for i, a in enumerate(arrays)]
    n = check_same_length(**{f"arrays[{i}]": c for i, c in enumerate(columns)})
    value = float(statistic(*columns))
    index = ClusterIndex.from_labels(clusters, n) if clusters is not None else None
    rng = np.random.default_rng(seed)
    replicates = np.full(n_resamples, np.nan)
    for r in range(n_resamples):
        rows = index.draw(rng) if index is not None else rng.integers(0, n, size=n)
        try:
            replicates[r] = float(statistic(*(c[rows] for c in columns)))
        except ValueError:
            continue
    method = "cluster percentile bootstrap" if index else "percentile bootstrap"
    return replicate_estimate(
        value, replicates, n, confidence, method, index.n_clusters if index else None
    )


def replicate_estimate(
    value: float,
    replicates: npt.NDArray[np.float64],
    n: int,
    confidence: float,
    method: str,
    n_clusters: int | None,
) -> Estimate:
    """The percentile interval of the finite ``replicates`` (NaN: a resample where the
    statistic was undefined, skipped); none finite is a ``ValueError``."""
    used = int(np.isfinite(replicates).sum())
    if used == 0:
        raise ValueError(
            f"the statistic was undefined on all {len(replicates)} bootstrap resamples"
        )
    low, high = percentile_interval(replicates, confidence)
    return Estimate(
        value=value,
        low=low,
        high=high,
        n=n,
        n_resamples=used,
        confidence=confidence,
        method=method,
        n_resamples_requested=len(replicates),
        n_clusters=n_clusters,
    )


def cluster_mean_ci(
    values: Any,
    clusters: Any,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Estimate:
    """Percentile interval of a mean under the cluster bootstrap, from per-cluster sums.

    The same resampling as ``bootstrap_ci(mean, values, clusters=clusters)`` (clusters drawn
    with replacement; Poisson(1) cluster weights from many clusters on), computed in time
    that grows with the number of clusters, not rows. A resample that draws no rows (all
    weights zero) is skipped. NaN or infinite values raise ``ValueError``.
    """
    from assay.metrics._sufficient import cluster_mean_replicates

    check_confidence(confidence, n_resamples)
    column = finite_scores(values, "values")  # one NaN would make every resample's mean NaN
    codes, n_clusters = group_codes(clusters, "clusters")
    if len(codes) != len(column):
        raise ValueError(f"clusters has {len(codes)} labels but the data has {len(column)} rows")
    if len(column) == 0:
        raise ValueError("cluster_mean_ci needs at least one value")
    replicates = cluster_mean_replicates(
        column, np.asarray(codes, dtype=np.intp), n_resamples, seed
    )
    low, high = percentile_interval(replicates, confidence)
    return Estimate(
        value=float(column.mean()),
        low=low,
        high=high,
        n=len(column),
        n_resamples=int(np.isfinite(replicates).sum()),
        confidence=confidence,
        method="cluster percentile bootstrap (per-cluster sums)",
        n_resamples_requested=n_resamples,
        n_clusters=n_clusters,
    )
