"""Shards: one run split over machines that share nothing, then merged.

A shard is named ``K/N`` (the K-th of N, from 1). Each work item goes to the shard its id's
SHA-256 names, so a shard's items depend neither on the order of the input file nor on which
machine reads it, and a merge can check every result's shard from its id alone.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import ConfigError, RunError, describe_validation
from ._fingerprint import fingerprint
from ._jsonl import JsonlWriter, read_numbered_lines
from ._lock import LOCK_FILE, RunDirLock, check_not_being_written
from ._runlog import RUN_FILE, RunKind, RunLog, read_run_log, utc_now, write_atomic
from ._served import combined_served

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


def shard_record(shard: Shard | None, total_items: int) -> dict[str, int] | None:
    """A shard run's ``shard`` in run.json, what a merge checks its shards by: which shard, of
    how many, and how many items all shards hold together (None: not a shard)."""
    if shard is None:
        return None
    return {"index": shard.index, "count": shard.count, "total_items": total_items}


def missing_shards(found: Iterable[int], count: int) -> list[int]:
    """The shard indices of 1..count that ``found`` lacks."""
    present = set(found)
    return [index for index in range(1, count + 1) if index not in present]


# ---------------------------------------------------------------- merging shards' directories

RUN_LOG_NAME = "run_log.jsonl"


@dataclass(frozen=True)
class ShardLog:
    """A shard's run directory, its run.json, and which shard it holds."""

    run_dir: Path
    log: RunLog
    shard: Shard
    total_items: int  # the items of all shards together, as the shard counted them


def check_merge_target(out_dir: Path, shard_dirs: Sequence[Path], *, but: str = "") -> None:
    """A merge writes a whole run into a directory of its own: new, or empty (but ``but``)."""
    if out_dir.resolve() in {path.resolve() for path in shard_dirs}:
        raise RunError(f"{out_dir}: is one of the shards; the merged run needs its own directory")
    if out_dir.exists() and (
        not out_dir.is_dir() or any(path.name != but for path in out_dir.iterdir())
    ):
        raise RunError(
            f"{out_dir}: already exists and is not an empty directory",
            hint="give --out a new directory (a merge writes a whole run, never into one)",
        )


def read_shard_log(run_dir: Path, kind: RunKind) -> ShardLog:
    """The run.json of a finished ``--shard`` run of ``kind`` in ``run_dir``."""
    if not run_dir.is_dir():
        raise RunError(f"{run_dir}: no such run directory")
    check_not_being_written(run_dir)
    log = read_run_log(run_dir)
    if log is None or log.kind != kind:
        raise RunError(f"{run_dir}: not a {kind} run (no {RUN_FILE} of kind {kind!r})")
    if log.shard is None:
        raise RunError(
            f"{run_dir}: a {kind} run of every item, not a shard (made without --shard)",
            hint="merge the directories of runs made with --shard K/N, one per K",
        )
    try:
        shard = Shard(index=log.shard["index"], count=log.shard["count"])
    except (KeyError, ValueError):
        raise RunError(f"{run_dir / RUN_FILE}: field 'shard': not a shard K/N") from None
    if log.status != "success":
        raise RunError(
            f"{run_dir / RUN_FILE}: shard {shard} ended {log.status!r}, not 'success'",
            hint="run the shard's command again: it resumes where it stopped",
        )
    return ShardLog(run_dir, log, shard, log.shard.get("total_items", -1))


_Config = TypeVar("_Config", bound=BaseModel)


def shard_config(
    read: ShardLog, model: type[_Config], protocol: Callable[[_Config], Any]
) -> _Config:
    """The shard's recorded config as ``model``, whose recorded fingerprint must be what this
    version of assay makes of it (``protocol``): else its items were made under another
    protocol (another version's prompts or checker), which the merged run's would not say."""
    where = read.run_dir / RUN_FILE
    try:
        config = model.model_validate(read.log.config)
    except ValidationError as error:
        raise RunError(describe_validation(error, f"{where} (config)")) from None
    if read.log.fingerprint != fingerprint(protocol(config)):
        raise RunError(
            f"{where}: its fingerprint {read.log.fingerprint} is not what this assay computes "
            f"from its config (assay {read.log.assay_version} made it); its prompts, checker "
            "or settings differ from this version's",
            hint="merge with the assay version that ran the shards",
        )
    return config


def check_shard_set(shards: Sequence[ShardLog]) -> None:
    """The shards are every shard of one count, each once, of the same number of items."""
    first = shards[0]
    for shard in shards:
        if shard.shard.count != first.shard.count:
            raise RunError(
                f"{shard.run_dir}: shard {shard.shard}, but {first.run_dir} is shard "
                f"{first.shard}: the shards of one run have one count"
            )
        if shard.total_items != first.total_items:
            raise RunError(
                f"{shard.run_dir}: its shards hold {shard.total_items} items, those of "
                f"{first.run_dir} {first.total_items}: the shards were run on different data",
                hint="run every shard on the same input file",
            )
    seen: dict[int, Path] = {}
    for shard in shards:
        if (other := seen.setdefault(shard.shard.index, shard.run_dir)) != shard.run_dir:
            raise RunError(f"{shard.run_dir} and {other} are both shard {shard.shard}")
    if missing := missing_shards(seen, first.shard.count):
        listed = ", ".join(f"{index}/{first.shard.count}" for index in missing)
        raise RunError(
            f"shard(s) {listed} missing: {len(shards)} of {first.shard.count} given",
            hint="give the run directory of every shard",
        )


def refuse_foreign(shard: ShardLog, item_id: str, where: str) -> None:
    """Refuse an item of another shard than ``shard``'s; ``where`` names its file, line and
    kind (``results.jsonl:3: record 'x' of question``)."""
    if not shard.shard.holds(item_id):
        owner = shard_of(item_id, shard.shard.count)
        raise RunError(
            f"{where} {item_id!r} belongs to shard {owner}/{shard.shard.count}, not to this "
            f"run's {shard.shard}"
        )


@contextlib.contextmanager
def writing_merge(out_dir: Path, shard_dirs: Sequence[Path]) -> Iterator[None]:
    """Hold ``out_dir``'s lock while a merge writes it, once every check has passed (the
    lock is the first write), and see that nobody wrote it since the first check."""
    with RunDirLock(out_dir):
        check_merge_target(out_dir, shard_dirs, but=LOCK_FILE)
        yield


def concatenate(sources: Sequence[Path], target: Path) -> None:
    """``target`` as the complete lines of ``sources`` one after another (a line a crash cut
    short is left out, as every reader leaves it)."""
    with target.open("w", encoding="utf-8") as out:
        for source in sources:
            for _, line in read_numbered_lines(source):
                out.write(line + "\n")


def write_merged_log(shards: Sequence[ShardLog], out_dir: Path, log: RunLog) -> None:
    """run.json, and run_log.jsonl as every shard's sessions then a "merge" line (not an
    "end": the merge made no call, and the shards' sessions count the usage once)."""
    log = log.model_copy(
        update={"merged_from": [origin(shard) for shard in _by_index(shards)], "usage": {}}
    )
    concatenate(
        [shard.run_dir / RUN_LOG_NAME for shard in _by_index(shards)], out_dir / RUN_LOG_NAME
    )
    write_atomic(out_dir / RUN_FILE, log.model_dump_json(indent=2))
    with JsonlWriter(out_dir / RUN_LOG_NAME) as events:
        events.append({"event": "merge", "at": utc_now(), **log.model_dump(mode="json")})


def merged_run_log(shards: Sequence[ShardLog], **fields: Any) -> RunLog:
    """The merged run's run.json: the first shard's models and decoding, the shards' counts
    summed and what served their replies combined, and ``fields`` (kind, fingerprint, config)."""
    first = shards[0].log
    return RunLog(
        status="success",
        ended_at=utc_now(),
        models=first.models,
        decoding=first.decoding,
        sample_count=sum(shard.log.sample_count for shard in shards),
        finished_count=sum(shard.log.finished_count for shard in shards),
        served=combined_served(shard.log.served for shard in shards),
        **fields,
    )


def origin(shard: ShardLog) -> dict[str, Any]:
    """What a merged run keeps of each shard: where, which, made how, when and where."""
    log = shard.log
    return {
        "run_dir": str(shard.run_dir),
        "shard": str(shard.shard),
        "fingerprint": log.fingerprint,
        "assay_version": log.assay_version,
        "platform": log.platform,
        "started_at": log.started_at,
        "ended_at": log.ended_at,
        "items": log.sample_count,
        "finished": log.finished_count,
        "models": log.models,
    }


def _by_index(shards: Sequence[ShardLog]) -> list[ShardLog]:
    return sorted(shards, key=lambda shard: shard.shard.index)
