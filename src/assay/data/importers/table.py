"""A table of the user's own as verify-only grounded-QA records: RAG logs, RAGTruth- or
HotpotQA-like files, any file no importer was written for. The user names the fields that hold
each part of a record (``--answer response --evidence contexts``), as deepeval's CSV loader takes
column names; the importer knows nothing else of the file.

A file is CSV when its name ends in ``.csv`` (gzip or not); otherwise JSON, told by its first
character: ``[`` one array of objects, else JSON lines. A gzip file is read as what it holds.
A field is named by its key, dotted for a nested one (``output.text``); a flat column whose
name holds the dots (a CSV header ``output.text``) is found as it is.

One record per row:

- ``answer`` = the ``--answer`` field, ``evidence`` = the ``--evidence`` field: a list of
  passages (strings, ids ``1``, ``2``, ... by place; or objects with a ``text``, and an ``id``
  or ``evidence_id``, ``title`` and ``source`` where they have them, or documents as LangChain,
  LlamaIndex and Haystack write them, see :mod:`assay.data.passages`), or one passage as a
  string (id ``1``). In CSV a cell that starts with ``[`` is a list, as JSON text or as
  Python's text of it (read as a literal, never run). Blank passages are dropped, the others
  keep their ids;
- ``question`` = ``--question``, ``gold_answer`` = ``--reference``: the empty string where the
  field is not named or the row has none (reported as filled);
- ``id`` = ``--id``, else ``table-<h>`` of the question and answer; ``group`` = ``--group``,
  else ``table-q<h>`` of the question (a record without a question is a group of its own);
- ``meta`` = every field not named by one of those options, as it is (the label field too), so
  ``bench summarize --by meta.KEY`` slices by any column.

Skipped and counted: a row with an empty answer, and a row without a passage. Refused (one
error naming the file, and the line and field where there is one): a named field that no row
has (most likely a typo), a field of the wrong type, a list cell that is no list.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, NoReturn

from ...errors import InputError, shown, type_name
from ..grounded import check_references
from ..jsonl import check_input_file
from ..passages import PASSAGE_KEYS, PassageError, read_passage
from ..records import Evidence, GroundedQARecord
from ._common import (
    GroundedImport,
    ImportReport,
    Row,
    RowReader,
    Tally,
    UniqueIds,
    field_value,
    read_rows,
    stable_key,
)
from ._csv import csv_rows, list_cell
from ._json_array import json_array_rows, starts_with_array
from ._labels import LabelField

DATASET = "table"
LABEL_CONVENTION = (
    "none: the importer knows no label of a table of your own, so the records are unlabelled "
    "(bench run gives each a p_error; detection metrics need labels), unless --error-field "
    "PATH (true = the answer has a grounding error) or --grounded-field PATH (true = grounded) "
    "names a field of each row (with --error-value VALUE, a field of categories)"
)
FILLED_GOLD = "gold_answer empty (no reference)"
FILLED_QUESTION = "question empty (no question)"
FIELD_NAMES_SHOWN = 12  # field names a "no row has this field" error lists
FIELD_NAMES_KEPT = 200  # field names gathered for that list, at most


@dataclass(frozen=True)
class MappedField:
    """A field of the table named on the command line: ``option`` says which option named it,
    for errors; ``path`` is the dotted name's parts."""

    option: str
    path: tuple[str, ...]

    @classmethod
    def parse(cls, option: str, text: str) -> MappedField:
        path = tuple(text.split("."))
        if not all(part.strip() for part in path):
            raise ValueError(f"{option} {text!r}: expected a field name, dotted for a nested one")
        return cls(option=option, path=path)

    @property
    def name(self) -> str:
        return ".".join(self.path)

    def lookup(self, row: Mapping[str, Any]) -> tuple[bool, Any]:
        return field_value(row, self.path)


@dataclass(frozen=True)
class TableMapping:
    """Which field of the table holds each part of a record; answer and evidence are needed,
    the others optional."""

    answer: MappedField
    evidence: MappedField
    question: MappedField | None = None
    reference: MappedField | None = None
    id: MappedField | None = None
    group: MappedField | None = None

    @classmethod
    def parse(cls, answer: str, evidence: str, **optional: str | None) -> TableMapping:
        """From the names given to ``--answer``, ``--evidence``, ``--question``, ... (a
        ValueError names the option of a name that is no field name)."""
        named = {
            part: MappedField.parse(f"--{part}", text)
            for part, text in {"answer": answer, "evidence": evidence, **optional}.items()
            if text is not None
        }
        return cls(**named)

    def named(self) -> tuple[MappedField, ...]:
        """The fields named, in the order of the options."""
        mapped = (getattr(self, part.name) for part in fields(self))
        return tuple(field for field in mapped if field is not None)


def import_table(
    path: Path, mapping: TableMapping, label: LabelField | None = None
) -> GroundedImport:
    """Read a JSON lines, JSON or CSV table into verify-only records by ``mapping``, labelled
    by ``label`` where given."""
    from_csv = path.name.lower().removesuffix(".gz").endswith(".csv")
    tally = Tally()
    units = ("rows", f"with {mapping.answer.name}", f"with {mapping.evidence.name}")
    tally.units.update(dict.fromkeys(units, 0))
    seen = _FieldsSeen(mapping.named())
    filled: Counter[str] = Counter()
    ids = UniqueIds(tag="R")  # a CSV row may span lines: the row number names it in any format
    records: list[GroundedQARecord] = []
    for line, row in _rows(path, from_csv=from_csv):
        tally.rows += 1
        seen.note(row)
        reader = RowReader(row, path=path, line=line, dataset=DATASET)
        record = _record(reader, mapping, label, tally, filled, from_csv=from_csv)
        if record is not None:
            records.append(record.model_copy(update={"id": ids.claim(record.id, tally.rows)}))
    tally.units["rows"] = tally.rows
    seen.refuse_unseen(path)
    if label is not None:
        label.check_seen(records, path)
    report = _report(tally, path, records, filled, label)
    return GroundedImport(records=tuple(records), report=report)


def _rows(path: Path, *, from_csv: bool) -> Iterator[tuple[int, Row]]:
    check_input_file(path, hint="SRC is a table in JSON lines, JSON (one array) or CSV")
    if from_csv:
        return csv_rows(path, DATASET)
    if starts_with_array(path):
        return json_array_rows(path, DATASET)
    return read_rows(path, DATASET)


class _FieldsSeen:
    """Which named fields some row has, and a sample of the field names rows have: a field no
    row has is refused as the typo it most likely is, which would otherwise skip every row (no
    answer) or leave a part of every record empty without a word."""

    def __init__(self, named: tuple[MappedField, ...]) -> None:
        self.unseen = list(named)
        self.names: set[str] = set()

    def note(self, row: Row) -> None:
        if self.unseen:
            self.unseen = [field for field in self.unseen if not field.lookup(row)[0]]
        if len(self.names) < FIELD_NAMES_KEPT:
            self.names.update(_dotted_names(row))

    def refuse_unseen(self, path: Path) -> None:
        if not self.unseen:
            return
        field = self.unseen[0]
        names = sorted(self.names)
        shown_names = ", ".join(names[:FIELD_NAMES_SHOWN])
        more = len(names) - FIELD_NAMES_SHOWN
        raise InputError(
            f"{field.option} {field.name}: no row has this field (the rows have "
            f"{shown_names}{f' and {more} more' if more > 0 else ''})",
            path=path,
            field=field.name,
        )


def _dotted_names(row: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    """The names of a row's fields, a nested object's as ``outer.inner``."""
    for key, value in row.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            yield from _dotted_names(value, prefix=f"{name}.")
        else:
            yield name


def _record(
    reader: RowReader,
    mapping: TableMapping,
    label: LabelField | None,
    tally: Tally,
    filled: Counter[str],
    *,
    from_csv: bool,
) -> GroundedQARecord | None:
    answer = _text(reader, mapping.answer)
    evidence = _evidence(reader, mapping.evidence, from_csv=from_csv)
    tally.units[f"with {mapping.answer.name}"] += bool(answer)
    tally.units[f"with {mapping.evidence.name}"] += bool(evidence)
    if not answer:
        tally.skip(f"empty {mapping.answer.name} (no answer to verify)")
        return None
    if not evidence:
        tally.skip(f"no passage in {mapping.evidence.name} (nothing to check the answer against)")
        return None
    question = _text(reader, mapping.question)
    reference = _text(reader, mapping.reference)
    filled[FILLED_QUESTION] += not question
    filled[FILLED_GOLD] += not reference
    record = GroundedQARecord(
        id=_key(reader, mapping.id) or f"{DATASET}-{stable_key(question + chr(10) + answer)}",
        question=question,
        gold_answer=reference,
        evidence=evidence,
        answer=answer,
        gold_error=None if label is None else label.read(reader),
        group=_key(reader, mapping.group) or _question_group(question),
        meta=_meta(reader.row, mapping) or None,
    )
    _check_citations(record, reader, mapping)
    return record


def _text(reader: RowReader, field: MappedField | None) -> str:
    """A text field, surrounding blanks trimmed; the empty string where it is not named, the
    row lacks it or holds null."""
    if field is None:
        return ""
    _, value = field.lookup(reader.row)
    if value is None:
        return ""
    if not isinstance(value, str):
        _wrong_type(reader, field, field.name, "a string", value)
    return value.strip()


def _key(reader: RowReader, field: MappedField | None) -> str:
    """An id or group from the row: text, or an integer (a numeric id); the empty string where
    it is not named or the row has none."""
    if field is None:
        return ""
    _, value = field.lookup(reader.row)
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int):
        _wrong_type(reader, field, field.name, "a string or an integer", value)
    return str(value).strip()


def _question_group(question: str) -> str | None:
    """Answers to one question are resampled together; a record without a question stands
    alone (one group of all of them would make the bootstrap resample one cluster)."""
    return f"{DATASET}-q{stable_key(question)}" if question else None


def _evidence(reader: RowReader, field: MappedField, *, from_csv: bool) -> tuple[Evidence, ...]:
    """The passages of the evidence field: a list (of strings or passage objects), or one
    passage as a string; blank passages are dropped, the others keep the ids of their places."""
    _, value = field.lookup(reader.row)
    if from_csv and isinstance(value, str) and value.lstrip().startswith("["):
        value = _list_in_cell(reader, field, value)
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        _wrong_type(reader, field, field.name, "a list of passages or one passage as text", value)
    passages: list[Evidence] = []
    for index, item in enumerate(value):
        passage = _passage(reader, field, index, item)
        if passage is not None:
            _refuse_repeated_id(reader, field, index, passage, passages)
            passages.append(passage)
    return tuple(passages)


def _list_in_cell(reader: RowReader, field: MappedField, cell: str) -> list[Any]:
    parsed = list_cell(cell)
    if parsed is None:
        raise InputError(
            "expected a list of passages in a cell that starts with '[' (JSON's "
            f"[\"...\", ...] or Python's ['...', ...]), got {shown(cell)}",
            path=reader.path,
            line=reader.line,
            field=field.name,
            hint='one passage that starts with "[" is written as a list of one: ["[1] ..."]',
        )
    return parsed


def _passage(reader: RowReader, field: MappedField, index: int, item: Any) -> Evidence | None:
    """Item ``index`` of the evidence list as a passage (None where its text is blank): a
    string, id = its place (``1``, ``2``, ...); or an object with a text, read by
    :func:`~assay.data.passages.read_passage`."""
    where = f"{field.name}[{index}]"
    place = str(index + 1)
    if isinstance(item, str):
        return Evidence(evidence_id=place, text=item.strip()) if item.strip() else None
    if not isinstance(item, Mapping):
        expected = f"a passage: a string, or an object with {PASSAGE_KEYS}"
        _wrong_type(reader, field, where, expected, item)
    try:
        passage = read_passage(item)
    except PassageError as error:
        reader.fail(
            where + error.place,
            f"expected {error.expected} ({field.option}), got {error.got}",
            shape=False,
        )
    if not passage.text.strip():
        return None
    return Evidence(
        evidence_id=passage.evidence_id or place,
        text=passage.text.strip(),
        title=passage.title,
        source=passage.source,
        meta=passage.meta or None,
    )


def _refuse_repeated_id(
    reader: RowReader,
    field: MappedField,
    index: int,
    passage: Evidence,
    earlier: list[Evidence],
) -> None:
    """Two passages of one row with one id: a citation of it could mean either."""
    if any(other.evidence_id == passage.evidence_id for other in earlier):
        reader.fail(
            f"{field.name}[{index}]",
            f"the evidence id {passage.evidence_id!r} is given to two passages of the row (a "
            "passage without an id takes its place in the list as its id)",
            shape=False,
        )


def _wrong_type(
    reader: RowReader, field: MappedField, where: str, expected: str, value: Any
) -> NoReturn:
    reader.fail(where, f"expected {expected} ({field.option}), got {type_name(value)}", shape=False)


def _meta(row: Row, mapping: TableMapping) -> Row:
    """The row without the fields the record took (a nested object keeps its other keys)."""
    meta = dict(row)
    for field in mapping.named():
        _drop(meta, field.path)
    return meta


def _drop(row: Row, path: tuple[str, ...]) -> None:
    """Remove the field at ``path`` from ``row``, as :func:`field_value` finds it; an object
    left empty goes too. Nested objects are copied before they change: the row is the
    caller's."""
    name = ".".join(path)
    if name in row:
        del row[name]
        return
    head, rest = path[0], path[1:]
    inner = row.get(head)
    if not rest or not isinstance(inner, Mapping):
        return
    inner = dict(inner)
    _drop(inner, rest)
    if inner:
        row[head] = inner
    else:
        del row[head]


def _check_citations(record: GroundedQARecord, reader: RowReader, mapping: TableMapping) -> None:
    """An answer's ``[cite:ID]`` markers must name its passages, as ``bench run`` requires of
    every record: refused here, at the row, naming the table's field."""
    try:
        check_references(record, path=reader.path, line=reader.line)
    except InputError as error:
        own = {"answer": mapping.answer, "gold_answer": mapping.reference}.get(error.field or "")
        raise InputError(
            error.reason,
            path=reader.path,
            line=reader.line,
            field=own.name if own is not None else error.field,
            hint=error.hint,
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
    kinds = {key: filled[key] for key in (FILLED_GOLD, FILLED_QUESTION) if filled[key]}
    return report.model_copy(update={"filled": kinds})
