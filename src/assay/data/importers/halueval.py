"""HaluEval QA (Li et al., 2023): HotpotQA questions with their ``knowledge``, the right answer
and a hallucinated answer written by ChatGPT.

Each question yields two records that share ``group``: ``...-right`` (grounded) and
``...-hallucinated`` (error). ``knowledge`` is the single evidence item, id ``knowledge``; the
answers carry no citations (the data has none) and ``gold_answer`` is the right answer.
"""

from __future__ import annotations

from pathlib import Path

from ..records import Evidence, GroundedQARecord
from ._common import GroundedImport, RowReader, Tally, UniqueIds, read_rows, stable_key

DATASET = "halueval"
LABEL_CONVENTION = (
    "right_answer -> grounded (gold_error=false); hallucinated_answer -> grounding error "
    "(gold_error=true, error_type='hallucinated'). Two records per question."
)
EVIDENCE_ID = "knowledge"
ERROR_TYPE = "hallucinated"

SKIP_NO_KNOWLEDGE = "question without knowledge text"
SKIP_EMPTY_ANSWER = "empty answer"
SKIP_SAME_ANSWERS = "right and hallucinated answers identical"


def import_halueval(path: Path) -> GroundedImport:
    """Read a HaluEval QA file (JSON lines, e.g. ``qa_one-turn_data.json`` or ``qa_data.json``)."""
    tally = Tally()
    ids = UniqueIds()
    records: list[GroundedQARecord] = []
    for line, row in read_rows(path, DATASET):
        tally.rows += 1
        tally.units["questions"] += 1
        tally.units["answers"] += 2
        reader = RowReader(row, path=path, line=line, dataset=DATASET)
        for record in _question_records(reader, tally):
            records.append(record.model_copy(update={"id": ids.claim(record.id, line)}))
    return GroundedImport(
        records=tuple(records), report=tally.report(DATASET, path, records, LABEL_CONVENTION)
    )


def _question_records(reader: RowReader, tally: Tally) -> list[GroundedQARecord]:
    knowledge = reader.text("knowledge").strip()
    question = reader.text("question").strip()
    right = reader.text("right_answer").strip()
    hallucinated = reader.text("hallucinated_answer").strip()
    if not knowledge:
        tally.skip(SKIP_NO_KNOWLEDGE)
        tally.skip(SKIP_NO_KNOWLEDGE)
        return []
    if right == hallucinated:
        tally.skip(SKIP_SAME_ANSWERS)
        tally.skip(SKIP_SAME_ANSWERS)
        return []
    base = GroundedQARecord(
        id=f"{DATASET}-{stable_key(question)}",
        question=question,
        gold_answer=right,
        evidence=(Evidence(evidence_id=EVIDENCE_ID, text=knowledge),),
        group=f"{DATASET}-{stable_key(question)}",
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
            # the task file and which of the dataset's two answers this is
            "meta": {"task": "qa", "source": "hotpotqa", "answer": suffix},
        }
        out.append(base.model_copy(update=update))
    return out
