"""A set of 64-bit identities that stays small at millions of members.

A Python ``set[int]`` costs about 70 bytes per member (the hash slot and the int object), so
the identities of a million archived attempts would take some 70 MB and grow with the run. Here
members live in a sorted ``array('Q')`` (8 bytes each, binary search) plus a small ``set`` of
recent additions, merged into the array when it fills. A merge streams both sorted sequences
into a new array, so it never holds the members as Python ints.
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_left
from collections.abc import Iterable

_BUFFER_LIMIT = 1 << 16


class IdentitySet:
    """Exact membership of unsigned 64-bit integers; add and ``in`` only."""

    def __init__(self, members: Iterable[int] = ()) -> None:
        self._sorted: array[int] = array("Q")
        self._recent: set[int] = set()
        for member in members:
            self.add(member)

    def __contains__(self, member: object) -> bool:
        if not isinstance(member, int):
            return False
        if member in self._recent:
            return True
        index = bisect_left(self._sorted, member)
        return index < len(self._sorted) and self._sorted[index] == member

    def __len__(self) -> int:
        return len(self._sorted) + len(self._recent)

    def add(self, member: int) -> None:
        if member in self:
            return
        self._recent.add(member)
        if len(self._recent) >= _BUFFER_LIMIT:
            self._merge()

    def _merge(self) -> None:
        merged = array("Q", heapq.merge(self._sorted, sorted(self._recent)))
        self._sorted = merged
        self._recent = set()
