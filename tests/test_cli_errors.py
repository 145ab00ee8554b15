"""The error contract of the commands (docs/errors.md): bad input is one clear error naming
the file, line and field, exit code 2, a traceback only with --debug (same exit code), and
options named as the user typed them. Real files on disk, real command invocations."""

from __future__ import annotations

import argparse
import json
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


def judge_run_args(
    questions: Path, outputs: Path, out: Path, *extra: str | Path
) -> list[str | Path]:
    """The arguments of ``judge run`` with the stub judge."""
    return ["judge", "run", "--questions", questions, "--outputs", outputs, "--judge", "stub/j",
            "--out", out, *extra]  # fmt: skip


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
    base_by_command: dict[tuple[str, ...], list[str | Path]] = {
        ("generate",): ["--questions", questions, "--model", "stub/a"],
        ("judge", "run"): ["--questions", questions, "--outputs", manifest, "--judge", "stub/j"],
        ("bench", "run"): ["--data", LABELLED, "--pattern", "entailment", "--verifier", "lexical"],
    }
    base = base_by_command[command]
    out = ["--out_dir" if command == ("bench", "run") else "--out", tmp_path / "run"]
    options = _numeric_options(*command)
    assert len(options) >= 8
    refused = 0
    for option, integer in options:
        # an executor's own option is read (and checked) only with that executor
        executor = ["--executor", "ray"] if option == "--ray-batch-size" else []
        for value in ("0", "-1") if integer else ("-1", "nan"):
            try:
                code, _, err = cli(*command, *base, *out, *executor, option, value)
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
        "bench",
        "run",
        "--data",
        LABELLED,
        "--pattern",
        "entailment",
        "--verifier",
        "lexical",
        "--out_dir",
        tmp_path / "run",
        "--threshold",
        "nan",
    )
    assert process.returncode == 2
    assert one_error(process.stderr) == "error: --threshold: must be a number in [0, 1], got nan"
    assert not (tmp_path / "run").exists()


# ------------------------------------------------------------------ runs the tests read


@pytest.fixture(scope="module")
def judge_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished judge run on stub models (questions Q1, Q2 x variants A, B x stub/a)."""
    root = tmp_path_factory.mktemp("judge")
    questions = write_questions(root / "q.jsonl")
    manifest = write_manifest(root / "m.jsonl", ["stub/a"])
    run = root / "run"
    assert main([str(a) for a in judge_run_args(questions, manifest, run, "--no-cache")]) == 0
    return run


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("bench") / "run"
    code = main(
        [
            "bench",
            "run",
            "--data",
            str(LABELLED),
            "--pattern",
            "entailment",
            "--generator",
            "stub/g",
            "--verifier",
            "lexical",
            "--out_dir",
            str(run),
            "--no-progress",
            "--no-report",
            "--no-cache",
            "--n",
            "1",
        ]
    )
    assert code == 0
    return run


def not_utf8(path: Path) -> Path:
    path.write_bytes(b"\xff\xfe")
    return path


# ------------------------------------------------------------ bad input, never internal errors


def test_a_settings_file_that_is_not_utf8_is_named(
    tmp_path: Path, cli: Cli, bench_run: Path
) -> None:
    bad = not_utf8(tmp_path / "f.yaml")
    code, _, err = cli(
        "bench", "summarize", bench_run, "--prices", bad, "--no-plots", "--no-report"
    )
    assert code == 2
    assert one_error(err) == f"error: {bad}: not UTF-8 text (byte 1)"
    questions = write_questions(tmp_path / "q.jsonl")
    manifest = write_manifest(tmp_path / "m.jsonl", ["stub/a"])
    code, _, err = cli(*judge_run_args(questions, manifest, tmp_path / "run", "--protocol", bad))
    assert code == 2
    assert one_error(err) == f"error: {bad}: not UTF-8 text (byte 1)"
    assert not (tmp_path / "run").exists()


def _label(**changes: object) -> str:
    label = {
        "question_id": "Q1",
        "prompt_variant": "A",
        "target_model": "stub/a",
        "dimension": "INSTRUCTION_COMPLIANCE",
        "score": 1,
    }
    return json.dumps({**label, **changes}) + "\n"


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"score": 7}, "7 is not on the scale of INSTRUCTION_COMPLIANCE (0 to 2)"),
        ({"score": -1}, "-1 is not on the scale of INSTRUCTION_COMPLIANCE (0 to 2)"),
        ({"dimension": "overall_score", "score": 12}, "12 is not on the scale of overall_score"),
    ],
)
def test_a_label_off_its_scale_is_a_located_error(
    changes: dict[str, object], expected: str, tmp_path: Path, cli: Cli, judge_run: Path
) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text(_label() + _label(prompt_variant="B") + _label(**changes), "utf-8")
    code, _, err = cli(
        "judge", "agreement", judge_run, "--labels", labels, "--out", tmp_path / "a.json"
    )
    assert code == 2
    assert one_error(err).startswith(f"error: {labels}:3 field 'score': {expected}")
    assert not (tmp_path / "a.json").exists()


def test_an_output_file_that_is_a_directory_is_refused(
    tmp_path: Path, cli: Cli, judge_run: Path, bench_run: Path
) -> None:
    adir = tmp_path / "adir"
    adir.mkdir()
    (adir / "kept.txt").write_text("x", "utf-8")
    halueval = tmp_path / "h.json"
    halueval.write_text(
        json.dumps(
            {"knowledge": "K.", "question": "Q?", "right_answer": "R", "hallucinated_answer": "H"}
        )
        + "\n",
        "utf-8",
    )
    responses, inputs = tmp_path / "r.jsonl", tmp_path / "in.jsonl"
    inputs.write_text(
        json.dumps({"key": 1, "prompt": "Say hi.", "instruction_id_list": [], "kwargs": []}) + "\n",
        "utf-8",
    )
    responses.write_text(json.dumps({"prompt": "Say hi.", "response": "hi"}) + "\n", "utf-8")
    commands: list[list[str | Path]] = [
        ["perturb", "--data", LABELLED, "--out", adir],
        ["import", "halueval", halueval, "--out", adir],
        ["instructions", "check", "--data", responses, "--inputs", inputs, "--out", adir],
        ["report", judge_run, "--out", adir],
        ["export", judge_run, "--format", "csv", "--out", adir],
        ["bench", "compare", bench_run, "--out", adir],
    ]
    for command in commands:
        code, _, err = cli(*command)
        assert code == 2, command
        assert one_error(err) == f"error: --out {adir} is a directory, not a file", command
    assert sorted(p.name for p in adir.iterdir()) == ["kept.txt"]  # no .partial, no .tmp left
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["adir", "h.json", "r.jsonl", "in.jsonl"]
    )


def test_report_makes_the_folder_of_its_out_file(tmp_path: Path, cli: Cli, judge_run: Path) -> None:
    out = tmp_path / "new" / "folder" / "x.html"
    code, _, err = cli("report", judge_run, "--out", out)
    assert code == 0, err
    assert out.is_file()
    afile = tmp_path / "afile"
    afile.write_text("x", "utf-8")
    code, _, err = cli("report", judge_run, "--out", afile / "x.html")
    assert code == 2
    assert one_error(err) == f"error: --out {afile / 'x.html'}: {afile} is a file, not a directory"


def test_import_ifeval_into_a_file_says_it_writes_a_directory(tmp_path: Path, cli: Cli) -> None:
    from tests.conftest import SHARED_DATA

    ifeval = SHARED_DATA / "ifeval"
    afile = tmp_path / "afile"
    afile.write_text("mine", "utf-8")
    code, _, err = cli(
        "import",
        "ifeval",
        ifeval / "input_data.jsonl",
        "--responses",
        ifeval / "input_response_data_gpt4_20231107_145030.jsonl",
        "--labels",
        ifeval / "eval_results_strict.jsonl",
        "--out",
        afile,
    )
    assert code == 2
    line = one_error(err)
    assert line.startswith(f"error: --out {afile} is a file, not a directory")
    assert "replacing files of those names, as every importer replaces its output" in line
    assert afile.read_text("utf-8") == "mine"


STRING_KEY = "expected a JSON integer key, got '1000'"


def test_instructions_check_refuses_a_string_key_as_import_does(tmp_path: Path, cli: Cli) -> None:
    inputs, responses = tmp_path / "in.jsonl", tmp_path / "r.jsonl"
    ids = ["punctuation:no_comma"]
    kwargs: list[dict[str, object]] = [{}]
    rows = [
        {"key": 1, "prompt": "A.", "instruction_id_list": ids, "kwargs": kwargs},
        {"key": "1000", "prompt": "B.", "instruction_id_list": ids, "kwargs": kwargs},
    ]
    inputs.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    responses.write_text(json.dumps({"prompt": "A.", "response": "a"}) + "\n", "utf-8")
    code, _, err = cli("instructions", "check", "--data", responses, "--inputs", inputs)
    assert code == 2
    assert one_error(err) == f"error: {inputs}:2 field 'key': {STRING_KEY}"
    code, _, err = cli(
        "import",
        "ifeval",
        inputs,
        "--responses",
        responses,
        "--labels",
        responses,
        "--out",
        tmp_path / "o",
    )
    assert code == 2
    assert one_error(err) == f"error: {inputs}:2 field 'key': {STRING_KEY}"


# ------------------------------------------------------------- bad input that was accepted


def test_batch_import_refuses_an_empty_file_and_a_directory(tmp_path: Path, cli: Cli) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", "utf-8")
    code, out, err = cli("batch", "import", empty, "--batch-dir", tmp_path)
    assert code == 2
    assert one_error(err) == f"error: {empty}: the file is empty (no batch output line in it)"
    assert "imported" not in out
    code, _, err = cli("batch", "import", tmp_path, "--batch-dir", tmp_path)
    assert code == 2
    assert one_error(err) == f"error: {tmp_path}: is a directory, not a file"


def test_by_a_meta_key_no_record_has_lists_the_keys_there_are(tmp_path: Path, cli: Cli) -> None:
    data = tmp_path / "data.jsonl"
    records = [json.loads(line) for line in LABELLED.read_text("utf-8").splitlines()[:4]]
    for i, record in enumerate(records):
        record["meta"] = {"system": f"s{i % 2}", "source": {"name": "x"}}
    data.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    run = tmp_path / "run"
    code, _, err = cli(
        "bench",
        "run",
        "--data",
        data,
        "--pattern",
        "entailment",
        "--verifier",
        "lexical",
        "--generator",
        "stub/g",
        "--out_dir",
        run,
        "--no-progress",
        "--no-report",
        "--no-cache",
        "--n",
        "1",
    )
    assert code == 0, err
    summary = (run / "summary.json").stat().st_mtime_ns
    code, _, err = cli("bench", "summarize", run, "--by", "meta.nokey", "--no-plots", "--no-report")
    assert code == 2
    assert one_error(err) == (
        "error: --by meta.nokey: no record has this key in its meta; the keys records have: "
        "meta.source, meta.source.name, meta.system"
    )
    assert (run / "summary.json").stat().st_mtime_ns == summary
    assert not (run / "slices").exists()
    code, out, _ = cli(
        "bench", "summarize", run, "--by", "meta.system", "--no-plots", "--no-report"
    )
    assert code == 0 and "s0" in out and "s1" in out


def test_a_damaged_archive_is_never_exported_or_reported_in_silence(
    tmp_path: Path, cli: Cli, judge_run: Path
) -> None:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(judge_run, run)
    code, whole, err = cli("export", run, "--format", "csv")
    assert code == 0 and "warning" not in err
    blobs = run / "archive_blobs.jsonl"
    blobs.write_bytes(blobs.read_bytes()[:-200])
    code, damaged, err = cli("export", run, "--format", "csv")
    assert code == 0
    left_out = len(whole.splitlines()) - len(damaged.splitlines())
    assert left_out >= 1
    assert f"warning: {run}: {left_out} archived evaluation(s) could not be read" in err
    assert "archive_blobs.jsonl has no text" in err
    code, _, err = cli("report", run, "--out", tmp_path / "r.html")
    assert code == 0
    assert f"warning: {run}: {left_out} archived evaluation(s) could not be read" in err


# ------------------------------------------------------------------- one line, no noise


def test_protocol_settings_errors_are_one_line_per_field(
    tmp_path: Path, cli: Cli, judge_run: Path
) -> None:
    protocol = tmp_path / "p.yaml"
    protocol.write_text('thresholds: {pass_min: "7", fail_max: x}\n', "utf-8")
    questions = write_questions(tmp_path / "q.jsonl")
    manifest = write_manifest(tmp_path / "m.jsonl", ["stub/a"])
    code, out, err = cli(
        *judge_run_args(questions, manifest, tmp_path / "run", "--protocol", protocol)
    )
    assert code == 2 and out == ""
    assert err.splitlines() == [
        f"error: {protocol}:1 field 'thresholds.pass_min': Input should be a valid integer",
        f"error: {protocol}:1 field 'thresholds.fail_max': Input should be a valid integer",
    ]
    protocol.write_text("thresholds:\n  pass_min: 7\n  fail_max: x\n", "utf-8")
    code, _, err = cli(
        *judge_run_args(questions, manifest, tmp_path / "run", "--protocol", protocol)
    )
    assert code == 2  # each field named at its line
    assert one_error(err) == (
        f"error: {protocol}:3 field 'thresholds.fail_max': Input should be a valid integer"
    )
    import shutil

    run = tmp_path / "copy"
    shutil.copytree(judge_run, run)
    state = json.loads((run / "protocol.json").read_text("utf-8"))
    state["protocol"]["thresholds"]["pass_min"] = "7"
    (run / "protocol.json").write_text(json.dumps(state), "utf-8")
    code, _, err = cli("judge", "analyze", run, "--no-plots", "--no-report")
    assert code == 2
    assert "errors.pydantic.dev" not in err
    assert one_error(err) == (
        f"error: {run / 'protocol.json'} (not a judge protocol file): "
        "field 'protocol.thresholds.pass_min': Input should be a valid integer"
    )


def test_a_yaml_syntax_error_is_one_located_line(tmp_path: Path, cli: Cli) -> None:
    """The parser's own message is a dump of the text around the error; the user gets the
    file, the line and the problem, whichever YAML file it is."""
    broken = (
        "questions:\n  - question_id: Q1\n    variants:\n"
        '      a: {prompt: "x"\n  - question_id: Q2\n'
    )
    questions = tmp_path / "q.yaml"
    questions.write_text(broken, "utf-8")
    manifest = write_manifest(tmp_path / "m.jsonl", ["stub/a"])
    code, _, err = cli(*judge_run_args(questions, manifest, tmp_path / "run"))
    assert code == 2
    assert one_error(err) == (
        f"error: {questions}:5: not valid YAML: column 3: expected ',' or '}}', but got '-'"
    )
    protocol = tmp_path / "p.yaml"
    protocol.write_text("thresholds:\n  pass_min: 6\n fail_max: 2\n", "utf-8")
    good = write_questions(tmp_path / "q.jsonl")
    code, _, err = cli(*judge_run_args(good, manifest, tmp_path / "run", "--protocol", protocol))
    assert code == 2 and not (tmp_path / "run").exists()
    assert one_error(err).startswith(f"error: {protocol}:3: not YAML or JSON: column 2: ")


def test_manifest_and_label_errors_have_no_value_error_prefix(
    tmp_path: Path, cli: Cli, judge_run: Path
) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    manifest = write_manifest(tmp_path / "m.jsonl", ["stub/a"])
    with manifest.open("a", encoding="utf-8") as handle:
        handle.write('{"question_id": "Q1", "prompt_variant": "A", "target_model": "stub/b"}\n')
    code, _, err = cli(*judge_run_args(questions, manifest, tmp_path / "run"))
    assert code == 2
    assert one_error(err) == f"error: {manifest}:5: give exactly one of 'text' and 'path'"
    labels = tmp_path / "labels.jsonl"
    labels.write_text(_label(dimension="D9"), "utf-8")
    code, _, err = cli(
        "judge", "agreement", judge_run, "--labels", labels, "--out", tmp_path / "a.json"
    )
    assert code == 2
    assert one_error(err).startswith(f"error: {labels}:1 field 'dimension': unknown dimension 'D9'")


def test_huge_values_are_cut_where_an_error_echoes_them(
    tmp_path: Path, cli: Cli, judge_run: Path
) -> None:
    huge = "a" * 2_000_000
    questions = write_questions(tmp_path / "q.jsonl")
    manifest = tmp_path / "m.jsonl"
    line = {
        "question_id": "Q1",
        "prompt_variant": "A",
        "target_model": "stub/a",
        "path": "out.txt" + huge,
    }
    manifest.write_text(json.dumps(line) + "\n", "utf-8")
    code, _, err = cli(*judge_run_args(questions, manifest, tmp_path / "run"))
    assert code == 2
    assert len(err) < 1000
    assert f"error: {manifest}:1 field 'path': " in one_error(err)
    assert "characters): File name too long" in err
    labels = tmp_path / "labels.jsonl"
    labels.write_text(_label(dimension=huge), "utf-8")
    code, _, err = cli("judge", "agreement", judge_run, "--labels", labels)
    assert code == 2
    assert len(err) < 1000 and "… (2,000,000 characters)" in one_error(err)


@pytest.mark.parametrize("provider", ["", "nosuch/", "opnai/"])  # opnai: a guess in the hint
def test_a_huge_model_name_is_cut_where_an_error_echoes_it(
    tmp_path: Path, cli: Cli, provider: str
) -> None:
    name = provider + "m" * 5000
    bench = ["bench", "run", "--data", LABELLED, "--pattern", "entailment"]
    for argv in (
        [*bench, "--verifier", name, "--out_dir", tmp_path / "run"],
        [*bench, "--verifier", "lexical", "--generator", name, "--out_dir", tmp_path / "run"],
        ["ping", name],
    ):
        code, _, err = cli(*argv)
        assert code == 2
        assert "… (5,0" in one_error(err) and "characters)" in err
        assert len(err) < 800, err
    assert not (tmp_path / "run").exists()


def test_batch_import_cuts_a_huge_custom_id(tmp_path: Path, cli: Cli) -> None:
    batch = tmp_path / "batch"
    batch.mkdir()
    (batch / "input-0001.jsonl").write_text(
        json.dumps(
            {"custom_id": "known", "method": "POST", "url": "/v1/chat/completions", "body": {}}
        )
        + "\n",
        "utf-8",
    )
    output = tmp_path / "out.jsonl"
    output.write_text(json.dumps({"custom_id": "x" * 1_000_000, "response": None}) + "\n", "utf-8")
    code, _, err = cli(
        "batch", "import", output, "--batch-dir", batch, "--cache-path", tmp_path / "cache.sqlite"
    )
    assert code == 2  # its only line skipped: nothing imported
    assert len(err) < 1000
    assert "unknown custom_id 'xxx" in one_error(err) and "… (1,000,000 characters)" in err


def test_incomplete_coverage_is_printed_once(tmp_path: Path, cli: Cli) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    manifest = write_manifest(tmp_path / "m.jsonl", ["stub/a"], skip=1)
    code, out, err = cli(*judge_run_args(questions, manifest, tmp_path / "run"))
    assert code == 2
    text = out + err
    assert text.count("evaluation set:") == 1
    assert text.count("missing: Q1 x A x stub/a") == 1
    assert not (tmp_path / "run").exists()


def test_invalid_json_names_where_the_string_starts_once(tmp_path: Path, cli: Cli) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "unterminated', "utf-8")
    code, _, err = cli("perturb", "--data", data, "--out", tmp_path / "p.jsonl")
    assert code == 2
    assert one_error(err) == (
        f"error: {data}:1: invalid JSON (Unterminated string starting at column 8)"
    )


def test_batch_import_takes_an_empty_error_file_beside_its_output(tmp_path: Path, cli: Cli) -> None:
    empty = tmp_path / "errors.jsonl"
    empty.write_text("", "utf-8")
    code, _, err = cli("batch", "import", empty, empty, "--batch-dir", tmp_path)
    assert code == 2
    assert one_error(err) == (
        f"error: {empty}, {empty}: every file is empty (no batch output line in them)"
    )
    output = tmp_path / "out.jsonl"
    output.write_text(json.dumps({"custom_id": "other", "response": None}) + "\n", "utf-8")
    (tmp_path / "input-0001.jsonl").write_text(
        json.dumps(
            {"custom_id": "known", "method": "POST", "url": "/v1/chat/completions", "body": {}}
        )
        + "\n",
        "utf-8",
    )
    code, _, err = cli(
        "batch",
        "import",
        output,
        empty,
        "--batch-dir",
        tmp_path,
        "--cache-path",
        tmp_path / "cache.sqlite",
    )
    # read, not refused (its one line answers no request: nothing imported, exit 2)
    assert code == 2 and one_error(err) == (
        f"error: {output}:1: unknown custom_id 'other': no request of the batch directory has "
        "it; nothing was imported"
    )
    assert err.splitlines()[1] == (
        f"  hint: no input file of {tmp_path} asked for these custom_ids: give --batch-dir the "
        "directory the run wrote these requests to"
    )


# ------------------------------------------------------------------ sampling seeds


@pytest.mark.parametrize("seed", ["-1", str(2**32 - 1)])
def test_a_seed_llama_cpp_would_take_as_random_is_refused(
    seed: str, tmp_path: Path, cli: Cli
) -> None:
    """llama.cpp reads a seed as unsigned 32-bit and takes 0xFFFFFFFF (what -1 becomes) as
    "draw a random seed": such a seed would make a seeded run unrepeatable while its run log
    says it was seeded. Every command that seeds model calls refuses it before it starts."""
    questions = write_questions(tmp_path / "q.jsonl")
    manifest = write_manifest(tmp_path / "m.jsonl", ["stub/a"])
    bench: list[str | Path] = [
        "--data",
        LABELLED,
        "--pattern",
        "best_of_n",
        "--generator",
        "stub/g",
    ]
    commands: list[list[str | Path]] = [
        ["generate", "--questions", questions, "--model", "stub/a", "--out", tmp_path / "gen"],
        judge_run_args(questions, manifest, tmp_path / "judged"),
        ["bench", "run", *bench, "--verifier", "lexical", "--out_dir", tmp_path / "bench"],
        ["ping", "stub/a"],
    ]
    for command in commands:
        code, out, err = cli(*command, "--seed", seed)
        assert code == 2, (command, out, err)
        assert one_error(err).startswith("error: --seed: "), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.jsonl", "q.jsonl"]


def test_the_largest_seed_is_accepted(tmp_path: Path, cli: Cli) -> None:
    seed = str(2**31 - 1)
    questions = write_questions(tmp_path / "q.jsonl")
    out = tmp_path / "gen"
    code, _, err = cli("generate", "--questions", questions, "--model", "stub/a", "--out", out,
                       "--seed", seed, "--no-cache")  # fmt: skip
    assert code == 0, err
