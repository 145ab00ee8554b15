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

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import RunError
from ..runs import fingerprint
from ..runs.shards import (
    ShardLog,
    check_merge_target,
    check_shard_set,
    concatenate,
    merged_run_log,
    read_shard_log,
    refuse_foreign,
    shard_config,
    write_merged_log,
    writing_merge,
)
from .benchmark import SKIPPED_FILE, BenchmarkConfig
from .calibration import CALIBRATION_FILE
from .results import RESULTS_FILE, iter_numbered_results


@dataclass(frozen=True)
class BenchShard:
    """One shard's directory as the merge reads it."""

    read: ShardLog
    config: BenchmarkConfig
    results: int  # ids with a current result
    incomplete: int  # of them, examples whose model calls failed


@dataclass(frozen=True)
class BenchMergeReport:
    out_dir: Path
    shards: int
    results: int
    incomplete: int


def merge_bench(shard_dirs: Sequence[Path], out_dir: Path) -> BenchMergeReport:
    """Check the shards, then write ``out_dir`` as one run (results, logs, summary.json)."""
    from .summary import write_summary

    check_merge_target(out_dir, shard_dirs)
    shards = [_read_shard(run_dir) for run_dir in shard_dirs]
    check_shard_set([shard.read for shard in shards])
    merged = _merged_config(shards, out_dir)
    calibration = _one_calibration(shards)
    with writing_merge(out_dir, shard_dirs):
        _write_files(shards, out_dir, calibration)
        log = merged_run_log(
            [shard.read for shard in shards],
            kind="bench",
            fingerprint=fingerprint(merged.protocol()),
            config=merged.public_dump(),
        )
        write_merged_log([shard.read for shard in shards], out_dir, log)
        write_summary(out_dir, config=merged.public_dump())
    return BenchMergeReport(
        out_dir=out_dir,
        shards=len(shards),
        results=sum(shard.results for shard in shards),
        incomplete=sum(shard.incomplete for shard in shards),
    )


def _read_shard(run_dir: Path) -> BenchShard:
    """A shard's run.json and results, checked: a finished bench run of ``--shard`` whose
    every record has a result, and whose every result is of its shard."""
    read = read_shard_log(run_dir, "bench")
    config = shard_config(read, BenchmarkConfig, BenchmarkConfig.protocol)
    where = run_dir / RESULTS_FILE
    current: dict[str, bool] = {}  # each id's current result: complete or not
    for number, result in iter_numbered_results(where):
        refuse_foreign(read, result.cluster, f"{where}:{number}: record {result.id!r} of question")
        current[result.id] = result.complete
    if len(current) != read.log.sample_count:
        raise RunError(
            f"{run_dir}: shard {read.shard} has results for {len(current)} of its "
            f"{read.log.sample_count} records",
            hint="run the shard's command again to finish it (examples waiting on batch "
            "answers need `assay batch import` first)",
        )
    return BenchShard(
        read=read,
        config=config,
        results=len(current),
        incomplete=sum(not complete for complete in current.values()),
    )


def _merged_config(shards: Sequence[BenchShard], out_dir: Path) -> BenchmarkConfig:
    """The unsharded run's config, once the shards are shown to share one protocol."""
    first = shards[0]
    unsharded = fingerprint(_unsharded(first.config).protocol())
    for shard in shards:
        if fingerprint(_unsharded(shard.config).protocol()) != unsharded:
            raise RunError(
                f"{shard.read.run_dir}: made with other settings than {first.read.run_dir} "
                "(pattern, models, n, seed, threshold, revision or decoding differ)",
                hint="merge the shards of one run: one command, with --shard K/N for each K",
            )
    return first.config.model_copy(update={"shard": None, "out_dir": out_dir})


def _unsharded(config: BenchmarkConfig) -> BenchmarkConfig:
    return config.model_copy(update={"shard": None})


def _one_calibration(shards: Sequence[BenchShard]) -> bytes | None:
    """The calibration file the shards kept: one and the same in every shard, or none."""
    found = {}
    for shard in shards:
        path = shard.read.run_dir / CALIBRATION_FILE
        found[shard.read.run_dir] = path.read_bytes() if path.is_file() else None
    kinds = set(found.values())
    if len(kinds) > 1:
        with_one = [str(run) for run, data in found.items() if data is not None]
        raise RunError(
            f"the shards keep different calibration files ({CALIBRATION_FILE} in "
            f"{', '.join(with_one)})",
            hint="give every shard the same --calibration, or none and calibrate the merged run",
        )
    return kinds.pop()


def _write_files(shards: Sequence[BenchShard], out_dir: Path, calibration: bytes | None) -> None:
    """results.jsonl as the shards' lines one after another (a shard's superseded lines
    included: the history stays), skipped records once (the file's), the calibration file."""
    ordered = sorted(shards, key=lambda shard: shard.read.shard.index)
    concatenate([shard.read.run_dir / RESULTS_FILE for shard in ordered], out_dir / RESULTS_FILE)
    skipped = ordered[0].read.run_dir / SKIPPED_FILE
    if skipped.is_file():
        concatenate([skipped], out_dir / SKIPPED_FILE)
    if calibration is not None:
        (out_dir / CALIBRATION_FILE).write_bytes(calibration)
