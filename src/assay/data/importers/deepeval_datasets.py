"""deepeval datasets as verify-only grounded-QA records: the files ``EvaluationDataset.save_as``
writes (``file_type="json"``, ``"jsonl"`` or ``"csv"``), of goldens or of test cases
(``include_test_cases=True``), one row each with ``input``, ``actual_output``,
``expected_output``, ``retrieval_context``, ``context`` and deepeval's other fields.

One record per row that holds an output to verify:

- ``answer`` = ``actual_output``; ``question`` = ``input``; ``gold_answer`` = ``expected_output``,
  the empty string where the row has none (reported as filled: a reference answer made up from
  the output would not be one);
- ``evidence`` = ``retrieval_context``, else ``context``: the retrieval context is what the
  application gave the model when it wrote the output, the passages the output should be
  grounded in (what deepeval's FaithfulnessMetric checks); ``context`` is the ideal context of
  the input (what the synthesizer drew a golden from, what HallucinationMetric checks), the
  best evidence there is where nothing was retrieved. ``meta.evidence_from`` says which;
- ``meta`` keeps deepeval's fields assay does not read (``name``, ``comments``,
  ``additional_metadata``, ``tools_called``, the unused context, ...), without empty ones.

deepeval's JSON keeps each passage a list item; its JSON lines and CSV join a field's passages
with ``|`` and split them there on reading, and so does this importer. A retrieved passage saved
with its source (``deepeval_source=S,deepeval_context=C``) becomes evidence with that source.

Skipped and counted: a row without ``actual_output`` (a golden not yet answered) and a row with
neither context. Refused (one error naming file, line and field): a file that is not a deepeval
dataset, a conversational dataset (``scenario``, ``turns``), a mistyped field.

deepeval datasets carry no grounding label: the records are unlabelled unless a boolean field of
the user's own is named (:class:`LabelField`, ``--error-field`` / ``--grounded-field``). Read
with the standard library: deepeval need not be installed to import its files.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ...errors import InputError
from ..grounded import check_references
from ..jsonl import check_input_file
from ..records import Evidence, GroundedQARecord
from ._common import (
    GroundedImport,
    ImportReport,
    Row,
    RowReader,
    Tally,
    UniqueIds,
    read_rows,
    stable_key,
)
from ._csv import csv_rows
from ._json_array import json_array_rows, starts_with_array
from ._labels import LabelField

DATASET = "deepeval"
LABEL_CONVENTION = (
    "none: deepeval datasets carry no grounding label, so the records are unlabelled (bench run "
    "gives each a p_error; detection metrics need labels); --error-field PATH (true = the "
    "output has a grounding error) or --grounded-field PATH (true = grounded) reads a boolean "
    "field of your own, e.g. additional_metadata.hallucinated (with --error-value VALUE, a "
    "field of categories)"
)
SAVE_AS = "EvaluationDataset.save_as(file_type='json'|'jsonl'|'csv', ...) writes one"
PASSAGE_DELIMITER = "|"  # deepeval's own, in JSON lines and CSV
EVIDENCE_FIELDS = ("retrieval_context", "context")
READ_FIELDS = frozenset({"input", "actual_output", "expected_output", *EVIDENCE_FIELDS})
# columns deepeval's CSV holds as JSON text (objects, lists, numbers)
CSV_JSON_COLUMNS = frozenset(
    {
        "tools_called",
        "expected_tools",
        "additional_metadata",
        "custom_column_key_values",
        "expectations",
        "token_cost",
        "input_token_count",
        "output_token_count",
    }
)
CONVERSATIONAL = ("scenario", "turns")
_SOURCED_PASSAGE = re.compile(
    r"\Adeepeval_source=(?P<source>.*?),deepeval_context=(?P<text>.*)\Z", re.S
)

SKIP_NO_OUTPUT = "no actual_output (a golden not yet answered: nothing to verify)"
SKIP_NO_EVIDENCE = "neither retrieval_context nor context (nothing to check the output against)"
FILLED_GOLD = "gold_answer empty (no expected_output)"
FILLED_CONTEXT = "evidence from context (no retrieval_context)"


def import_deepeval(path: Path, label: LabelField | None = None) -> GroundedImport:
    """Read a dataset deepeval saved (``.json``, ``.jsonl`` or ``.csv``) into verify-only
    records, labelled by ``label`` where given."""
    tally = Tally()
    tally.units.update(dict.fromkeys(("rows", "with actual_output", "with expected_output"), 0))
    filled: Counter[str] = Counter()
    ids = UniqueIds(tag="R")  # a CSV row may span lines: the row number names it in any format
    records: list[GroundedQARecord] = []
    for line, row in _rows(path):
        tally.rows += 1
        reader = RowReader(row, path=path, line=line, dataset=DATASET)
        record = _record(reader, tally, filled, label)
        if record is not None:
            records.append(record.model_copy(update={"id": ids.claim(record.id, tally.rows)}))
    tally.units["rows"] = tally.rows
    if label is not None:
        label.check_seen(records, path)
    return GroundedImport(
        records=tuple(records), report=_report(tally, path, records, filled, label)
    )


def _rows(path: Path) -> Iterator[tuple[int, Row]]:
    """The file's rows by its kind: CSV by name; JSON as deepeval's ``json`` (one array) or
    ``jsonl`` (one object per line), told by the first character, not the name."""
    check_input_file(path, hint=f"SRC is a deepeval dataset file ({SAVE_AS})")
    name = path.name.lower()
    if name.endswith(".csv"):
        return ((line, _typed_csv_row(row)) for line, row in csv_rows(path, DATASET))
    if not name.endswith((".json", ".jsonl")):
        raise InputError(
            "not a deepeval dataset file: expected .json, .jsonl or .csv",
            path=path,
            hint=SAVE_AS,
        )
    if starts_with_array(path):
        return json_array_rows(path, DATASET)
    return read_rows(path, DATASET)


def _typed_csv_row(row: Row) -> Row:
    """A CSV row as deepeval's JSON files hold it: empty cells are missing, and the columns
    deepeval writes as JSON text (objects, lists, numbers) parsed where they parse."""
    typed: Row = {}
    for column, cell in row.items():
        if not cell:
            continue
        typed[column] = _json_or_text(cell) if column in CSV_JSON_COLUMNS else cell
    return typed


def _json_or_text(cell: str) -> Any:
    """The cell's JSON value, or the cell itself; ``NaN`` and ``Infinity`` stay text, since no
    JSON reader of the written records would read them back."""
    try:
        return json.loads(cell, parse_constant=_not_json)
    except ValueError:
        return cell


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _record(
    reader: RowReader, tally: Tally, filled: Counter[str], label: LabelField | None
) -> GroundedQARecord | None:
    _refuse_conversational(reader)
    question = reader.text("input").strip()
    output = _optional_text(reader, "actual_output")
    expected = _optional_text(reader, "expected_output")
    passages = {field: _passages(reader, field) for field in EVIDENCE_FIELDS}
    tally.units["with actual_output"] += bool(output.strip())
    tally.units["with expected_output"] += bool(expected.strip())
    if not output.strip():
        tally.skip(SKIP_NO_OUTPUT)
        return None
    evidence_from = next((field for field in EVIDENCE_FIELDS if passages[field]), None)
    if evidence_from is None:
        tally.skip(SKIP_NO_EVIDENCE)
        return None
    if not expected.strip():
        filled[FILLED_GOLD] += 1
    if evidence_from == "context":
        filled[FILLED_CONTEXT] += 1
    gold_error = None if label is None else label.read(reader)
    record = GroundedQARecord(
        id=f"{DATASET}-{stable_key(question + chr(10) + output)}",
        question=question,
        gold_answer=expected.strip(),
        evidence=passages[evidence_from],
        answer=output,
        gold_error=gold_error,
        group=f"{DATASET}-{stable_key(question)}",
        meta=_meta(reader.row, evidence_from, passages),
    )
    _check_citations(record, reader)
    return record


def _optional_text(reader: RowReader, field: str) -> str:
    """A text field a row may lack; one of another type is a bad value of a deepeval row (it
    has an ``input``), not a sign of another file."""
    value = reader.row.get(field)
    if value is None:
        return ""
    if not isinstance(value, str):
        reader.fail(field, f"expected a string, got {type(value).__name__}", shape=False)
    return value


def _refuse_conversational(reader: RowReader) -> None:
    for field in CONVERSATIONAL:
        if reader.row.get(field):
            reader.fail(
                field,
                "a conversational golden (scenario, turns): assay verifies single-turn outputs "
                "(input, actual_output, retrieval_context)",
                shape=False,
            )


def _passages(reader: RowReader, field: str) -> tuple[Evidence, ...]:
    """A context field's passages, ids ``1``, ``2``, ... by position (as the deepeval metric of
    ``assay.integrations.deepeval`` numbers them); blank passages are left out, ids kept."""
    value = reader.row.get(field)
    if value is None:
        return ()
    if isinstance(value, str):
        items: list[Any] = value.split(PASSAGE_DELIMITER) if value else []
    elif isinstance(value, list):
        items = value
    else:
        reader.fail(
            field,
            f"expected a list of passages or a string, got {type(value).__name__}",
            shape=False,
        )
    evidence = []
    for index, item in enumerate(items):
        if not isinstance(item, str):
            reader.fail(
                f"{field}[{index}]", f"expected a string, got {type(item).__name__}", shape=False
            )
        if item.strip():
            evidence.append(_evidence(str(index + 1), item))
    return tuple(evidence)


def _evidence(evidence_id: str, passage: str) -> Evidence:
    sourced = _SOURCED_PASSAGE.match(passage)
    if sourced is None:
        return Evidence(evidence_id=evidence_id, text=passage)
    return Evidence(evidence_id=evidence_id, text=sourced["text"], source=sourced["source"])


def _meta(
    row: Row, evidence_from: str, passages: Mapping[str, tuple[Evidence, ...]]
) -> dict[str, Any]:
    meta: dict[str, Any] = {"evidence_from": evidence_from}
    for field, value in row.items():
        if field in READ_FIELDS or value is None or value in ("", [], {}):
            continue
        meta[field] = value
    for field in EVIDENCE_FIELDS:
        if field != evidence_from and passages[field]:
            meta[field] = [item.text for item in passages[field]]
    return meta


def _check_citations(record: GroundedQARecord, reader: RowReader) -> None:
    """An output's ``[cite:ID]`` markers must name its passages, as ``bench run`` requires of
    every record: refused here, at the row, rather than in the written file."""
    try:
        check_references(record, path=reader.path, line=reader.line)
    except InputError as error:
        field = {"answer": "actual_output", "gold_answer": "expected_output"}.get(
            error.field or "", error.field
        )
        raise InputError(
            error.reason, path=reader.path, line=reader.line, field=field, hint=error.hint
        ) from None


def _report(
    tally: Tally,
    path: Path,
    records: list[GroundedQARecord],
    filled: Counter[str],
    label: LabelField | None,
) -> ImportReport:
    convention = LABEL_CONVENTION if label is None else label.describe()
    report = tally.report(DATASET, path, records, convention)
    kinds = {key: filled[key] for key in (FILLED_GOLD, FILLED_CONTEXT) if filled[key]}
    return report.model_copy(update={"filled": kinds})
