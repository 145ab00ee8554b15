"""The progress line of generate and judge run counts the calls that failed after every retry
(it said `failed 0` whatever happened). A loopback server answers every call with HTTP 500."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assay.cli import main
from tests.helpers.fault_server import SERVER_ERROR, fault_server
from tests.judge.helpers import write_manifest, write_questions

LINE = re.compile(r"^(?P<what>[a-z ()]+): (?P<done>\d+)/(?P<total>\d+) .* failed (?P<failed>\d+)$")


def progress_lines(err: str, what: str) -> list[tuple[int, int, int]]:
    """(done, total, failed) of each progress line of ``what`` in ``err``."""
    found = []
    for line in err.splitlines():
        match = LINE.match(line)
        if match and match["what"] == what:
            found.append((int(match["done"]), int(match["total"]), int(match["failed"])))
    return found


def failing_options(base_url: str, tmp_path: Path) -> list[str]:
    return ["--base-url", base_url, "--max-attempts", "1", "--cache-path", str(tmp_path / "c")]


def test_generate_counts_its_failed_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "questions.jsonl")
    with fault_server([SERVER_ERROR]) as server:
        command = ["generate", "--questions", str(questions), "--out", str(tmp_path / "out")]
        command += ["--model", "stub/a", "--model", "openai/m"]
        assert main([*command, *failing_options(server.base_url, tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "4 failed calls" in captured.out
    assert progress_lines(captured.err, "generate")[-1] == (8, 8, 4)


def test_judge_run_counts_its_failed_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "questions.jsonl")
    manifest = write_manifest(tmp_path / "manifest.jsonl", ["stub/t0"])
    with fault_server([SERVER_ERROR]) as server:
        command = ["judge", "run", "--questions", str(questions), "--outputs", str(manifest)]
        command += ["--judge", "openai/m", "--out", str(tmp_path / "run")]
        assert main([*command, *failing_options(server.base_url, tmp_path)]) == 1
    done, total, failed = progress_lines(capsys.readouterr().err, "judge")[-1]
    assert done == total == failed > 0  # every pair's call failed
