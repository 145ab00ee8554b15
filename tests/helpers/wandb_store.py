"""The records of a W&B run as the W&B SDK wrote them to its run file (``run-ID.wandb``), read
with the SDK's own protocol-buffer classes: what ``wandb sync`` would send.

The file is a log of 32 KiB blocks after a 7-byte header (``:W&B``, a magic number, a version);
each record is a 7-byte header (checksum, length, kind: whole, first, middle or last piece)
and its bytes, and a block's tail shorter than a header is padding.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BLOCK = 32768
HEADER = 7
WHOLE, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def raw_records(path: Path) -> Iterator[bytes]:
    data = path.read_bytes()
    assert data[:4] == b":W&B", f"{path}: not a W&B run file"
    position, pending = HEADER, b""
    while position + HEADER <= len(data):
        left = BLOCK - position % BLOCK
        if left < HEADER:  # padding to the block's end
            position += left
            continue
        _checksum, length, kind = struct.unpack("<IHB", data[position : position + HEADER])
        piece = data[position + HEADER : position + HEADER + length]
        position += HEADER + length
        if kind == WHOLE:
            yield piece
        elif kind == FIRST:
            pending = piece
        elif kind == MIDDLE:
            pending += piece
        elif kind == LAST:
            yield pending + piece
            pending = b""


@dataclass
class OfflineRun:
    """What one offline run file holds: the run, its config and summary, its artifacts."""

    run_id: str = ""
    name: str = ""
    project: str = ""
    job_type: str = ""
    tags: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    artifacts: list[tuple[str, str, list[str]]] = field(default_factory=list)  # name, type, files
    kinds: list[str] = field(default_factory=list)  # every record's kind, in order
    path: Path | None = None


def read_offline_run(path: Path) -> OfflineRun:
    from wandb.proto import wandb_internal_pb2

    run = OfflineRun(path=path)
    for raw in raw_records(path):
        record = wandb_internal_pb2.Record()  # type: ignore[attr-defined]
        record.ParseFromString(raw)
        kind = record.WhichOneof("record_type")
        run.kinds.append(str(kind))
        if kind == "run":
            item = record.run
            run.run_id, run.name, run.project = item.run_id, item.display_name, item.project
            run.job_type, run.tags = item.job_type, list(item.tags)
            run.config.update({u.key: json.loads(u.value_json) for u in item.config.update})
        elif kind == "config":
            run.config.update({u.key: json.loads(u.value_json) for u in record.config.update})
        elif kind == "summary":
            run.summary.update(
                {u.key: json.loads(u.value_json) for u in record.summary.update if u.key}
            )
        elif kind == "artifact":
            files = [entry.path for entry in record.artifact.manifest.contents]
            run.artifacts.append((record.artifact.name, record.artifact.type, files))
    return run


def offline_runs(wandb_dir: Path) -> list[OfflineRun]:
    """Every offline run under ``WANDB_DIR``, in the order they finished (their folders'
    names sort by the second they started, then by run id)."""
    import wandb

    wandb.teardown()  # the SDK's service writes run files behind the runs: wait for it
    found = (wandb_dir / "wandb").glob("offline-run-*/run-*.wandb")
    files = sorted(found, key=lambda path: path.stat().st_mtime_ns)
    return [read_offline_run(path) for path in files]
