"""Cluster bootstrap intervals of statistics of additive tables: confusion and coincidence
matrices, and sums.

Accuracy and Cohen's kappa are functions of a confusion matrix, Krippendorff's alpha of a
coincidence matrix, and both matrices are sums over units. A resample of clusters only changes
how often each cluster counts, so with the tables of each cluster stacked, every resample's
table is one product of cluster weights and the stack (the weights
:func:`~assay.metrics._sufficient.cluster_weights` draws: multinomial counts, Poisson(1) from
20,000 clusters on), and the statistic reads a K x K table instead of every row. Over 20,000
labelled samples that is tens of milliseconds where re-counting every resample took seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from assay.metrics._bootstrap import Estimate, check_confidence, replicate_estimate
from assay.metrics._validation import FloatArray

IntArray = npt.NDArray[np.intp]


def confusion_tables(
    truth: Any, predicted: Any, clusters: Any, n_clusters: int, k: int
) -> FloatArray:
    """Per cluster, the k x k confusion matrix of two code arrays (0..k-1; rows ``truth``)."""
    truth, predicted = np.asarray(truth, dtype=np.intp), np.asarray(predicted, dtype=np.intp)
    cells = (np.asarray(clusters, dtype=np.intp) * k + truth) * k + predicted
    counts = np.bincount(cells, minlength=n_clusters * k * k).astype(np.float64)
    return counts.reshape(n_clusters, k, k)


def coincidence_tables(ratings: Any, values: Any, clusters: Any, n_clusters: int) -> FloatArray:
    """Per cluster, Krippendorff's coincidence matrix over ``values`` of a raters x units
    table (``np.nan`` missing; units in the order of ``clusters``): each pairable unit adds
    (n_uc * n_uk - [c == k] * n_uc) / (m_u - 1) at c, k."""
    table = np.asarray(ratings, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    present = ~np.isnan(table)
    counts = np.zeros((table.shape[1], values.size))
    raters, units = np.nonzero(present)
    np.add.at(counts, (units, np.searchsorted(values, table[raters, units])), 1.0)
    sizes = counts.sum(axis=1)
    pairable = sizes >= 2
    counts, clusters = counts[pairable], np.asarray(clusters, dtype=np.intp)[pairable]
    weight = 1.0 / (sizes[pairable] - 1.0)
    out = np.zeros((n_clusters, values.size, values.size))
    for c in range(values.size):
        for k in range(values.size):
            pairs = counts[:, c] * (counts[:, k] - (c == k)) * weight
            out[:, c, k] = np.bincount(clusters, weights=pairs, minlength=n_clusters)
    return out


def cluster_table_ci(
    tables: Any,
    statistic: Callable[[FloatArray], float],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    n_rows: int | None = None,
) -> Estimate:
    """Percentile interval of ``statistic`` of the sum of per-cluster ``tables`` (clusters
    first, any shape after), resampling clusters. ``value`` is the statistic of the sum over
    every cluster (its ``ValueError`` propagates); resamples where it raises ``ValueError``
    are skipped, and none left is a ``ValueError``. ``n_rows``: the rows the tables count,
    reported as the estimate's ``n`` (default: the clusters)."""
    from assay.metrics._sufficient import cluster_weights

    check_confidence(confidence, n_resamples)
    stack = np.asarray(tables, dtype=np.float64)
    if stack.ndim < 1 or stack.shape[0] == 0:
        raise ValueError("cluster_table_ci needs the tables of at least one cluster")
    n_clusters, shape = stack.shape[0], stack.shape[1:]
    value = float(statistic(stack.sum(axis=0)))
    flat = stack.reshape(n_clusters, -1)
    rng = np.random.default_rng(seed)
    replicates = np.full(n_resamples, np.nan)
    batch = max(1, min(n_resamples, 4_000_000 // max(1, n_clusters)))
    for start in range(0, n_resamples, batch):
        size = min(batch, n_resamples - start)
        sums = cluster_weights(rng, size, n_clusters).astype(np.float64) @ flat
        for offset, summed in enumerate(sums):
            replicates[start + offset] = _or_nan(statistic, summed.reshape(shape))
    n = n_clusters if n_rows is None else n_rows
    method = "cluster percentile bootstrap (per-cluster tables)"
    return replicate_estimate(value, replicates, n, confidence, method, n_clusters)


def _or_nan(statistic: Callable[[FloatArray], float], table: FloatArray) -> float:
    try:
        return float(statistic(table))
    except ValueError:
        return float("nan")
