"""HaluEval (Li et al., 2023): three task files, each pairing a right output with a hallucinated
one written by ChatGPT for the same input.

- QA (``qa_data.json``, ``qa_one-turn_data.json``): HotpotQA ``question`` and ``knowledge``,
  ``right_answer`` / ``hallucinated_answer``.
- Dialogue (``dialogue_data.json``): OpenDialKG ``dialogue_history`` and ``knowledge``,
  ``right_response`` / ``hallucinated_response``.
- Summarization (``summarization_data.json``): a CNN/Daily Mail ``document``,
  ``right_summary`` / ``hallucinated_summary``.

Each row yields two records that share ``group``: ``...-right`` (grounded) and
``...-hallucinated`` (error). The knowledge or the document is the single evidence item; the
outputs carry no citations (the data has none) and ``gold_answer`` is the right output. A row's
task is told by its fields, so every task file imports with the same command. The general-query
file (``general_data.json``) is refused: it has no text to ground a response in.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..records import Evidence, GroundedQARecord
from ._common import GroundedImport, RowReader, Tally, UniqueIds, read_rows, stable_key

DATASET = "halueval"
LABEL_CONVENTION = (
    "right_answer / right_response / right_summary -> grounded (gold_error=false); "
    "hallucinated_answer / hallucinated_response / hallucinated_summary -> grounding error "
    "(gold_error=true, error_type='hallucinated'). Two records per row; the QA, dialogue and "
    "summarization files are read, the general-query file is refused (no evidence)."
)
ERROR_TYPE = "hallucinated"
# the fields of HaluEval's general_data.json: a user query, ChatGPT's response and a human
# yes/no label, without any text the response should be grounded in
GENERAL_FIELDS = frozenset({"user_query", "chatgpt_response"})


@dataclass(frozen=True)
class Task:
    """One HaluEval task file: which fields hold the evidence, the input and the two outputs."""

    name: str
    source: str  # the seed dataset, meta.source
    evidence: str  # the field holding the grounding text; also the evidence id
    context: str | None  # the field that becomes the record's question (None: no question)
    right: str
    hallucinated: str
    unit: str  # what a row is, for the report
    output: str  # what the two outputs are, for the report
    skip_no_evidence: str
    skip_same: str
    # ids: a prefix and the fields their hash is taken from; QA keeps its question-only ids,
    # which predate the other tasks
    id_prefix: str
    id_fields: tuple[str, ...]

    def id_key(self, reader: RowReader) -> str:
        """The content an id is hashed from."""
        return "\n".join(reader.text(name).strip() for name in self.id_fields)


QA = Task(
    name="qa",
    source="hotpotqa",
    evidence="knowledge",
    context="question",
    right="right_answer",
    hallucinated="hallucinated_answer",
    unit="questions",
    output="answers",
    skip_no_evidence="question without knowledge text",
    skip_same="right and hallucinated answers identical",
    id_prefix=DATASET,
    id_fields=("question",),
)
DIALOGUE = Task(
    name="dialogue",
    source="opendialkg",
    evidence="knowledge",
    context="dialogue_history",
    right="right_response",
    hallucinated="hallucinated_response",
    unit="dialogues",
    output="responses",
    skip_no_evidence="dialogue without knowledge text",
    skip_same="right and hallucinated responses identical",
    id_prefix=f"{DATASET}-dialogue",
    id_fields=("knowledge", "dialogue_history"),
)
SUMMARIZATION = Task(
    name="summarization",
    source="cnndm",
    evidence="document",
    context=None,
    right="right_summary",
    hallucinated="hallucinated_summary",
    unit="documents",
    output="summaries",
    skip_no_evidence="empty document",
    skip_same="right and hallucinated summaries identical",
    id_prefix=f"{DATASET}-summarization",
    id_fields=("document",),
)
TASKS = (QA, DIALOGUE, SUMMARIZATION)

SKIP_EMPTY_ANSWER = "empty answer"


def import_halueval(path: Path) -> GroundedImport:
    """Read a HaluEval task file in JSON lines (``qa_data.json``, ``dialogue_data.json``,
    ``summarization_data.json``, ``qa_one-turn_data.json``)."""
    tally = Tally()
    ids = UniqueIds()
    records: list[GroundedQARecord] = []
    for line, row in read_rows(path, DATASET):
        tally.rows += 1
        reader = RowReader(row, path=path, line=line, dataset=DATASET)
        task = _task(reader)
        tally.units[task.unit] += 1
        tally.units[task.output] += 2
        for record in _row_records(reader, task, tally):
            records.append(record.model_copy(update={"id": ids.claim(record.id, line)}))
    return GroundedImport(
        records=tuple(records), report=tally.report(DATASET, path, records, LABEL_CONVENTION)
    )


def _task(reader: RowReader) -> Task:
    """The row's task, told by its right-output field; a row with none is read as QA, whose
    missing field then names what was expected."""
    for task in TASKS:
        if task.right in reader.row:
            return task
    if reader.row.keys() >= GENERAL_FIELDS:
        reader.fail(
            "chatgpt_response",
            "HaluEval's general-query file has no knowledge or document to check a response "
            "against (only a query, ChatGPT's response and a yes/no label), so it cannot become "
            "grounded-QA records; the QA, dialogue and summarization files can",
            shape=False,
        )
    return QA


def _row_records(reader: RowReader, task: Task, tally: Tally) -> list[GroundedQARecord]:
    evidence = reader.text(task.evidence).strip()
    question = "" if task.context is None else reader.text(task.context).strip()
    right = reader.text(task.right).strip()
    hallucinated = reader.text(task.hallucinated).strip()
    if not evidence:
        tally.skip(task.skip_no_evidence)
        tally.skip(task.skip_no_evidence)
        return []
    if right == hallucinated:
        tally.skip(task.skip_same)
        tally.skip(task.skip_same)
        return []
    prefix, key = task.id_prefix, stable_key(task.id_key(reader))
    base = GroundedQARecord(
        id=f"{prefix}-{key}",
        question=question,
        gold_answer=right,
        evidence=(Evidence(evidence_id=task.evidence, text=evidence),),
        group=f"{prefix}-{key}",
    )
    out = []
    for suffix, answer, error in (("right", right, False), ("hallucinated", hallucinated, True)):
        if not answer:
            tally.skip(SKIP_EMPTY_ANSWER)
            continue
        update = {
            "id": f"{base.id}-{suffix}",
            "answer": answer,
            "gold_error": error,
            "error_type": ERROR_TYPE if error else None,
            # the task file and which of the dataset's two outputs this is
            "meta": {"task": task.name, "source": task.source, "answer": suffix},
        }
        out.append(base.model_copy(update=update))
    return out
