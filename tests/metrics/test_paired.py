"""The within-item permutation tests of repeated outcomes: binary, and scores of any kind."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from assay.metrics import (
    mcnemar_exact_p,
    within_item_mean_permutation_p,
    within_item_permutation_p,
)


def test_one_draw_each_is_mcnemar_by_simulation() -> None:
    # 14 items lost, 4 gained, 30 the same: exact McNemar p = 0.031
    first = [1] * 14 + [0] * 4 + [1] * 10 + [0] * 20
    second = [0] * 14 + [1] * 4 + [1] * 10 + [0] * 20
    ones = [1] * len(first)
    p = within_item_permutation_p(first, ones, second, ones, n_resamples=20000, seed=1)
    assert p == pytest.approx(mcnemar_exact_p(14, 4), abs=0.006)


def test_exact_enumeration_of_a_small_case_with_unequal_draws() -> None:
    # item 1: 3 draws under the first condition (0 successes), 2 under the second (2 successes);
    # item 2: 2 and 2 draws, 1 success each. Enumerate every way to deal each item's successes.
    k1, n1, k2, n2 = [0, 1], [3, 2], [2, 1], [2, 2]
    observed = np.mean(np.array(k2) / n2 - np.array(k1) / n1)
    outcomes: list[tuple[float, float]] = []  # (statistic, probability)
    per_item = []
    for a, b, c, d in zip(k1, n1, k2, n2, strict=True):
        total, draws = a + c, b + d
        deals = []
        for shuffle in itertools.combinations(range(draws), total):
            in_second = sum(1 for i in shuffle if i >= b)
            deals.append(in_second / d - (total - in_second) / b)
        per_item.append(deals)
    for combo in itertools.product(*per_item):
        weight = 1.0 / np.prod([len(deals) for deals in per_item])
        outcomes.append((float(np.mean(combo)), weight))
    exact = sum(w for stat, w in outcomes if abs(stat) >= abs(observed) - 1e-12)
    p = within_item_permutation_p(k1, n1, k2, n2, n_resamples=40000, seed=3)
    assert p == pytest.approx(exact, abs=0.01)
    assert 0 < exact < 1


def test_no_difference_gives_a_large_p_and_a_shift_a_small_one() -> None:
    rng = np.random.default_rng(0)
    n = [5] * 60
    same_first = rng.binomial(5, 0.5, 60)
    same_second = rng.binomial(5, 0.5, 60)
    assert within_item_permutation_p(same_first, n, same_second, n, seed=0) > 0.05
    shifted = rng.binomial(5, 0.8, 60)
    assert within_item_permutation_p(same_first, n, shifted, n, seed=0) < 0.001


def test_p_is_never_zero_and_is_seeded() -> None:
    first, second, ones = [1] * 30, [0] * 30, [1] * 30
    p = within_item_permutation_p(first, ones, second, ones, n_resamples=500, seed=7)
    assert p == 1 / 501
    assert p == within_item_permutation_p(first, ones, second, ones, n_resamples=500, seed=7)


@pytest.mark.parametrize(
    ("k1", "n1", "k2", "n2"),
    [([], [], [], []), ([1], [1], [1, 0], [1, 1]), ([2], [1], [0], [1]), ([0], [0], [0], [1])],
)
def test_malformed_columns_are_refused(
    k1: list[int], n1: list[int], k2: list[int], n2: list[int]
) -> None:
    with pytest.raises(ValueError, match="expected"):
        within_item_permutation_p(k1, n1, k2, n2)


def _exact_mean_permutation_p(first: list[list[float]], second: list[list[float]]) -> float:
    """Every way to split each item's pooled draws into the two counts, equally likely."""
    observed = np.mean([np.mean(b) - np.mean(a) for a, b in zip(first, second, strict=True)])
    per_item = []
    for a, b in zip(first, second, strict=True):
        pooled = [*a, *b]
        effects = []
        for chosen in itertools.combinations(range(len(pooled)), len(b)):
            rest = [pooled[i] for i in range(len(pooled)) if i not in chosen]
            effects.append(np.mean([pooled[i] for i in chosen]) - np.mean(rest))
        per_item.append(effects)
    combos = list(itertools.product(*per_item))
    extreme = sum(bool(abs(np.mean(c)) >= abs(observed) - 1e-12) for c in combos)
    return float(extreme / len(combos))


def test_scores_against_exact_enumeration_with_unequal_draws() -> None:
    # overall scores 0-8 of three questions, draws 3/2, 2/2 and 1/3
    first: list[list[float]] = [[2, 5, 3], [8, 6], [4]]
    second: list[list[float]] = [[6, 7], [8, 7], [5, 6, 8]]
    exact = _exact_mean_permutation_p(first, second)
    p = within_item_mean_permutation_p(first, second, n_resamples=40000, seed=2)
    assert p == pytest.approx(exact, abs=0.01)
    assert 0.01 < exact < 0.5


def test_scores_of_zero_and_one_give_the_binary_test() -> None:
    rng = np.random.default_rng(4)
    draws = [(list(rng.integers(0, 2, 3)), list(rng.integers(0, 2, 2))) for _ in range(20)]
    first = [[float(x) for x in a] for a, _ in draws]
    second = [[float(x) for x in b] for _, b in draws]
    binary = within_item_permutation_p(
        [int(sum(a)) for a in first],
        [len(a) for a in first],
        [int(sum(b)) for b in second],
        [len(b) for b in second],
        n_resamples=40000,
        seed=1,
    )
    scores = within_item_mean_permutation_p(first, second, n_resamples=40000, seed=1)
    assert scores == pytest.approx(binary, abs=0.01)


def test_a_shift_in_scores_gives_a_small_p_and_none_a_large_one() -> None:
    rng = np.random.default_rng(0)
    base = [list(rng.normal(4, 1.5, 5)) for _ in range(40)]
    same = [list(rng.normal(4, 1.5, 5)) for _ in range(40)]
    shifted = [list(rng.normal(5, 1.5, 5)) for _ in range(40)]
    assert within_item_mean_permutation_p(base, same, seed=0) > 0.05
    assert within_item_mean_permutation_p(base, shifted, seed=0) < 0.001
    assert within_item_mean_permutation_p(base, shifted, n_resamples=300, seed=0) == 1 / 301


@pytest.mark.parametrize(
    ("first", "second"), [([], []), ([[1.0]], [[1.0], [2.0]]), ([[]], [[1.0]]), ([[1.0]], [[]])]
)
def test_malformed_draws_are_refused(first: list[list[float]], second: list[list[float]]) -> None:
    with pytest.raises(ValueError, match="expected"):
        within_item_mean_permutation_p(first, second)
