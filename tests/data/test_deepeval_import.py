"""``assay import deepeval``: files the real deepeval wrote (``EvaluationDataset.save_as`` in
each file type, goldens and test cases) imported through the CLI, the records they give, the
label options, the errors for bad files, and the p_error ``bench run`` gives the imported
records, which is what the deepeval metric scores the same test cases."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

# deepeval runs in processes of its own (tests/helpers/deepeval_runs.py): imported here it would
# write its .deepeval folder into the repository
if importlib.util.find_spec("deepeval") is None:  # the deepeval extra, in the dev extra
    pytest.skip("needs the deepeval extra", allow_module_level=True)

from assay.cli import main
from assay.data.grounded import load_records
from assay.report.export import BenchRun, load_run
from assay.verify.types import GroundedQARecord
from tests.conftest import SHARED_DATA
from tests.helpers.deepeval_runs import run_deepeval

EIFFEL = "The Eiffel Tower is a wrought-iron lattice tower in Paris, France."
HEIGHT = "The tower is 330 metres tall and was completed in 1889."
GOLDENS = [
    {"name": "paris", "input": "Where is the Eiffel Tower?",
     "actual_output": "The Eiffel Tower is in Paris.", "expected_output": "In Paris.",
     "retrieval_context": [EIFFEL, HEIGHT], "context": [EIFFEL],
     "additional_metadata": {"hallucinated": False, "model": "careful"}},
    {"input": "How tall is the Eiffel Tower?", "actual_output": "It is 500 metres tall.",
     "context": [HEIGHT], "additional_metadata": {"hallucinated": True}},
    {"input": "When was the Eiffel Tower completed?", "expected_output": "In 1889.",
     "context": [HEIGHT]},
    {"input": "What is the Eiffel Tower made of?", "actual_output": "Wrought iron.",
     "comments": "no context was kept"},
]  # fmt: skip
TEST_CASES = [
    {"name": "sourced", "input": "When was the Eiffel Tower completed?",
     "actual_output": "It was completed in 1925.",
     "retrieval_context": [{"context": HEIGHT, "source": "wiki"}],
     "metadata": {"hallucinated": True}},
]  # fmt: skip
FILE_TYPES = ("json", "jsonl", "csv")


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The dataset as deepeval saved it, by file type."""
    workdir = tmp_path_factory.mktemp("deepeval")
    spec = {"goldens": GOLDENS, "test_cases": TEST_CASES, "directory": "saved"}
    paths = run_deepeval("save", spec, workdir)
    return {file_type: workdir / path for file_type, path in paths.items()}


def imported(
    source: Path, out: Path, capsys: pytest.CaptureFixture[str], *options: str
) -> tuple[list[GroundedQARecord], str]:
    assert main(["import", "deepeval", str(source), "--out", str(out), *options]) == 0
    loaded = load_records(out)
    assert loaded.skipped == ()
    return list(loaded.records), capsys.readouterr().out


def test_each_file_type_deepeval_writes_gives_the_same_records(
    saved: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = {t: imported(saved[t], tmp_path / f"{t}.jsonl", capsys)[0] for t in FILE_TYPES}
    assert records["jsonl"] == records["json"] == records["csv"]
    paris, tall, sourced = records["json"]
    assert (paris.question, paris.answer, paris.gold_answer) == (
        "Where is the Eiffel Tower?", "The Eiffel Tower is in Paris.", "In Paris.",
    )  # fmt: skip
    # retrieval_context wins over context, which stays in meta
    assert [(e.evidence_id, e.text) for e in paris.evidence] == [("1", EIFFEL), ("2", HEIGHT)]
    assert paris.meta == {
        "evidence_from": "retrieval_context",
        "name": "paris",
        "additional_metadata": {"hallucinated": False, "model": "careful"},
        "context": [EIFFEL],
    }
    # no retrieval_context: the context is the evidence; no expected_output: no gold answer
    assert [e.text for e in tall.evidence] == [HEIGHT] and tall.gold_answer == ""
    assert tall.meta is not None and tall.meta["evidence_from"] == "context"
    # a test case's passage saved with its source
    assert [(e.text, e.source) for e in sourced.evidence] == [(HEIGHT, "wiki")]
    assert all(r.gold_error is None for r in records["json"])
    assert paris.group != tall.group and paris.id.startswith("deepeval-")


def test_the_report_says_what_was_filled_and_skipped(
    saved: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, printed = imported(saved["csv"], tmp_path / "out.jsonl", capsys)
    assert printed.splitlines()[:5] == [
        f"deepeval: read 5 rows from {saved['csv']} (5 rows, 4 with actual_output, "
        "2 with expected_output)",
        "kept 3 records: unlabelled 3",
        "  filled: gold_answer empty (no expected_output) 2, evidence from context (no "
        "retrieval_context) 1",
        "skipped 2: no actual_output (a golden not yet answered: nothing to verify) 1, neither "
        "retrieval_context nor context (nothing to check the output against) 1",
        "labels: none: deepeval datasets carry no grounding label, so the records are "
        "unlabelled (bench run gives each a p_error; detection metrics need labels); "
        "--error-field PATH (true = the output has a grounding error) or --grounded-field PATH "
        "(true = grounded) reads a boolean field of your own, e.g. "
        "additional_metadata.hallucinated (with --error-value VALUE, a field of categories)",
    ]


@pytest.mark.parametrize(
    ("option", "labels"),
    [("--error-field", [False, True, True]), ("--grounded-field", [True, False, False])],
)
def test_a_boolean_field_of_ones_own_labels_the_records(
    option: str,
    labels: list[bool],
    saved: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for file_type in FILE_TYPES:
        out = tmp_path / f"{file_type}.jsonl"
        records, printed = imported(
            saved[file_type], out, capsys, option, "additional_metadata.hallucinated"
        )
        assert [r.gold_error for r in records] == labels
        assert "kept 3 records: error" in printed


@pytest.mark.parametrize(
    ("options", "convention"),
    [
        (("--error-field", "additional_metadata.hallucinated"),
         "labels: field 'additional_metadata.hallucinated' true -> grounding error "
         "(gold_error=true), false -> grounded, no value -> unlabelled"),
        (("--grounded-field", "additional_metadata.hallucinated"),
         "labels: field 'additional_metadata.hallucinated' false -> grounding error "
         "(gold_error=true), true -> grounded, no value -> unlabelled"),
        (("--error-field", "additional_metadata.verdict", "--error-value", "made up"),
         "labels: field 'additional_metadata.verdict' = 'made up' -> grounding error "
         "(gold_error=true), any other value -> grounded, no value -> unlabelled"),
    ],
)  # fmt: skip
def test_the_report_states_the_label_field_it_read(
    options: tuple[str, ...], convention: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a label option the records are labelled, and the report says by which field, not
    that deepeval datasets leave them unlabelled."""
    meta = {"hallucinated": True, "verdict": "made up"}
    rows = [{"input": "Where?", "actual_output": "In Rome.", "retrieval_context": [EIFFEL],
             "additional_metadata": meta}]  # fmt: skip
    source = write_rows(tmp_path / "dataset.jsonl", rows)
    _, printed = imported(source, tmp_path / "out.jsonl", capsys, *options)
    assert convention in printed.splitlines()


def test_a_label_field_no_row_has_is_refused(
    saved: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    argv = ["import", "deepeval", str(saved["json"]), "--out", str(out)]
    assert main([*argv, "--error-field", "additional_metadata.halucinated"]) == 2
    err = capsys.readouterr().err
    assert "field 'additional_metadata.halucinated': --error-field additional_metadata." in err
    assert "no row has this field" in err and not out.exists()


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def refused(source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], *options: str) -> str:
    """The one error of an import that must fail (and its hint, if any): exit 2, nothing
    written."""
    out = tmp_path / "refused.jsonl"
    assert main(["import", "deepeval", str(source), "--out", str(out), *options]) == 2
    assert not out.exists()
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("error:") == 1 and "Traceback" not in err
    return err


ROW = {"input": "Where?", "actual_output": "In Paris.", "retrieval_context": [EIFFEL]}


@pytest.mark.parametrize(
    ("rows", "options", "expected"),
    [
        ([ROW, {**ROW, "retrieval_context": [EIFFEL, 7]}], (),
         ":2 field 'retrieval_context[1]': expected a string, got int"),
        ([ROW, {**ROW, "actual_output": 3}], (), ":2 field 'actual_output': expected a string"),
        ([{"scenario": "A user asks", "turns": [], "input": None}], (),
         ":1 field 'scenario': a conversational golden"),
        ([{**ROW, "additional_metadata": {"hallucinated": "yes"}}],
         ("--error-field", "additional_metadata.hallucinated"),
         ":1 field 'additional_metadata.hallucinated': the label named by --error-field must be "
         'true or false, got "yes"'),
        ([{**ROW, "actual_output": "In Paris [cite:9]."}], (),
         ":1 field 'actual_output': cites unknown evidence id '9'"),
    ],
)  # fmt: skip
def test_a_bad_row_is_one_located_error(
    rows: list[dict[str, Any]],
    options: tuple[str, ...],
    expected: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = write_rows(tmp_path / "dataset.jsonl", rows)
    assert expected in refused(source, tmp_path, capsys, *options)


def test_a_bad_object_of_deepevals_json_is_named_by_its_line(
    saved: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = json.loads(saved["json"].read_text(encoding="utf-8"))
    items[2]["expected_output"] = ["In 1889."]
    source = tmp_path / "dataset.json"
    source.write_text(json.dumps(items, indent=4), encoding="utf-8")
    starts = [n for n, line in enumerate(source.read_text().splitlines(), 1) if line == "    {"]
    err = refused(source, tmp_path, capsys)
    assert f"dataset.json:{starts[2]} field 'expected_output': expected a string, got list" in err
    assert "does not look like" not in err  # a deepeval file with a bad value


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("d.json", '[{"input": "q"}, 3]', ":1: a deepeval row must be a JSON object, got int"),
        ("d.json", '[\n{"input": "q"}\n{"input": "r"}]', ":3: invalid JSON (expected ','"),
        ("d.json", "[]", "no records: the JSON array is empty"),
        ("d.json", '[{"input": "q"}] x', "invalid JSON (more after the end of the array)"),
        ("d.parquet", "PAR1", "not a deepeval dataset file: expected .json, .jsonl or .csv"),
        ("d.csv", "input,input\nq,r\n", "the header names the column 'input' twice"),
    ],
)
def test_a_file_deepeval_did_not_write_is_refused(
    name: str, text: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / name
    source.write_text(text, encoding="utf-8")
    assert expected in refused(source, tmp_path, capsys)


@pytest.mark.parametrize("split", ["wice/claim_dev.jsonl", "halueval/qa_one-turn_data.json"])
def test_a_file_of_another_dataset_is_refused(
    split: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = refused(SHARED_DATA / split, tmp_path, capsys)
    assert ":1 field 'input': missing field; this does not look like a deepeval file" in err


def test_nothing_to_verify_is_an_error_not_an_empty_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    goldens = [{"input": "Where?", "expected_output": "Paris", "context": [EIFFEL]}]
    err = refused(write_rows(tmp_path / "goldens.jsonl", goldens), tmp_path, capsys)
    assert "nothing to import: no record kept of 1 rows" in err
    assert "no actual_output (a golden not yet answered" in err


def test_bench_run_on_the_import_gives_the_deepeval_metrics_scores(
    saved: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same test cases scored by the metric inside deepeval and, imported, by ``bench
    run``: score = 1 - p_error, each."""
    records, _ = imported(saved["json"], tmp_path / "records.jsonl", capsys)
    run_dir = tmp_path / "run"
    argv = ["bench", "run", "--data", str(tmp_path / "records.jsonl"), "--pattern",
            "entailment", "--verifier", "learned", "--out_dir", str(run_dir)]  # fmt: skip
    assert main(argv) == 0
    run = load_run(run_dir)
    assert isinstance(run, BenchRun)
    p_errors = {result.id: result.verifier_score for result in run.results}
    cases = [
        {"name": r.id, "input": r.question, "actual_output": r.answer,
         "retrieval_context": [{"context": e.text, "source": e.source} if e.source else e.text
                               for e in r.evidence]}
        for r in records
    ]  # fmt: skip
    spec = {"cases": cases, "metrics": [{}], "run_async": True}
    scored = run_deepeval("evaluate", spec, tmp_path / "deepeval")
    for record in records:
        (metric,) = scored[record.id]
        p_error = p_errors[record.id]
        assert p_error is not None and metric["score"] == 1.0 - p_error, record.id


def test_bench_run_on_deepevals_own_file_names_the_importer(
    saved: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["bench", "run", "--data", str(saved["jsonl"]), "--pattern", "entailment",
            "--verifier", "learned", "--out_dir", str(tmp_path / "run")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{saved['jsonl']}:1 field 'id': missing required field" in err
    assert "hint: this looks like a deepeval file: assay import deepeval FILE --out X.jsonl" in err


def test_csv_cells_are_read_as_deepeval_writes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Empty cells are missing, passages split at ``|``, JSON columns parsed, and a value no
    JSON reader takes back (``NaN``) kept as text, so the written records load."""
    header = "input,actual_output,retrieval_context,context,token_cost,additional_metadata,name\n"
    row = 'Where?,In Paris.,"a, b|c",,NaN,"{""k"": [1]}",007\n'
    source = tmp_path / "dataset.csv"
    source.write_text(header + row, encoding="utf-8")
    (record,), _ = imported(source, tmp_path / "out.jsonl", capsys)
    assert [e.text for e in record.evidence] == ["a, b", "c"]
    assert record.meta == {
        "evidence_from": "retrieval_context",
        "token_cost": "NaN",
        "additional_metadata": {"k": [1]},
        "name": "007",
    }
