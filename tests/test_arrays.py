"""Sorting typed arrays in chunks, and linear percentiles, against plain sorting and numpy."""

from __future__ import annotations

import random
from array import array

import numpy as np
import pytest

from assay.arrays import percentile, sorted_array


@pytest.mark.parametrize("size", [0, 1, 7, 64, 65, 1000])
def test_chunked_sort_equals_sorted_across_chunk_boundaries(size: int) -> None:
    rng = random.Random(size)
    ids = array("Q", [rng.getrandbits(64) for _ in range(size)] + [0, 2**64 - 1, 5, 5])
    floats = array("d", (rng.expovariate(10.0) for _ in range(size)))
    assert sorted_array(ids, chunk=16) == array("Q", sorted(ids))
    assert sorted_array(floats, chunk=16) == array("d", sorted(floats))
    assert sorted_array(ids, chunk=16).typecode == "Q"


def test_percentiles_are_numpys_linear_ones() -> None:
    rng = random.Random(1)
    values = array("d", (rng.expovariate(20.0) for _ in range(1001)))
    ordered = sorted_array(values, chunk=100)
    for q in (0, 50, 90, 99, 100):
        expected = float(np.percentile(np.frombuffer(values, dtype=np.float64), q))
        assert percentile(ordered, q) == pytest.approx(expected, rel=1e-12)
