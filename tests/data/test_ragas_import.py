"""``assay import ragas``: files the real ragas (0.4.3) wrote, an ``EvaluationDataset`` through
``to_jsonl`` and ``to_csv`` and an ``evaluate()`` result through pandas' ``to_csv`` and
``to_json``, imported through the real CLI and checked by ``assay bench run``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.report.export import BenchRun, load_run
from tests.helpers.cli_output import one_error_line, records
from tests.helpers.ragas_env import run_ragas

CONTEXTS = [
    "Canberra is the capital city of Australia.",
    "Parliament House in Canberra opened in 1988.",
]
SAMPLES = [
    {
        "user_input": "What is the capital of Australia?",
        "retrieved_contexts": CONTEXTS,
        "response": "The capital of Australia is Canberra.",
        "reference": "Canberra.",
    },
    {
        "user_input": "When did Parliament House open?",
        "retrieved_contexts": CONTEXTS,
        "response": "Parliament House opened in 1975, in Sydney.",
    },
    {"user_input": "What is the capital of Australia?", "retrieved_contexts": CONTEXTS},
    {
        "user_input": "Is Canberra's name 'meeting place'?",
        "retrieved_contexts": [],
        "response": "Yes, it means 'meeting place'.",
    },
]
SCRIPT = """
import json
from ragas import EvaluationDataset, MultiTurnSample, evaluate
from ragas.messages import AIMessage, HumanMessage
from ragas.metrics import ExactMatch
from assay.integrations.ragas import GroundedClaims

samples = {samples!r}
dataset = EvaluationDataset.from_list(samples)
dataset.to_jsonl("dataset.jsonl")
dataset.to_csv("dataset.csv")
answered = EvaluationDataset.from_list(samples[:2])
result = evaluate(answered, metrics=[GroundedClaims(), ExactMatch()], show_progress=False)
frame = result.to_pandas()
frame.to_csv("result.csv")
frame.to_json("result.jsonl", orient="records", lines=True)
talk = MultiTurnSample(user_input=[HumanMessage(content="Hi"), AIMessage(content="Hello")])
EvaluationDataset(samples=[talk]).to_jsonl("multi_turn.jsonl")
EvaluationDataset(samples=[talk]).to_csv("multi_turn.csv")
json.dump(result.scores, open("ragas_result.json", "w"))
"""


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """The directory of the files ragas wrote, and the evaluate() scores of the first two
    samples."""
    workdir = tmp_path_factory.mktemp("ragas")
    scores: list[dict[str, Any]] = run_ragas(SCRIPT.format(samples=SAMPLES), workdir)
    return workdir, scores


def import_ragas(source: Path, out: Path, *options: str) -> int:
    return main(["import", "ragas", str(source), "--out", str(out), *options])


@pytest.mark.parametrize("name", ["dataset.jsonl", "dataset.csv"])
def test_a_dataset_ragas_wrote_becomes_unlabelled_verify_only_records(
    written: tuple[Path, list[dict[str, Any]]],
    name: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    workdir, _ = written
    out = tmp_path / "records.jsonl"
    assert import_ragas(workdir / name, out) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == f"ragas: read 4 rows from {workdir / name} (4 samples)"
    assert printed[1:4] == [
        "kept 2 records: unlabelled 2",
        "  filled: gold_answer empty (no reference) 1",
        "skipped 2: no response 1, no retrieved contexts 1",
    ]
    assert printed[4].startswith("labels: none: ragas samples carry no label")
    first, second = records(out)
    assert (first["question"], first["answer"]) == (
        SAMPLES[0]["user_input"],
        SAMPLES[0]["response"],
    )
    assert [(e["evidence_id"], e["text"]) for e in first["evidence"]] == [
        ("1", CONTEXTS[0]),
        ("2", CONTEXTS[1]),
    ]
    assert (first["gold_answer"], second["gold_answer"]) == ("Canberra.", "")
    assert first["gold_error"] is None and second["gold_error"] is None
    assert first["meta"] is None


@pytest.mark.parametrize("name", ["result.csv", "result.jsonl"])
def test_an_evaluate_result_keeps_ragas_scores_in_meta_beside_bench_run(
    written: tuple[Path, list[dict[str, Any]]],
    name: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    workdir, scores = written
    out = tmp_path / "records.jsonl"
    assert import_ragas(workdir / name, out) == 0
    imported = records(out)
    # pandas' to_json keeps 10 decimals of a float
    for record, score in zip(imported, scores, strict=True):
        assert record["meta"]["ragas"] == pytest.approx(score, abs=1e-10)
    assert set(imported[0]["meta"]) == {"ragas"}  # pandas' index column is no score
    run_dir = tmp_path / "run"
    argv = [
        "bench", "run", "--data", str(out), "--pattern", "entailment",
        "--verifier", "learned", "--out_dir", str(run_dir),
    ]  # fmt: skip
    assert main(argv) == 0
    run = load_run(run_dir)
    assert isinstance(run, BenchRun)
    for result, score in zip(run.results, scores, strict=True):
        assert result.verifier_score is not None
        assert 1 - result.verifier_score == pytest.approx(score["assay_grounded_claims"])
    capsys.readouterr()


def test_a_label_column_of_ones_own_labels_the_records(
    written: tuple[Path, list[dict[str, Any]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workdir, _ = written
    labelled = tmp_path / "labelled.jsonl"
    rows = records(workdir / "result.jsonl")
    rows[0]["hallucinated"], rows[1]["hallucinated"] = False, True
    labelled.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "records.jsonl"
    assert import_ragas(labelled, out, "--error-field", "hallucinated") == 0
    assert "kept 2 records: error 1, grounded 1" in capsys.readouterr().out
    first, second = records(out)
    assert (first["gold_error"], second["gold_error"]) == (False, True)
    assert second["meta"]["hallucinated"] is True and "hallucinated" not in second["meta"]["ragas"]
    # the same column read the other way, and as a column of categories
    assert import_ragas(labelled, out, "--grounded-field", "hallucinated") == 0
    assert [r["gold_error"] for r in records(out)] == [True, False]
    options = ("--error-field", "hallucinated", "--error-value", "TRUE")
    assert import_ragas(labelled, out, *options) == 0
    assert [r["gold_error"] for r in records(out)] == [False, True]
    capsys.readouterr()

    options = ("--error-field", "hallucinated", "--error-value", "yes")
    assert import_ragas(labelled, tmp_path / "typo.jsonl", *options) == 2
    assert one_error_line(capsys) == (
        f"error: {labelled} field 'hallucinated': no row's 'hallucinated' is 'yes' "
        "(--error-value); the field holds 'false' (1), 'true' (1)"
    )
    assert not (tmp_path / "typo.jsonl").exists()
    assert import_ragas(labelled, tmp_path / "half.jsonl", "--error-value", "true") == 2
    assert "--error-value goes with --error-field" in one_error_line(capsys)

    rows[1]["hallucinated"] = None  # a sample without a label is unlabelled
    labelled.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert import_ragas(labelled, out, "--error-field", "hallucinated") == 0
    assert "kept 2 records: grounded 1, unlabelled 1" in capsys.readouterr().out
    assert [r["gold_error"] for r in records(out)] == [False, None]


@pytest.mark.parametrize("name", ["multi_turn.jsonl", "multi_turn.csv"])
def test_multi_turn_samples_are_skipped_with_the_reason(
    written: tuple[Path, list[dict[str, Any]]],
    name: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    workdir, _ = written
    out = tmp_path / "records.jsonl"
    assert import_ragas(workdir / name, out) == 2
    assert one_error_line(capsys) == (
        f"error: {workdir / name}: nothing to import: no record kept of 1 rows (1 samples); "
        "skipped: multi-turn sample (user_input is a list of messages) 1"
    )
    assert not out.exists()


def test_a_bad_row_is_refused_naming_file_line_and_field(
    written: tuple[Path, list[dict[str, Any]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workdir, _ = written
    lines = (workdir / "dataset.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    bad_csv = tmp_path / "bad.csv"
    bad_csv.write_text(lines[0] + lines[1] + lines[2].replace("['", "[oops '", 1), encoding="utf-8")
    out = tmp_path / "records.jsonl"
    assert import_ragas(bad_csv, out) == 2
    error = one_error_line(capsys)
    assert error.startswith(
        f"error: {bad_csv}:3 field 'retrieved_contexts': expected a list of passages as ragas "
        "writes it in CSV (['passage', ...]), got "
    )
    bad_jsonl = tmp_path / "bad.jsonl"
    rows = records(workdir / "dataset.jsonl")
    rows[1]["response"] = 42
    bad_jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert import_ragas(bad_jsonl, out) == 2
    assert one_error_line(capsys).startswith(
        f"error: {bad_jsonl}:2 field 'response': expected a string, got int; this does not "
        "look like a ragas file"
    )
    assert not out.exists()
