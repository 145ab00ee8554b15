"""What every importer shares: reading a dataset's JSON lines with line numbers, checking the
shape of each row (one :class:`InputError` naming file, line and field on the first bad row),
stable ids, and the report of what was kept and skipped.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from pydantic import BaseModel, ConfigDict

from ...errors import InputError, type_name
from ..jsonl import check_input_file, decode_line, iter_lines, parse_json_line
from ..records import GroundedQARecord

Row = dict[str, Any]


class ImportReport(BaseModel):
    """Counts of one import: what the source held, what was kept, what was left out and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dataset: str
    source: str
    rows: int  # JSON lines read
    units: dict[str, int]  # what the rows hold before filtering, e.g. {"answers": 206, ...}
    kept: int
    skipped: dict[str, int]  # reason -> count
    # reason -> the first skipped items it names, where an importer names them (inspect logs)
    skipped_first: dict[str, tuple[str, ...]] = {}
    labels: dict[str, int]  # "error" / "grounded" -> count of kept records
    # what an importer wrote in place of a field the source lacks -> count of kept records
    filled: dict[str, int] = {}
    error_types: dict[str, int]  # error_type -> count of kept records
    label_convention: str

    def lines(self) -> list[str]:
        """The report as short human-readable lines (what the CLI prints)."""
        units = ", ".join(f"{count} {name}" for name, count in self.units.items())
        out = [f"{self.dataset}: read {self.rows} rows from {self.source} ({units})"]
        out.append(f"kept {self.kept} records: " + _counts(self.labels))
        if self.filled:
            out.append("  filled: " + _counts(self.filled))
        if self.error_types:
            out.append("  by error_type: " + _counts(self.error_types))
        skipped = sum(self.skipped.values())
        out.append(f"skipped {skipped}" + (": " + _counts(self.skipped) if skipped else ""))
        for reason, first in self.skipped_first.items():
            more = self.skipped.get(reason, len(first)) - len(first)
            out.append(f"  {reason}: " + ", ".join(first) + (f" and {more} more" if more else ""))
        out.append(f"labels: {self.label_convention}")
        return out


#: Skipped items a log importer's report names, per reason.
FIRST_IDS = 5


def log_import_report(
    *,
    dataset: str,
    paths: Sequence[Path],
    rows: int,
    units: dict[str, int],
    kept: int,
    skipped: Mapping[str, Sequence[str]],
    reasons: Sequence[str],
    counts: dict[str, int],
    convention: str,
) -> ImportReport:
    """The report of an importer of another tool's logs (inspect, promptfoo, lm-eval):
    ``skipped`` maps each reason to the items it left out, reported in the order of
    ``reasons``, the first :data:`FIRST_IDS` by name; ``counts`` (questions, variants, target
    models) stand where a grounded import's labels do."""
    present = [reason for reason in reasons if reason in skipped]
    return ImportReport(
        dataset=dataset,
        source=", ".join(str(p) for p in paths),
        rows=rows,
        units=units,
        kept=kept,
        skipped={reason: len(skipped[reason]) for reason in present},
        skipped_first={reason: tuple(skipped[reason][:FIRST_IDS]) for reason in present},
        labels=counts,
        error_types={},
        label_convention=convention,
    )


def refuse_empty(report: ImportReport) -> None:
    """An import that keeps no record is an error naming the file and what it held, not an
    empty output: a file of questions without labelled answers (ExpertQA's stage-1
    ``r1_data_anon.jsonl``) or responses to other prompts would otherwise "succeed" and only
    fail later, at the command that reads the empty output."""
    if report.kept:
        return
    held = ", ".join(f"{count} {name}" for name, count in report.units.items())
    skipped = _counts(report.skipped) if report.skipped else "none"
    raise InputError(
        f"nothing to import: no record kept of {report.rows} rows ({held}); skipped: {skipped}",
        path=report.source,
    )


class GroundedImport(BaseModel):
    """The records of a grounded-QA import and its report."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    records: tuple[GroundedQARecord, ...]
    report: ImportReport


class Tally:
    """Counts while an importer walks its rows; becomes the :class:`ImportReport`."""

    def __init__(self) -> None:
        self.rows = 0
        self.units: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()

    def skip(self, reason: str) -> None:
        self.skipped[reason] += 1

    def report(
        self, dataset: str, source: Path, records: Sequence[GroundedQARecord], convention: str
    ) -> ImportReport:
        labels = Counter(
            "unlabelled" if r.gold_error is None else "error" if r.gold_error else "grounded"
            for r in records
        )
        error_types = Counter(r.error_type for r in records if r.error_type)
        return ImportReport(
            dataset=dataset,
            source=str(source),
            rows=self.rows,
            units=dict(self.units),
            kept=len(records),
            skipped=dict(self.skipped.most_common()),
            # a labelled dataset's error and grounded counts always; where some records are
            # unlabelled (data without labels of its own), the kinds there are
            labels={key: labels[key] for key in ("error", "grounded", "unlabelled") if labels[key]}
            if labels["unlabelled"]
            else {key: labels[key] for key in ("error", "grounded")},
            error_types=dict(sorted(error_types.items())),
            label_convention=convention,
        )


def read_rows(path: Path, dataset: str) -> Iterator[tuple[int, Row]]:
    """(1-based line number, JSON object) for each non-blank line of a JSON-lines file."""
    check_input_file(path, hint=f"SRC is the path of a {dataset} file")
    found = False
    for number, raw in iter_lines(path):  # a .gz file is read as what it holds
        line = decode_line(raw, path, number)
        if not line.strip():
            continue
        found = True
        yield number, _parse_line(line, path, number, dataset)
    if not found:
        raise InputError(
            f"no records: the file is empty (expected {dataset} JSON lines)", path=path
        )


def _parse_line(line: str, path: Path, number: int, dataset: str) -> Row:
    hint = None
    if number == 1 and line.lstrip().startswith("["):
        hint = "the importer reads JSON lines (one object per line), not one JSON array"
    try:
        raw = parse_json_line(line, path, number)
    except InputError as error:
        raise InputError(
            f"{error.reason}; expected {dataset} JSON lines",
            path=path,
            line=number,
            field=error.field,
            hint=hint,
        ) from None
    if not isinstance(raw, dict):
        raise InputError(
            f"a {dataset} row must be a JSON object, got {type(raw).__name__}",
            path=path,
            line=number,
            hint=hint,
        )
    return raw


class RowReader:
    """Typed access to the fields of one row; a missing or mistyped field is an InputError that
    says which dataset the importer expected and which fields the row has."""

    def __init__(self, row: Row, *, path: Path, line: int, dataset: str, prefix: str = "") -> None:
        self.row = row
        self.path = path
        self.line = line
        self.dataset = dataset
        self.prefix = prefix

    def text(self, field: str, *, optional: bool = False) -> str:
        value = self._get(field, optional=optional)
        if value is None:
            return ""
        if not isinstance(value, str):
            self.fail(field, f"expected a string, got {type_name(value)}")
        return value

    def items(self, field: str, *, optional: bool = False) -> list[Any]:
        value = self._get(field, optional=optional)
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(field, f"expected a list, got {type_name(value)}")
        return value

    def mapping(self, field: str) -> Row:
        value = self._get(field, optional=False)
        if not isinstance(value, dict):
            self.fail(field, f"expected an object, got {type_name(value)}")
        return value

    def child(self, row: Any, prefix: str) -> RowReader:
        """A reader for a nested object; its errors name ``prefix.field``."""
        full = self._name(prefix)
        if not isinstance(row, dict):
            self.fail(prefix, f"expected an object, got {type_name(row)}")
        return RowReader(row, path=self.path, line=self.line, dataset=self.dataset, prefix=full)

    def fail(self, field: str, message: str, *, shape: bool = True) -> NoReturn:
        """Raise the InputError for ``field`` (a name relative to this reader's object).

        ``shape`` errors (a missing or mistyped field) add that the file may be of another
        dataset; a bad value in a file of the right shape (``shape=False``) does not."""
        if shape:
            message = (
                f"{message}; this does not look like {_article(self.dataset)} {self.dataset} file "
                f"(the object has fields: {', '.join(sorted(self.row)) or 'none'})"
            )
        raise InputError(message, path=self.path, line=self.line, field=self._name(field))

    def _name(self, field: str) -> str:
        return f"{self.prefix}.{field}" if self.prefix else field

    def _get(self, field: str, *, optional: bool) -> Any:
        if field not in self.row:
            if optional:
                return None
            self.fail(field, "missing field")
        return self.row[field]


def field_value(row: Mapping[str, Any], path: tuple[str, ...]) -> tuple[bool, Any]:
    """(whether ``row`` has the field, its value) for a field named by ``path``, the parts of a
    dotted name (``output.text``: the key ``text`` of the object ``output``). A flat column whose
    name holds the dots (a CSV header ``output.text``) is found as it is, before the nesting."""
    name = ".".join(path)
    if name in row:
        return True, row[name]
    value: Any = row
    for part in path:
        if not isinstance(value, Mapping) or part not in value:
            return False, None
        value = value[part]
    return True, value


# the k-th run of one cell (promptfoo's --repeat, lm-eval's repeats) is a variant of its own
REPEAT_VARIANT = re.compile(r"^(?P<variant>.+) \(repeat (?P<repeat>[1-9][0-9]*)\)$")


def repeat_variant(variant: str, repeat: int) -> str:
    """The first run keeps the variant's name; the k-th is ``<variant> (repeat k)``."""
    return variant if repeat == 1 else f"{variant} (repeat {repeat})"


def split_repeat(label: str) -> tuple[str, int]:
    """:func:`repeat_variant` read back: ``'plain (repeat 3)'`` -> ``('plain', 3)``; a label
    without a repeat is repeat 1."""
    found = REPEAT_VARIANT.match(label)
    return (label, 1) if found is None else (found["variant"], int(found["repeat"]))


def stable_key(text: str) -> str:
    """A short content hash: ids built on it do not change when rows are reordered or filtered."""
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:10]


class UniqueIds:
    """Keeps ids unique: a repeated id (the same question twice in one file) gets the line
    (``-L7``), or with ``tag="R"`` the row number, for formats whose rows may span lines."""

    def __init__(self, tag: str = "L") -> None:
        self._seen: set[str] = set()
        self._tag = tag

    def claim(self, record_id: str, line: int) -> str:
        if record_id in self._seen:
            record_id = f"{record_id}-{self._tag}{line}"
        self._seen.add(record_id)
        return record_id


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counts.items()) or "none"


def _article(name: str) -> str:
    """``an`` before a dataset name that starts with a vowel (expertqa, IFEval), else ``a``."""
    return "an" if name[:1].lower() in "aeiou" else "a"
