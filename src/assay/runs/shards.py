"""Shards: one run split over machines that share nothing, then merged.

A shard is named ``K/N`` (the K-th of N, from 1). Each work item goes to the shard its id's
SHA-256 names, so a shard's items depend neither on the order of the input file nor on which
machine reads it, and a merge can check every result's shard from its id alone.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..errors import ConfigError
from ._served import served_identity

MAX_SHARDS = 100_000
_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class Shard(BaseModel):
    """The ``index``-th of ``count`` shards (1-based)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int = Field(ge=1)
    count: int = Field(ge=1, le=MAX_SHARDS)

    @model_validator(mode="after")
    def _index_within_count(self) -> Shard:
        if self.index > self.count:
            raise ValueError(f"shard {self.index} of {self.count} does not exist")
        return self

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, item_id: str) -> bool:
        """Whether the item with this id belongs to this shard."""
        return shard_of(item_id, self.count) == self.index


def shard_of(item_id: str, count: int) -> int:
    """The shard (1..count) an item id belongs to: a hash, stable across machines and Python
    versions (``hash()`` is salted per process)."""
    digest = hashlib.sha256(item_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def parse_shard(text: str, option: str = "--shard") -> Shard:
    """``K/N`` as a :class:`Shard`; anything else is a ConfigError naming the option."""
    match = _SPEC.match(text)
    if match is None:
        raise ConfigError(
            f"{option} {text!r}: not K/N", hint=f"{option} 2/4 runs the second of 4 shards"
        )
    index, count = int(match.group(1)), int(match.group(2))
    if not 1 <= count <= MAX_SHARDS:
        raise ConfigError(f"{option} {text}: the number of shards must be 1 to {MAX_SHARDS}")
    if not 1 <= index <= count:
        raise ConfigError(f"{option} {text}: the shard must be 1 to {count}")
    return Shard(index=index, count=count)


def missing_shards(found: Iterable[int], count: int) -> list[int]:
    """The shard indices of 1..count that ``found`` lacks."""
    present = set(found)
    return [index for index in range(1, count + 1) if index not in present]


def combined_served(logs: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """What served the replies of several runs (each a run.json ``served``), as one run's:
    counts summed, and a warning where the runs together saw more than one build."""
    served: dict[str, dict[str, Any]] = {}
    for log in logs:
        as_usage = {
            name: {
                "served_replies": entry.get("replies"),
                "served_model_names": entry.get("model_names"),
                "system_fingerprints": entry.get("system_fingerprints"),
            }
            for name, entry in log.items()
            if isinstance(entry, Mapping)
        }
        served = served_identity(as_usage, served)
    return served
