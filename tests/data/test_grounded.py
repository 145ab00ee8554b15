"""Loading grounded-QA JSONL: good records, and one located InputError per bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.data.citations import answer_citations
from assay.data.grounded import iter_records, load_records, write_records
from assay.errors import InputError


def _record(**changes: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": "q1",
        "question": "When was the bridge opened?",
        "gold_answer": "It opened in 1932 [cite:e1].",
        "evidence": [
            {"evidence_id": "e1", "title": "Bridge", "text": "The bridge opened in 1932."},
            {"evidence_id": "e2", "text": "It is made of steel.", "source": "notes"},
        ],
        "gold_citations": [{"evidence_id": "e1", "span": "opened in 1932"}],
    }
    record.update(changes)
    return record


def _write(tmp_path: Path, lines: list[Any]) -> Path:
    path = tmp_path / "data.jsonl"
    text = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def test_loads_valid_records_and_round_trips(tmp_path: Path) -> None:
    path = _write(
        tmp_path, [_record(), "", _record(id="q2", answer="x [cite:e2]", gold_error=True)]
    )
    result = load_records(path)
    assert [r.id for r in result.records] == ["q1", "q2"]
    assert result.records[1].gold_error is True
    assert result.records[0].evidence_by_id()["e2"].source == "notes"
    out = tmp_path / "out.jsonl"
    assert write_records(out, result.records) == 2
    assert load_records(out).records == result.records


def test_an_evidence_items_meta_is_kept_and_one_without_writes_none(tmp_path: Path) -> None:
    scored = {"evidence_id": "e1", "text": "The bridge opened in 1932.", "meta": {"score": 0.8}}
    path = _write(tmp_path, [_record(evidence=[scored, {"evidence_id": "e2", "text": "Steel."}])])
    (record,) = load_records(path).records
    assert [e.meta for e in record.evidence] == [{"score": 0.8}, None]
    out = tmp_path / "out.jsonl"
    write_records(out, [record])
    written = json.loads(out.read_text(encoding="utf-8"))["evidence"]
    assert written[0]["meta"] == {"score": 0.8} and "meta" not in written[1]
    assert record.evidence[1].model_dump_json() == (
        '{"evidence_id":"e2","title":null,"text":"Steel.","source":null}'
    )  # a passage without meta is written as before the field existed


BAD_CASES = [
    ("not json", "{oops", None, "invalid JSON"),
    ("missing field", _record(question=None) | {"question": None}, "question", "string"),
    ("absent field", {k: v for k, v in _record().items() if k != "gold_answer"}, "gold_answer",
     "missing"),
    ("mistyped nested", _record(evidence=[{"evidence_id": "e1", "text": 3}]), "evidence[0].text",
     "string"),
    ("empty evidence", _record(evidence=[]), "evidence", "evidence is empty"),
    ("unknown gold citation", _record(gold_citations=[{"evidence_id": "e9"}]),
     "gold_citations[0].evidence_id", "unknown evidence id 'e9'"),
    ("unknown answer marker", _record(answer="Yes [cite:e1,e7]."), "answer", "'e7'"),
    ("unknown structured citation", _record(answer="Yes.", citations=["e1", "zz"]),
     "citations[1]", "'zz'"),
    ("unknown field", _record(colour="red"), "colour", "unknown field"),
    ("evidence meta not an object", _record(evidence=[{"evidence_id": "e1", "text": "a",
     "meta": [0.5]}]), "evidence[0].meta", "valid dictionary"),
    ("duplicate evidence id", _record(evidence=[{"evidence_id": "e1", "text": "a"},
     {"evidence_id": "e1", "text": "b"}]), "evidence[1].evidence_id", "duplicate evidence id"),
    ("not an object", [1, 2], None, "JSON object"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "bad", "field", "message"), BAD_CASES, ids=[c[0] for c in BAD_CASES]
)
def test_each_bad_input_gives_one_located_error(
    tmp_path: Path, case: str, bad: Any, field: str | None, message: str
) -> None:
    path = _write(tmp_path, [_record(id="q0"), bad])
    with pytest.raises(InputError) as caught:
        load_records(path)
    error = caught.value
    assert error.path == str(path)
    assert error.line == 2
    assert error.field == field
    assert message in str(error)
    assert str(error).startswith(f"{path}:2")


def test_duplicate_id_names_the_second_line(tmp_path: Path) -> None:
    path = _write(tmp_path, [_record(), _record(id="q2"), _record()])
    with pytest.raises(InputError) as caught:
        load_records(path)
    assert (caught.value.line, caught.value.field) == (3, "id")
    assert "duplicate id 'q1'" in str(caught.value)


def test_skip_invalid_keeps_the_rest_and_reports(tmp_path: Path) -> None:
    path = _write(tmp_path, [_record(), "{bad", _record(id="q2", evidence=[]), _record(id="q3")])
    result = load_records(path, skip_invalid=True)
    assert [r.id for r in result.records] == ["q1", "q3"]
    assert [(s.line, s.id, s.field) for s in result.skipped] == [
        (2, None, None),
        (3, "q2", "evidence"),
    ]


def test_iter_records_streams(tmp_path: Path) -> None:
    path = _write(tmp_path, [_record(id=f"q{i}") for i in range(5)] + ["{bad"])
    iterator = iter_records(path)
    assert next(iterator).id == "q0"  # the bad last line is not read yet
    with pytest.raises(InputError):
        list(iterator)


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        load_records(tmp_path / "nope.jsonl")


def test_byte_order_mark_is_accepted_and_bad_bytes_are_located(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(_record()).encode() + b"\n\xff\xfe{}\n")
    with pytest.raises(InputError) as caught:
        load_records(path)
    assert caught.value.line == 2 and "UTF-8" in str(caught.value)
    result = load_records(path, skip_invalid=True)
    assert [r.id for r in result.records] == ["q1"] and result.skipped[0].line == 2


@pytest.mark.parametrize(
    ("answer", "group", "meant"),
    [
        ("It opened in 1932 [e1].", "'[e1]'", "[cite:e1]"),
        ("It opened in 1932 [e1, e2].", "'[e1, e2]'", "[cite:e1,e2]"),
        ("It opened in 1932 [source: e1].", "'[source: e1]'", "[cite:e1]"),
        ("It opened in 1932 (cite:e1).", "'(cite:e1)'", "[cite:e1]"),
    ],
)
def test_a_citation_in_another_syntax_is_a_located_error(
    tmp_path: Path, answer: str, group: str, meant: str
) -> None:
    # read as plain text it would leave the claim uncited and the answer silently mis-scored
    path = _write(tmp_path, [_record(), _record(id="q2", answer=answer, gold_error=False)])
    with pytest.raises(InputError) as caught:
        load_records(path)
    error = caught.value
    assert (error.line, error.field) == (2, "answer")
    assert group in str(error) and "record 'q2'" in str(error)
    assert error.hint is not None and f"write {meant}" in error.hint


@pytest.mark.parametrize(
    ("answer", "ids", "cited"),
    [
        ("It opened in 1932 [cite: e1].", ["e1", "e2"], ("e1",)),
        ("It opened in 1932 [Cite:e1].", ["e1", "e2"], ("e1",)),
        ("It opened in 1932 [sic] (see e1).", ["e1", "e2"], ()),
        ("It opened in 1932 [3].", ["e1", "e2"], ()),  # no third snippet: a number, not a cite
        ("It opened in 1932 [2].", ["1", "7"], ()),  # numeric ids: [2] names none of them
        # a footnote number is text even where it could count the snippets or name one of
        # them: WebGPT answers and Wikipedia claims carry them, and refusing them would stop
        # a whole imported file
        ("It opened in 1932 [2].", ["e1", "e2"], ()),
        ("It opened in 1932.[1][2]", ["0", "1", "2"], ()),
    ],
)
def test_brackets_that_are_not_citations_are_read_as_text(
    tmp_path: Path, answer: str, ids: list[str], cited: tuple[str, ...]
) -> None:
    evidence = [{"evidence_id": i, "text": "The bridge opened in 1932."} for i in ids]
    record = _record(
        answer=answer, gold_error=False, evidence=evidence, gold_answer="It opened in 1932."
    )
    record["gold_citations"] = []
    loaded = load_records(_write(tmp_path, [record])).records[0]
    assert answer_citations(loaded.answer or "", None, ids).ids == cited


def test_windows_line_endings_and_a_byte_order_mark_load_the_same_records(tmp_path: Path) -> None:
    records = [_record(), _record(id="q2", answer="It opened in 1932 [cite:e1].", gold_error=True)]
    plain = _write(tmp_path, records)
    windows = tmp_path / "windows.jsonl"
    windows.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes().replace(b"\n", b"\r\n"))
    assert load_records(windows).records == load_records(plain).records


@pytest.mark.parametrize(
    ("name", "text", "hint"),
    [
        ("data.json", json.dumps([_record()], indent=1), "one JSON array"),
        ("data.jsonl", json.dumps(_record(), indent=2), "spreads over several lines"),
        ("data.csv", "id,question,gold_answer\nq1,When?,In 1932.\n", "a table (CSV or TSV)"),
        ("data.jsonl", "id\tquestion\tgold_answer\nq1\tWhen?\tIn 1932.\n", "a table"),
    ],
)
def test_a_file_that_is_not_json_lines_says_what_it_looks_like(
    tmp_path: Path, name: str, text: str, hint: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_records(path)
    assert caught.value.line == 1 and "invalid JSON" in str(caught.value)
    assert caught.value.hint is not None and hint in caught.value.hint
    assert "one JSON object on a line of its own" in caught.value.hint


def test_a_json_array_on_one_line_says_what_it_looks_like(tmp_path: Path) -> None:
    """``json.dump(records, f)`` writes the whole array on line 1: it parses, as an array."""
    path = tmp_path / "data.json"
    path.write_text(json.dumps([_record(), _record(id="q2")]) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_records(path)
    assert caught.value.line == 1 and "expected a JSON object, got an array" in str(caught.value)
    assert caught.value.hint is not None and "one JSON array" in caught.value.hint
    assert "one JSON object on a line of its own" in caught.value.hint


@pytest.mark.parametrize(
    ("changes", "dropped", "field", "says"),
    [
        # ragas: question, answer, contexts, ground_truth
        ({"ground_truth": "In 1932."}, "gold_answer", "gold_answer", "found 'ground_truth'"),
        # deepeval: input, actual_output, expected_output, retrieval_context
        ({"input": "When?"}, "question", "question", "found 'input': rename it 'question'"),
        ({"answer": "x", "label": "error"}, None, "label", "reads this as 'gold_error'"),
        ({"contexts": ["The bridge opened in 1932."]}, None, "contexts", "as 'evidence'"),
    ],
)
def test_another_tools_field_name_is_named_as_assay_reads_it(
    tmp_path: Path, changes: dict[str, Any], dropped: str | None, field: str, says: str
) -> None:
    record = _record(**changes)
    if dropped is not None:
        del record[dropped]
    with pytest.raises(InputError) as caught:
        load_records(_write(tmp_path, [record]))
    assert caught.value.field == field and says in str(caught.value)


def test_an_evidence_item_with_id_for_evidence_id_says_to_rename_it(tmp_path: Path) -> None:
    record = _record(evidence=[{"id": "e1", "text": "The bridge opened in 1932."}])
    with pytest.raises(InputError) as caught:
        load_records(_write(tmp_path, [record]))
    assert caught.value.field == "evidence[0].evidence_id"
    assert "found 'id': rename it 'evidence_id'" in str(caught.value)


@pytest.mark.parametrize("label", ["true", "yes", 1])
def test_a_label_typed_as_text_or_number_says_to_write_a_json_boolean(
    tmp_path: Path, label: object
) -> None:
    record = _record(answer="It opened in 1932 [cite:e1].", gold_error=label)
    with pytest.raises(InputError) as caught:
        load_records(_write(tmp_path, [record]))
    assert caught.value.field == "gold_error"
    assert f"{label!r}): write true or false, unquoted" in str(caught.value)
