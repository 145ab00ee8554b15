"""Paired comparisons of two binary outcomes on the same items (two runs, two prompts)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

# counts per item: a list of ints or an integer array
Counts = Sequence[int] | npt.NDArray[np.integer[Any]]


def mcnemar_exact_p(only_first: int, only_second: int) -> float:
    """Two-sided exact McNemar test: are the discordant pairs split 50/50?"""
    n = only_first + only_second
    if n == 0:
        return 1.0
    # Both stay Python integers: 2**n and the coefficients pass the largest float from 1,024
    # discordant pairs on, and an int / int quotient is rounded once, however large they are.
    tail = _binomial_lower_tail_count(n, min(only_first, only_second)) / (1 << n)
    return min(1.0, 2.0 * tail)


def _binomial_lower_tail_count(n: int, k_max: int) -> int:
    """C(n, 0) + ... + C(n, k_max), each coefficient from the one before (exact integers).

    One product per step instead of a fresh ``math.comb`` per term, which took tens of seconds
    at 20,000 pairs."""
    coefficient = total = 1
    for k in range(k_max):
        coefficient = coefficient * (n - k) // (k + 1)
        total += coefficient
    return total


def within_item_permutation_p(
    first_successes: Counts,
    first_trials: Counts,
    second_successes: Counts,
    second_trials: Counts,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
) -> float:
    """Two-sided Monte Carlo permutation test of repeated binary outcomes on the same items.

    Item ``i`` has ``first_trials[i]`` draws under the first condition with
    ``first_successes[i]`` successes, and likewise under the second. The statistic is the mean
    over items of the second condition's success share minus the first's. Under the null that
    the condition does not change an item's success probability, an item's draws are
    exchangeable between the two conditions, so each resample deals the item's successes out
    again over its draws (a hypergeometric count per item; the draw counts are kept, so unequal
    counts are exact too). With one draw per condition this is McNemar's test by simulation.
    ``p = (1 + resamples at least as extreme) / (1 + n_resamples)``, never 0.
    """
    k1, n1, k2, n2 = (
        np.asarray(x, dtype=np.int64)
        for x in _checked(first_successes, first_trials, second_successes, second_trials)
    )
    observed = float(np.mean(k2 / n2 - k1 / n1))
    rng = np.random.default_rng(seed)
    successes = k1 + k2
    dealt = rng.hypergeometric(
        np.broadcast_to(successes, (n_resamples, successes.size)),
        np.broadcast_to(n1 + n2 - successes, (n_resamples, successes.size)),
        np.broadcast_to(n2, (n_resamples, successes.size)),
    )
    resampled = np.mean(dealt / n2 - (successes - dealt) / n1, axis=1)
    # a small tolerance: a resample equal to the observed value up to rounding counts as extreme
    extreme = int(np.sum(np.abs(resampled) >= abs(observed) - 1e-12))
    return (1 + extreme) / (1 + n_resamples)


def _checked(*columns: Counts) -> tuple[Counts, ...]:
    """The four columns, refused unless of one non-zero length with 0 <= successes <= trials
    and at least one trial per condition."""
    k1, n1, k2, n2 = columns
    if len(k1) == 0 or len({len(c) for c in columns}) != 1:
        raise ValueError("expected four columns of one length, at least one item")
    for successes, trials in ((k1, n1), (k2, n2)):
        if any(t < 1 or not 0 <= s <= t for s, t in zip(successes, trials, strict=True)):
            raise ValueError("expected 0 <= successes <= trials and trials >= 1 for every item")
    return columns


# draws per item of one condition: any numbers (scores), at least one per item
Values = Sequence[Sequence[float]]


def within_item_mean_permutation_p(
    first: Values, second: Values, *, n_resamples: int = 2000, seed: int = 0
) -> float:
    """Two-sided Monte Carlo permutation test of repeated scores on the same items.

    Item ``i`` has the draws ``first[i]`` under the first condition and ``second[i]`` under
    the second, any number of each (at least one). The statistic is the mean over items of
    the second condition's mean minus the first's. Under the null that the condition does not
    change an item's score distribution, an item's draws are exchangeable between the two
    conditions, so each resample shuffles the item's pooled draws and deals them out again in
    the same counts. On 0/1 scores this is :func:`within_item_permutation_p`.
    ``p = (1 + resamples at least as extreme) / (1 + n_resamples)``, never 0.
    """
    if len(first) == 0 or len(first) != len(second):
        raise ValueError("expected two lists of one length, at least one item")
    if any(len(a) == 0 for a in first) or any(len(b) == 0 for b in second):
        raise ValueError("expected at least one draw per item and condition")
    rng = np.random.default_rng(seed)
    pairs = list(zip(first, second, strict=True))
    observed = sum(sum(b) / len(b) - sum(a) / len(a) for a, b in pairs) / len(pairs)
    resampled = np.zeros(n_resamples)
    # items with the same draw counts are shuffled together, a few million numbers at a time
    for (n1, n2), pooled in _pooled_by_shape(pairs).items():
        step = max(1, _CHUNK // (n_resamples * (n1 + n2)))
        for start in range(0, len(pooled), step):
            chunk = pooled[start : start + step]
            shuffled = rng.permuted(np.broadcast_to(chunk, (n_resamples, *chunk.shape)), axis=2)
            effects = shuffled[:, :, n1:].mean(axis=2) - shuffled[:, :, :n1].mean(axis=2)
            resampled += effects.sum(axis=1)
    resampled /= len(pairs)
    # a small tolerance: a resample equal to the observed value up to rounding counts as extreme
    extreme = int(np.sum(np.abs(resampled) >= abs(observed) - 1e-12))
    return (1 + extreme) / (1 + n_resamples)


_CHUNK = 4_000_000  # numbers shuffled at once: 32 MB


def _pooled_by_shape(
    pairs: Sequence[tuple[Sequence[float], Sequence[float]]],
) -> dict[tuple[int, int], npt.NDArray[Any]]:
    """Each item's draws, the first condition's then the second's, stacked by draw counts."""
    rows: dict[tuple[int, int], list[list[float]]] = {}
    for a, b in pairs:
        rows.setdefault((len(a), len(b)), []).append([*a, *b])
    return {shape: np.asarray(pooled, dtype=np.float64) for shape, pooled in rows.items()}
