"""A judge run resumes only on the inputs it judged: an output text or a question's task
changed under the same ids is refused, naming the input and the archived record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.cli import main

from .helpers import QUESTIONS_JSONL, write_manifest, write_questions


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def judge_command(questions: Path, outputs: Path, run: Path) -> list[str]:
    return [
        *("judge", "run", "--questions", str(questions), "--outputs", str(outputs)),
        *("--judge", "stub/a", "--judge", "stub/b", "--mode", "both", "--out", str(run)),
        *("--date", "2026-01-01"),
    ]


def snapshot(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


def shard_lines(run: Path) -> list[tuple[Path, int, dict[str, object]]]:
    return [
        (shard, number, json.loads(line))
        for shard in sorted(run.rglob("part-*.jsonl"))
        for number, line in enumerate(shard.read_text().splitlines(), start=1)
    ]


@pytest.fixture
def generated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path, Path]:
    """A question set, its outputs from `generate`, and a finished judge run of them."""
    questions = write_questions(tmp_path / "q.jsonl")
    outputs, run = tmp_path / "outputs", tmp_path / "run"
    command = ["generate", "--questions", str(questions), "--out", str(outputs)]
    assert run_cli([*command, "--model", "stub/a", "--model", "stub/b"], capsys)[0] == 0
    assert run_cli(judge_command(questions, outputs, run), capsys)[0] == 0
    return questions, outputs, run


def test_an_edited_output_is_refused_naming_it_and_the_record(
    generated: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    questions, outputs, run = generated
    victim = outputs / "stub--a" / "Q1__A.txt"
    kept = victim.read_text()
    victim.write_text("CHANGED")
    before = snapshot(run)
    code, _, err = run_cli(judge_command(questions, outputs, run), capsys)
    assert code == 2 and "Traceback" not in err and err.count("error:") == 1
    line = next(
        number
        for number, text in enumerate((outputs / "manifest.jsonl").read_text().splitlines(), 1)
        if json.loads(text)["path"] == "stub--a/Q1__A.txt"
    )
    assert f"error: {outputs / 'manifest.jsonl'}:{line}: the output 'stub--a/Q1__A.txt' " in err
    assert "question 'Q1' variant 'A' (target stub/a) is not the text " in err
    shard, number = next(
        (shard, number)
        for shard, number, data in shard_lines(run)
        if data["output_id"] == "stub--a/Q1__A.txt" and data["judge_model"] == "stub/a"
    )
    assert f"{shard}:{number} holds a judgment of" in err and "new --out" in err
    assert snapshot(run) == before  # nothing written, no model called

    victim.write_text(kept)  # the inputs the run judged: it resumes, and calls no model
    code, out, _ = run_cli(judge_command(questions, outputs, run), capsys)
    assert code == 0 and "16 already finished, 0 attempts now, 0 model calls" in out


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("intent", "explain something else"),
        ("constraints", ["no code", "at most 50 words"]),
        ("required_structure", "a table"),
        ("prompt", "Explain a hash map in one sentence."),
    ],
)
def test_an_edited_task_is_refused_naming_the_question_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: object
) -> None:
    """Inline outputs (no prompt_hash): the judge run itself notices the changed task."""
    questions = write_questions(tmp_path / "q.jsonl")
    outputs = write_manifest(tmp_path / "m.jsonl", ["stub/a", "stub/b"])
    run = tmp_path / "run"
    assert run_cli(judge_command(questions, outputs, run), capsys)[0] == 0
    edited = json.loads(json.dumps(QUESTIONS_JSONL))
    target = edited[0] if field == "intent" else edited[0]["variants"]["A"]
    target[field] = value
    write_questions(questions, edited)
    code, _, err = run_cli(judge_command(questions, outputs, run), capsys)
    assert code == 2 and "Traceback" not in err
    assert f"error: {questions}: question 'Q1' variant 'A' (target stub/a) is not the task " in err
    assert "valid_evaluations" in err or "invalid_evaluations" in err
    assert "prompt, required structure, constraints or intent changed" in err


def test_validate_names_an_edited_evaluated_output(
    generated: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, _, run = generated
    shard, number, data = shard_lines(run)[0]
    data["evaluated_output"] = "not what was judged"
    lines = shard.read_text().splitlines()
    lines[number - 1] = json.dumps(data)
    shard.write_text("\n".join(lines) + "\n")
    code, out, _ = run_cli(["judge", "validate", str(run)], capsys)
    assert code == 1 and f"{shard}:{number} field 'judged.output': stored " in out


def test_an_archive_without_fingerprints_is_not_checked(
    generated: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Records archived before the fingerprints existed have none: the run resumes as it
    did then (documented), the edited output is not noticed."""
    questions, outputs, run = generated
    for shard in {shard for shard, _, _ in shard_lines(run)}:
        rows = [json.loads(line) for line in shard.read_text().splitlines()]
        assert all("judged" in row for row in rows)
        shard.write_text("".join(json.dumps({**row, "judged": None}) + "\n" for row in rows))
    (outputs / "stub--a" / "Q1__A.txt").write_text("CHANGED")
    code, out, _ = run_cli(judge_command(questions, outputs, run), capsys)
    assert code == 0 and "16 already finished, 0 attempts now, 0 model calls" in out
