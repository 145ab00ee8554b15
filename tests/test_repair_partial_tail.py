"""``repair_partial_tail``: the crash recovery of append-only JSONL files."""

from __future__ import annotations

import json
from pathlib import Path

from assay.runs import JsonlWriter, read_jsonl, repair_partial_tail


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_a_torn_last_line_is_cut_back_to_the_last_whole_line(tmp_path: Path) -> None:
    whole = b'{"id": 1}\n{"id": 2}\n'
    path = _write(tmp_path / "r.jsonl", whole + b'{"id": 3, "te')
    assert repair_partial_tail(path) == len(b'{"id": 3, "te')
    assert path.read_bytes() == whole


def test_a_file_holding_only_a_torn_line_becomes_empty(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", b'{"id": 1, "text": "half')
    assert repair_partial_tail(path) == 23
    assert path.read_bytes() == b""


def test_an_empty_file_and_a_missing_file_are_left_alone(tmp_path: Path) -> None:
    empty = _write(tmp_path / "empty.jsonl", b"")
    assert repair_partial_tail(empty) == 0 and empty.read_bytes() == b""
    missing = tmp_path / "missing.jsonl"
    assert repair_partial_tail(missing) == 0 and not missing.exists()


def test_a_valid_file_is_untouched(tmp_path: Path) -> None:
    data = "".join(
        json.dumps({"id": i, "text": "é ✓"}, ensure_ascii=False) + "\n" for i in range(3)
    )
    path = _write(tmp_path / "r.jsonl", data.encode("utf-8"))
    before = path.stat().st_mtime_ns
    assert repair_partial_tail(path) == 0
    assert path.read_text(encoding="utf-8") == data and path.stat().st_mtime_ns == before


def test_a_multi_byte_character_cut_in_half_goes_with_its_line(tmp_path: Path) -> None:
    whole = '{"id": 1, "text": "naïve"}\n'.encode()
    torn = '{"id": 2, "text": "✓'.encode()[:-1]  # two of the check mark's three bytes
    path = _write(tmp_path / "r.jsonl", whole + torn)
    assert repair_partial_tail(path) == len(torn)
    assert path.read_bytes() == whole
    assert [r["text"] for r in read_jsonl(path)] == ["naïve"]


def test_a_writer_reopened_after_a_crash_appends_after_the_last_whole_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", b'{"id": 1}\n{"id": 2, "tor')
    with JsonlWriter(path) as writer:
        writer.append({"id": 2})
    assert [r["id"] for r in read_jsonl(path)] == [1, 2]
    assert path.read_bytes().count(b"\n") == 2
