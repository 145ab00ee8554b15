"""Another run's archived records added to a run's archive as they are stored.

A merge of judge-run shards has read and checked every record already; encoding each one
again only to store what the shard stored cost most of the merge. Records are stored the same
way in every run of one layout and fingerprint, so they are copied instead: in the sharded
layout each shard line as its bytes (its texts are referenced by the SHA-256 of their content,
the same in every run), and the blob lines the target lacks; in the per-file layout each
record's file. The copy reads exactly the lines every reader takes (complete ones) and writes
through the same append-only writers as :class:`~.archive.Archive`, so a merged archive is
one a ``judge run`` resumes.

The caller checks: every record of ``source`` readable, of the target's fingerprint and
layout, and none of them archived in the target already (the merge's shards hold distinct
questions).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..errors import RunError
from ..runs import atomic_temp, inside
from .archive import INVALID_DIR, VALID_DIR, ArchiveLayout
from .archive_shards import BlobStore, ShardStore, shard_files, shard_lines

_ARCHIVES = (VALID_DIR, INVALID_DIR)


def copy_archived(source: Path, target: Path, layout: ArchiveLayout) -> int:
    """Copy the records archived in run directory ``source`` into ``target``'s archive (made
    by :meth:`~.archive.Archive.open`, of ``layout``); returns how many."""
    if layout == "shards":
        return _copy_shard_lines(source, target)
    return _copy_record_files(source, target)


def _copy_shard_lines(source: Path, target: Path) -> int:
    blobs = BlobStore(target, keep_texts=False)
    shards = ShardStore()
    copied = 0
    try:
        blobs.copy_missing(source)  # before the lines that refer to them, as a writer does
        for name in _ARCHIVES:
            for part in shard_files(source / name):
                directory = _same_place(source / name, target / name, part.parent)
                for _, line in shard_lines(part):
                    # the bytes read (surrogateescape gives back any the file had)
                    shards.append_raw(directory, line.encode("utf-8", "surrogateescape"))
                    copied += 1
    finally:
        shards.close()
        blobs.close()
    return copied


def _copy_record_files(source: Path, target: Path) -> int:
    copied = 0
    for name in _ARCHIVES:
        archive = source / name
        for path in sorted(archive.rglob("*.json")) if archive.is_dir() else []:
            destination = _same_place(archive, target / name, path.parent) / path.name
            if destination.exists():
                raise RunError(f"an evaluation for this attempt is already archived: {destination}")
            destination.parent.mkdir(parents=True, exist_ok=True)
            temporary = atomic_temp(destination)  # whole or absent, as the archive writes it
            shutil.copyfile(path, temporary)
            os.replace(temporary, destination)
            copied += 1
    return copied


def _same_place(source_archive: Path, target_archive: Path, directory: Path) -> Path:
    """``directory`` of the source archive, at the same place under the target archive."""
    return inside(target_archive, *directory.relative_to(source_archive).parts)
