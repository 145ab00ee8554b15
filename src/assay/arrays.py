"""Sorting typed arrays of numbers without holding them all as Python objects.

A run keeps per-sample numbers (8-byte identities, call latencies) in ``array`` buffers, 8
bytes each. Sorting one with ``sorted()`` would make every element a Python object at once
(32-40 bytes each: 40 MB for a million), and numpy costs some 10 MB of memory and 0.1 s of CPU
to load. Here the array is sorted in chunks, each chunk's objects freed before the next, and
the sorted chunks are merged into a new array.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Sequence
from typing import TypeVar

_CHUNK = 1 << 16
Number = TypeVar("Number", int, float)


def sorted_array(values: array[Number], chunk: int = _CHUNK) -> array[Number]:
    """A sorted copy of ``values``, of the same type code."""
    if len(values) <= chunk:
        return array(values.typecode, sorted(values))
    runs = [
        array(values.typecode, sorted(values[start : start + chunk]))
        for start in range(0, len(values), chunk)
    ]
    return array(values.typecode, heapq.merge(*runs))


def percentile(ordered: Sequence[float], q: float) -> float:
    """numpy's default (linear) percentile of sorted values."""
    position = q / 100 * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
