"""`assay batch import` with damaged batch input files, and into a locked batch directory:
one located error line each, exit 2, nothing imported. The input files are the ones a real
`generate --executor batch` session writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.cli import main
from assay.model import ResponseCache, input_files
from assay.runs import RunDirLock
from tests.judge.helpers import write_questions

HINT = "  hint: restore the file as the run wrote it, or move it out of the batch directory"


@pytest.fixture
def batch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """(the batch directory of a session, an output file answering its first request)."""
    questions = write_questions(tmp_path / "questions.jsonl")
    command = ["generate", "--questions", str(questions), "--model", "openai/m"]
    command += ["--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "out")]
    command += ["--cache-path", str(tmp_path / "c.sqlite"), "--executor", "batch"]
    assert main([*command, "--batch-dir", str(tmp_path / "b")]) == 3
    capsys.readouterr()
    (written,) = input_files(tmp_path / "b")
    first = json.loads(written.read_text(encoding="utf-8").splitlines()[0])["custom_id"]
    reply = {"choices": [{"message": {"role": "assistant", "content": "yes"}}]}
    answer = {"custom_id": first, "response": {"status_code": 200, "body": reply}, "error": None}
    output = tmp_path / "output.jsonl"
    output.write_text(json.dumps(answer) + "\n", encoding="utf-8")
    return tmp_path / "b", output


def _import(batch: tuple[Path, Path]) -> list[str]:
    return ["batch", "import", "--batch-dir", str(batch[0]), str(batch[1])]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (b"garbage line\n", "not a batch request: not JSON (Expecting value at column 1)"),
        (b'{"method": "POST"}\n', "field 'custom_id': not a batch request: no custom_id"),
        (b'["custom_id"]\n', "not a batch request: not a JSON object"),
        (b'{"custom_id": "caf\xe9"}\n', "not UTF-8 text (byte 19 of the line)"),
    ],
)
def test_a_damaged_input_line_is_one_located_error(
    batch: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    line: bytes,
    problem: str,
) -> None:
    (written,) = input_files(batch[0])
    count = len(written.read_bytes().splitlines())
    with written.open("ab") as handle:
        handle.write(line)
    assert main([*_import(batch), "--cache-path", str(tmp_path / "c.sqlite")]) == 2
    err = capsys.readouterr().err.splitlines()
    # custom_id names the field: InputError puts it after the line
    where = f"{written}:{count + 1}"
    expected = (
        f"error: {where} {problem}" if problem.startswith("field") else f"error: {where}: {problem}"
    )
    assert err == [expected, HINT]
    answered = json.loads(batch[1].read_text(encoding="utf-8"))["custom_id"]
    assert ResponseCache(tmp_path / "c.sqlite").get(answered) is None  # nothing imported


def test_a_torn_last_line_is_still_left_out(
    batch: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (written,) = input_files(batch[0])
    with written.open("ab") as handle:
        handle.write(b'{"custom_id": "torn", "meth')  # a session killed mid-write
    assert main([*_import(batch), "--cache-path", str(tmp_path / "c.sqlite")]) == 0
    assert "imported 1 answer(s) and 0 error(s)" in capsys.readouterr().out
    answered = json.loads(batch[1].read_text(encoding="utf-8"))["custom_id"]
    assert ResponseCache(tmp_path / "c.sqlite").get(answered) is not None


def test_a_whole_last_request_without_its_newline_is_a_request(
    batch: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A session killed between a request line and its newline asked that request: an answer
    to it is imported, not skipped as an unknown custom_id."""
    (written,) = input_files(batch[0])
    data = written.read_bytes()
    written.write_bytes(data.removesuffix(b"\n"))
    last = json.loads(data.splitlines()[-1])["custom_id"]
    reply = {"choices": [{"message": {"role": "assistant", "content": "yes"}}]}
    answer = {"custom_id": last, "response": {"status_code": 200, "body": reply}, "error": None}
    batch[1].write_text(json.dumps(answer) + "\n", encoding="utf-8")
    assert main([*_import(batch), "--cache-path", str(tmp_path / "c.sqlite")]) == 0
    assert "imported 1 answer(s) and 0 error(s)" in capsys.readouterr().out
    assert ResponseCache(tmp_path / "c.sqlite").get(last) is not None


def test_an_import_into_a_locked_batch_directory_says_to_wait(
    batch: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with RunDirLock(batch[0]):  # as a batch session writing requests holds it
        assert main([*_import(batch), "--cache-path", str(tmp_path / "c.sqlite")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"error: {batch[0]} is being written by another assay process")
    assert err[1:] == [
        "  hint: wait for that process to finish (a batch session or an import), then import again"
    ]


def test_an_error_object_is_a_failure_and_a_status_that_is_no_status_is_skipped(
    batch: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (written,) = input_files(batch[0])
    ids = [json.loads(line)["custom_id"] for line in written.read_text().splitlines()]
    reply = {"choices": [{"message": {"role": "assistant", "content": "yes"}}]}
    lines = [
        {"custom_id": ids[0], "response": {"status_code": True, "body": reply}, "error": None},
        {
            "custom_id": ids[1],
            "response": {"status_code": 200, "body": reply},
            "error": {"code": "weird"},
        },
        {
            "custom_id": ids[2],
            "response": {"status_code": 200, "body": reply},
            "error": {"code": "server_error", "message": "boom"},
        },
        {"custom_id": ids[3], "response": {"status_code": 200, "body": reply}, "error": True},
    ]
    output = tmp_path / "output.jsonl"
    output.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    cache_path = tmp_path / "c.sqlite"
    assert main([*_import((batch[0], output)), "--cache-path", str(cache_path)]) == 1
    captured = capsys.readouterr()
    assert "imported 0 answer(s) and 2 error(s)" in captured.out
    assert captured.out.splitlines()[-1].startswith("next: run the command that wrote the")
    assert captured.err.splitlines() == [
        f"  skipped {output}:1: status_code true is not an HTTP status",
        f"  skipped {output}:4: error true is not an error object",
    ]
    cache = ResponseCache(cache_path)
    assert cache.get(ids[0]) is None and cache.take_failure(ids[0]) is None  # asked again
    weird, boom = cache.take_failure(ids[1]), cache.take_failure(ids[2])
    assert weird is not None and weird.message == "batch: batch error weird: (no detail given)"
    assert weird.kind.value == "backend"
    assert boom is not None and boom.message == "batch: batch error server_error: boom"
    assert boom.kind.value == "server_error"


def test_an_import_of_which_no_line_could_be_used_is_bad_input(
    batch: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 1 is for an import done in part (some lines skipped, the rest imported), as for a
    run with failed calls; files of which nothing could be imported are bad input, exit 2."""
    cache = ["--cache-path", str(tmp_path / "c.sqlite")]
    other = tmp_path / "other"  # a batch directory of other requests
    other.mkdir()
    (other / "input-0001.jsonl").write_text('{"custom_id": "elsewhere"}\n', encoding="utf-8")
    assert main(["batch", "import", "--batch-dir", str(other), str(batch[1]), *cache]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"error: {batch[1]}:1: unknown custom_id '")
    assert err[0].endswith("': no request of the batch directory has it; nothing was imported")
    assert err[1].startswith(f"  hint: no input file of {other} asked for these custom_ids")
    assert len(err) == 2

    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not json\n{}\n", encoding="utf-8")
    assert main(["batch", "import", "--batch-dir", str(batch[0]), str(garbage), *cache]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"error: {garbage}:1: not JSON (Expecting value: line 1 column 1 (char 0)) (and 1 more "
        "line(s) skipped); nothing was imported",
        "  hint: give the output (and error) file of a finished batch of this directory's requests",
    ]
    assert main([*_import(batch), *cache]) == 0  # the right pair imports
