"""A judge merge copies the shards' records as they are stored (assay.judge.archive_copy):
the merged archive holds every shard's lines byte for byte and each text once, and a shard of
the other layout is stored anew."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from assay.cli import main
from assay.judge.archive import INVALID_DIR, VALID_DIR, load_records
from assay.judge.archive_shards import BLOBS_FILE, shard_files

QUESTIONS = Path(__file__).resolve().parents[2] / "examples" / "judge" / "questions.jsonl"
TARGETS = ["--model", "stub/a", "--model", "stub/b"]
JUDGES = ["--judge", "stub/j1", "--judge", "stub/a", "--mode", "both"]


def _judged_shard(root: Path, index: int, layout: str) -> Path:
    shard = ["--shard", f"{index}/2"]
    outputs, run = root / f"outputs{index}", root / f"judged{index}"
    generate = ["generate", "--questions", str(QUESTIONS), *TARGETS, "--out", str(outputs)]
    assert main([*generate, *shard]) == 0
    judge = ["judge", "run", "--questions", str(QUESTIONS), "--outputs", str(outputs), *JUDGES]
    judge += ["--out", str(run), "--date", "2026-11-26", "--archive-layout", layout, *shard]
    assert main(judge) == 0
    return run


def _archive_lines(run: Path) -> Counter[tuple[str, bytes]]:
    """Every stored line with the archive and shard directory that holds it."""
    lines: Counter[tuple[str, bytes]] = Counter()
    for name in (VALID_DIR, INVALID_DIR):
        for part in shard_files(run / name):
            place = str(part.parent.relative_to(run))
            lines.update((place, line) for line in part.read_bytes().splitlines())
    return lines


def _blob_keys(run: Path) -> list[str]:
    lines = (run / BLOBS_FILE).read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["h"] for line in lines]


def _records(run: Path) -> list[str]:
    return sorted(record.model_dump_json() for record in load_records(run))


def test_shard_lines_are_copied_byte_for_byte_and_texts_once(tmp_path: Path) -> None:
    shards = [_judged_shard(tmp_path, index, "shards") for index in (1, 2)]
    merged = tmp_path / "merged"
    assert main(["merge", *map(str, shards), "--out", str(merged)]) == 0
    assert _archive_lines(merged) == _archive_lines(shards[0]) + _archive_lines(shards[1])
    keys = _blob_keys(merged)
    assert len(keys) == len(set(keys))  # the rubric's texts, in both shards, stored once
    assert set(keys) == set(_blob_keys(shards[0])) | set(_blob_keys(shards[1]))
    shared = set(_blob_keys(shards[0])) & set(_blob_keys(shards[1]))
    assert shared  # the protocol's prompt lines: the case a union has to get right
    assert _records(merged) == sorted(_records(shards[0]) + _records(shards[1]))
    assert main(["judge", "validate", str(merged)]) == 0


@pytest.mark.parametrize("layouts", [("files", "files"), ("files", "shards"), ("shards", "files")])
def test_files_are_copied_and_a_shard_of_the_other_layout_stored_anew(
    layouts: tuple[str, str], tmp_path: Path
) -> None:
    shards = [_judged_shard(tmp_path, k, layout) for k, layout in enumerate(layouts, start=1)]
    merged = tmp_path / "merged"
    assert main(["merge", *map(str, shards), "--out", str(merged)]) == 0
    assert json.loads((merged / "protocol.json").read_text())["layout"] == layouts[0]
    assert _records(merged) == sorted(_records(shards[0]) + _records(shards[1]))
    if layouts[0] == "files":  # the first shard's files, byte for byte, at the same paths
        first = shards[0] / VALID_DIR
        for path in first.rglob("*.json"):
            assert (merged / VALID_DIR / path.relative_to(first)).read_bytes() == path.read_bytes()
    assert main(["judge", "validate", str(merged)]) == 0


def test_a_damaged_blob_line_no_record_needs_is_left_out(tmp_path: Path) -> None:
    shards = [_judged_shard(tmp_path, index, "shards") for index in (1, 2)]
    with (shards[1] / BLOBS_FILE).open("a", encoding="utf-8") as blobs:
        blobs.write('{"h": "not a hash", "t": "x"}\n{"t": "no key"}\n')
    merged = tmp_path / "merged"
    assert main(["merge", *map(str, shards), "--out", str(merged)]) == 0
    keys = _blob_keys(merged)
    assert "not a hash" not in keys and len(keys) == len(set(keys))
    assert _records(merged) == sorted(_records(shards[0]) + _records(shards[1]))
