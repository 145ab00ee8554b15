"""The error contract of the commands (docs/errors.md): bad input is one clear error naming
the file, line and field, exit code 2, a traceback only with --debug (same exit code), and
options named as the user typed them. Real files on disk, real command invocations."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from assay.cli import build_parser, main
from tests.judge.helpers import write_manifest, write_questions

ROOT = Path(__file__).resolve().parents[1]
LABELLED = ROOT / "examples" / "grounded_qa_labelled.jsonl"

Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Cli:
    def run(*args: str | Path) -> tuple[int, str, str]:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def assay(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay.cli", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        timeout=300,
    )


def one_error(err: str) -> str:
    """The one error line of stderr (no traceback, nothing printed twice)."""
    assert "Traceback" not in err
    assert "internal error" not in err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err
    return errors[0]


# ------------------------------------------------------------------ --debug keeps the exit code


def test_debug_shows_the_traceback_and_keeps_exit_code_2(tmp_path: Path) -> None:
    data = tmp_path / "f.jsonl"
    lines = LABELLED.read_text(encoding="utf-8").splitlines()[:2]
    data.write_text("\n".join([*lines, "[1, 2]"]) + "\n", encoding="utf-8")
    plain = assay("perturb", "--data", data, "--out", tmp_path / "p.jsonl")
    debug = assay("--debug", "perturb", "--data", data, "--out", tmp_path / "p.jsonl")
    assert plain.returncode == debug.returncode == 2
    assert "Traceback" not in plain.stderr and "Traceback" in debug.stderr
    assert f"{data}:3: expected a JSON object, got an array" in debug.stderr
    assert not (tmp_path / "p.jsonl").exists()


# ------------------------------------------------------- options named as the user typed them


def _numeric_options(*command: str) -> list[tuple[str, bool]]:
    """(option string, is an integer) of every int/float option of a command."""
    parser = build_parser(list(command))
    for name in command:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    found = []
    for action in parser._actions:
        if action.type in (int, float) and action.option_strings:
            found.append((action.option_strings[-1], action.type is int))
    return found


class _Stop(BaseException):  # not caught by the command as an internal error
    pass


def _stop(*_args: object, **_kwargs: object) -> None:
    raise _Stop


@pytest.mark.parametrize("command", [("generate",), ("judge", "run"), ("bench", "run")])
def test_an_option_out_of_range_is_named_as_typed(
    command: tuple[str, ...], tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import assay.cli._judge as judge_cli
    import assay.verify.benchmark as benchmark

    monkeypatch.setattr(judge_cli, "run_judges", _stop)
    monkeypatch.setattr(judge_cli, "generate_outputs", _stop)
    monkeypatch.setattr(benchmark, "run_benchmark", _stop)
    questions = write_questions(tmp_path / "q.jsonl")
    manifest = write_manifest(tmp_path / "m.jsonl", ["stub/a"])
    base: list[str | Path] = {
        ("generate",): ["--questions", questions, "--model", "stub/a"],
        ("judge", "run"): ["--questions", questions, "--outputs", manifest, "--judge", "stub/j"],
        ("bench", "run"): ["--data", LABELLED, "--pattern", "entailment", "--verifier", "lexical"],
    }[command]
    out = ["--out_dir" if command == ("bench", "run") else "--out", tmp_path / "run"]
    options = _numeric_options(*command)
    assert len(options) >= 8
    refused = 0
    for option, integer in options:
        for value in ("0", "-1") if integer else ("-1", "nan"):
            try:
                code, _, err = cli(*command, *base, *out, option, value)
            except _Stop:
                continue  # accepted: the run would start
            except SystemExit as exit_:  # argparse refused the value
                code, err = int(str(exit_.code)), ""
                continue
            assert code == 2, (option, value, err)
            line = one_error(err)
            assert line.startswith(f"error: {option}: "), (option, value, line)
            refused += 1
    assert refused >= 5


def test_each_misnamed_option_of_the_audit_is_named_as_typed(tmp_path: Path, cli: Cli) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    manifest = write_manifest(tmp_path / "m.jsonl", ["stub/a"])
    judge = ["judge", "run", "--questions", questions, "--outputs", manifest, "--judge", "stub/j"]
    bench = ["bench", "run", "--data", LABELLED, "--pattern", "entailment", "--verifier", "lexical"]
    cases = [
        (judge, "--judge-attempts", "0"),
        (judge, "--concurrency", "0"),
        (judge, "--timeout", "-1"),
        (judge, "--judge-max-tokens", "0"),
        (bench, "--checker-votes", "0"),
        (bench, "--concurrency", "0"),
        (bench, "--timeout", "-1"),
        (bench, "--max-tokens", "0"),
    ]
    for command, option, value in cases:
        out = "--out_dir" if command is bench else "--out"
        code, _, err = cli(*command, out, tmp_path / "run", option, value)
        assert code == 2
        assert one_error(err).startswith(f"error: {option}: "), err
    assert not (tmp_path / "run").exists()


def test_threshold_nan_says_it_must_be_a_number_in_0_1(tmp_path: Path) -> None:
    process = assay(
        "bench", "run", "--data", LABELLED, "--pattern", "entailment", "--verifier", "lexical",
        "--out_dir", tmp_path / "run", "--threshold", "nan",
    )  # fmt: skip
    assert process.returncode == 2
    assert one_error(process.stderr) == "error: --threshold: must be a number in [0, 1], got nan"
    assert not (tmp_path / "run").exists()
