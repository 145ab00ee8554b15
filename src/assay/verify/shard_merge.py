"""``assay bench merge``: the run directories of ``bench run --shard K/N``, one per machine,
joined into the one run an unsharded ``bench run`` would have made.

Every check comes before the first write: the shards are N distinct shards of one count, made
with one protocol (the settings that decide each result; where they ran, with what
concurrency or executor, may differ), each finished, each holding a current result for every
record of its shard and for no other, all of one input (the same number of records). The
merged directory is then an ordinary run: its fingerprint is the unsharded run's, so ``bench
run`` without ``--shard`` resumes it (retrying the examples whose calls failed) and finds
everything else done.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import RunError, describe_validation
from ..runs import (
    LOCK_FILE,
    RUN_FILE,
    JsonlWriter,
    RunDirLock,
    RunLog,
    check_not_being_written,
    fingerprint,
    read_numbered_lines,
    read_run_log,
    utc_now,
    write_atomic,
)
from ..runs.shards import Shard, combined_served, missing_shards
from .benchmark import SKIPPED_FILE, BenchmarkConfig
from .calibration import CALIBRATION_FILE
from .results import RESULTS_FILE, result_index

RUN_LOG_FILE = "run_log.jsonl"


@dataclass(frozen=True)
class ShardRun:
    """One shard's directory as the merge reads it."""

    run_dir: Path
    log: RunLog
    config: BenchmarkConfig
    shard: Shard
    total_items: int
    results: int  # ids with a current result
    incomplete: int  # of them, examples whose model calls failed


@dataclass(frozen=True)
class MergeReport:
    out_dir: Path
    shards: int
    results: int
    incomplete: int


def merge_shards(shard_dirs: Sequence[Path], out_dir: Path) -> MergeReport:
    """Check the shards, then write ``out_dir`` as one run (results, logs, summary.json)."""
    from .summary import write_summary

    _check_out_dir(out_dir, shard_dirs)
    shards = [_read_shard(run_dir) for run_dir in shard_dirs]
    merged = _merged_config(shards, out_dir)
    calibration = _one_calibration(shards)
    with RunDirLock(out_dir):  # every check has passed: the first write
        _check_out_dir(out_dir, shard_dirs, but=LOCK_FILE)  # nobody wrote it meanwhile
        _write_files(shards, out_dir, calibration)
        log = _merged_log(shards, merged)
        write_atomic(out_dir / RUN_FILE, log.model_dump_json(indent=2))
        with JsonlWriter(out_dir / RUN_LOG_FILE) as events:  # not an "end": adds no usage
            events.append({"event": "merge", "at": utc_now(), **log.model_dump(mode="json")})
        write_summary(out_dir, config=merged.public_dump())
    return MergeReport(
        out_dir=out_dir,
        shards=len(shards),
        results=sum(shard.results for shard in shards),
        incomplete=sum(shard.incomplete for shard in shards),
    )


def _check_out_dir(out_dir: Path, shard_dirs: Sequence[Path], *, but: str = "") -> None:
    if out_dir.resolve() in {path.resolve() for path in shard_dirs}:
        raise RunError(f"{out_dir}: is one of the shards; the merged run needs its own directory")
    if out_dir.exists() and (
        not out_dir.is_dir() or any(path.name != but for path in out_dir.iterdir())
    ):
        raise RunError(
            f"{out_dir}: already exists and is not an empty directory",
            hint="give --out a new directory (a merge writes a whole run, never into one)",
        )


def _read_shard(run_dir: Path) -> ShardRun:
    """A shard's run.json and results, checked: a finished bench run of ``--shard`` whose
    every record has a result, and whose every result is of its shard."""
    if not run_dir.is_dir():
        raise RunError(f"{run_dir}: no such run directory")
    check_not_being_written(run_dir)
    log = read_run_log(run_dir)
    if log is None or log.kind != "bench":
        raise RunError(f"{run_dir}: not a bench run (no {RUN_FILE} of kind 'bench')")
    config = _shard_config(run_dir, log)
    if config.shard is None or log.shard is None:
        raise RunError(
            f"{run_dir}: a bench run of every record, not a shard (made without --shard)",
            hint="merge the directories of `bench run --shard K/N`, one per K",
        )
    if log.status != "success":
        raise RunError(
            f"{run_dir / RUN_FILE}: shard {config.shard} ended {log.status!r}, not 'success'",
            hint="run the shard's command again: it resumes where it stopped",
        )
    current = result_index(run_dir / RESULTS_FILE)
    foreign = next((key for key in current if not config.shard.holds(key)), None)
    if foreign is not None:
        raise RunError(
            f"{run_dir / RESULTS_FILE}:{current[foreign].line}: record {foreign!r} belongs to "
            f"shard {_shard_holding(foreign, config.shard.count)}, not to this run's "
            f"{config.shard}"
        )
    if len(current) != log.sample_count:
        raise RunError(
            f"{run_dir}: shard {config.shard} has results for {len(current)} of its "
            f"{log.sample_count} records",
            hint="run the shard's command again to finish it (examples waiting on batch "
            "answers need `assay batch import` first)",
        )
    return ShardRun(
        run_dir=run_dir,
        log=log,
        config=config,
        shard=config.shard,
        total_items=log.shard.get("total_items", -1),
        results=len(current),
        incomplete=sum(not result.complete for result in current.values()),
    )


def _shard_holding(item_id: str, count: int) -> str:
    from ..runs.shards import shard_of

    return f"{shard_of(item_id, count)}/{count}"


def _shard_config(run_dir: Path, log: RunLog) -> BenchmarkConfig:
    try:
        return BenchmarkConfig.model_validate(log.config)
    except ValidationError as error:
        raise RunError(describe_validation(error, f"{run_dir / RUN_FILE} (config)")) from None


def _merged_config(shards: Sequence[ShardRun], out_dir: Path) -> BenchmarkConfig:
    """The unsharded run's config, once the shards are shown to be the N shards of one run
    made with one protocol by this version of assay (whose fingerprint the merged run keeps)."""
    first = shards[0]
    count = first.shard.count
    for shard in shards:
        _check_protocol(shard)
        if shard.shard.count != count:
            raise RunError(
                f"{shard.run_dir}: shard {shard.shard}, but {first.run_dir} is shard "
                f"{first.shard}: the shards of one run have one count"
            )
        if shard.total_items != first.total_items:
            raise RunError(
                f"{shard.run_dir}: its shards hold {shard.total_items} records, those of "
                f"{first.run_dir} {first.total_items}: the shards were run on different data",
                hint="run every shard on the same --data file",
            )
        unsharded = shard.config.model_copy(update={"shard": None}).protocol()
        if fingerprint(unsharded) != fingerprint(
            first.config.model_copy(update={"shard": None}).protocol()
        ):
            raise RunError(
                f"{shard.run_dir}: made with other settings than {first.run_dir} (pattern, "
                "models, n, seed, threshold, revision or decoding differ)",
                hint="merge the shards of one run: one command, with --shard K/N for each K",
            )
    seen: dict[int, Path] = {}
    for shard in shards:
        if (other := seen.setdefault(shard.shard.index, shard.run_dir)) != shard.run_dir:
            raise RunError(f"{shard.run_dir} and {other} are both shard {shard.shard}")
    if missing := missing_shards(seen, count):
        listed = ", ".join(f"{index}/{count}" for index in missing)
        raise RunError(
            f"shard(s) {listed} missing: {len(shards)} of {count} given",
            hint="give the run directory of every shard",
        )
    return first.config.model_copy(update={"shard": None, "out_dir": out_dir})


def _check_protocol(shard: ShardRun) -> None:
    """The shard's recorded fingerprint is what this version of assay makes of its config:
    else its results were made under another protocol (another assay version's prompts or
    checker), which the merged run's fingerprint would not say."""
    if shard.log.fingerprint != fingerprint(shard.config.protocol()):
        raise RunError(
            f"{shard.run_dir / RUN_FILE}: its fingerprint {shard.log.fingerprint} is not what "
            f"this assay ({shard.log.assay_version} made it) computes from its config; its "
            "prompts or checker differ from this version's",
            hint="merge with the assay version that ran the shards",
        )


def _one_calibration(shards: Sequence[ShardRun]) -> bytes | None:
    """The calibration file the shards kept: one and the same in every shard, or none."""
    found = {
        shard.run_dir: path.read_bytes()
        if (path := shard.run_dir / CALIBRATION_FILE).is_file()
        else None
        for shard in shards
    }
    kinds = set(found.values())
    if len(kinds) > 1:
        with_one = [str(run) for run, data in found.items() if data is not None]
        raise RunError(
            f"the shards keep different calibration files ({CALIBRATION_FILE} in "
            f"{', '.join(with_one)})",
            hint="give every shard the same --calibration, or none and calibrate the merged run",
        )
    return kinds.pop()


def _write_files(shards: Sequence[ShardRun], out_dir: Path, calibration: bytes | None) -> None:
    """results.jsonl and run_log.jsonl as the shards' lines one after another (a shard's
    superseded lines included: the history stays), skipped records once (the file's), and the
    calibration file."""
    _concatenate([shard.run_dir / RESULTS_FILE for shard in shards], out_dir / RESULTS_FILE)
    _concatenate([shard.run_dir / RUN_LOG_FILE for shard in shards], out_dir / RUN_LOG_FILE)
    skipped = shards[0].run_dir / SKIPPED_FILE
    if skipped.is_file():
        _concatenate([skipped], out_dir / SKIPPED_FILE)
    if calibration is not None:
        (out_dir / CALIBRATION_FILE).write_bytes(calibration)


def _concatenate(sources: Sequence[Path], target: Path) -> None:
    with target.open("w", encoding="utf-8") as out:
        for source in sources:
            for line in _lines(source):
                out.write(line + "\n")


def _lines(path: Path) -> Iterator[str]:
    return (line for _, line in read_numbered_lines(path))


def _merged_log(shards: Sequence[ShardRun], config: BenchmarkConfig) -> RunLog:
    first = shards[0].log
    return RunLog(
        kind="bench",
        status="success",
        ended_at=utc_now(),
        fingerprint=fingerprint(config.protocol()),
        models=first.models,
        decoding=first.decoding,
        sample_count=sum(shard.log.sample_count for shard in shards),
        finished_count=sum(shard.log.finished_count for shard in shards),
        served=combined_served(shard.log.served for shard in shards),
        config=config.public_dump(),
        merged_from=[_origin(shard) for shard in sorted(shards, key=lambda s: s.shard.index)],
    )


def _origin(shard: ShardRun) -> dict[str, Any]:
    log = shard.log
    return {
        "run_dir": str(shard.run_dir),
        "shard": str(shard.shard),
        "fingerprint": log.fingerprint,
        "assay_version": log.assay_version,
        "platform": log.platform,
        "started_at": log.started_at,
        "ended_at": log.ended_at,
        "results": shard.results,
        "models": log.models,
    }
