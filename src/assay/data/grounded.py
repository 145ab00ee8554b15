"""Load and write grounded-QA JSONL: one :class:`GroundedQARecord` per line.

Loading streams (an iterator), so a file of any size is read one line at a time; only the set
of ids seen so far is kept, to catch duplicates. Every problem becomes one :class:`InputError`
naming the file, the 1-based line and the field (``evidence[2].text``), or, with
``skip_invalid``, a :class:`SkippedRecord` in the caller's list and the next line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import InputError, describe_problem, type_name
from .citations import iter_marker_ids, misspelt_markers
from .jsonl import check_input_file, decode_line, iter_lines, parse_object_line
from .records import GroundedQARecord


class SkippedRecord(BaseModel):
    """A line left out under ``skip_invalid``, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    line: int
    id: str | None = None
    field: str | None = None
    reason: str


class LoadResult(BaseModel):
    """All records of a file, plus the lines skipped (empty unless ``skip_invalid``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    records: tuple[GroundedQARecord, ...]
    skipped: tuple[SkippedRecord, ...] = ()


def load_records(path: Path | str, *, skip_invalid: bool = False) -> LoadResult:
    """Read a whole file into memory (use :func:`iter_records` for large files)."""
    skipped: list[SkippedRecord] = []
    records = tuple(iter_records(path, skip_invalid=skip_invalid, skipped=skipped))
    return LoadResult(path=str(path), records=records, skipped=tuple(skipped))


def iter_records(
    path: Path | str,
    *,
    skip_invalid: bool = False,
    skipped: list[SkippedRecord] | None = None,
) -> Iterator[GroundedQARecord]:
    """Yield the valid records of ``path`` in file order.

    Raises :class:`InputError` on the first bad line, unless ``skip_invalid``: then bad lines
    are appended to ``skipped`` (when given) and reading goes on.
    """
    for _, record in iter_numbered_records(path, skip_invalid=skip_invalid, skipped=skipped):
        yield record


def iter_numbered_records(
    path: Path | str,
    *,
    skip_invalid: bool = False,
    skipped: list[SkippedRecord] | None = None,
) -> Iterator[tuple[int, GroundedQARecord]]:
    """:func:`iter_records` with each record's 1-based line number."""
    file = Path(path)
    check_input_file(file, hint="--data names a grounded-QA JSONL file (or a .jsonl.gz)")
    seen: set[str] = set()
    lines = 0
    for number, raw in iter_lines(file):
        try:
            line = decode_line(raw, file, number)
            if not line.strip():
                continue
            lines += 1
            record = parse_record_line(line, path=file, line=number)
            _check_unique(record, seen, file, number)
        except InputError as error:
            if not skip_invalid:
                raise
            if skipped is not None:
                skipped.append(_skipped(error, raw.decode("utf-8", "replace")))
            continue
        seen.add(record.id)
        yield number, record
    if lines == 0:
        raise InputError("the file is empty (no record in it)", path=file)


def record_lines(path: Path | str, numbers: Iterable[int]) -> Iterator[str]:
    """The text of the lines ``numbers`` (increasing, as :func:`iter_numbered_records` counts
    them), so that checked records can be handed on without parsing them again."""
    wanted = iter(numbers)
    target = next(wanted, None)
    file = Path(path)
    for number, raw in iter_lines(file):
        if target is None:
            return
        if number == target:
            yield decode_line(raw, file, number)
            target = next(wanted, None)


def parse_record_line(
    text: str, *, path: Path | str = "<input>", line: int = 1
) -> GroundedQARecord:
    """One JSONL line to a checked record (schema, then cross-references)."""
    raw = parse_object_line(text, path, line)
    record = _validate(raw, path, line)
    check_references(record, path=path, line=line)
    _check_label_has_answer(record, path, line)
    return record


def check_references(record: GroundedQARecord, *, path: Path | str, line: int | None) -> None:
    """Every cited evidence id (gold citations, answer markers, ``citations``) must exist."""
    known = {e.evidence_id for e in record.evidence}
    _check_evidence_ids_unique(record, path, line)
    for index, gold in enumerate(record.gold_citations):
        if gold.evidence_id not in known:
            _unknown(gold.evidence_id, f"gold_citations[{index}].evidence_id", record, path, line)
    for index, cited in enumerate(record.citations or ()):
        if cited not in known:
            _unknown(cited, f"citations[{index}]", record, path, line)
    for field, text in (("answer", record.answer), ("gold_answer", record.gold_answer)):
        for cited in iter_marker_ids(text or ""):
            if cited not in known:
                _unknown(cited, field, record, path, line)
        for group, meant in misspelt_markers(text or "", [e.evidence_id for e in record.evidence]):
            raise InputError(
                f"{group!r} is not a citation marker (record {record.id!r}): only [cite:ID] "
                "markers cite, so it would be read as plain text and its claim as uncited",
                path=path,
                line=line,
                field=field,
                hint=f"write {meant} (or list the ids in 'citations')",
            )


def _check_label_has_answer(record: GroundedQARecord, path: Path | str, line: int) -> None:
    """``gold_error`` labels the record's own ``answer``. Without one the pattern writes the
    answer, and a label of some other text would score the verifier against the wrong truth
    (and keep ``--oracle`` from labelling the answer actually verified)."""
    if record.gold_error is not None and record.answer is None:
        raise InputError(
            "gold_error labels the record's 'answer', and this record has none (record "
            f"{record.id!r}; a generated answer is labelled by --oracle)",
            path=path,
            line=line,
            field="gold_error",
        )


def write_records(path: Path | str, records: Iterable[GroundedQARecord]) -> int:
    """Write records as JSONL (unset optional fields left out). Returns how many were written."""
    count = 0
    with Path(path).open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(dump_record(record) + "\n")
            count += 1
    return count


def dump_record(record: GroundedQARecord) -> str:
    return json.dumps(record.model_dump(mode="json", exclude_none=True), ensure_ascii=False)


def _validate(raw: dict[str, Any], path: Path | str, line: int) -> GroundedQARecord:
    try:
        return GroundedQARecord.model_validate(raw)
    except ValidationError as error:
        first = error.errors()[0]
        field = _field_path(first["loc"])
        message = _describe(first, raw)
        record_id = raw.get("id")
        if isinstance(record_id, str) and record_id:
            message = f"{message} (record {record_id!r})"
        raise InputError(
            message, path=path, line=line, field=field or None, hint=_import_hint(raw)
        ) from None


# a field only another tool's own files have -> the importer that converts them
_IMPORTED_FROM = {"actual_output": "deepeval"}


def _import_hint(raw: dict[str, Any]) -> str | None:
    """The ``assay import`` for a file another tool wrote, where the record says which."""
    tool = next((name for field, name in _IMPORTED_FROM.items() if field in raw), None)
    if tool is None:
        return None
    return f"this looks like a {tool} file: assay import {tool} FILE --out X.jsonl converts it"


def _field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


# Names other evaluation tools (ragas, deepeval, promptfoo, lm-evaluation-harness) and common
# datasets give assay's fields: a record written for them names the field assay reads.
_RECORD_FIELD_NAMES = {
    "gold_answer": ("ground_truth", "ground_truths", "reference", "expected_output",
                    "expected_answer", "reference_answer", "target", "gold"),
    "evidence": ("contexts", "context", "retrieval_context", "retrieved_contexts", "passages",
                 "documents", "docs", "sources"),
    "answer": ("response", "actual_output", "output", "prediction", "generated_answer"),
    "question": ("input", "query", "prompt", "user_input"),
    "gold_error": ("label", "gold_label", "is_error", "error", "hallucination",
                   "is_hallucinated"),
}  # fmt: skip
_EVIDENCE_FIELD_NAMES = {
    "evidence_id": ("id", "doc_id", "passage_id", "source_id"),
    "text": ("content", "passage", "page_content", "snippet"),
}  # fmt: skip


# what a renamed field must hold, where its old value may not (a label "error" or "hallucinated")
_FIELD_VALUES = {"gold_error": ", a boolean: true = the answer has a grounding error"}


def _assay_name(loc: tuple[int | str, ...]) -> str | None:
    """The field assay reads where another tool's name ``loc[-1]`` was written."""
    names = _RECORD_FIELD_NAMES if len(loc) == 1 else _EVIDENCE_FIELD_NAMES
    return next((ours for ours, theirs in names.items() if loc[-1] in theirs), None)


def _present_alias(loc: tuple[int | str, ...], raw: dict[str, Any]) -> str | None:
    """Another tool's name for the missing field ``loc`` that its object holds instead."""
    names = _RECORD_FIELD_NAMES if len(loc) == 1 else _EVIDENCE_FIELD_NAMES
    parent: Any = raw
    for part in loc[:-1]:  # the object the field is missing from (a record, an evidence item)
        try:
            parent = parent[part]
        except (KeyError, IndexError, TypeError):
            return None
    if not isinstance(parent, dict):
        return None
    return next((name for name in names.get(str(loc[-1]), ()) if name in parent), None)


def _describe(error: Any, raw: dict[str, Any]) -> str:
    kind = error["type"]
    loc = tuple(error["loc"])
    if kind == "missing":
        if (alias := _present_alias(loc, raw)) is not None:
            return f"missing required field (found {alias!r}: rename it {loc[-1]!r})"
        return "missing required field"
    if kind == "extra_forbidden":
        if (ours := _assay_name(loc)) is not None:
            values = _FIELD_VALUES.get(ours, "")
            return (
                f"unknown field: assay reads this as {ours!r} (rename it{values}); a field "
                "of your own goes in the 'meta' object"
            )
        return (
            "unknown field (check its spelling against the schema; fields of your own go "
            "in the 'meta' object)"
        )
    if kind == "too_short" and tuple(error["loc"]) == ("evidence",):
        return "evidence is empty: a record needs at least one evidence snippet"
    got = error.get("input")
    got_text = type_name(got)
    if kind == "bool_type" and got is not None:  # "true", "yes", 1: a label typed as text
        return f"{describe_problem(error)} (got {got_text} {got!r}): write true or false, unquoted"
    return f"{describe_problem(error)} (got {got_text})"


def _check_unique(record: GroundedQARecord, seen: set[str], path: Path, line: int) -> None:
    if record.id in seen:
        raise InputError(f"duplicate id {record.id!r}", path=path, line=line, field="id")


def _check_evidence_ids_unique(
    record: GroundedQARecord, path: Path | str, line: int | None
) -> None:
    seen: set[str] = set()
    for index, item in enumerate(record.evidence):
        if item.evidence_id in seen:
            raise InputError(
                f"duplicate evidence id {item.evidence_id!r} (record {record.id!r})",
                path=path,
                line=line,
                field=f"evidence[{index}].evidence_id",
            )
        seen.add(item.evidence_id)


def _unknown(
    cited: str, field: str, record: GroundedQARecord, path: Path | str, line: int | None
) -> None:
    known = ", ".join(e.evidence_id for e in record.evidence)
    raise InputError(
        f"cites unknown evidence id {cited!r} (record {record.id!r}; evidence ids: {known})",
        path=path,
        line=line,
        field=field,
    )


def _skipped(error: InputError, text: str) -> SkippedRecord:
    record_id: str | None = None
    try:
        raw = json.loads(text)
        if isinstance(raw, dict) and isinstance(raw.get("id"), str):
            record_id = raw["id"]
    except (ValueError, RecursionError):  # not JSON, or JSON that cannot be read safely
        pass
    return SkippedRecord(line=error.line or 0, id=record_id, field=error.field, reason=error.reason)
