"""``assay merge`` of ``assay judge run --shard K/N`` run directories: every shard's
evaluations in one archive, as an unsharded ``judge run`` would have archived them.

Every check comes before the first write: the shards are N distinct shards of one count, of
the same question set (the same number of cells), judged under one protocol fingerprint
(rubric, thresholds, prompts, schema, decoding), by the same judges, in the same mode and
with the same number of asks; each ended ``success`` with every one of its pairs finished,
and every archived record is readable and of a question of its shard. The records are then
stored in a new archive in the first shard's layout: copied as the shards stored them (lines
and files; texts that repeat across shards are stored once), or, from a shard of the other
layout, added one by one. The merged directory is an ordinary judge run: ``judge validate``,
``analyze``, ``agreement`` and ``report`` read it, and ``judge run`` without ``--shard`` resumes
it (retrying the pairs whose calls failed).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import RunError
from ..runs import read_state_file, write_atomic
from ..runs.shards import (
    ShardLog,
    check_merge_target,
    check_shard_set,
    merged_run_log,
    read_shard_log,
    refuse_foreign,
    write_merged_log,
    writing_merge,
)
from .archive import Archive, ProtocolState, iter_archive, read_protocol_state
from .archive_copy import copy_archived
from .evalset import CoverageReport
from .run import COVERAGE_FILE, PROMPT_MANIFEST

# run.json config keys that say where and how fast a shard ran, not what its records mean
_PLACE_KEYS = {"shard", "executor", "ray_batch_size", "ray_node_wait_s"}
_UNUSED_METHOD = "Not used in this run."


@dataclass(frozen=True)
class JudgedShard:
    read: ShardLog
    state: ProtocolState
    coverage: CoverageReport
    records: int
    valid: int


@dataclass(frozen=True)
class JudgeMergeReport:
    out_dir: Path
    shards: int
    pairs: int
    records: int
    valid: int


def merge_judged(shard_dirs: Sequence[Path], out_dir: Path) -> JudgeMergeReport:
    """Check the shards, then write ``out_dir`` as one judge run."""
    check_merge_target(out_dir, shard_dirs)
    shards = [_read_shard(run_dir) for run_dir in shard_dirs]
    reads = [shard.read for shard in shards]
    _check_same_run(shards)
    check_shard_set(reads)
    ordered = sorted(shards, key=lambda shard: shard.read.shard.index)
    with writing_merge(out_dir, shard_dirs):
        _copy_records(ordered, out_dir)
        coverage = _merged_coverage([shard.coverage for shard in ordered])
        write_atomic(out_dir / COVERAGE_FILE, coverage.model_dump_json(indent=2))
        shutil.copyfile(_prompt_manifest(ordered), out_dir / PROMPT_MANIFEST)
        first = ordered[0].read.log
        config = {k: v for k, v in first.config.items() if k not in _PLACE_KEYS}
        log = merged_run_log(reads, kind="judge", fingerprint=first.fingerprint, config=config)
        write_merged_log(reads, out_dir, log)
    return JudgeMergeReport(
        out_dir=out_dir,
        shards=len(shards),
        pairs=sum(shard.read.log.sample_count for shard in shards),
        records=sum(shard.records for shard in shards),
        valid=sum(shard.valid for shard in shards),
    )


def _read_shard(run_dir: Path) -> JudgedShard:
    read = read_shard_log(run_dir, "judge")
    log = read.log
    if log.finished_count != log.sample_count:
        raise RunError(
            f"{run_dir}: shard {read.shard} finished {log.finished_count} of its "
            f"{log.sample_count} sample x judge pairs",
            hint="run the shard's command again to finish it (pairs waiting on batch answers "
            "need `assay batch import` first)",
        )
    state = read_protocol_state(run_dir)
    coverage = _coverage(run_dir)
    if state is None or coverage is None:
        missing = "protocol.json" if state is None else COVERAGE_FILE
        raise RunError(f"{run_dir}: no {missing}: not a judge run's directory")
    records = valid = 0
    for item in iter_archive(run_dir, summary_only=True):
        if item.record is None:
            raise RunError(
                f"{item.where}: an unreadable record ({item.error})",
                hint=f"run `assay judge run` on {run_dir} again: it moves the record aside "
                "and judges its sample again",
            )
        refuse_foreign(read, item.record.question_id, f"{item.where}: question")
        records += 1
        valid += item.record.valid
    return JudgedShard(read, state, coverage, records, valid)


def _coverage(run_dir: Path) -> CoverageReport | None:
    path = run_dir / COVERAGE_FILE
    return read_state_file(path, CoverageReport, "the coverage report", "a coverage report")


def _check_same_run(shards: Sequence[JudgedShard]) -> None:
    """One protocol, the same judges, mode and asks: the shards of one command."""
    first = shards[0]
    for shard in shards:
        where = f"{shard.read.run_dir}: judged"
        if shard.state.fingerprint != first.state.fingerprint:
            raise RunError(
                f"{where} under protocol fingerprint {shard.state.fingerprint}, "
                f"{first.read.run_dir} under {first.state.fingerprint} (rubric, thresholds, "
                "prompts, schema or decoding differ)",
                hint="merge the shards of one run: one command, with --shard K/N for each K",
            )
        if set(shard.read.log.models) != set(first.read.log.models):
            raise RunError(
                f"{where} by {', '.join(sorted(shard.read.log.models))}, "
                f"{first.read.run_dir} by {', '.join(sorted(first.read.log.models))}",
                hint="give every shard the same --judge options",
            )
        if _meaning(shard.read.log.config) != _meaning(first.read.log.config):
            raise RunError(
                f"{where} with other settings than {first.read.run_dir} (mode, attempts, "
                "blinding or incomplete coverage allowed)",
                hint="merge the shards of one run: one command, with --shard K/N for each K",
            )


def _meaning(config: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k not in _PLACE_KEYS}


def _copy_records(shards: Sequence[JudgedShard], out_dir: Path) -> None:
    """The shards' records in the first shard's layout: copied as stored from shards of that
    layout, then added one by one (stored anew) from the others, whose adds then see the
    copied records and texts."""
    layout = shards[0].state.layout
    archive = Archive.open(out_dir, shards[0].state)
    try:
        for shard in shards:
            if shard.state.layout == layout:
                copy_archived(shard.read.run_dir, out_dir, layout)
        for shard in shards:
            if shard.state.layout != layout:
                for item in iter_archive(shard.read.run_dir):
                    assert item.record is not None  # every record was read in the checks
                    archive.add(item.record)
    finally:
        archive.close()


def _merged_coverage(reports: Sequence[CoverageReport]) -> CoverageReport:
    """The coverage of the whole question set: the shards' counts summed (each shard counts
    its own questions), their issues one after another."""
    targets: dict[str, None] = {}
    for report in reports:
        targets.update(dict.fromkeys(report.target_models))
    return CoverageReport(
        questions=sum(report.questions for report in reports),
        variants=sum(report.variants for report in reports),
        target_models=tuple(targets),
        expected=sum(report.expected for report in reports),
        aligned=sum(report.aligned for report in reports),
        issues=tuple(issue for report in reports for issue in report.issues),
    )


def _prompt_manifest(shards: Sequence[JudgedShard]) -> Path:
    """The judge prompts as sent, from the first shard that used every method the merged
    run used (else the first shard's)."""
    manifests = [
        path for shard in shards if (path := shard.read.run_dir / PROMPT_MANIFEST).is_file()
    ]
    if not manifests:
        raise RunError(
            f"{shards[0].read.run_dir}: no {PROMPT_MANIFEST}: not a judge run's directory"
        )
    for path in manifests:
        if _UNUSED_METHOD not in path.read_text(encoding="utf-8"):
            return path
    return manifests[0]
