"""Paired comparisons of two binary outcomes on the same items (two runs, two prompts)."""

from __future__ import annotations


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
