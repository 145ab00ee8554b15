"""``assay import table``: tables of the user's own (JSON lines, a JSON array, CSV, gzip) mapped
by named fields to verify-only records through the real CLI; the label options; the refusals,
each one located error line; ``bench run`` on the records; and rows of the shared WiCE and
HaluEval files written in other shapes, which give the records their own importers give."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.data.grounded import load_records
from assay.data.importers import TableMapping, import_grounded
from assay.data.importers.table import import_table as import_table_file
from assay.errors import ConfigError
from tests.conftest import SHARED_DATA
from tests.helpers.cli_output import one_error_line, records
from tests.helpers.retrieved_documents import retrieved_documents

CANBERRA = "Canberra is the capital city of Australia."
PARLIAMENT = "Parliament House in Canberra opened in 1988."
ROWS: list[dict[str, Any]] = [
    {"query": "What is the capital of Australia?",
     "output": {"text": "The capital of Australia is Sydney.", "model": "hasty"},
     "contexts": [CANBERRA, "  ", PARLIAMENT], "verdict": "hallucinated", "latency_ms": 812},
    {"query": "What is the capital of Australia?",
     "output": {"text": "Canberra is the capital of Australia [cite:1].", "model": "careful"},
     "contexts": [CANBERRA], "verdict": "faithful", "latency_ms": 640},
    {"query": "When did Parliament House open?", "output": {"text": "  ", "model": "hasty"},
     "contexts": [PARLIAMENT], "verdict": "faithful", "latency_ms": 15},
    {"query": "When did Parliament House open?",
     "output": {"text": "It opened in 1988.", "model": "careful"}, "contexts": [" "],
     "latency_ms": 700},
]  # fmt: skip
NESTED = ("--question", "query", "--answer", "output.text", "--evidence", "contexts")


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    text = "".join(json.dumps(row) + "\n" for row in rows)
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def import_table(source: Path, out: Path, *options: str) -> int:
    return main(["import", "table", str(source), "--out", str(out), *options])


@pytest.mark.parametrize("name", ["log.jsonl", "log.jsonl.gz"])
def test_nested_fields_of_json_lines_become_records_and_the_rest_meta(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / name, ROWS)
    out = tmp_path / "records.jsonl"
    assert import_table(source, out, *NESTED) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"table: read 4 rows from {source} (4 rows, 3 with output.text, 3 with contexts)",
        "kept 2 records: unlabelled 2",
        "  filled: gold_answer empty (no reference) 2",
        "skipped 2: empty output.text (no answer to verify) 1, no passage in contexts (nothing "
        "to check the answer against) 1",
        "labels: none: the importer knows no label of a table of your own, so the records are "
        "unlabelled (bench run gives each a p_error; detection metrics need labels), unless "
        "--error-field PATH (true = the answer has a grounding error) or --grounded-field PATH "
        "(true = grounded) names a field of each row (with --error-value VALUE, a field of "
        "categories)",
        f"wrote 2 records to {out}",
    ]
    hasty, careful = records(out)
    assert (hasty["question"], hasty["answer"]) == (ROWS[0]["query"], ROWS[0]["output"]["text"])
    # the blank passage is dropped; the others keep their places as ids
    assert [(e["evidence_id"], e["text"]) for e in hasty["evidence"]] == [
        ("1", CANBERRA),
        ("3", PARLIAMENT),
    ]
    assert (hasty["gold_answer"], hasty["gold_error"]) == ("", None)
    assert hasty["id"].startswith("table-") and hasty["id"] != careful["id"]
    assert hasty["group"] == careful["group"]  # one question
    # what the record did not take, as it is: the nested object keeps its other keys
    assert hasty["meta"] == {"output": {"model": "hasty"}, "verdict": "hallucinated",
                             "latency_ms": 812}  # fmt: skip
    assert len(load_records(out).records) == 2  # the records load as bench run reads them


def test_each_label_option_reads_a_field_of_the_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [dict(row, hallucinated=row.get("verdict") == "hallucinated") for row in ROWS]
    source = write_jsonl(tmp_path / "log.jsonl", rows)
    out = tmp_path / "records.jsonl"
    assert import_table(source, out, *NESTED, "--error-field", "hallucinated") == 0
    assert "kept 2 records: error 1, grounded 1" in capsys.readouterr().out
    assert [r["gold_error"] for r in records(out)] == [True, False]
    assert records(out)[0]["meta"]["hallucinated"] is True  # the label stays in meta
    assert import_table(source, out, *NESTED, "--grounded-field", "hallucinated") == 0
    assert [r["gold_error"] for r in records(out)] == [False, True]
    options = ("--error-field", "verdict", "--error-value", "Hallucinated")
    assert import_table(source, out, *NESTED, *options) == 0
    assert [r["gold_error"] for r in records(out)] == [True, False]
    capsys.readouterr()

    options = ("--error-field", "verdict", "--error-value", "wrong")
    assert import_table(source, tmp_path / "typo.jsonl", *NESTED, *options) == 2
    assert one_error_line(capsys) == (
        f"error: {source} field 'verdict': no row's 'verdict' is 'wrong' (--error-value); the "
        "field holds 'hallucinated' (1), 'faithful' (1)"
    )
    assert import_table(source, tmp_path / "typo.jsonl", *NESTED, "--error-field", "halu") == 2
    assert one_error_line(capsys) == (
        f"error: {source} field 'halu': --error-field halu: no row has this field; the records "
        "would all be unlabelled"
    )
    assert not (tmp_path / "typo.jsonl").exists()


def test_a_json_array_of_rows_with_passage_objects(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {"trace": 17, "session": "s1", "prompt": "Where is the Eiffel Tower?",
         "reply": "It is in Paris [cite:d2].", "ideal": "In Paris.", "ok": "True",
         "docs": [{"id": "d1", "text": "The tower is 330 metres tall.", "score": 0.4},
                  {"evidence_id": "d2", "text": "The Eiffel Tower is in Paris.",
                   "title": "Eiffel Tower", "source": "https://example.org/eiffel"},
                  {"text": "It was completed in 1889."},
                  {"id": "d4", "text": ""}]},
        {"trace": "t-18", "session": "s1", "prompt": "How tall is it?",
         "reply": "It is 500 metres tall.", "ok": "false",
         "docs": "The tower is 330 metres tall."},
    ]  # fmt: skip
    source = tmp_path / "traces.json"
    source.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    out = tmp_path / "records.jsonl"
    options = ("--id", "trace", "--group", "session", "--reference", "ideal")
    fields = ("--question", "prompt", "--answer", "reply", "--evidence", "docs")
    assert import_table(source, out, *fields, *options, "--grounded-field", "ok") == 0
    assert capsys.readouterr().out.splitlines()[1:3] == [
        "kept 2 records: error 1, grounded 1",
        "  filled: gold_answer empty (no reference) 1",
    ]
    paris, height = records(out)
    assert (paris["id"], height["id"]) == ("17", "t-18")
    assert paris["group"] == height["group"] == "s1"
    assert (paris["gold_answer"], height["gold_answer"]) == ("In Paris.", "")
    assert (paris["gold_error"], height["gold_error"]) == (False, True)
    assert paris["evidence"] == [
        {"evidence_id": "d1", "title": None, "text": "The tower is 330 metres tall.",
         "source": None, "meta": {"score": 0.4}},
        {"evidence_id": "d2", "title": "Eiffel Tower", "text": "The Eiffel Tower is in Paris.",
         "source": "https://example.org/eiffel"},
        {"evidence_id": "3", "title": None, "text": "It was completed in 1889.", "source": None},
    ]  # fmt: skip
    assert [(e["evidence_id"], e["text"]) for e in height["evidence"]] == [
        ("1", "The tower is 330 metres tall.")
    ]
    assert paris["meta"] == {"ok": "True"}


@pytest.mark.parametrize("name", ["table.csv", "table.csv.gz"])
def test_csv_cells_hold_lists_as_json_or_python_text(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    header = ["question", "answer.text", "passages", "hallucinated", "model"]
    rows = [
        ["What is the capital of Australia?", "The capital is Sydney.",
         json.dumps([CANBERRA, PARLIAMENT]), "True", "hasty"],
        ["What is the capital of Australia?", "The capital is Canberra.",
         repr([CANBERRA, "it's \"quoted\"\nover two lines"]), "false", "careful"],
        ["When did Parliament House open?", "In 1988.", PARLIAMENT, "", "careful"],
        ["When did Parliament House open?", "In 1988.", "", "false", "hasty"],
    ]  # fmt: skip
    plain = write_csv(tmp_path / "table.csv", header, rows)
    source = tmp_path / name
    if name.endswith(".gz"):
        source.write_bytes(gzip.compress(plain.read_bytes()))
    out = tmp_path / "records.jsonl"
    fields = ("--question", "question", "--answer", "answer.text", "--evidence", "passages")
    assert import_table(source, out, *fields, "--error-field", "hallucinated") == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[1:4] == [
        "kept 3 records: error 1, grounded 1, unlabelled 1",
        "  filled: gold_answer empty (no reference) 3",
        "skipped 1: no passage in passages (nothing to check the answer against) 1",
    ]
    sydney, canberra, opened = records(out)
    assert [e["text"] for e in sydney["evidence"]] == [CANBERRA, PARLIAMENT]
    assert [e["text"] for e in canberra["evidence"]] == [
        CANBERRA,
        'it\'s "quoted"\nover two lines',
    ]
    assert [(e["evidence_id"], e["text"]) for e in opened["evidence"]] == [("1", PARLIAMENT)]
    # the flat column whose name holds a dot is the answer, and is not kept in meta
    assert sydney["answer"] == "The capital is Sydney."
    assert sydney["meta"] == {"hallucinated": "True", "model": "hasty"}
    assert [r["gold_error"] for r in (sydney, canberra, opened)] == [True, False, None]


def test_where_keeps_the_records_of_a_column_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "log.jsonl", ROWS)
    out = tmp_path / "records.jsonl"
    assert import_table(source, out, *NESTED, "--where", "meta.output.model=careful") == 0
    assert "kept 1 of 2 records where meta.output.model is careful" in capsys.readouterr().out
    assert [r["meta"]["output"]["model"] for r in records(out)] == ["careful"]


def refusal_cases(tmp_path: Path) -> dict[str, tuple[Path, tuple[str, ...], str]]:
    """name -> (file, options, the error line), one per kind of refusal."""
    log = write_jsonl(tmp_path / "log.jsonl", ROWS)
    typed = write_jsonl(tmp_path / "typed.jsonl", [ROWS[0], dict(ROWS[1], query=["a", "b"])])
    number = write_jsonl(tmp_path / "number.jsonl", [dict(ROWS[0], contexts=7)])
    passage = write_jsonl(tmp_path / "passage.jsonl", [dict(ROWS[0], contexts=[{"body": "x"}])])
    repeated = [dict(ROWS[0], contexts=[{"id": "2", "text": "a"}, "b"])]
    repeated_ids = write_jsonl(tmp_path / "repeated.jsonl", repeated)
    cited_rows = [dict(ROWS[0], output={"text": "Sydney [cite:9]."})]
    unknown_cite = write_jsonl(tmp_path / "unknown.jsonl", cited_rows)
    header = ["question", "answer", "passages"]
    cell = write_csv(
        tmp_path / "cell.csv",
        header,
        [["q", "a", '["fine"]'], ["q", "a", "['not closed', 'list'"]],
    )
    csv_options = ("--answer", "answer", "--evidence", "passages")
    fields = "contexts, latency_ms, output.model, output.text, query, verdict"
    return {
        "a mapped field no row has": (
            log,
            ("--question", "query", "--answer", "output.txt", "--evidence", "contexts"),
            f"error: {log} field 'output.txt': --answer output.txt: no row has this field (the "
            f"rows have {fields})",
        ),
        "an optional field no row has": (
            log,
            (*NESTED, "--reference", "gold"),
            f"error: {log} field 'gold': --reference gold: no row has this field (the rows "
            f"have {fields})",
        ),
        "a field of the wrong type": (
            typed,
            NESTED,
            f"error: {typed}:2 field 'query': expected a string (--question), got list",
        ),
        "evidence of the wrong type": (
            number,
            NESTED,
            f"error: {number}:1 field 'contexts': expected a list of passages or one passage "
            "as text (--evidence), got int",
        ),
        "a passage object without text": (
            passage,
            NESTED,
            f"error: {passage}:1 field 'contexts[0].text': expected a passage object with a "
            "'text' (or 'page_content', 'content'), and optionally 'id' (or 'evidence_id', "
            "'id_'), 'title', 'source' (or 'url', 'file_path', 'file_name') (--evidence), got "
            "none as its text (the object has: body)",
        ),
        "two passages with one id": (
            repeated_ids,
            NESTED,
            f"error: {repeated_ids}:1 field 'contexts[1]': the evidence id '2' is given to two "
            "passages of the row (a passage without an id takes its place in the list as its id)",
        ),
        "a citation of no passage": (
            unknown_cite,
            NESTED,
            f"error: {unknown_cite}:1 field 'output.text': cites unknown evidence id '9' "
            "(record 'table-ae9a9ea000'; evidence ids: 1, 3)",
        ),
        "a bad list cell": (
            cell,
            csv_options,
            f"error: {cell}:3 field 'passages': expected a list of passages in a cell that "
            "starts with '[' (JSON's [\"...\", ...] or Python's ['...', ...]), got \"['not "
            "closed', 'list'\"",
        ),
    }


@pytest.mark.parametrize(
    "case",
    [
        "a mapped field no row has",
        "an optional field no row has",
        "a field of the wrong type",
        "evidence of the wrong type",
        "a passage object without text",
        "two passages with one id",
        "a citation of no passage",
        "a bad list cell",
    ],
)
def test_a_bad_table_is_one_located_error_and_exit_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, options, expected = refusal_cases(tmp_path)[case]
    out = tmp_path / "records.jsonl"
    assert import_table(source, out, *options) == 2
    assert one_error_line(capsys) == expected
    assert not out.exists()


def test_a_bad_list_cell_hints_at_a_list_of_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_csv(tmp_path / "t.csv", ["a", "e"], [["x", "[1] Canberra is the capital."]])
    assert import_table(source, tmp_path / "o.jsonl", "--answer", "a", "--evidence", "e") == 2
    hint = capsys.readouterr().err.strip().splitlines()[1]
    assert (
        hint == '  hint: one passage that starts with "[" is written as a list of one: ["[1] ..."]'
    )
    source = write_csv(tmp_path / "t.csv", ["a", "e"], [["x", '["[1] Canberra is the capital."]']])
    assert import_table(source, tmp_path / "o.jsonl", "--answer", "a", "--evidence", "e") == 0
    (record,) = records(tmp_path / "o.jsonl")
    assert record["evidence"][0]["text"] == "[1] Canberra is the capital."


def test_a_misnamed_option_value_and_a_file_of_nothing_to_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "log.jsonl", ROWS[2:3])
    out = tmp_path / "records.jsonl"
    assert import_table(source, out, "--answer", "output.", "--evidence", "contexts") == 2
    assert one_error_line(capsys) == (
        "error: --answer 'output.': expected a field name, dotted for a nested one"
    )
    assert import_table(source, out, *NESTED) == 2
    assert one_error_line(capsys) == (
        f"error: {source}: nothing to import: no record kept of 1 rows (1 rows, 0 with "
        "output.text, 1 with contexts); skipped: empty output.text (no answer to verify) 1"
    )
    assert not out.exists()


def test_from_python_the_mapping_is_given_to_the_table_importer(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "log.jsonl", ROWS)
    with pytest.raises(ConfigError, match="the table importer reads the fields you name"):
        import_grounded("table", source)
    result = import_table_file(source, TableMapping.parse("output.text", "contexts"))
    assert (result.report.kept, result.report.rows) == (2, 4)
    assert result.report.filled == {
        "gold_answer empty (no reference)": 2,
        "question empty (no question)": 2,
    }
    # without a question, each record is a group of its own
    assert [record.group for record in result.records] == [None, None]


def test_bench_run_scores_the_imported_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "log.jsonl", ROWS)
    data = tmp_path / "records.jsonl"
    options = ("--error-field", "verdict", "--error-value", "hallucinated")
    assert import_table(source, data, *NESTED, *options) == 0
    run_dir = tmp_path / "run"
    argv = [
        "bench", "run", "--data", str(data), "--pattern", "entailment", "--verifier", "learned",
        "--out_dir", str(run_dir), "--no-report", "--no-progress", "--n-resamples", "20",
    ]  # fmt: skip
    capsys.readouterr()
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "scored 2/2" in printed and "labelled and scored 2" in printed
    assert (run_dir / "summary.json").is_file()


# ------------------------------------------------- shared data written in other shapes


def first_rows(path: Path, count: int) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(next(handle)) for _ in range(count)]


def test_wice_rows_as_a_csv_table_give_what_the_wice_importer_gives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = first_rows(SHARED_DATA / "wice" / "claim_dev.jsonl", 12)
    original = write_jsonl(tmp_path / "claims.jsonl", rows)
    # the page's sentences as Python's text of the list (as pandas writes a list in CSV), the
    # label as WiCE's three categories, the claim's id of the wice importer in a column
    table = write_csv(
        tmp_path / "claims.csv",
        ["claim_id", "statement", "page_sentences", "verdict", "article"],
        [
            [f"wice-{row['meta']['id']}", row["claim"], repr(row["evidence"]), row["label"],
             row["meta"]["claim_title"]]
            for row in rows
        ],
    )  # fmt: skip
    assert main(["import", "wice", str(original), "--out", str(tmp_path / "wice.jsonl")]) == 0
    options = (
        "--id", "claim_id", "--answer", "statement", "--reference", "statement",
        "--evidence", "page_sentences", "--error-field", "verdict",
        "--error-value", "partially_supported", "--error-value", "NOT_SUPPORTED",
    )  # fmt: skip
    assert import_table(table, tmp_path / "table.jsonl", *options) == 0
    assert (
        "labels: field 'verdict' = 'partially_supported' or 'NOT_SUPPORTED' -> grounding error"
        in capsys.readouterr().out
    )
    wice, mine = records(tmp_path / "wice.jsonl"), records(tmp_path / "table.jsonl")
    assert len(mine) == len(wice) == 12
    assert {r["gold_error"] for r in mine} == {True, False}
    for row, theirs, ours in zip(rows, wice, mine, strict=True):
        same = ("id", "question", "answer", "gold_answer", "gold_error")
        assert {k: ours[k] for k in same} == {k: theirs[k] for k in same}
        # WiCE numbers sentences from 0, a table's list from 1: the same passages in order
        assert [(int(e["evidence_id"]) - 1, e["text"]) for e in ours["evidence"]] == [
            (int(e["evidence_id"]), e["text"]) for e in theirs["evidence"]
        ]
        assert ours["meta"] == {"verdict": row["label"],
                                "article": theirs["meta"]["article"]}  # fmt: skip
    # each value that means an error must be one a row holds: a typo is refused by name
    typo = (*options[:-1], "not_suported")
    assert import_table(table, tmp_path / "typo.jsonl", *typo) == 2
    assert one_error_line(capsys).startswith(
        f"error: {table} field 'verdict': no row's 'verdict' is 'not_suported' (--error-value); "
        "the field holds 'partially_supported' (6), 'supported' (4), 'not_supported' (2)"
    )


def test_halueval_rows_as_nested_json_lines_give_what_the_halueval_importer_gives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = first_rows(SHARED_DATA / "halueval" / "qa_one-turn_data.json", 6)
    original = write_jsonl(tmp_path / "qa.jsonl", rows)
    # one answer per line, the question and knowledge nested, the label a truth value
    table = write_jsonl(
        tmp_path / "answers.jsonl.gz",
        [
            {"sample": {"q": row["question"], "kb": row["knowledge"]}, "reply": row[kind],
             "gold": row["right_answer"], "is_hallucination": kind == "hallucinated_answer"}
            for row in rows
            for kind in ("right_answer", "hallucinated_answer")
        ],
    )  # fmt: skip
    assert main(["import", "halueval", str(original), "--out", str(tmp_path / "h.jsonl")]) == 0
    options = (
        "--question", "sample.q", "--answer", "reply", "--reference", "gold",
        "--evidence", "sample.kb", "--error-field", "is_hallucination",
    )  # fmt: skip
    assert import_table(table, tmp_path / "table.jsonl", *options) == 0
    assert "kept 12 records: error 6, grounded 6" in capsys.readouterr().out

    def comparable(record: dict[str, Any]) -> tuple[Any, ...]:
        texts = tuple(e["text"] for e in record["evidence"])
        return (record["question"], record["answer"], record["gold_answer"], texts,
                record["gold_error"])  # fmt: skip

    theirs = sorted(map(comparable, records(tmp_path / "h.jsonl")))
    ours = sorted(map(comparable, records(tmp_path / "table.jsonl")))
    assert ours == theirs
    # the two answers to one question are one group, as halueval groups them
    groups = [r["group"] for r in records(tmp_path / "table.jsonl")]
    assert len(set(groups)) == 6 and groups[0] == groups[1]


def test_documents_of_langchain_llamaindex_and_haystack_are_passages(tmp_path: Path) -> None:
    documents = retrieved_documents()
    row = {"q": "Tell me about Paris.", "a": "Paris is the capital of France [cite:node-3].",
           "docs": [document for _, document in documents]}  # fmt: skip
    source = write_jsonl(tmp_path / "rag.jsonl", [row])
    out = tmp_path / "records.jsonl"
    assert import_table(source, out, "--question", "q", "--answer", "a", "--evidence", "docs") == 0
    (record,) = records(out)
    paris = "https://example.org/paris"
    assert record["evidence"] == [
        {"evidence_id": "1", "title": None, "text": "Paris is the capital of France.",
         "source": paris, "meta": {"metadata": {"source": paris, "page": 3}}},
        {"evidence_id": "lc-2", "title": "Seine", "text": "The Seine flows through Paris.",
         "source": None, "meta": {"metadata": {"title": "Seine"}}},
        {"evidence_id": "node-3", "title": None, "text": "The Louvre is in Paris.",
         "source": "louvre.txt", "meta": {"metadata": {"file_name": "louvre.txt"}}},
        {"evidence_id": "node-4", "title": None, "text": "Paris hosted the 1900 Olympics.",
         "source": None, "meta": {"score": 0.82}},
        {"evidence_id": documents[4][0], "title": "Montmartre",
         "text": "Montmartre is a hill in Paris.", "source": paris,
         "meta": {"page": 7, "score": 0.61}},
        {"evidence_id": "hs-6", "title": None, "text": "Paris has 20 arrondissements.",
         "source": None},
    ]  # fmt: skip


def test_a_retrievers_score_goes_with_its_passage_into_the_results_and_the_report(
    tmp_path: Path,
) -> None:
    documents = [document for _, document in retrieved_documents()]
    row = {"a": "Paris hosted the 1900 Olympics [cite:node-4].", "docs": documents}
    data = tmp_path / "records.jsonl"
    assert import_table(write_jsonl(tmp_path / "rag.jsonl", [row]), data, "--answer", "a",
                        "--evidence", "docs") == 0  # fmt: skip
    run_dir = tmp_path / "run"
    argv = [
        "bench", "run", "--data", str(data), "--pattern", "entailment", "--verifier", "learned",
        "--out_dir", str(run_dir), "--no-progress", "--n-resamples", "20",
    ]  # fmt: skip
    assert main(argv) == 0
    (result,) = [json.loads(line) for line in (run_dir / "results.jsonl").open()]
    metas = {item["evidence_id"]: item.get("meta") for item in result["evidence"]}
    assert metas["node-4"] == {"score": 0.82} and metas["hs-6"] is None  # hs-6: none to keep
    assert "meta: score 0.82" in (run_dir / "report.html").read_text(encoding="utf-8")


def test_a_librarys_metadata_of_another_type_is_passed_over_and_a_passages_own_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    passages: list[dict[str, object]] = [
        {"page_content": "Paris is in France.", "metadata": {"source": 7, "title": None}}
    ]
    source = write_jsonl(tmp_path / "rag.jsonl", [{"a": "Paris is in France.", "d": passages}])
    out = tmp_path / "records.jsonl"
    assert import_table(source, out, "--answer", "a", "--evidence", "d") == 0
    (record,) = records(out)
    assert record["evidence"] == [
        {"evidence_id": "1", "title": None, "text": "Paris is in France.", "source": None,
         "meta": {"metadata": {"source": 7, "title": None}}}
    ]  # fmt: skip
    passages = [{"node": {"text": "Paris is in France.", "url": 7}, "score": 0.5}]
    source = write_jsonl(tmp_path / "rag.jsonl", [{"a": "Paris is in France.", "d": passages}])
    assert import_table(source, out, "--answer", "a", "--evidence", "d") == 2
    assert one_error_line(capsys) == (
        f"error: {source}:1 field 'd[0].node.url': expected a string (--evidence), got int"
    )
