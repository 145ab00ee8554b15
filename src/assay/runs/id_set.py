"""A set of 64-bit identities that stays small at millions of members.

A Python ``set[int]`` costs about 70 bytes per member (the hash slot and the int object), so
the identities of a million archived attempts would take some 70 MB and grow with the run. Here
members live in sorted ``array('Q')`` runs of 8 bytes each (binary search) plus a small
``set`` of recent additions, which becomes a new run when it fills. Runs are merged only when
there are many of them, so the usual run never holds its members twice in memory.
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_left
from collections.abc import Iterable

_BUFFER_LIMIT = 1 << 16
_MAX_RUNS = 64  # beyond this (4M members by default) lookups would slow: merge the runs


class IdentitySet:
    """Exact membership of unsigned 64-bit integers; add and ``in`` only."""

    def __init__(self, members: Iterable[int] = ()) -> None:
        self._runs: list[array[int]] = []
        self._recent: set[int] = set()
        for member in members:
            self.add(member)

    def __contains__(self, member: object) -> bool:
        if not isinstance(member, int):
            return False
        return member in self._recent or any(_in_run(run, member) for run in self._runs)

    def __len__(self) -> int:
        return sum(len(run) for run in self._runs) + len(self._recent)

    def add(self, member: int) -> None:
        if member in self:
            return
        self._recent.add(member)
        if len(self._recent) >= _BUFFER_LIMIT:
            self._runs.append(array("Q", sorted(self._recent)))
            self._recent = set()
            if len(self._runs) > _MAX_RUNS:
                self._runs = [array("Q", heapq.merge(*self._runs))]


def _in_run(run: array[int], member: int) -> bool:
    index = bisect_left(run, member)
    return index < len(run) and run[index] == member
