"""The judge commands end to end on stub models, and their error handling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.cli import main

from .helpers import write_manifest, write_questions


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_bad_question_line_is_one_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    with questions.open("a") as handle:
        handle.write('{"question_id": "Q3", "variants": [{"variant": "A", "promt": "x"}]}\n')
    for command in (
        [
            "generate",
            "--questions",
            str(questions),
            "--model",
            "stub/a",
            "--out",
            str(tmp_path / "o"),
        ],
        [
            "judge",
            "run",
            "--questions",
            str(questions),
            "--outputs",
            str(tmp_path),
            "--judge",
            "stub/a",
            "--out",
            str(tmp_path / "r"),
        ],
    ):
        code, _, err = run_cli(command, capsys)
        assert code == 2
        assert f"{questions}:3 field 'variants[0].prompt'" in err
        assert "Traceback" not in err and err.count("error:") == 1
    assert not (tmp_path / "o").exists() and not (tmp_path / "r").exists()


def test_bad_manifest_line_is_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    manifest = tmp_path / "m.jsonl"
    manifest.write_text('{"question_id": "Q1", "prompt_variant": "A", "target_model": "m"}\n')
    code, _, err = run_cli(
        [
            "judge",
            "run",
            "--questions",
            str(questions),
            "--outputs",
            str(manifest),
            "--judge",
            "stub/a",
            "--out",
            str(tmp_path / "r"),
        ],
        capsys,
    )
    assert code == 2 and f"{manifest}:1" in err and "text" in err


def test_stub_pipeline_generate_judge_validate_analyze(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = str(write_questions(tmp_path / "q.jsonl"))
    outputs, run = str(tmp_path / "outputs"), str(tmp_path / "run")
    code, out, _ = run_cli(
        [
            "generate",
            "--questions",
            questions,
            "--model",
            "stub/a",
            "--model",
            "stub/b",
            "--out",
            outputs,
        ],
        capsys,
    )
    assert code == 0 and "generated 8 outputs" in out
    judge_run = [
        "judge",
        "run",
        "--questions",
        questions,
        "--outputs",
        outputs,
        "--judge",
        "stub/a",
        "--judge",
        "stub/b",
        "--mode",
        "both",
        "--out",
        run,
    ]
    code, out, _ = run_cli(judge_run, capsys)
    assert code == 0 and "judged 16 sample x judge pairs" in out
    code, out, _ = run_cli(judge_run, capsys)
    assert code == 0 and "16 already finished, 0 attempts now, 0 model calls" in out

    code, out, _ = run_cli(["judge", "validate", run], capsys)
    assert code == 0 and "16 evaluations" in out and out.rstrip().endswith("consistent")
    code, out, _ = run_cli(["judge", "analyze", run, "--resamples", "200"], capsys)
    assert code == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["kind"] == "judge" and summary["counts"]["work_items"] == 16
    assert {"cross_judge", "self_judge"} == {row["method"] for row in summary["scores"]}
    assert (tmp_path / "run" / "results_analysis.md").is_file()
    assert len(summary["plots"]) == 3 and all(Path(p).is_file() for p in summary["plots"])

    code, out, err = run_cli([*judge_run, "--judge-max-tokens", "99"], capsys)
    assert code == 2 and "fingerprint" in err and "Traceback" not in err
    assert out == ""  # only the error: no coverage line before it


@pytest.mark.parametrize("layout", ["shards", "files"])
def test_validate_reports_inconsistency(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], layout: str
) -> None:
    questions = str(write_questions(tmp_path / "q.jsonl"))
    outputs, run = str(tmp_path / "outputs"), tmp_path / "run"
    run_cli(["generate", "--questions", questions, "--model", "stub/a", "--out", outputs], capsys)
    run_cli(
        [
            "judge",
            "run",
            "--questions",
            questions,
            "--outputs",
            outputs,
            "--judge",
            "stub/j",
            "--out",
            str(run),
            "--archive-layout",
            layout,
        ],
        capsys,
    )
    code, out, _ = run_cli(["judge", "validate", str(run)], capsys)
    assert code == 0 and "consistent" in out
    if layout == "files":
        victim = next((run / "valid_evaluations").rglob("*.json"))
        victim.rename(run / "invalid_evaluations" / victim.name)
    else:  # move one line of a valid shard into an invalid shard
        shard = next((run / "valid_evaluations").rglob("part-*.jsonl"))
        first, *rest = shard.read_text().splitlines(keepends=True)
        shard.write_text("".join(rest))
        (run / "invalid_evaluations" / "part-00000.jsonl").write_text(first)
    code, out, _ = run_cli(["judge", "validate", str(run)], capsys)
    assert code == 1 and "in the wrong archive" in out and "NOT consistent" in out


def test_missing_outputs_refuse_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = str(write_questions(tmp_path / "q.jsonl"))
    outputs = tmp_path / "outputs"
    run_cli(
        ["generate", "--questions", questions, "--model", "stub/a", "--out", str(outputs)], capsys
    )
    lines = (outputs / "manifest.jsonl").read_text().splitlines()
    (outputs / "manifest.jsonl").write_text("\n".join(lines[1:]) + "\n")
    base = [
        "judge",
        "run",
        "--questions",
        questions,
        "--outputs",
        str(outputs),
        "--judge",
        "stub/j",
        "--out",
        str(tmp_path / "run"),
    ]
    code, out, err = run_cli(base, capsys)
    assert code == 2 and "missing 1" in err and "--allow-incomplete" in err and out == ""
    code, out, _ = run_cli([*base, "--allow-incomplete"], capsys)
    assert code == 0 and "judged 3 sample x judge pairs" in out
    code, _, _ = run_cli(["judge", "analyze", str(tmp_path / "run"), "--no-plots"], capsys)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert code == 0 and summary["coverage"]["aligned"] == 3
    report = (tmp_path / "run" / "results_analysis.md").read_text()
    assert "**incomplete**" in report and "missing: Q1 x A x stub/a" in report


def test_date_pins_the_requests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`judge run --date` is the date every request carries; a second run with the same date
    asks exactly the same requests (all answered by the response cache), another date does not."""
    from assay.judge.archive import iter_archive

    questions = write_questions(tmp_path / "q.jsonl")
    manifest = write_manifest(tmp_path / "m.jsonl", ["stub/a", "stub/b"])
    base = ["judge", "run", "--questions", str(questions), "--outputs", str(manifest)]
    base += ["--judge", "stub/j"]

    def judge(out: str, date: str) -> str:
        code, printed, _ = run_cli([*base, "--date", date, "--out", str(tmp_path / out)], capsys)
        assert code == 0
        return printed

    judge("first", "2020-02-29")
    assert ", 0 model calls)" in judge("again", "2020-02-29")
    assert ", 0 model calls)" not in judge("other", "2020-03-01")
    for out, date in (("first", "2020-02-29"), ("other", "2020-03-01")):
        records = [i.record for i in iter_archive(tmp_path / out) if i.record is not None]
        asked = [m.content for r in records for m in r.messages if m.role == "user"]
        assert len(asked) == len(records) == 8
        assert all(f'"timestamp": "{date}"' in text for text in asked)


def test_a_bad_date_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    command = ["judge", "run", "--questions", str(questions), "--outputs", str(tmp_path)]
    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--judge", "stub/j", "--date", "29/02/2020", "--out", str(tmp_path / "r")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--date" in err and "expected a date as YYYY-MM-DD, got '29/02/2020'" in err
    assert "Traceback" not in err and not (tmp_path / "r").exists()
