"""Run directories keep their integrity against bad files and mismatched reruns: every case is
a real file on disk and a real ``assay`` invocation; each ends in one located error, exit 2,
and nothing written (docs/errors.md, "Run directories")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.cli import main

from .conftest import REPO_ROOT

DATA = REPO_ROOT / "examples" / "grounded_qa_labelled.jsonl"
QUESTIONS = REPO_ROOT / "examples" / "judge" / "questions.jsonl"
STUB = ["--generator", "stub/demo", "--verifier", "stub/demo", "--oracle", "stub/oracle"]
QUIET = ["--no-cache", "--no-progress", "--no-report", "--n-resamples", "20"]
GENERATE = ["generate", "--questions", str(QUESTIONS), "--model", "stub/t", "--no-cache"]


def _generate(out: Path, *options: str) -> int:
    """`assay generate` of the example questions with the stub model into ``out``."""
    return main([*GENERATE, "--out", str(out), *options])


def _bench_run(data: Path, out: Path, *extra: str) -> int:
    args = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--n", "2"]
    return main([*args, "--out_dir", str(out), *STUB, *QUIET, *extra])


def _learned_run(data: Path, out: Path, *extra: str) -> int:
    args = ["bench", "run", "--data", str(data), "--pattern", "entailment"]
    return main([*args, "--verifier", "learned", "--out_dir", str(out), *QUIET, *extra])


def _tree(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` with its bytes: what "nothing written" compares."""
    return {
        str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """B1: a finished bench run over the labelled example file."""
    run = tmp_path_factory.mktemp("integrity") / "B1"
    assert _bench_run(DATA, run) == 0
    return run


@pytest.fixture()
def run_copy(finished: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "X"
    shutil.copytree(finished, copy)
    return copy


@pytest.fixture(scope="module")
def calibration(finished: Path) -> Path:
    out = finished.parent / "cal.json"
    assert main(["bench", "calibrate", str(finished), "--out", str(out)]) == 0
    return out


def _first_lines(path: Path, count: int) -> Path:
    lines = DATA.read_text(encoding="utf-8").splitlines(keepends=True)[:count]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _spoil(calibration: Path, target: Path, **changes: object) -> Path:
    data = json.loads(calibration.read_text(encoding="utf-8"))
    for key, value in changes.items():
        if value is None:
            del data[key]
        else:
            data[key] = value
    target.write_text(json.dumps(data), encoding="utf-8")
    return target


# ------------------------------------------------------------------ 1. calibration files


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"threshold": 1.7}, "field 'threshold': Input should be less than or equal to 1"),
        ({"raw_threshold": -0.2}, "field 'raw_threshold'"),
        ({"knots_y": [0.5, 0.9]}, "field 'knots_y': 2 knots, but knots_x has 5"),
        ({"knots_x": [0.9, 0.1, 0.5, 0.6, 0.7]}, "field 'knots_x': the knots must be non-decr"),
        ({"knots_y": [0.5, 1.5, 1.6, 1.7, 1.8]}, "field 'knots_y.1'"),
        ({"schema_version": 7}, "field 'schema_version': 7 is not a version this assay reads"),
    ],
)
def test_a_bad_calibration_file_stops_bench_run_before_any_work(
    calibration: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    changes: dict[str, object],
    message: str,
) -> None:
    bad = _spoil(calibration, tmp_path / "bad.json", **changes)
    run = tmp_path / "R"
    data = _first_lines(tmp_path / "five.jsonl", 5)
    assert _learned_run(data, run, "--calibration", str(bad)) == 2
    err = capsys.readouterr().err
    assert f"error: {bad}: {message}" in err, err
    assert "internal error" not in err and "Traceback" not in err
    assert not run.exists()  # nothing written, no run directory made
    # and the same file given to summarize is refused before it enters a run
    assert _learned_run(data, run) == 0
    before = _tree(run)
    assert main(["bench", "summarize", str(run), "--calibration", str(bad)]) == 2
    assert message in capsys.readouterr().err
    assert _tree(run) == before
    assert _learned_run(data, run) == 0  # the run still resumes


@pytest.mark.parametrize("kind", ["missing", "directory", "latin1", "not_json"])
def test_an_unreadable_calibration_file_is_one_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    path = tmp_path / "cal.json"
    if kind == "directory":
        path.mkdir()
    elif kind == "latin1":
        path.write_bytes(b'{"kind": "assay.calibration", "dev_run": "caf\xe9"}')
    elif kind == "not_json":
        path.write_text("{oops", encoding="utf-8")
    data = _first_lines(tmp_path / "five.jsonl", 5)
    assert _learned_run(data, tmp_path / "R", "--calibration", str(path)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}") and "internal error" not in err
    assert not (tmp_path / "R").exists()


def test_summarize_checks_its_options_before_writing(
    run_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _tree(run_copy)
    assert main(["bench", "summarize", str(run_copy), "--by", "meta."]) == 2
    assert "--by 'meta.'" in capsys.readouterr().err
    assert _tree(run_copy) == before


# ------------------------------------------------------------------ 2. one kind per directory


def test_judge_run_and_generate_refuse_a_bench_run_directory(
    run_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = tmp_path / "outputs"
    assert _generate(outputs) == 0
    capsys.readouterr()
    before = _tree(run_copy)
    assert _generate(run_copy) == 2
    assert f"{run_copy} holds a 'bench' run, not a generate run" in capsys.readouterr().err
    judge = ["judge", "run", "--questions", str(QUESTIONS), "--outputs", str(outputs)]
    assert main([*judge, "--judge", "stub/j", "--no-cache", "--out", str(run_copy)]) == 2
    assert f"{run_copy} holds a 'bench' run, not a judge run" in capsys.readouterr().err
    assert _tree(run_copy) == before
    assert _bench_run(DATA, run_copy) == 0  # still resumable: nothing to do
    assert "71 already done" in capsys.readouterr().out
    # and the other way round: bench into generate's outputs
    assert _bench_run(DATA, outputs) == 2
    assert "holds a 'generate' run, not a bench run" in capsys.readouterr().err


def test_a_judge_archive_without_run_json_is_not_taken_for_another_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    judge_dir = tmp_path / "judge"
    (judge_dir / "valid_evaluations").mkdir(parents=True)
    assert _bench_run(DATA, judge_dir) == 2
    assert "holds the output of a 'judge' run" in capsys.readouterr().err


# ------------------------------------------------------------------ 3. run.json missing or bad


def test_results_without_run_json_are_not_resumed(
    run_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (run_copy / "run.json").unlink()
    before = _tree(run_copy)
    assert _learned_run(DATA, run_copy) == 2
    err = capsys.readouterr().err
    assert f"{run_copy / 'run.json'}: missing, but {run_copy / 'results.jsonl'}" in err
    assert _tree(run_copy) == before


@pytest.mark.parametrize("text", ["{bad", "[1, 2]", '{"kind": 3}'])
def test_a_corrupt_run_json_is_a_located_error(
    run_copy: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    (run_copy / "run.json").write_text(text, encoding="utf-8")
    before = _tree(run_copy)
    for command in (
        ["bench", "run", "--data", str(DATA), "--pattern", "entailment", "--n", "2", *STUB,
         *QUIET, "--out_dir", str(run_copy)],
        ["bench", "summarize", str(run_copy), "--no-plots"],
        ["judge", "analyze", str(run_copy)],
    ):  # fmt: skip
        assert main(command) == 2, command
        err = capsys.readouterr().err
        assert err.startswith(f"error: {run_copy / 'run.json'}"), err
    assert _tree(run_copy) == before


# ------------------------------------------------------------------ 4. same input, same settings


def test_resume_refuses_other_data_and_changed_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    assert _bench_run(DATA, run, "--max_examples", "10") == 0
    # a longer prefix of the same file, and the same file again, resume
    assert _bench_run(DATA, run, "--max_examples", "20") == 0
    assert "10 already done" in capsys.readouterr().out
    longer = _first_lines(tmp_path / "thirty.jsonl", 30)  # another file, the same records
    assert _bench_run(longer, run) == 0
    assert "20 already done" in capsys.readouterr().out
    before = _tree(run)
    # another dataset
    assert _bench_run(REPO_ROOT / "examples" / "grounded_qa.jsonl", run) == 2
    err = capsys.readouterr().err
    assert "has no valid record" in err and f"{run / 'results.jsonl'}:1 holds" in err
    # the same ids, one record changed
    lines = longer.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[11])
    record["gold_error"] = not record["gold_error"]
    lines[11] = json.dumps(record)
    changed = tmp_path / "changed.jsonl"
    changed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _bench_run(changed, run) == 2
    err = capsys.readouterr().err
    assert f"{changed}:12: record {record['id']!r} is not the one" in err
    assert _tree(run) == before


def test_generate_refuses_other_decoding_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "outputs"
    assert _generate(out) == 0
    before = _tree(out)
    for option, value in (
        ("--max-tokens", "100"),
        ("--temperature", "0.9"),
        ("--system-prompt", "be brief"),
    ):
        assert _generate(out, option, value) == 2
        err = capsys.readouterr().err
        assert f"{out}: its outputs were generated with other settings: {option}" in err
    assert _tree(out) == before
    assert _generate(out) == 0
    assert "0 outputs (8 already there" in capsys.readouterr().out


def _edited_questions(tmp_path: Path) -> tuple[Path, str]:
    """The example question set with the first question's first prompt reworded."""
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    variant = next(iter(first["variants"]))  # variants keyed by their label
    first["variants"][variant]["prompt"] += " Answer in one sentence."
    edited = tmp_path / "questions.jsonl"
    edited.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    return edited, f"{first['question_id']!r} variant {variant!r}"


def test_generate_refuses_outputs_of_a_prompt_edited_under_the_same_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each manifest line keeps its prompt's fingerprint; a rerun after the prompt was edited
    would otherwise find the cell done and keep an answer to the old prompt."""
    out = tmp_path / "outputs"
    generate = ["generate", "--model", "stub/t", "--no-cache", "--out", str(out)]
    assert main([*generate, "--questions", str(QUESTIONS)]) == 0
    manifest = [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]
    assert all(len(entry["prompt_hash"]) == 16 for entry in manifest)
    edited, cell = _edited_questions(tmp_path)
    capsys.readouterr()
    before = _tree(out)
    assert main([*generate, "--questions", str(edited)]) == 2
    err = capsys.readouterr().err
    assert f"{out / 'manifest.jsonl'}:1 field 'prompt_hash': the output for question {cell}" in err
    assert "answered another prompt than the question set now gives" in err
    assert "Traceback" not in err
    assert _tree(out) == before
    # a manifest written before outputs recorded their prompt still resumes (nothing to do)
    old = "".join(
        json.dumps({k: v for k, v in entry.items() if k != "prompt_hash"}) + "\n"
        for entry in manifest
    )
    (out / "manifest.jsonl").write_text(old, encoding="utf-8")
    assert main([*generate, "--questions", str(edited)]) == 0
    assert "0 outputs (8 already there" in capsys.readouterr().out


def test_generate_names_a_damaged_manifest_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A manifest line edited by hand is checked as judge run checks it, before any call."""
    out = tmp_path / "outputs"
    assert _generate(out) == 0
    manifest = out / "manifest.jsonl"
    lines = manifest.read_text(encoding="utf-8").splitlines()
    damaged = json.loads(lines[1])
    del damaged["question_id"]
    lines[1] = json.dumps(damaged)
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    capsys.readouterr()
    before = _tree(out)
    assert _generate(out) == 2
    err = capsys.readouterr().err
    assert f"{manifest}:2 field 'question_id': Field required" in err
    assert "Traceback" not in err and "internal error" not in err
    assert _tree(out) == before


def test_judge_run_refuses_outputs_of_an_edited_prompt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = tmp_path / "outputs"
    assert _generate(outputs) == 0
    edited, cell = _edited_questions(tmp_path)
    judge = ["judge", "run", "--outputs", str(outputs), "--judge", "stub/j", "--no-cache"]
    capsys.readouterr()
    assert main([*judge, "--questions", str(edited), "--out", str(tmp_path / "judged")]) == 2
    err = capsys.readouterr().err
    assert f"field 'prompt_hash': the output for question {cell}" in err
    assert f"{outputs / 'manifest.jsonl'}:" in err and "Traceback" not in err
    assert not (tmp_path / "judged").exists()  # refused while the outputs are surveyed
    assert main([*judge, "--questions", str(QUESTIONS), "--out", str(tmp_path / "ok")]) == 0


# ------------------------------------------------------------------ 5, 6. corrupt results lines


@pytest.mark.parametrize(
    ("inserted", "message"),
    [("this is garbage {", "invalid JSON"), ("[1,2]", "expected a JSON object, got an array")],
)
def test_a_corrupt_results_line_is_a_located_error_for_every_reader(
    run_copy: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    inserted: str,
    message: str,
) -> None:
    results = run_copy / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    results.write_text("".join([*lines[:30], inserted + "\n", *lines[30:]]), encoding="utf-8")
    before = _tree(run_copy)
    for command in (
        ["bench", "summarize", str(run_copy)],
        ["report", str(run_copy), "--out", str(tmp_path / "r.html")],
        ["export", str(run_copy), "--out", str(tmp_path / "x.csv")],
        ["bench", "compare", str(run_copy)],
        ["bench", "calibrate", str(run_copy), "--out", str(tmp_path / "c.json")],
        ["bench", "run", "--data", str(DATA), "--pattern", "entailment", "--n", "2", *STUB,
         *QUIET, "--out_dir", str(run_copy)],
    ):  # fmt: skip
        assert main(command) == 2, command
        err = capsys.readouterr().err
        assert f"error: {results}:31: {message}" in err, (command, err)
    assert _tree(run_copy) == before


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ("NaN", "verifier_score"),
        ("Infinity", "verifier_score"),
        ("-Infinity", "claim_checks[0].p_supported"),
    ],
)
def test_a_non_finite_score_is_named_by_every_reader(
    run_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, field: str
) -> None:
    """Python's json reads NaN and Infinity; the error names them, not the bound NaN fails."""
    results = run_copy / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    line = json.loads(lines[4])
    if field == "verifier_score":
        line["verifier_score"] = float(value)
    else:
        line["claim_checks"][0]["p_supported"] = float(value)
    lines[4] = json.dumps(line) + "\n"
    results.write_text("".join(lines), encoding="utf-8")
    before = _tree(run_copy)
    for command in (
        ["bench", "summarize", str(run_copy)],
        ["report", str(run_copy), "--out", str(tmp_path / "r.html")],
        ["export", str(run_copy), "--out", str(tmp_path / "x.csv")],
        ["bench", "compare", str(run_copy)],
        ["bench", "calibrate", str(run_copy), "--out", str(tmp_path / "c.json")],
    ):
        assert main(command) == 2, command
        assert capsys.readouterr().err == (
            f"error: {results}:5 field '{field}': {value} is not a number assay accepts "
            "(give a finite number)\n"
        ), command
    assert _tree(run_copy) == before
    assert not list(tmp_path.glob("[rxc].*"))


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("gold_error", "true", "Input should be a valid boolean"),
        ("gold_error", 1, "Input should be a valid boolean"),
        ("verifier_score", "0.4", "Input should be a valid number"),
        ("threshold", "0.5", "Input should be a valid number"),
    ],
)
def test_a_result_value_of_the_wrong_json_type_is_refused_not_cast(
    run_copy: Path, capsys: pytest.CaptureFixture[str], field: str, value: object, message: str
) -> None:
    """assay writes each field with its own JSON type; a hand edit that wrote "true" or "0.5"
    is refused, where a lax read took "true" for true and counted the answer as an error."""
    results = run_copy / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    line = json.loads(lines[4])
    lines[4] = json.dumps({**line, field: value}) + "\n"
    results.write_text("".join(lines), encoding="utf-8")
    assert main(["bench", "summarize", str(run_copy), "--no-plots"]) == 2
    assert capsys.readouterr().err == f"error: {results}:5 field '{field}': {message}\n"


def test_a_result_holding_a_lone_surrogate_is_still_read(
    run_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model may answer with a lone surrogate, which pydantic's JSON parser refuses: such a
    line is still read, its types checked all the same; the report and CSV show U+FFFD in
    its place (UTF-8 cannot hold it) and JSONL export keeps it exactly (was: internal
    error)."""
    results = run_copy / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    line = json.loads(lines[4])
    lines[4] = json.dumps({**line, "selected_answer": "odd \ud800 text"}) + "\n"
    results.write_text("".join(lines), encoding="utf-8")
    assert main(["bench", "summarize", str(run_copy), "--no-plots"]) == 0, capsys.readouterr()
    assert (run_copy / "report.html").read_text(encoding="utf-8")
    csv_out, jsonl_out = tmp_path / "x.csv", tmp_path / "x.jsonl"
    assert main(["export", str(run_copy), "--out", str(csv_out)]) == 0
    assert "odd \ufffd text" in csv_out.read_text(encoding="utf-8")
    assert main(["export", str(run_copy), "--format", "jsonl", "--out", str(jsonl_out)]) == 0
    rows = [json.loads(row) for row in jsonl_out.read_text(encoding="utf-8").splitlines()]
    assert "odd \ud800 text" in [row["selected_answer"] for row in rows]
    lines[4] = json.dumps({**line, "selected_answer": "odd \ud800", "gold_error": "no"}) + "\n"
    results.write_text("".join(lines), encoding="utf-8")
    assert main(["bench", "summarize", str(run_copy), "--no-plots"]) == 2
    assert "field 'gold_error': Input should be a valid boolean" in capsys.readouterr().err


def test_a_nan_in_run_json_is_named(run_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = json.loads((run_copy / "run.json").read_text(encoding="utf-8"))
    (run_copy / "run.json").write_text(json.dumps({**log, "sample_count": float("nan")}), "utf-8")
    assert main(["bench", "summarize", str(run_copy), "--no-plots"]) == 2
    assert capsys.readouterr().err == (
        f"error: {run_copy / 'run.json'} field 'sample_count': NaN is not a number assay "
        "accepts (give a finite number)\n"
    )


def test_line_numbers_count_blank_lines(run_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = run_copy / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    # two blank lines, then a bad line: physical line 32
    results.write_text("".join([*lines[:29], "\n", "\n", "xx\n", *lines[29:]]), "utf-8")
    assert main(["bench", "summarize", str(run_copy), "--no-plots"]) == 2
    assert f"{results}:32: invalid JSON" in capsys.readouterr().err


def test_summarize_notes_a_half_written_last_line(
    run_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = run_copy / "results.jsonl"
    with results.open("a", encoding="utf-8") as handle:
        handle.write('{"schema_version":1,"id":"half')
    assert main(["bench", "summarize", str(run_copy), "--no-plots"]) == 0
    err = capsys.readouterr().err
    assert f"note: {results}: its last line is unfinished" in err
    assert json.loads((run_copy / "summary.json").read_text())["counts"]["results"] == 71
