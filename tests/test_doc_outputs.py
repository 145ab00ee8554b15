"""The outputs the docs quote, from the commands they give, run as written on the examples.

Each test reads the commands and the quoted output from the doc itself, so a change to either
that parts them fails here."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assay.cli import main

REPO_ROOT = Path(__file__).resolve().parents[1]
DOCS = REPO_ROOT / "docs"


def fenced_blocks(doc: str, after: str) -> list[str]:
    """The fenced blocks of ``doc`` from the heading or sentence ``after`` on."""
    text = (DOCS / doc).read_text(encoding="utf-8")
    section = text.split(after, 1)[1]
    return re.findall(r"^```[a-z]*\n(.*?)^```", section, re.DOTALL | re.MULTILINE)


def commands(block: str) -> list[list[str]]:
    """The shell commands of a block, continuation lines joined, comments dropped."""
    joined = block.replace("\\\n", " ")
    return [shlex.split(line, comments=True) for line in joined.splitlines() if line.strip()]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    assert argv[0] == "assay"
    code = main(argv[1:])
    return code, capsys.readouterr().out


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh directory holding the repository's examples, with a response cache of its own
    (the quoted lines count model calls, which another test's cache would answer)."""
    shutil.copytree(REPO_ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def test_the_judge_quick_start_prints_what_judge_md_quotes(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script, quoted = fenced_blocks("judge.md", "## Quick start without a model")[:2]
    generate, judge_run, validate, analyze = commands(script)
    assert run(generate, capsys)[0] == 0
    code, judged = run(judge_run, capsys)
    assert code == 0
    code, checked = run(validate, capsys)
    assert code == 0
    assert (judged + checked).splitlines() == quoted.splitlines()
    assert run(analyze, capsys)[0] == 0

    # "Running the same `assay judge run` again prints ..."
    assert "(32 already finished, 0 attempts now, 0 model calls)" in run(judge_run, capsys)[1]
    # "another date gives another draw (`2026-11-25`: 28 valid, 4 invalid)"
    other_day = [*judge_run[:-3], "run-25", "--date", "2026-11-25"]
    assert judge_run[-3:-2] == ["run"] and "28 valid, 4 invalid" in run(other_day, capsys)[1]


def test_a_reclassified_record_is_reported_as_judge_md_quotes(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = fenced_blocks("judge.md", "## Quick start without a model")[0]
    for argv in commands(script)[:2]:
        assert run(argv, capsys)[0] == 0
    quoted = fenced_blocks("judge.md", "A record that\ndiffers is listed")[0]
    shard = workdir / "run/valid_evaluations/cross_judge/stub--model-a/stub--model-b"
    lines = (shard / "part-00000.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    record = json.loads(lines[0])
    scores, classification = record["classification"]["scores"], record["classification"]
    # the values the doc says the quick start's first line holds, raised by one
    assert (scores["INSTRUCTION_COMPLIANCE"], classification["overall_score"]) == (1, 4)
    scores["INSTRUCTION_COMPLIANCE"], classification["overall_score"] = 2, 5
    lines[0] = json.dumps(record) + "\n"
    (shard / "part-00000.jsonl").write_text("".join(lines), encoding="utf-8")
    code, printed = run(["assay", "judge", "validate", "run"], capsys)
    assert code == 1
    assert printed.splitlines() == quoted.splitlines()


def test_the_money_line_of_export_md(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """export.md: the judge quick start judged again into a new --out (same --date) with a table
    of "stub/*": {input: 1, output: 2}."""
    script = fenced_blocks("judge.md", "## Quick start without a model")[0]
    generate, judge_run = commands(script)[:2]
    assert run(generate, capsys)[0] == 0
    assert run(judge_run, capsys)[0] == 0
    again = [*judge_run[:-3], "run-again", *judge_run[-2:]]
    assert "0 model calls" in run(again, capsys)[1]
    Path("prices.yaml").write_text('models:\n  "stub/*": {input: 1, output: 2}\n')
    quoted = fenced_blocks("export.md", "judged again into a new `--out`")[0]
    code, printed = run(
        ["assay", "judge", "analyze", "run-again", "--prices", "prices.yaml"], capsys
    )
    assert code == 0
    assert quoted.strip() in printed.splitlines()


def test_the_bench_quick_start_prints_what_verify_md_quotes(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script, quoted = fenced_blocks("verify.md", "No model at all")[:2]
    (argv,) = commands(script)
    code, printed = run(argv, capsys)
    assert code == 0
    # The time per claim check is the machine's; everything else is the run's.
    timed = re.compile(r"[0-9.]+ ms per claim check")
    assert timed.sub("T", printed).splitlines() == timed.sub("T", quoted).splitlines()


def console_session(block: str) -> list[tuple[list[str], list[str]]]:
    """(argv, the lines it printed) for each ``$ `` line of a console block."""
    session: list[tuple[list[str], list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            session.append((shlex.split(line[2:]), []))
        else:
            session[-1][1].append(line)
    return session


def test_the_table_worked_example_prints_what_importers_md_quotes(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log, console, record = fenced_blocks("importers.md", "### Worked example: a table of your")[:3]
    (workdir / "rag_log.jsonl").write_text(log, encoding="utf-8")
    session = console_session(console)
    assert [argv[1:3] for argv, _ in session] == [["import", "table"], ["bench", "run"]]
    timed = re.compile(r"[0-9.]+ ms per claim check")
    for argv, quoted in session:
        code, printed = run(argv, capsys)
        assert code == 0
        assert timed.sub("T", printed).splitlines() == [timed.sub("T", q) for q in quoted]
    first = (workdir / "rag_records.jsonl").read_text(encoding="utf-8").splitlines()[0]
    assert json.loads(first) == json.loads(record)


def test_the_check_grounding_example_prints_what_importers_md_quotes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, quoted = fenced_blocks("importers.md", "## In your own code: `assay.check_grounding`")[:2]
    exec(compile(code, "importers.md", "exec"), {})  # the doc's own example, as written
    assert capsys.readouterr().out == quoted


@pytest.mark.parametrize(
    ("example", "after"),
    [
        ("langchain_guard.py", "**In a LangChain chain**"),
        ("mlflow_rag_eval.py", "**A traced RAG app**"),
    ],
)
def test_an_example_prints_what_importers_md_quotes(example: str, after: str) -> None:
    (block,) = fenced_blocks("importers.md", after)[:1]
    command, *quoted = block.splitlines()
    assert command == f"$ .venv/bin/python examples/{example}"
    ran = subprocess.run(
        [sys.executable, str(REPO_ROOT / "examples" / example)],
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    assert ran.stdout.splitlines() == quoted
