"""The LLM-AggreFact importer on real claims in the benchmark's form: the three shared datasets
written as LLM-AggreFact rows by ``scripts/aggrefact_form.py`` (JSON lines, CSV, gzip), imported
back, run through the learned checker, and sliced by source dataset; bad rows give one located
error."""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from assay.cli import main
from assay.data.grounded import load_records
from assay.data.importers import GroundedImport, import_grounded
from assay.errors import InputError

from ..conftest import REPO_ROOT, SHARED_DATA

SCRIPT = REPO_ROOT / "scripts" / "aggrefact_form.py"
NATIVE = {"ExpertQA": "expertqa", "Wice": "wice", "HaluEval": "halueval"}
NATIVE_FILES = {
    "expertqa": "expertqa/domain_val.jsonl",
    "wice": "wice/claim_dev.jsonl",
    "halueval": "halueval/qa_one-turn_data.json",
}


def write_form(out: Path, *extra: str) -> Path:
    """The shared datasets in LLM-AggreFact's form, written by the script as a user runs it."""
    command = [sys.executable, str(SCRIPT), "--out", str(out), "--data-dir", str(SHARED_DATA)]
    done = subprocess.run([*command, *extra], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("wrote 2026 rows")
    return out


@cache
def form_file(suffix: str, directory: Path) -> Path:
    return write_form(directory / f"aggrefact{suffix}")


@cache
def native(name: str) -> GroundedImport:
    return import_grounded(name, SHARED_DATA / NATIVE_FILES[name])


@pytest.fixture(scope="module")
def form_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("aggrefact")


@pytest.fixture(scope="module")
def jsonl_import(form_dir: Path) -> GroundedImport:
    return import_grounded("aggrefact", form_file(".jsonl", form_dir))


def test_counts_by_source_and_labels_match_the_native_imports(
    jsonl_import: GroundedImport,
) -> None:
    report = jsonl_import.report
    assert report.units == {"ExpertQA": 677, "Wice": 349, "HaluEval": 1000}
    assert report.kept == 2026 and report.skipped == {}
    by_source = Counter(((r.meta or {})["dataset"], r.gold_error) for r in jsonl_import.records)
    for source, name in NATIVE.items():
        labels = native(name).report.labels
        assert by_source[(source, True)] == labels["error"]
        assert by_source[(source, False)] == labels["grounded"]
    assert report.error_types == {"unsupported": 923}


def test_records_keep_the_claim_the_document_and_its_source(
    jsonl_import: GroundedImport,
) -> None:
    records = jsonl_import.records
    assert len({r.id for r in records}) == len(records)
    assert all(r.question == "" and r.answer == r.gold_answer for r in records)
    halueval = [r for r in records if (r.meta or {})["dataset"] == "HaluEval"]
    originals = native("halueval").records
    assert [r.answer for r in halueval] == [r.answer for r in originals]
    assert [r.evidence[0].text for r in halueval] == [r.evidence[0].text for r in originals]
    # ExpertQA's cited passages were separated by blank lines: one evidence item per paragraph
    expertqa = [r for r in records if (r.meta or {})["dataset"] == "ExpertQA"]
    assert [[e.text for e in r.evidence] for r in expertqa] == [
        [p.strip() for e in r.evidence for p in re.split(r"\n\s*\n", e.text) if p.strip()]
        for r in native("expertqa").records
    ]
    assert expertqa[0].evidence[0].evidence_id == "p0"
    # claims on one document share a group (HaluEval's two answers share their knowledge)
    groups = Counter(r.cluster for r in halueval)
    assert len(groups) == 500 and set(groups.values()) == {2}
    assert all(r.cluster.startswith("aggrefact-halueval-doc:") for r in halueval)


def test_csv_and_gzip_give_the_same_records(form_dir: Path, jsonl_import: GroundedImport) -> None:
    from_csv = import_grounded("aggrefact", form_file(".csv", form_dir))
    assert from_csv.records == jsonl_import.records
    packed = form_dir / "aggrefact.jsonl.gz"
    packed.write_bytes(gzip.compress(form_file(".jsonl", form_dir).read_bytes()))
    assert import_grounded("aggrefact", packed).records == jsonl_import.records


def test_a_multiline_csv_row_is_named_by_the_line_it_starts_on(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["", "dataset", "doc", "claim", "label"])  # pandas' index column
        writer.writerow(["0", "Lfqa", "First paragraph.\n\nSecond one.", "A claim.", "1"])
        writer.writerow(["1", "Lfqa", "One\nline\nper\nword.", "Another claim.", "2"])
    with pytest.raises(InputError) as caught:
        import_grounded("aggrefact", path)
    assert (caught.value.line, caught.value.field) == (5, "label")
    assert "unknown label '2'" in str(caught.value)
    assert "does not look like" not in str(caught.value)  # right shape, bad value


@pytest.mark.parametrize(
    ("row", "field", "phrase"),
    [
        ({"dataset": "Lfqa", "doc": "d", "claim": "c", "label": 2}, "label", "unknown label 2"),
        # JSON lines hold the integers 0/1: another type is refused, never read as a label
        (
            {"dataset": "Lfqa", "doc": "d", "claim": "c", "label": True},
            "label",
            "unknown label true (a boolean; a label in JSON lines is the integer 1",
        ),
        (
            {"dataset": "Lfqa", "doc": "d", "claim": "c", "label": "0"},
            "label",
            'unknown label "0" (a string; a label in JSON lines is the integer 1',
        ),
        (
            {"dataset": "Lfqa", "doc": "d", "claim": "c", "label": 1.0},
            "label",
            "unknown label 1.0 (a float; a label in JSON lines is the integer 1",
        ),
        ({"dataset": "Lfqa", "doc": "d", "claim": "c", "label": None}, "label", "label null (null"),
        ({"dataset": "Lfqa", "doc": "d", "claim": "c"}, "label", "missing field"),
        ({"dataset": "Lfqa", "claim": "c", "label": 1}, "doc", "does not look like an aggrefact"),
        ({"dataset": "Lfqa", "doc": 3, "claim": "c", "label": 1}, "doc", "expected a string"),
        (
            {"dataset": "Lfqa", "doc": "d", "claim": "c", "label": 1, "group": 7},
            "group",
            "expected a string",
        ),
    ],
)
def test_a_bad_row_gives_one_located_error(
    row: dict[str, object], field: str, phrase: str, tmp_path: Path
) -> None:
    good = {"dataset": "Lfqa", "doc": "A page.", "claim": "A claim.", "label": 0}
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_grounded("aggrefact", path)
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), 2, field)
    assert phrase in str(caught.value)


def test_a_string_label_in_json_lines_stops_the_import_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``"label": "1"`` is what a CSV cell holds, not a JSON line: one located error, exit 2."""
    path, out = tmp_path / "rows.jsonl", tmp_path / "out.jsonl"
    rows = [{"dataset": "X", "doc": "d", "claim": "c", "label": v} for v in (1, "1")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["import", "aggrefact", str(path), "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: {path}:2 field 'label': unknown label \"1\" (a string; a label in JSON lines is "
        "the integer 1 = supported or 0)\n"
    )
    assert not out.exists()


def test_a_row_may_name_its_own_group(tmp_path: Path) -> None:
    """Claims of one answer, each on passages of its own, cluster by the row's ``group``; rows
    without one cluster by their document, as before."""
    rows = [
        {"dataset": "FactCheck-GPT", "doc": "Page one.", "claim": "A.", "label": 1, "group": "q1"},
        {"dataset": "FactCheck-GPT", "doc": "Page two.", "claim": "B.", "label": 0, "group": "q1"},
        {"dataset": "FactCheck-GPT", "doc": "Page two.", "claim": "C.", "label": 0, "group": " "},
        {"dataset": "FactCheck-GPT", "doc": "Page two.", "claim": "D.", "label": 1},
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    clusters = [r.cluster for r in import_grounded("aggrefact", path).records]
    assert clusters[0] == clusters[1] and clusters[0].startswith("aggrefact-factcheck-gpt-group:")
    assert clusters[2] == clusters[3] and clusters[2].startswith("aggrefact-factcheck-gpt-doc:")
    assert clusters[1] != clusters[2]


@pytest.mark.parametrize(
    ("name", "text", "phrase"),
    [
        ("x.parquet", "PAR1", "export the split as JSON lines or CSV"),
        ("x.csv", "", "the file is empty"),
        ("x.csv", "dataset,doc,claim,label\n", "a header and no row"),
        ("x.csv", "dataset,doc,claim,label\nLfqa,d,c\n", "3 values for the header's 4"),
        ("x.jsonl", "", "the file is empty"),
    ],
)
def test_unreadable_files(name: str, text: str, phrase: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_grounded("aggrefact", path)
    assert phrase in str(caught.value)


def test_a_csv_header_naming_a_column_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rows are read by column name: the second ``label`` would silently win over the first."""
    path, out = tmp_path / "rows.csv", tmp_path / "out.jsonl"
    path.write_text("dataset,doc,claim,label,label\nLfqa,d,c,1,0\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_grounded("aggrefact", path)
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), 1, "label")
    assert "names the column 'label' twice (columns 4 and 5)" in str(caught.value)
    assert main(["import", "aggrefact", str(path), "--out", str(out)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {path}:1 field 'label': the header names")
    assert not out.exists()


def test_unreadable_csv_bytes_are_located_errors(tmp_path: Path) -> None:
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"dataset,doc,claim,label\nLfqa,caf\xe9,c,1\n")
    with pytest.raises(InputError) as caught:
        import_grounded("aggrefact", latin)
    assert str(caught.value) == f"{latin}:2: not UTF-8 text (byte 9 of the line)"
    broken = tmp_path / "broken.csv.gz"
    broken.write_bytes(b"\x1f\x8b" + b"not a gzip stream at all" * 4)  # gzip's magic, then junk
    with pytest.raises(InputError, match="not a readable CSV file"):
        import_grounded("aggrefact", broken)


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
def test_a_byte_that_is_not_utf8_is_named_by_its_physical_line(suffix: str, tmp_path: Path) -> None:
    """Rows whose documents hold line breaks span several lines: the error names the line the
    byte is on (as in JSON lines), not the row being parsed nor where a decoded block ended."""
    text = io.StringIO()
    rows = [["X", f"Paragraph {i}.\n\nAnother paragraph.", f"Claim {i}.", "1"] for i in range(900)]
    csv.writer(text).writerows([["dataset", "doc", "claim", "label"], *rows])
    lines = text.getvalue().encode("utf-8").split(b"\n")  # row i starts on line 3 * i + 2
    assert lines[2500] == b'X,"Paragraph 833.'
    lines[2500] = b'X,"Paragraph 8\xff33.'  # line 2501, byte 15
    path = tmp_path / f"rows{suffix}"
    data = b"\n".join(lines)
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    with pytest.raises(InputError) as caught:
        import_grounded("aggrefact", path)
    assert str(caught.value) == f"{path}:2501: not UTF-8 text (byte 15 of the line)"


@pytest.mark.parametrize("end", [b"\r\n", b"\n", b"\r"])
def test_csv_line_ends_and_a_byte_order_mark(end: bytes, tmp_path: Path) -> None:
    """Windows, Unix and old Mac line ends, a BOM before the header (Excel writes one), and a
    quoted field spanning lines."""
    path = tmp_path / "rows.csv"
    rows = [b"dataset,doc,claim,label", b'X,"Page.' + end + end + b'More.",c,1', b"X,d,c2,0"]
    path.write_bytes(b"\xef\xbb\xbf" + end.join(rows) + end)
    first, second = import_grounded("aggrefact", path).records
    assert first.evidence[0].text.startswith("Page.") and first.evidence[-1].text.endswith("More.")
    assert (first.gold_error, second.gold_error, second.answer) == (False, True, "c2")


def test_a_csv_document_longer_than_csvs_default_field_limit(tmp_path: Path) -> None:
    page = "A sentence of the page. " * 20_000  # 480,000 characters
    path = tmp_path / "long.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([["dataset", "doc", "claim", "label"], ["X", page, "c", 1]])
    (record,) = import_grounded("aggrefact", path).records
    assert record.evidence[0].text == page.strip()


def test_empty_claims_and_documents_are_skipped_and_counted(tmp_path: Path) -> None:
    rows = [
        {
            "dataset": "Lfqa",
            "doc": "A page.\n\n\n  \nIts second paragraph.",
            "claim": "C.",
            "label": 1,
        },
        {"dataset": "Lfqa", "doc": "  ", "claim": "C.", "label": 0},
        {"dataset": "RAGTruth", "doc": "A page.", "claim": "", "label": 0},
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = import_grounded("aggrefact", path)
    assert result.report.skipped == {"empty document": 1, "empty claim": 1}
    assert result.report.units == {"Lfqa": 2, "RAGTruth": 1}
    (record,) = result.records
    assert [e.text for e in record.evidence] == ["A page.", "Its second paragraph."]
    assert record.gold_error is False and record.meta == {"dataset": "Lfqa"}


def test_import_run_and_slices_by_source_dataset(
    form_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The documented path: import, run the learned checker, read the metrics per dataset.
    ExpertQA and HaluEval score exactly as through their own importers (the same evidence
    items); WiCE's page is one document here instead of one item per sentence."""
    out = tmp_path / "agg.jsonl"
    assert main(["import", "aggrefact", str(form_file(".jsonl", form_dir)), "--out", str(out)]) == 0
    assert "(677 ExpertQA, 349 Wice, 1000 HaluEval)" in capsys.readouterr().out
    assert load_records(out).skipped == ()
    run = tmp_path / "run"
    argv = ["bench", "run", "--data", str(out), "--pattern", "entailment", "--verifier", "learned"]
    assert main([*argv, "--out_dir", str(run), "--no-progress", "--n-resamples", "50"]) == 0
    capsys.readouterr()
    assert (
        main(["bench", "summarize", str(run), "--by", "meta.dataset", "--n-resamples", "50"]) == 0
    )
    table = capsys.readouterr().out
    rows = {line.split("|")[1].strip(): line for line in table.splitlines() if line.count("|") > 5}
    assert {"ExpertQA", "Wice", "HaluEval"} <= set(rows)
    assert "| 677 | 0.279 | 0.590" in rows["ExpertQA"]
    assert "| 1000 | 0.500 | 0.850" in rows["HaluEval"]
    assert "| 349 | 0.670 | 0.77" in rows["Wice"]


def test_import_keeps_only_the_source_datasets_asked_for(
    form_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, out = str(form_file(".jsonl", form_dir)), tmp_path / "two.jsonl"
    where = ["--where", "meta.dataset=Wice", "--where", "meta.dataset=HaluEval"]
    assert main(["import", "aggrefact", source, "--out", str(out), *where]) == 0
    assert "kept 1349 of 2026 records where meta.dataset is HaluEval or Wice" in (
        capsys.readouterr().out
    )
    kept = load_records(out).records
    assert Counter((r.meta or {})["dataset"] for r in kept) == {"HaluEval": 1000, "Wice": 349}
    misspelt = ["import", "aggrefact", source, "--out", str(tmp_path / "none.jsonl")]
    assert main([*misspelt, "--where", "meta.dataset=LFQA"]) == 2
    err = capsys.readouterr().err
    assert "no record has the value 'LFQA'" in err and "ExpertQA, HaluEval, Wice" in err
    assert not (tmp_path / "none.jsonl").exists()
