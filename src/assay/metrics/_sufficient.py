"""Per-cluster sufficient statistics for fast bootstrap intervals of detection metrics.

Every metric in :func:`summarize_binary_detection` is a function of a few sums over examples.
A bootstrap resample of clusters only changes how often each cluster is counted, so with
``M`` = clusters x sums and ``W`` = resamples x clusters bootstrap weights, every resample's
sums are one matrix product ``W @ M`` (BLAS), instead of re-sorting a million rows per
resample.

The sums: per score *cell* the number of positives and negatives, plus the squared error and,
per calibration bin (equal-width and equal-mass), the summed probability. Cells are ordered
score ranges that never straddle a calibration bin edge or the flag threshold, so confusion
counts and per-bin counts and positives are sums of cells.

Cells are the distinct scores when there are at most ``EXACT_CELLS`` of them, and the result
is exact. Otherwise cells are cut at the bin edges, the threshold and ``SCORE_SPLITS``
equal-mass score quantiles; AUROC then credits positive/negative pairs inside a cell with
the cell's full-data concordance (so the full-data value is exact) and average precision
treats a cell as tied. Intervals are shifted by (exact full-data value - value from sums)
and kept in [0, 1].
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assay.metrics._calibration import assign_bins
from assay.metrics._validation import BoolArray, FloatArray

EXACT_CELLS = 96
SCORE_SPLITS = 24
IntArray = npt.NDArray[np.intp]


@dataclass(frozen=True)
class DetectionData:
    """Validated inputs of a detection summary."""

    truth: BoolArray
    prob: FloatArray
    flagged: BoolArray
    cluster_codes: IntArray
    n_clusters: int
    clustered: bool
    distinct: FloatArray  # np.unique(prob, return_inverse=True), shared by every consumer
    inverse: IntArray
    uniform_edges: FloatArray
    quantile_edges: FloatArray


@dataclass(frozen=True)
class CellSums:
    """Sums for each row (full data or one resample), expanded from the matrix columns."""

    tp: FloatArray
    fp: FloatArray
    fn: FloatArray
    tn: FloatArray
    squared_error: FloatArray
    cell_pos: FloatArray  # rows x cells, cells in ascending score order
    cell_neg: FloatArray
    uniform: tuple[FloatArray, FloatArray, FloatArray]  # per bin: count, positives, prob sum
    quantile: tuple[FloatArray, FloatArray, FloatArray]


@dataclass(frozen=True)
class SumLayout:
    """Column layout of the sums matrix: [squared error | prob sums | cell pos/neg pairs]."""

    n_bins: int
    cell_flagged: BoolArray
    cell_uniform_bin: IntArray
    cell_quantile_bin: IntArray
    cell_concordance: FloatArray

    @property
    def n_cells(self) -> int:
        return len(self.cell_flagged)

    @property
    def width(self) -> int:
        return 1 + 2 * self.n_bins + 2 * self.n_cells

    def expand(self, sums: FloatArray) -> CellSums:
        """Derive confusion counts and per-bin sums from rows of the sums matrix."""
        cells = sums[:, 1 + 2 * self.n_bins :].reshape(len(sums), self.n_cells, 2)
        pos, neg = cells[..., 0], cells[..., 1]
        flag = self.cell_flagged
        return CellSums(
            tp=pos[:, flag].sum(axis=1),
            fp=neg[:, flag].sum(axis=1),
            fn=pos[:, ~flag].sum(axis=1),
            tn=neg[:, ~flag].sum(axis=1),
            squared_error=sums[:, 0],
            cell_pos=pos,
            cell_neg=neg,
            uniform=self._bin_sums(pos, neg, self.cell_uniform_bin, sums[:, 1 : 1 + self.n_bins]),
            quantile=self._bin_sums(
                pos, neg, self.cell_quantile_bin, sums[:, 1 + self.n_bins :][:, : self.n_bins]
            ),
        )

    def _bin_sums(
        self, pos: FloatArray, neg: FloatArray, cell_bin: IntArray, prob_sums: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        membership = np.zeros((self.n_cells, self.n_bins))
        membership[np.arange(self.n_cells), cell_bin] = 1.0
        return (pos + neg) @ membership, pos @ membership, prob_sums


def score_cells(data: DetectionData, distinct: FloatArray, inverse: IntArray) -> IntArray:
    """Cell of each example: a distinct score, or a range between consecutive cut points.

    ``distinct``/``inverse`` come from ``np.unique(prob, return_inverse=True)``.
    """
    if distinct.size <= EXACT_CELLS:
        return inverse.astype(np.intp)
    cuts = np.unique(
        np.concatenate(
            [
                data.uniform_edges[1:-1],
                data.quantile_edges[1:-1],
                np.quantile(data.prob, np.linspace(0.0, 1.0, SCORE_SPLITS + 1)[1:-1]),
                [threshold_of(data)],
            ]
        )
    )
    raw = np.searchsorted(cuts, distinct, side="right")
    _, cell_of_value = np.unique(raw, return_inverse=True)
    return np.asarray(cell_of_value[inverse], dtype=np.intp)


def threshold_of(data: DetectionData) -> float:
    """The lowest flagged probability, or above 1 when nothing is flagged (a cut point)."""
    return float(data.prob[data.flagged].min()) if data.flagged.any() else 2.0


def cell_concordance(
    truth: BoolArray, inverse: IntArray, cells: IntArray, n_cells: int
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


@dataclass(frozen=True)
class SumsMatrix:
    """Rows of sufficient statistics and how a bootstrap resample reweights them.

    Clustered data: one row per cluster, resampled by drawing clusters uniformly. Unclustered
    data: one row per group of examples that agree on label, score cell and score to 1/4096
    (``group_sizes`` examples each), holding the group's *mean* statistics; a resample draws
    how many of the n examples fall in each group, Multinomial(n, sizes / n). That is the
    example bootstrap, except that examples of one group share their mean probability.
    """

    rows: npt.NDArray[np.float32]
    layout: SumLayout
    group_sizes: FloatArray | None = None

    def full_data(self) -> FloatArray:
        weights = np.ones(len(self.rows)) if self.group_sizes is None else self.group_sizes
        return np.asarray(weights @ self.rows.astype(np.float64))[None, :]


FINE_SCORE_BINS = 4096


def build_sums(data: DetectionData, n_bins: int) -> SumsMatrix:
    """The sufficient-statistics matrix of the data and its column layout."""
    distinct, inverse = data.distinct, data.inverse
    cells = score_cells(data, distinct, inverse)
    n_cells = int(cells.max()) + 1
    uniform_bin = assign_bins(data.prob, data.uniform_edges)
    quantile_bin = assign_bins(data.prob, data.quantile_edges)
    layout = SumLayout(
        n_bins=n_bins,
        cell_flagged=_per_cell(cells, data.flagged, n_cells).astype(np.bool_),
        cell_uniform_bin=_per_cell(cells, uniform_bin, n_cells),
        cell_quantile_bin=_per_cell(cells, quantile_bin, n_cells),
        cell_concordance=cell_concordance(data.truth, inverse, cells, n_cells),
    )
    if data.clustered:
        codes, n_rows = data.cluster_codes, data.n_clusters
    else:
        fine = np.minimum((data.prob * FINE_SCORE_BINS).astype(np.intp), FINE_SCORE_BINS - 1)
        key = (2 * cells + data.truth) * FINE_SCORE_BINS + fine
        _, codes = np.unique(key, return_inverse=True)
        n_rows = int(codes.max()) + 1
    columns = (uniform_bin, quantile_bin, cells)
    rows = _scatter(data, codes.astype(np.intp), n_rows, layout, columns)
    if data.clustered:
        return SumsMatrix(rows, layout)
    sizes = np.bincount(codes, minlength=n_rows).astype(np.float64)
    return SumsMatrix((rows / sizes[:, None]).astype(np.float32), layout, sizes)


def _scatter(
    data: DetectionData,
    codes: IntArray,
    n_rows: int,
    layout: SumLayout,
    columns: tuple[IntArray, IntArray, IntArray],
) -> npt.NDArray[np.float32]:
    """Sum each example's statistics into the row ``codes`` gives it."""
    uniform_bin, quantile_bin, cells = columns
    n_bins = layout.n_bins
    row_start = codes * layout.width
    sums = np.zeros(n_rows * layout.width, dtype=np.float32)
    prob32 = data.prob.astype(np.float32)
    scatter = (
        (row_start, ((data.prob - data.truth) ** 2).astype(np.float32)),
        (row_start + 1 + uniform_bin, prob32),
        (row_start + 1 + n_bins + quantile_bin, prob32),
        (row_start + 1 + 2 * n_bins + 2 * cells + (~data.truth), np.float32(1.0)),
    )
    for position, amount in scatter:
        # numpy >= 2 has a fast unbuffered path for add.at; a float64 bincount of the same
        # scatter is several times slower because its output is twice as large.
        np.add.at(sums, position, amount)
    return sums.reshape(n_rows, layout.width)


def _per_cell(cells: IntArray, values: npt.NDArray[np.generic], n_cells: int) -> IntArray:
    """The value shared by all examples of each cell (cells never straddle a bin edge)."""
    result = np.zeros(n_cells, dtype=np.intp)
    result[cells] = values
    return result


def resampled_sums(matrix: SumsMatrix, n_resamples: int, seed: int) -> FloatArray:
    """Sums for each bootstrap resample: random row weights times the sums matrix.

    Clustered rows get how often each cluster is drawn in n_clusters draws with replacement;
    from ``POISSON_FROM_CLUSTERS`` clusters on, independent Poisson(1) weights instead (the
    Poisson bootstrap: the same limit, several times cheaper to draw). Grouped example rows
    get Multinomial(n, group sizes / n) counts.

    Resamples are drawn in batches, each from its own ``SeedSequence(seed).spawn`` stream, so
    the result does not depend on the two worker threads' timing. The product is written as
    ``(rows.T @ weights.T).T``: OpenBLAS threads the other orientation badly for this shape.
    """
    rows = matrix.rows
    batch = int(max(1, min(64, 8_000_000 // len(rows))))
    sizes = [min(batch, n_resamples - done) for done in range(0, n_resamples, batch)]
    streams = np.random.SeedSequence(seed).spawn(len(sizes))

    def one_batch(size: int, stream: np.random.SeedSequence) -> FloatArray:
        rng = np.random.default_rng(stream)
        if matrix.group_sizes is None:
            weights = cluster_weights(rng, size, len(rows))
        else:
            total = int(matrix.group_sizes.sum())
            probabilities = matrix.group_sizes / total
            weights = rng.multinomial(total, probabilities, size=size).astype(np.float32)
        return np.asarray((rows.T @ weights.T).T, dtype=np.float64)

    with ThreadPoolExecutor(max_workers=2) as pool:
        blocks = list(pool.map(one_batch, sizes, streams))
    return np.vstack(blocks)


POISSON_FROM_CLUSTERS = 20_000


def cluster_weights(
    rng: np.random.Generator, n_draws: int, n_clusters: int
) -> npt.NDArray[np.float32]:
    """Bootstrap weights of clusters: multinomial counts, or Poisson(1) for many clusters."""
    if n_clusters < POISSON_FROM_CLUSTERS:
        return multinomial_counts(rng, n_draws, n_clusters)
    return poisson_counts(rng, n_draws, n_clusters)


def multinomial_counts(
    rng: np.random.Generator, n_draws: int, n_clusters: int
) -> npt.NDArray[np.float32]:
    """``n_draws`` rows of how often each cluster is drawn in ``n_clusters`` draws."""
    # int32 draws are twice as fast to generate; n_draws * n_clusters stays below 2**31.
    draws = rng.integers(0, n_clusters, size=(n_draws, n_clusters), dtype=np.int32)
    draws += np.arange(n_draws, dtype=np.int32)[:, None] * np.int32(n_clusters)
    counts = np.bincount(draws.ravel(), minlength=n_draws * n_clusters)
    return counts.reshape(n_draws, n_clusters).astype(np.float32)


def _poisson_tables() -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.float32]]:
    """CDF of Poisson(1) on a 32-bit grid, and the value for each top-16-bit prefix.

    A prefix whose 65,536 completions all fall in one value maps to it; the few prefixes that
    straddle a CDF step map to -1 and are resolved with 16 more random bits.
    """
    pmf = [math.exp(-1.0) / math.factorial(k) for k in range(40)]
    bounds = np.round(np.minimum(np.cumsum(pmf), 1.0) * 2.0**32).astype(np.uint64)
    prefix = np.arange(65536, dtype=np.uint64) << np.uint64(16)
    low = np.searchsorted(bounds, prefix, side="right")
    high = np.searchsorted(bounds, prefix + np.uint64(65535), side="right")
    return bounds, np.where(low == high, low, -1).astype(np.float32)


POISSON_BOUNDS, POISSON_BY_PREFIX = _poisson_tables()


def poisson_counts(
    rng: np.random.Generator, n_draws: int, n_clusters: int
) -> npt.NDArray[np.float32]:
    """``n_draws`` x ``n_clusters`` independent Poisson(1) weights (exact to 2**-32).

    A table lookup on 16 random bits: several times cheaper than drawing clusters and
    counting them, which dominated the run time at 200,000 clusters.
    """
    prefix = rng.integers(0, 65536, size=(n_draws, n_clusters), dtype=np.uint16)
    weights = POISSON_BY_PREFIX[prefix]
    straddling = np.flatnonzero(weights < 0)
    if straddling.size:
        full = (prefix.flat[straddling].astype(np.uint64) << np.uint64(16)) + rng.integers(
            0, 65536, size=straddling.size, dtype=np.uint64
        )
        weights.flat[straddling] = np.searchsorted(POISSON_BOUNDS, full, side="right")
    return weights


def cluster_mean_replicates(
    values: FloatArray, codes: IntArray, n_resamples: int, seed: int
) -> FloatArray:
    """Bootstrap replicates of the mean of ``values``, resampling whole clusters.

    The mean of a resample is (weights @ cluster sums) / (weights @ cluster sizes), so the
    cost is one weights draw per resample over clusters, not a pass over the rows: a mean
    over a million evaluations costs what a mean over its questions costs.
    """
    n_clusters = int(codes.max()) + 1 if len(codes) else 0
    sums = np.bincount(codes, weights=values, minlength=n_clusters)
    sizes = np.bincount(codes, minlength=n_clusters).astype(np.float64)
    rows = np.column_stack([sums, sizes]).astype(np.float64)
    batch = int(max(1, min(256, 8_000_000 // max(n_clusters, 1))))
    streams = np.random.SeedSequence(seed).spawn(-(-n_resamples // batch))
    blocks = []
    for index, stream in enumerate(streams):
        size = min(batch, n_resamples - index * batch)
        weights = cluster_weights(np.random.default_rng(stream), size, n_clusters)
        blocks.append(weights.astype(np.float64) @ rows)
    totals = np.vstack(blocks)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(totals[:, 0] / totals[:, 1], dtype=np.float64)
