"""IdentitySet against Python's own set, across merges of its buffer."""

from __future__ import annotations

import random

import pytest

from assay.runs import id_set
from assay.runs.id_set import IdentitySet


@pytest.fixture
def small_buffer(monkeypatch: pytest.MonkeyPatch) -> None:
    # Merge after a few additions, so a short test crosses many merges.
    monkeypatch.setattr(id_set, "_BUFFER_LIMIT", 7)
    monkeypatch.setattr(id_set, "_MAX_RUNS", 5)


@pytest.mark.usefixtures("small_buffer")
def test_membership_matches_a_python_set_across_merges() -> None:
    rng = random.Random(12)
    members = [rng.getrandbits(64) for _ in range(500)]
    members += members[:50]  # duplicates are added once
    compact, plain = IdentitySet(), set()
    for member in members:
        compact.add(member)
        plain.add(member)
    assert len(compact) == len(plain)
    assert all(member in compact for member in plain)
    strangers = [rng.getrandbits(64) for _ in range(500)]
    assert [s in compact for s in strangers] == [s in plain for s in strangers]
    assert 0 not in compact and (2**64 - 1) not in compact
    assert "a" not in compact


@pytest.mark.usefixtures("small_buffer")
def test_extremes_and_initial_members() -> None:
    compact = IdentitySet([0, 2**64 - 1, 5])
    for value in range(20):
        compact.add(value)
    assert 0 in compact and 2**64 - 1 in compact and 19 in compact
    assert 20 not in compact
    assert len(compact) == 21
