"""`judge analyze` and `judge validate` on real run directories: they refuse a run being
written (its lock), and analyze checks every option and file before it writes anything."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.cli import main

from .helpers import QUESTIONS_JSONL, write_manifest, write_questions

HOLD = """
import sys, time
from pathlib import Path
from assay.runs import RunDirLock
lock = RunDirLock(Path(sys.argv[1])).acquire()
print("locked", flush=True)
time.sleep(120)
"""


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def contents(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


@pytest.fixture
def run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A finished stub judge run whose questions carry a meta key with '/' in it."""
    rows = [{**question, "meta": {"sub/x": f"v{i}"}} for i, question in enumerate(QUESTIONS_JSONL)]
    questions = write_questions(tmp_path / "q.jsonl", rows)
    outputs = write_manifest(tmp_path / "m.jsonl", ["stub/a", "stub/b"])
    command = ["judge", "run", "--questions", str(questions), "--outputs", str(outputs)]
    command += ["--judge", "stub/a", "--judge", "stub/b", "--out", str(tmp_path / "run")]
    assert run_cli(command, capsys)[0] == 0
    return tmp_path / "run"


@pytest.fixture
def held(run: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the run's lock, as `judge run` does while it writes."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(run)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "locked"
    yield process
    process.kill()
    process.wait()


@pytest.mark.parametrize("command", [["analyze", "--no-plots", "--no-report"], ["validate"]])
def test_a_run_being_written_is_refused_with_the_locks_message(
    run: Path,
    held: subprocess.Popen[str],
    capsys: pytest.CaptureFixture[str],
    command: list[str],
) -> None:
    before = contents(run)
    code, out, err = run_cli(["judge", command[0], str(run), *command[1:]], capsys)
    assert code == 2 and out == "" and "Traceback" not in err
    assert f"error: {run} is being written by another assay process: pid {held.pid}" in err
    assert contents(run) == before  # no summary.json from a partial archive

    held.kill()
    held.wait()
    code, out, _ = run_cli(["judge", command[0], str(run), *command[1:]], capsys)
    assert code == 0, out
    assert not (run / ".assay.lock").exists()  # released
