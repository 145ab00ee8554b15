"""LLM-AggreFact (Tang, Laban and Durrett, 2024): claims with the document that should ground
them, from eleven fact-checking datasets (AggreFact-CNN/XSum, TofuEval-MediaS/MeetB, WiCE,
REVEAL, ClaimVerify, FactCheck-GPT, ExpertQA, LFQA, RAGTruth), one row per claim with the fields
``dataset``, ``doc``, ``claim`` and ``label`` (1 = supported).

It is the usual form of the held-out *test* splits of the datasets the checkers are tuned on and
of datasets no other importer reads (LFQA's long-form answer sentences, RAGTruth, ...). The
file is the benchmark exported as JSON lines (``datasets``'
``load_dataset("lytang/LLM-AggreFact")["test"].to_json(PATH)``) or CSV (``.to_csv(PATH)``);
any other file with those four fields imports the same way.

One record per claim: the claim is the answer to verify (no question), and the document is the
evidence, one item per paragraph (blank-line separated; a document without blank lines is one
item, which the checkers split into sentences). The row's ``dataset`` goes to ``meta.dataset``,
so ``assay bench summarize RUN --by meta.dataset`` gives each source dataset its own metrics.
Claims checked against the same document share ``group``: they are not independent for the
bootstrap intervals. A row may name its own ``group`` (text: a question, an answer), which then
clusters it instead of its document: claims of one answer, each checked against passages of its
own, are not independent either.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ...errors import SHOWN_CHARS, InputError, shown
from ..records import Evidence, GroundedQARecord
from ._common import GroundedImport, RowReader, Tally, UniqueIds, read_rows, stable_key
from ._csv import csv_rows

DATASET = "aggrefact"
LABEL_CONVENTION = (
    "label 1 -> grounded (gold_error=false); label 0 -> grounding error (gold_error=true, "
    "error_type='unsupported'), the benchmark's own binary label. meta.dataset = the row's "
    "source dataset."
)
ERROR_TYPE = "unsupported"

SKIP_EMPTY_CLAIM = "empty claim"
SKIP_EMPTY_DOC = "empty document"

_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n\s*")  # a blank line, however many follow it


def import_aggrefact(path: Path) -> GroundedImport:
    """Read an LLM-AggreFact split exported as JSON lines or CSV (``.csv``; gzip either way)."""
    from_csv = _is_csv(path)
    tally = Tally()
    ids = UniqueIds(tag="R")  # a CSV row may span lines: the row number names it in any format
    records: list[GroundedQARecord] = []
    for line, row in csv_rows(path, DATASET) if from_csv else read_rows(path, DATASET):
        tally.rows += 1
        reader = RowReader(row, path=path, line=line, dataset=DATASET)
        record = _claim_record(reader, tally, from_csv=from_csv)
        if record is not None:
            records.append(record.model_copy(update={"id": ids.claim(record.id, tally.rows)}))
    return GroundedImport(
        records=tuple(records), report=tally.report(DATASET, path, records, LABEL_CONVENTION)
    )


def _is_csv(path: Path) -> bool:
    """Whether ``path`` is read as CSV (by its name, ``.gz`` or not); Parquet is refused."""
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(".parquet"):
        raise InputError(
            "Parquet is not read here",
            path=path,
            hint="export the split as JSON lines or CSV first, e.g. "
            "load_dataset('lytang/LLM-AggreFact')['test'].to_json('aggrefact_test.jsonl')",
        )
    return name.endswith(".csv")


def _claim_record(reader: RowReader, tally: Tally, *, from_csv: bool) -> GroundedQARecord | None:
    source = reader.text("dataset").strip()
    tally.units[source or "(no dataset)"] += 1
    claim = reader.text("claim").strip()
    doc = reader.text("doc").strip()
    supported = _supported(reader, from_csv=from_csv)
    if not claim or not doc:
        tally.skip(SKIP_EMPTY_CLAIM if not claim else SKIP_EMPTY_DOC)
        return None
    pair = doc + "\n" + claim  # the id's content: the same claim on another document differs
    meta: dict[str, Any] = {"dataset": source}
    contamination = reader.row.get("contamination_identifier")
    if isinstance(contamination, str) and contamination:
        meta["contamination_identifier"] = contamination
    return GroundedQARecord(
        id=f"{DATASET}-{_slug(source)}-{stable_key(pair)}",
        question="",
        gold_answer=claim,
        evidence=_paragraphs(doc),
        answer=claim,
        gold_error=not supported,
        error_type=None if supported else ERROR_TYPE,
        group=_group(reader, source, doc),
        meta=meta,
    )


def _group(reader: RowReader, source: str, doc: str) -> str:
    """The row's own ``group`` when it names one, else its document."""
    named = reader.text("group", optional=True).strip()
    if named:
        return f"{DATASET}-{_slug(source)}-group:{stable_key(named)}"
    return f"{DATASET}-{_slug(source)}-doc:{stable_key(doc)}"


def _supported(reader: RowReader, *, from_csv: bool) -> bool:
    """The label: the integer 1 or 0 in JSON lines, the text "1" or "0" in CSV (a CSV cell is
    text whatever it holds). In JSON lines a string "0", a float 1.0 or ``true`` is refused
    rather than read as a label: the benchmark's labels are integers, so another type means a
    file written some other way, whose values need a look before they are trusted."""
    if "label" not in reader.row:
        reader.fail("label", "missing field")
    value = reader.row["label"]
    # type() and not ==: 1.0 == 1 and True == 1 in Python, and "0" is a str
    if type(value) is (str if from_csv else int) and value in (0, 1, "0", "1"):
        return value in (1, "1")
    if from_csv or type(value) is int:
        reader.fail(
            "label", f"unknown label {shown(value)} (expected 1 = supported or 0)", shape=False
        )
    reader.fail(
        "label",
        f"unknown label {_json_text(value)} ({_json_kind(value)}; a label in JSON lines is the "
        "integer 1 = supported or 0)",
        shape=False,
    )


def _json_text(value: Any) -> str:
    """``value`` as the JSON line has it (``true``, ``"0"``), cut as error messages cut."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}… ({len(text):,} characters)"


def _json_kind(value: Any) -> str:
    kinds = {str: "a string", float: "a float", bool: "a boolean", list: "an array"}
    return "null" if value is None else kinds.get(type(value), "an object")


def _paragraphs(doc: str) -> tuple[Evidence, ...]:
    parts = [p.strip() for p in _PARAGRAPH_BREAK.split(doc) if p.strip()]
    return tuple(Evidence(evidence_id=f"p{i}", text=text) for i, text in enumerate(parts))


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "none"
