"""Bad data files at the command line (issue 14 #9, issue 10 #10): each gives one error line
naming file, line and field, exit 2, no traceback, and nothing written."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from assay.cli import main
from tests.verify.bench_fixtures import verify_only_records, write_jsonl

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = ROOT / "examples" / "judge" / "questions.jsonl"


def _record(**changes: object) -> str:
    return json.dumps({**verify_only_records(1)[0], **changes})


def _unanswered(**changes: object) -> str:
    """A record with no ``answer`` (one the pattern would answer itself)."""
    record = {**verify_only_records(1)[0], **changes}
    del record["answer"]
    return json.dumps(record)


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def _write(text: str | bytes) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        path = folder / "data.jsonl"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    return make


def _second_line(bad: str) -> Callable[[Path], Path]:
    good = json.dumps(verify_only_records(2)[1])
    return _write(f"{good}\n{bad}\n")


def _directory(folder: Path) -> Path:
    (folder / "data.jsonl").mkdir()
    return folder / "data.jsonl"


LONG_INTEGER = "1" * 5000
BAD_DATA: list[tuple[str, Callable[[Path], Path], str]] = [
    (
        "over-long integer",
        _second_line(
            _record(gold_error=0).replace('"gold_error": 0', f'"gold_error": {LONG_INTEGER}')
        ),
        "data.jsonl:2 field 'gold_error': an integer with more digits",
    ),
    (
        "deep nesting (parsed)",
        _second_line(_record().replace('"gold_error"', f'"x": {_deep(100)}, "y"')),
        "data.jsonl:2 field 'x",
    ),
    (
        "deep nesting (past the parser's recursion limit)",
        _second_line(f'{{"id": "a", "evidence": {_deep(100_000)}}}'),
        "data.jsonl:2: nested too deeply",
    ),
    (
        "lone surrogate",
        _second_line(_record().replace('"What is', '"\\ud800 What is')),
        "data.jsonl:2 field 'question': holds a lone UTF-16 surrogate",
    ),
    (
        "NaN",
        _second_line(_record().replace('"gold_error": true', '"gold_error": NaN')),
        "data.jsonl:2 field 'gold_error': NaN is not a JSON number",
    ),
    (
        "NaN nested in a list of objects (named by its full path)",
        _second_line(
            _record().replace('"gold_error": true', '"gold_error": true, "m": [{"w": NaN}]')
        ),
        "data.jsonl:2 field 'm[0].w': NaN is not a JSON number",
    ),
    (
        "over-long integer nested",
        _second_line(
            _record().replace(
                '"gold_error": true', f'"gold_error": true, "m": {{"n": {LONG_INTEGER}}}'
            )
        ),
        "data.jsonl:2 field 'm.n': an integer with more digits",
    ),
    ("empty file", _write(""), "data.jsonl: the file is empty"),
    ("blank lines only", _write("\n  \n"), "data.jsonl: the file is empty"),
    ("corrupt gzip", _write(b"\x1f\x8b\x08\x00garbage"), "data.jsonl:1: cannot read the file"),
    ("a directory", _directory, "data.jsonl: is a directory, not a file"),
    (
        "a string for a boolean",
        _second_line(_record(gold_error="yes")),
        "data.jsonl:2 field 'gold_error': Input should be a valid boolean",
    ),
    (
        "a number for a boolean",
        _second_line(_record(gold_error=1)),
        "data.jsonl:2 field 'gold_error': Input should be a valid boolean",
    ),
    (
        "a gold label with no answer to label (it would label the generated answer)",
        _second_line(_unanswered(gold_error=False)),
        "data.jsonl:2 field 'gold_error': gold_error labels the record's 'answer', and this "
        "record has none",
    ),
]


@pytest.mark.parametrize(("case", "make", "expected"), BAD_DATA, ids=[c[0] for c in BAD_DATA])
def test_bad_bench_data_is_one_located_error(
    tmp_path: Path,
    case: str,
    make: Callable[[Path], Path],
    expected: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = make(tmp_path)
    out = tmp_path / "run"
    argv = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(out)]
    code = main([*argv, "--verifier", "lexical", "--generator", "stub/g", "--no-cache"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert expected in err, err
    assert err.count("\n") <= 2  # the error and, at most, its hint
    assert "Traceback" not in err and "internal error" not in err
    assert not out.exists()  # nothing written


def test_a_gzip_data_file_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = write_jsonl(tmp_path / "plain.jsonl", verify_only_records(4))
    packed = tmp_path / "packed.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    for data in (plain, packed):
        code = main(
            [
                *("bench", "run", "--data", str(data), "--pattern", "entailment"),
                *("--out_dir", str(tmp_path / f"run-{data.name}"), "--verifier", "lexical"),
                *("--generator", "stub/g", "--no-cache", "--no-report", "--no-progress"),
            ]
        )
        assert code == 0, capsys.readouterr().err
    results = [
        [json.loads(line)["verifier_score"] for line in (tmp_path / name).open()]
        for name in (f"run-{plain.name}/results.jsonl", f"run-{packed.name}/results.jsonl")
    ]
    assert results[0] == results[1] and len(results[0]) == 4


QUESTION_CASES: list[tuple[str, str | bytes, str]] = [
    ("q.jsonl", "", "q.jsonl: the file is empty"),
    (
        "q.jsonl",
        '{"question_id": "Q1", "variants": {"v": "\\udfff hi"}}\n',
        "q.jsonl:1 field 'variants.v': holds a lone UTF-16 surrogate",
    ),
    (
        "q.jsonl",
        '{"question_id": "Q1", "variants": {"v": "hi"}, "n": ' + LONG_INTEGER + "}\n",
        "q.jsonl:1 field 'n'",
    ),
    ("q.yaml", '- question_id: Q1\n  variants: {v: "\\ud800 hi"}\n', "q.yaml:1 field 'variants.v'"),
    (
        "q.yaml",
        "- question_id: Q1\n  variants: {v: " + "[" * 200 + "]" * 200 + "}\n",
        "q.yaml:1 field 'variants.v[0][0]",
    ),
    ("q.yaml", b"- question_id: Q1\n  variants: {v: \xff}\n", "q.yaml: not UTF-8"),
    (
        "q.jsonl",
        '{"question_id": "Q1", "question_id": "Q2", "variants": {"v": "hi"}}\n',
        "q.jsonl:1 field 'question_id': the key is given twice in one object",
    ),
    (
        "q.yaml",
        "- question_id: Q1\n  variants: {v: hi}\n- question_id: Q2\n  question_id: Q3\n"
        "  variants: {v: hi}\n",
        "q.yaml:4: the key 'question_id' is given twice in one mapping (also on line 3)",
    ),
    (
        "q.yaml",
        "- question_id: Q1\n  variants:\n    yes: do it\n    no: do not\n",
        "q.yaml:3: the key yes is not text (YAML reads it as a boolean)",
    ),
]


@pytest.mark.parametrize(("name", "content", "expected"), QUESTION_CASES)
def test_bad_question_files_are_located_errors(
    tmp_path: Path,
    name: str,
    content: str | bytes,
    expected: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    questions = _write(content)(tmp_path).rename(tmp_path / name)
    out = tmp_path / "outputs"
    argv = ["generate", "--questions", str(questions), "--model", "stub/t", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert expected in err, err
    assert "internal error" not in err
    assert not out.exists()


def _manifest(folder: Path, path: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    line = {"question_id": "Q1", "prompt_variant": "explicit", "target_model": "t", "path": path}
    (folder / "manifest.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    return folder / "manifest.jsonl"


@pytest.mark.parametrize("hostile", ["/etc/passwd", "../secret.txt", "link.txt"])
def test_manifest_paths_stay_in_the_manifests_folder(
    tmp_path: Path, hostile: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "secret.txt").write_text("do not send me", encoding="utf-8")
    manifest = _manifest(tmp_path / "outputs", hostile)
    (tmp_path / "outputs" / "link.txt").symlink_to(tmp_path / "secret.txt")
    out = tmp_path / "judge"
    argv = ["judge", "run", "--questions", str(QUESTIONS), "--outputs", str(manifest)]
    assert main([*argv, "--judge", "stub/j", "--out", str(out), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "manifest.jsonl:1 field 'path': path leads outside the manifest's folder" in err
    assert "--allow-outside-paths" in err
    assert not out.exists()


def test_allow_outside_paths_reads_them(tmp_path: Path) -> None:
    from assay.data.questions import load_outputs

    (tmp_path / "secret.txt").write_text("mine", encoding="utf-8")
    manifest = _manifest(tmp_path / "outputs", "../secret.txt")
    (inside,) = load_outputs(manifest, allow_outside_paths=True)
    assert inside.text == "mine"
    _manifest(tmp_path / "outputs", "./ok.txt")
    (tmp_path / "outputs" / "ok.txt").write_text("fine", encoding="utf-8")
    (ok,) = load_outputs(manifest)
    assert ok.text == "fine"


def test_a_bad_file_in_a_real_process_exits_2_without_traceback(tmp_path: Path) -> None:
    data = _second_line(_record().replace('"What is', '"\\ud800 What is'))(tmp_path)
    process = subprocess.run(
        [
            *(sys.executable, "-m", "assay.cli", "bench", "run", "--data", str(data)),
            *("--pattern", "entailment", "--verifier", "lexical", "--out_dir", str(tmp_path / "r")),
        ],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert process.returncode == 2
    assert process.stderr.startswith(f"error: {data}:2 field 'question'")
    assert "Traceback" not in process.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("command", ["bench", "generate", "judge"])
def test_an_output_directory_that_is_a_file_is_refused(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "taken"
    taken.write_text("mine", encoding="utf-8")
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(1))
    argv = {
        "bench": ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir"],
        "generate": ["generate", "--questions", str(QUESTIONS), "--model", "stub/t", "--out"],
        "judge": [
            *("judge", "run", "--questions", str(QUESTIONS), "--outputs", str(tmp_path)),
            *("--judge", "stub/j", "--out"),
        ],
    }[command]
    assert main([*argv, str(taken)]) == 2
    assert "is a file, not a directory" in capsys.readouterr().err
    assert taken.read_text(encoding="utf-8") == "mine"


@pytest.mark.parametrize(
    "settings",
    [
        "thresholds:\n  zero_caps_at_partial: 'yes'\n",
        "evidence:\n  casefold: 'no'\n",
        "thresholds:\n  pass_min: '7'\n",
    ],
)
def test_protocol_settings_have_strict_types(settings: str) -> None:
    import yaml

    from assay.errors import ConfigError
    from assay.judge.protocol import load_protocol

    with pytest.raises(ConfigError, match=r"protocol\.yaml.*valid"):
        load_protocol(yaml.safe_load(settings), "protocol.yaml")


@pytest.mark.parametrize(
    ("verifier", "suggestion"),
    [("lexcal", "did you mean lexical?"), ("opnai/gpt", "did you mean openai/gpt?")],
)
def test_a_misspelt_verifier_suggests_names_and_writes_nothing(
    tmp_path: Path, verifier: str, suggestion: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(1))
    out = tmp_path / "run"
    argv = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(out)]
    assert main([*argv, "--verifier", verifier]) == 2
    err = capsys.readouterr().err
    assert f"--verifier {verifier!r}" in err and suggestion in err
    assert "lexical, learned" in err and "openai, llamacpp, stub" in err
    assert not out.exists()


def test_a_directory_as_questions_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "q.jsonl").mkdir()
    argv = ["generate", "--questions", str(tmp_path / "q.jsonl"), "--model", "stub/t"]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    assert "q.jsonl: is a directory, not a file" in capsys.readouterr().err


CSV_IMPORTS = {
    "aggrefact": ("dataset,claim,label,doc\n", 'Lfqa,A claim.,1,"A doc."\n', "Lfqa,A claim.,1,",
                  ()),
    "deepeval": ("input,actual_output,retrieval_context\n", 'Q?,An answer.,"A passage."\n',
                 "Q?,An answer.,", ()),
    "ragas": ("user_input,response,retrieved_contexts\n", "Q?,An answer.,\"['A passage.']\"\n",
              "Q?,An answer.,", ()),
    "table": ("q,a,docs\n", 'Q?,An answer.,"A passage."\n', "Q?,An answer.,",
              ("--answer", "a", "--evidence", "docs")),
}  # fmt: skip


@pytest.mark.parametrize("importer", sorted(CSV_IMPORTS))
def test_a_csv_file_cut_inside_a_quoted_field_is_refused(
    importer: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file cut short inside a quoted field (a copy or download stopped part way) is named
    with the line its last row starts on, not imported with the rest of the file as that row's
    last value."""
    header, row, start, options = CSV_IMPORTS[importer]
    source = tmp_path / "cut.csv"
    source.write_text(header + row + start + '"A passage\nthat the file cut', encoding="utf-8")
    out = tmp_path / "records.jsonl"
    assert main(["import", importer, str(source), "--out", str(out), *options]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"error: {source}:3: not a readable CSV file: a quoted field of the row that starts on "
        "this line is never closed (the file ends inside it: was it cut short?)\n"
    )
    assert not out.exists()


def test_a_csv_quote_followed_by_more_text_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "table.csv"
    source.write_text('q,a,docs\nQ?,"An answer." it said,A passage.\n', encoding="utf-8")
    options = ("--answer", "a", "--evidence", "docs")
    assert main(["import", "table", str(source), "--out", str(tmp_path / "o.jsonl"), *options]) == 2
    assert capsys.readouterr().err == (
        f"error: {source}:2: not a readable CSV file: a quoted field's closing quote is followed "
        "by more text in the row that starts on this line (a quote inside a quoted field is "
        'written twice: "")\n'
    )
