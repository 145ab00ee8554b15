"""Results compared across runs: equal runs differ only in their timing fields."""

from __future__ import annotations

from collections.abc import Mapping

# the fields whose values are wall-clock measurements: equal runs differ only there
TIMING_FIELDS = {"check_ms", "latency_ms"}


def without_timings(value: object) -> object:
    """``value`` (parsed JSON) with every timing field left out, at any depth."""
    if isinstance(value, dict):
        return record_without_timings(value)
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def record_without_timings(record: Mapping[str, object]) -> dict[str, object]:
    """``record`` (a parsed JSON object) with every timing field left out, at any depth."""
    return {k: without_timings(v) for k, v in record.items() if k not in TIMING_FIELDS}
