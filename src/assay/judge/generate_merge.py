"""``assay merge`` of ``assay generate --shard K/N`` output directories: the outputs of every
shard in one directory, as an unsharded ``generate`` would have written them.

Every check comes before the first write: the shards are N distinct shards of one count, of
the same question set (the same number of cells), made with the same target models and the
same decoding; each ended ``success``, lists in its manifest an output for every cell of its
questions that did not fail, and none of another shard's; every output file its manifest names
is there. The merged directory is then an ordinary output directory: ``judge run --outputs``
reads it, and ``generate`` without ``--shard`` resumes it (asking again only for the cells
whose calls failed).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..data.questions import MANIFEST_NAME, TARGET_NAME_FILE, confine, manifest_entry
from ..errors import RunError
from ..runs import fingerprint, read_numbered_jsonl
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
from .generate import FAILURES_NAME, GenerateSettings

Cell = tuple[str, str, str]  # question, variant, target model


@dataclass(frozen=True)
class GeneratedShard:
    read: ShardLog
    settings: GenerateSettings
    files: tuple[str, ...]  # the output files its manifest names, relative to its folder
    outputs: int  # cells with an output
    failed: int  # cells whose calls failed (no output)


@dataclass(frozen=True)
class GenerateMergeReport:
    out_dir: Path
    shards: int
    outputs: int
    failed: int


def merge_generated(shard_dirs: Sequence[Path], out_dir: Path) -> GenerateMergeReport:
    """Check the shards, then write ``out_dir`` as one output directory."""
    check_merge_target(out_dir, shard_dirs)
    shards = [_read_shard(run_dir) for run_dir in shard_dirs]
    reads = [shard.read for shard in shards]
    merged = _merged_settings(shards)  # first: other models make other numbers of cells
    check_shard_set(reads)
    with writing_merge(out_dir, shard_dirs):
        ordered = sorted(shards, key=lambda shard: shard.read.shard.index)
        for shard in ordered:
            _copy_outputs(shard, out_dir)
        concatenate([s.read.run_dir / MANIFEST_NAME for s in ordered], out_dir / MANIFEST_NAME)
        concatenate([s.read.run_dir / FAILURES_NAME for s in ordered], out_dir / FAILURES_NAME)
        log = merged_run_log(
            reads,
            kind="generate",
            fingerprint=fingerprint(merged.protocol()),
            config=merged.model_dump(mode="json"),
        )
        write_merged_log(reads, out_dir, log)
    return GenerateMergeReport(
        out_dir=out_dir,
        shards=len(shards),
        outputs=sum(shard.outputs for shard in shards),
        failed=sum(shard.failed for shard in shards),
    )


def _read_shard(run_dir: Path) -> GeneratedShard:
    read = read_shard_log(run_dir, "generate")
    settings = shard_config(read, GenerateSettings, GenerateSettings.protocol)
    manifest = run_dir / MANIFEST_NAME
    done: set[Cell] = set()
    files: list[str] = []
    for number, data in read_numbered_jsonl(manifest):
        entry = manifest_entry(data, manifest, number)
        refuse_foreign(read, entry.question_id, f"{manifest}:{number}: question")
        done.add((entry.question_id, entry.prompt_variant, entry.target_model))
        if entry.path is not None:
            file = run_dir / entry.path
            confine(file, manifest, number)
            if not file.is_file():
                raise RunError(
                    f"{manifest}:{number}: its output file {file} is missing",
                    hint="run the shard's command again: it writes a missing output again",
                )
            files.append(str(entry.path))
    failed = _failed_cells(run_dir, read) - done
    if len(done) + len(failed) != read.log.sample_count:
        raise RunError(
            f"{run_dir}: shard {read.shard} has outputs for {len(done)} and failed calls for "
            f"{len(failed)} of its {read.log.sample_count} cells",
            hint="run the shard's command again to finish it (outputs waiting on batch "
            "answers need `assay batch import` first)",
        )
    return GeneratedShard(read, settings, tuple(files), len(done), len(failed))


def _failed_cells(run_dir: Path, read: ShardLog) -> set[Cell]:
    path = run_dir / FAILURES_NAME
    cells = set()
    for number, data in read_numbered_jsonl(path):
        cell = (str(data.get("question_id")), str(data.get("prompt_variant")))
        refuse_foreign(read, cell[0], f"{path}:{number}: question")
        cells.add((*cell, str(data.get("target_model"))))
    return cells


def _merged_settings(shards: Sequence[GeneratedShard]) -> GenerateSettings:
    """The unsharded run's settings, once the shards are shown to share them and their
    target models."""
    first = shards[0]
    unsharded = first.settings.model_copy(update={"shard": None})
    for shard in shards:
        if shard.settings.model_copy(update={"shard": None}).protocol() != unsharded.protocol():
            raise RunError(
                f"{shard.read.run_dir}: generated with other settings than "
                f"{first.read.run_dir} (temperature, top-p, max tokens, seed or system prompt)",
                hint="merge the shards of one run: one command, with --shard K/N for each K",
            )
        if set(shard.read.log.models) != set(first.read.log.models):
            raise RunError(
                f"{shard.read.run_dir}: generated by other target models ("
                f"{', '.join(sorted(shard.read.log.models))}) than {first.read.run_dir} ("
                f"{', '.join(sorted(first.read.log.models))})",
                hint="give every shard the same --model options",
            )
    return unsharded


def _copy_outputs(shard: GeneratedShard, out_dir: Path) -> None:
    """Each output file, and each target folder's file naming its model."""
    folders = set()
    for relative in shard.files:
        target = out_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shard.read.run_dir / relative, target)
        folders.add(Path(relative).parent)
    for folder in folders:
        name_file = shard.read.run_dir / folder / TARGET_NAME_FILE
        if name_file.is_file():
            shutil.copyfile(name_file, out_dir / folder / TARGET_NAME_FILE)
