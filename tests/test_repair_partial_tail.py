"""``repair_partial_tail``: the crash recovery of append-only JSONL files (results.jsonl,
the judge archive's shards and blobs): a line cut short is dropped and redone, a whole line
that lacks only its newline is kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.cli import main
from assay.judge.archive import iter_archive
from assay.judge.archive_shards import BLOBS_FILE
from assay.runs import JsonlWriter, partial_tail, read_jsonl, repair_partial_tail
from tests.judge.helpers import write_manifest, write_questions
from tests.verify.bench_fixtures import verify_only_records, write_jsonl


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


def test_a_whole_last_line_without_its_newline_is_kept_and_ended(tmp_path: Path) -> None:
    """A process killed after writing a line and before its newline leaves a whole record:
    readers read it, and the writer adds the newline instead of cutting the record."""
    path = _write(tmp_path / "r.jsonl", b'{"id": 1}\n{"id": 2, "text": "\xc3\xa9"}')
    assert [r["id"] for r in read_jsonl(path)] == [1, 2]
    assert not partial_tail(path)
    assert repair_partial_tail(path) == 0
    assert path.read_bytes() == '{"id": 1}\n{"id": 2, "text": "é"}\n'.encode()
    with JsonlWriter(_write(tmp_path / "w.jsonl", b'{"id": 1}')) as writer:
        writer.append({"id": 2})
    assert (tmp_path / "w.jsonl").read_bytes() == b'{"id": 1}\n{"id": 2}\n'


@pytest.mark.parametrize("tail", [b'{"id": 2', b'{"id": 2}}', b"[2]", b"2", b'"id"'])
def test_a_last_line_that_is_no_whole_object_is_still_cut(tmp_path: Path, tail: bytes) -> None:
    path = _write(tmp_path / "r.jsonl", b'{"id": 1}\n' + tail)
    assert [r["id"] for r in read_jsonl(path)] == [1] and partial_tail(path)
    assert repair_partial_tail(path) == len(tail)
    assert path.read_bytes() == b'{"id": 1}\n'


def test_the_last_line_is_found_across_read_blocks(tmp_path: Path) -> None:
    long = json.dumps({"id": 2, "text": "x" * 200_000}).encode()
    path = _write(tmp_path / "r.jsonl", b'{"id": 1}\n' + long[:-1])
    assert repair_partial_tail(path) == len(long) - 1
    path.write_bytes(b'{"id": 1}\n' + long)
    assert repair_partial_tail(path) == 0 and path.read_bytes().endswith(b'"}\n')


def _drop_final_newline(path: Path) -> None:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    path.write_bytes(data[:-1])


def test_a_resumed_bench_run_keeps_a_whole_result_that_lost_its_newline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(4))
    run = tmp_path / "run"
    command = ["bench", "run", "--data", str(data), "--pattern", "entailment"]
    command += ["--verifier", "lexical", "--out_dir", str(run), "--no-cache", "--no-progress"]
    command += ["--no-report", "--n-resamples", "20"]
    assert main([*command, "--max_examples", "3"]) == 0
    results = run / "results.jsonl"
    before = results.read_bytes()
    _drop_final_newline(results)
    capsys.readouterr()
    assert main(["bench", "summarize", str(run), "--no-plots", "--n-resamples", "20"]) == 0
    assert "unfinished" not in capsys.readouterr().err
    assert json.loads((run / "summary.json").read_text())["counts"]["results"] == 3
    assert main(command) == 0  # the fourth record: appended after the newline now added
    assert "1 run now, 3 already done" in capsys.readouterr().out  # was 2 run now, 2 done
    lines = results.read_bytes().splitlines(keepends=True)
    assert b"".join(lines[:3]) == before and len(lines) == 4 and lines[3].endswith(b"\n")


def test_a_resumed_judge_run_keeps_a_whole_evaluation_that_lost_its_newline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    manifest = write_manifest(tmp_path / "manifest.jsonl", ["stub/a", "stub/b"])
    run = tmp_path / "judge"
    command = ["judge", "run", "--questions", str(questions), "--outputs", str(manifest)]
    command += ["--judge", "stub/j", "--mode", "cross", "--out", str(run)]
    assert main(command) == 0
    shard = sorted(run.glob("*_evaluations/**/part-*.jsonl"))[-1]
    before = [item.record for item in iter_archive(run)]
    _drop_final_newline(shard)
    _drop_final_newline(run / BLOBS_FILE)
    assert [item.record for item in iter_archive(run)] == before
    capsys.readouterr()
    assert main(command) == 0
    assert "0 attempts now, 0 model calls" in capsys.readouterr().out
    assert [item.record for item in iter_archive(run)] == before
