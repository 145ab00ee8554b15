"""Per-cluster sufficient statistics for fast bootstrap intervals of detection metrics.

Every metric in :func:`summarize_binary_detection` is a function of a few sums over examples:
the four confusion counts, the squared errors, per calibration bin the count, positives and
summed probability, and per score cell the positives and negatives. A bootstrap resample of
clusters only changes how often each cluster is counted, so with ``M`` = clusters x sums and
``W`` = resamples x clusters multinomial counts, every resample's sums are one matrix product
``W @ M`` (BLAS), instead of re-sorting a million rows per resample.

Ranking metrics need scores ordered; they use score cells. With at most ``max_cells``
distinct scores each cell is one score and the result is exact. Otherwise cells are
equal-mass score quantiles; AUROC then credits positive/negative pairs inside a cell with the
cell's full-data concordance (so the full-data value is exact), and average precision treats
a cell as tied. Intervals are shifted by (exact full-data value - value from the sums).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assay.metrics._calibration import assign_bins
from assay.metrics._validation import BoolArray, FloatArray

N_FIXED = 5  # tp, fp, fn, tn, sum of squared errors
MATRIX_BUDGET_BYTES = 768 * 2**20
MAX_CELLS = 64


@dataclass(frozen=True)
class SumLayout:
    """Where each sufficient statistic sits in the columns of the sums matrix."""

    n_bins: int
    n_cells: int
    cell_concordance: FloatArray

    @property
    def uniform_start(self) -> int:
        return N_FIXED

    @property
    def quantile_start(self) -> int:
        return N_FIXED + 3 * self.n_bins

    @property
    def cell_start(self) -> int:
        return N_FIXED + 6 * self.n_bins

    @property
    def width(self) -> int:
        return self.cell_start + 2 * self.n_cells


@dataclass(frozen=True)
class DetectionData:
    """Validated inputs of a detection summary."""

    truth: BoolArray
    prob: FloatArray
    flagged: BoolArray
    cluster_codes: npt.NDArray[np.intp]
    n_clusters: int
    uniform_edges: FloatArray
    quantile_edges: FloatArray


def max_cells_for(n_clusters: int, n_bins: int) -> int:
    """Score cells that keep the float32 sums matrix within the memory budget."""
    affordable = MATRIX_BUDGET_BYTES // (4 * max(n_clusters, 1)) - N_FIXED - 6 * n_bins
    return int(max(8, min(MAX_CELLS, affordable // 2)))


def score_cells(
    prob: FloatArray, distinct: FloatArray, inverse: npt.NDArray[np.intp], max_cells: int
) -> tuple[npt.NDArray[np.intp], int]:
    """Cell per example (ascending score) and the number of cells.

    ``distinct``/``inverse`` come from ``np.unique(prob, return_inverse=True)``. Cells are the
    distinct scores when there are at most ``max_cells`` of them (exact), else equal-mass
    quantile ranges.
    """
    if distinct.size <= max_cells:
        return inverse.astype(np.intp), int(distinct.size)
    inner = np.quantile(prob, np.linspace(0.0, 1.0, max_cells + 1)[1:-1])
    raw = np.searchsorted(inner, distinct, side="right")
    occupied, cell_of_value = np.unique(raw, return_inverse=True)
    return cell_of_value[inverse].astype(np.intp), int(occupied.size)


def cell_concordance(
    truth: BoolArray, inverse: npt.NDArray[np.intp], cells: npt.NDArray[np.intp], n_cells: int
) -> FloatArray:
    """Per cell, the share of (positive, negative) pairs inside it ordered correctly, ties half."""
    negative = (~truth).astype(np.float64)
    positive = truth.astype(np.float64)
    neg_per_value = np.bincount(inverse, weights=negative)
    placement = np.cumsum(neg_per_value) - neg_per_value / 2.0
    pos = np.bincount(cells, weights=positive, minlength=n_cells)
    neg = np.bincount(cells, weights=negative, minlength=n_cells)
    within = np.bincount(cells, weights=positive * placement[inverse], minlength=n_cells)
    within -= pos * (np.cumsum(neg) - neg)
    pairs = pos * neg
    return np.asarray(np.where(pairs > 0, within / np.where(pairs > 0, pairs, 1.0), 0.5))


def build_sums(data: DetectionData, n_bins: int) -> tuple[npt.NDArray[np.float32], SumLayout]:
    """The clusters x sufficient-statistics matrix and its column layout."""
    distinct, inverse = np.unique(data.prob, return_inverse=True)
    cells, n_cells = score_cells(
        data.prob, distinct, inverse, max_cells_for(data.n_clusters, n_bins)
    )
    concordance = cell_concordance(data.truth, inverse, cells, n_cells)
    layout = SumLayout(n_bins, n_cells, concordance)
    row_start = data.cluster_codes * layout.width
    flat = [row_start + start + column for start, column, _ in _columns(data, cells, layout)]
    amounts = [amount for _, _, amount in _columns(data, cells, layout)]
    sums = np.bincount(
        np.concatenate(flat),
        weights=np.concatenate(amounts),
        minlength=data.n_clusters * layout.width,
    )
    return sums.astype(np.float32).reshape(data.n_clusters, layout.width), layout


def _columns(
    data: DetectionData, cells: npt.NDArray[np.intp], layout: SumLayout
) -> list[tuple[int, npt.NDArray[np.intp], FloatArray]]:
    """(first column of a group, column within it, amount) triples, one amount per example."""
    truth, prob = data.truth, data.prob
    ones = np.ones(len(prob))
    confusion = np.where(truth, np.where(data.flagged, 0, 2), np.where(data.flagged, 1, 3))
    columns = [
        (0, confusion.astype(np.intp), ones),
        (4, np.zeros(len(prob), np.intp), (prob - truth) ** 2),
    ]
    for start, edges in (
        (layout.uniform_start, data.uniform_edges),
        (layout.quantile_start, data.quantile_edges),
    ):
        column = 3 * assign_bins(prob, edges)
        columns += [(start, column, ones), (start + 1, column, truth.astype(np.float64))]
        columns.append((start + 2, column, prob))
    columns.append((layout.cell_start, 2 * cells + (~truth).astype(np.intp), ones))
    return columns


def resampled_sums(sums: npt.NDArray[np.float32], n_resamples: int, seed: int) -> FloatArray:
    """Sums for each bootstrap resample: multinomial cluster counts times the sums matrix.

    Resamples are drawn in batches, each from its own ``SeedSequence(seed).spawn`` stream, so
    the result does not depend on the two worker threads' timing. The product is written as
    ``(sums.T @ weights.T).T``: OpenBLAS threads the other orientation badly for this shape.
    """
    n_clusters = sums.shape[0]
    batch = int(max(1, min(64, 8_000_000 // n_clusters)))
    sizes = [min(batch, n_resamples - done) for done in range(0, n_resamples, batch)]
    streams = np.random.SeedSequence(seed).spawn(len(sizes))

    def one_batch(size: int, stream: np.random.SeedSequence) -> FloatArray:
        weights = multinomial_counts(np.random.default_rng(stream), size, n_clusters)
        return np.asarray((sums.T @ weights.T).T, dtype=np.float64)

    with ThreadPoolExecutor(max_workers=2) as pool:
        blocks = list(pool.map(one_batch, sizes, streams))
    return np.vstack(blocks)


def multinomial_counts(
    rng: np.random.Generator, n_draws: int, n_clusters: int
) -> npt.NDArray[np.float32]:
    """``n_draws`` rows of how often each cluster is drawn in ``n_clusters`` draws."""
    # int32 draws are twice as fast to generate; n_draws * n_clusters stays below 2**31.
    draws = rng.integers(0, n_clusters, size=(n_draws, n_clusters), dtype=np.int32)
    draws += np.arange(n_draws, dtype=np.int32)[:, None] * np.int32(n_clusters)
    counts = np.bincount(draws.ravel(), minlength=n_draws * n_clusters)
    return counts.reshape(n_draws, n_clusters).astype(np.float32)
