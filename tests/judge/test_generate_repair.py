"""`generate` repairs its own output directory: an output file the manifest lists but that is
gone is generated again, from the response cache when it holds the answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.cli import main

from .helpers import write_questions


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def generate(questions: Path, outputs: Path) -> list[str]:
    return [
        *("generate", "--questions", str(questions), "--out", str(outputs)),
        *("--model", "stub/a", "--model", "stub/b"),
    ]


def last_session_usage(outputs: Path) -> dict[str, dict[str, int]]:
    ends = [json.loads(line) for line in (outputs / "run_log.jsonl").read_text().splitlines()]
    usage: dict[str, dict[str, int]] = [e for e in ends if "usage" in e][-1]["usage"]
    return usage


@pytest.fixture
def generated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """A question set and the finished outputs of one generate run over it."""
    questions = write_questions(tmp_path / "q.jsonl")
    outputs = tmp_path / "outputs"
    assert run_cli(generate(questions, outputs), capsys)[0] == 0
    return questions, outputs


def test_a_lost_output_file_is_generated_again_from_the_cache(
    generated: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions, outputs = generated
    manifest = (outputs / "manifest.jsonl").read_bytes()
    victim = outputs / "stub--a" / "Q2__B.txt"
    text = victim.read_text()
    victim.unlink()

    code, out, err = run_cli(generate(questions, outputs), capsys)
    assert code == 0 and "generated 1 outputs (7 already there, 0 failed calls) of 8" in out
    assert f"note: {victim} was missing; generated again" in err
    assert victim.read_text() == text
    assert (outputs / "manifest.jsonl").read_bytes() == manifest  # its line still names it
    usage = last_session_usage(outputs)["stub/a"]
    assert (usage["calls"], usage["cache_hits"]) == (0, 1)  # answered by the response cache

    judge = [
        *("judge", "run", "--questions", str(questions), "--outputs", str(outputs)),
        *("--judge", "stub/j", "--out", str(tmp_path / "run")),
    ]
    assert run_cli(judge, capsys)[0] == 0  # was: manifest.jsonl:N field 'path': not found
    code, out, _ = run_cli(generate(questions, outputs), capsys)
    assert code == 0 and "generated 0 outputs (8 already there" in out


def test_a_lost_model_directory_is_generated_again(
    generated: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    questions, outputs = generated
    kept = {p.name: p.read_text() for p in (outputs / "stub--b").iterdir()}
    for file in (outputs / "stub--b").iterdir():
        file.unlink()
    (outputs / "stub--b").rmdir()
    code, out, _ = run_cli(generate(questions, outputs), capsys)
    assert code == 0 and "generated 4 outputs (4 already there" in out
    assert {p.name: p.read_text() for p in (outputs / "stub--b").iterdir()} == kept


def test_a_lost_file_named_outside_the_directory_is_refused(
    generated: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions, outputs = generated
    lines = (outputs / "manifest.jsonl").read_text().splitlines()
    entry = json.loads(lines[1])
    entry["path"] = "../elsewhere.txt"
    lines[1] = json.dumps(entry)
    (outputs / "manifest.jsonl").write_text("\n".join(lines) + "\n")
    code, _, err = run_cli(generate(questions, outputs), capsys)
    assert code == 2 and "Traceback" not in err
    assert f"{outputs / 'manifest.jsonl'}:2 field 'path': path leads outside" in err
    assert not (tmp_path / "elsewhere.txt").exists()


def test_temporary_files_of_a_killed_run_are_removed_on_resume(
    generated: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A write goes through ``.NAME.PID.tmp``; a run killed between the write and the rename
    leaves it. The next run removes those of dead processes and leaves a live one's alone."""
    import os
    import subprocess
    import sys

    questions, outputs = generated
    script = [sys.executable, "-c", "import os; print(os.getpid())"]
    finished = subprocess.run(script, capture_output=True, text=True, check=True)
    dead = int(finished.stdout)
    left = [
        outputs / "stub--a" / f".Q1__A.txt.{dead}.tmp",
        outputs / "stub--b" / f".target_model.txt.{dead}.tmp",
        outputs / f".run.json.{dead}.tmp",
    ]
    live = outputs / "stub--a" / f".Q1__B.txt.{os.getpid()}.tmp"
    for path in [*left, live]:
        path.write_text("half")

    code, _, err = run_cli(generate(questions, outputs), capsys)
    assert code == 0
    assert not any(path.exists() for path in left) and live.exists()
    assert all(f"note: removed {path}, left by an interrupted run" in err for path in left)


def test_a_run_stopped_by_an_error_is_recorded_as_an_error_with_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An error that stops generate (here a directory where an output file must go) leaves
    run.json saying "error" and why, as judge run and bench run do; "cancelled" is for
    Ctrl-C and SIGTERM. The outputs written before it are kept, and counted."""
    questions = write_questions(tmp_path / "q.jsonl")
    outputs = tmp_path / "outputs"
    (outputs / "stub--b" / "Q2__B.txt").mkdir(parents=True)
    code, _, err = run_cli(generate(questions, outputs), capsys)
    assert code != 0 and "Is a directory" in err
    run = json.loads((outputs / "run.json").read_text())
    assert run["status"] == "error"
    assert run["error"].startswith("IsADirectoryError: ") and "Q2__B.txt" in run["error"]
    written = len((outputs / "manifest.jsonl").read_text().splitlines())
    assert run["finished_count"] == written > 0
