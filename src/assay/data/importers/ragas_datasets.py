"""ragas evaluation datasets as grounded-QA records: the samples a RAG system answered, checked
by assay's verifiers (``assay bench run --pattern entailment --verifier ...``).

Reads what ragas itself writes: an ``EvaluationDataset`` saved with ``to_jsonl`` or ``to_csv``,
and the result of ``ragas.evaluate(...)`` saved from ``result.to_pandas()`` with ``to_csv`` or
``to_json(orient="records", lines=True)``. A file is CSV when its name ends in ``.csv`` (gzip
or not), else JSON lines. In CSV ragas and pandas write a list as Python's text of it
(``['a', 'b']``), which is read as such (never evaluated as code).

One verify-only record per single-turn sample: ``answer`` = ``response``, ``question`` =
``user_input``, evidence = ``retrieved_contexts`` (ids ``1``, ``2``, ... in their order, the ids
assay's ragas metric gives them), ``gold_answer`` = ``reference``, or the empty string where
the sample has none (assay reads "" as "no reference": nothing is passed off as one). ragas
samples carry no label: the records are unlabelled unless a label column is named. Metric
columns of an ``evaluate()`` result (``faithfulness``, ...) go to ``meta.ragas``; the
test-set generator's ``persona_name``, ``query_style`` and ``query_length``, and columns of the
user's own, go to ``meta``. Samples of one question share ``group``.

Skipped and reported: multi-turn samples (``user_input`` a list of messages: assay checks one
answer against passages), samples without a response, and samples without retrieved contexts.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ...errors import shown
from ..grounded import check_references
from ..records import Evidence, GroundedQARecord
from ._common import (
    GroundedImport,
    ImportReport,
    RowReader,
    Tally,
    UniqueIds,
    read_rows,
    stable_key,
)
from ._csv import csv_rows, python_list
from ._labels import LabelField

DATASET = "ragas"
LABEL_CONVENTION = (
    "none: ragas samples carry no label, so the records are unlabelled (bench run reports "
    "their scores, not accuracy), unless --error-field or --grounded-field names a column "
    "of your own (true or false; with --error-value VALUE, a column of categories); ragas "
    "metric scores go to meta.ragas"
)
FILLED_GOLD = "gold_answer empty (no reference)"
SKIP_MULTI_TURN = "multi-turn sample (user_input is a list of messages)"
SKIP_NO_RESPONSE = "no response"
SKIP_NO_CONTEXTS = "no retrieved contexts"

# SingleTurnSample's fields: what is not one of them is a metric score or a column of the user's
SAMPLE_FIELDS = frozenset(
    {
        "user_input", "retrieved_contexts", "reference_contexts", "retrieved_context_ids",
        "reference_context_ids", "response", "multi_responses", "reference", "rubrics",
        "persona_name", "query_style", "query_length",
    }
)  # fmt: skip
# sample fields kept in meta as they are: the test-set generator's description of the question
META_FIELDS = ("persona_name", "query_style", "query_length")
PANDAS_INDEX_COLUMNS = frozenset({"", "Unnamed: 0"})  # to_csv's index column, as pandas names it


def import_ragas(path: Path, label: LabelField | None = None) -> GroundedImport:
    """Read a ragas dataset or ``evaluate()`` result written as JSON lines or CSV."""
    from_csv = path.name.lower().removesuffix(".gz").endswith(".csv")
    rows = csv_rows(path, DATASET) if from_csv else read_rows(path, DATASET)
    tally = Tally()
    ids = UniqueIds(tag="R")
    records: list[GroundedQARecord] = []
    for line, row in rows:
        tally.rows += 1
        reader = RowReader(row, path=path, line=line, dataset=DATASET)
        record = _sample_record(reader, tally, label, from_csv=from_csv)
        if record is not None:
            record = record.model_copy(update={"id": ids.claim(record.id, tally.rows)})
            check_references(record, path=path, line=line)
            records.append(record)
    if label is not None:
        label.check_seen(records, path)
    return GroundedImport(records=tuple(records), report=_report(tally, path, records, label))


def _report(
    tally: Tally, path: Path, records: list[GroundedQARecord], label: LabelField | None
) -> ImportReport:
    """The import's report; it says how many records got the empty string as gold answer,
    for want of a reference."""
    convention = LABEL_CONVENTION if label is None else _labelled_convention(label)
    report = tally.report(DATASET, path, records, convention)
    missing = sum(1 for record in records if not record.gold_answer.strip())
    return report.model_copy(update={"filled": {FILLED_GOLD: missing} if missing else {}})


def _sample_record(
    reader: RowReader, tally: Tally, label: LabelField | None, *, from_csv: bool
) -> GroundedQARecord | None:
    tally.units["samples"] += 1
    question = _question(reader, from_csv=from_csv)
    if question is None:
        tally.skip(SKIP_MULTI_TURN)
        return None
    response = _text(reader, "response").strip()
    contexts = _contexts(reader, from_csv=from_csv)
    if not response or not contexts:
        tally.skip(SKIP_NO_RESPONSE if not response else SKIP_NO_CONTEXTS)
        return None
    reference = _text(reader, "reference")
    return GroundedQARecord(
        id=f"{DATASET}-{stable_key(question + chr(10) + response)}",
        question=question,
        gold_answer=reference,
        evidence=contexts,
        answer=response,
        gold_error=None if label is None else label.read(reader),
        group=f"{DATASET}-q{stable_key(question)}",
        meta=_meta(reader, label, from_csv=from_csv) or None,
    )


def _question(reader: RowReader, *, from_csv: bool) -> str | None:
    """``user_input``; None for a multi-turn sample (a list of messages, which ragas' CSV
    writes as Python's text of the list)."""
    value = reader.row.get("user_input")
    if isinstance(value, list) or (from_csv and python_list(value) is not None):
        return None
    return _text(reader, "user_input")


def _text(reader: RowReader, field: str) -> str:
    """A text field; missing, null (ragas leaves out what a sample lacks) and NaN (pandas'
    empty cell) are the empty string."""
    value = reader.row.get(field)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if not isinstance(value, str):
        reader.fail(field, f"expected a string, got {type(value).__name__}")
    return value


def _contexts(reader: RowReader, *, from_csv: bool) -> tuple[Evidence, ...]:
    """``retrieved_contexts`` as evidence ``1``, ``2``, ...; blank passages are dropped (their
    ids are kept by the others, so ids stay the passages' places in the list)."""
    value = reader.row.get("retrieved_contexts")
    if from_csv and isinstance(value, str) and value.strip():
        value = python_list(value)
        if value is None:
            reader.fail(
                "retrieved_contexts",
                "expected a list of passages as ragas writes it in CSV (['passage', ...]), got "
                f"{shown(reader.row['retrieved_contexts'])}",
                shape=False,
            )
    if value is None or value == "":
        return ()
    if not isinstance(value, list):
        reader.fail("retrieved_contexts", f"expected a list of strings, got {type(value).__name__}")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            reader.fail(
                f"retrieved_contexts[{index}]", f"expected a string, got {type(item).__name__}"
            )
    return tuple(
        Evidence(evidence_id=str(number), text=text.strip())
        for number, text in enumerate(value, start=1)
        if text.strip()
    )


def _meta(reader: RowReader, label: LabelField | None, *, from_csv: bool) -> dict[str, Any]:
    """Metric scores under ``ragas``; the generator's fields, the label column and the user's
    own columns as they are."""
    meta: dict[str, Any] = {}
    scores: dict[str, float | None] = {}
    for column, value in reader.row.items():
        if column in META_FIELDS and value not in (None, ""):
            meta[column] = value
        if column in SAMPLE_FIELDS or column in PANDAS_INDEX_COLUMNS:
            continue
        is_score, score = _score(value, from_csv=from_csv)
        if is_score and (label is None or column != label.name):
            scores[column] = score
        else:
            meta[column] = value
    if scores:
        meta["ragas"] = scores
    return meta


def _score(value: Any, *, from_csv: bool) -> tuple[bool, float | None]:
    """(whether ``value`` is a metric's score, the score): a number, or None where ragas gave
    NaN (a failed metric: null in JSON lines, an empty cell in CSV)."""
    if value is None or (from_csv and value == ""):
        return True, None
    if from_csv and isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return False, None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False, None
    return True, None if math.isnan(value) else float(value)


def _labelled_convention(label: LabelField) -> str:
    return f"{label.describe()}; ragas metric scores go to meta.ragas"
