"""Small grounded-QA files for the bench tests: generate-mode and verify-only records."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.verify.results import ResultRecord
from assay.verify.summary import SummaryTally

TOWER = [
    {
        "evidence_id": "e1",
        "title": "Eiffel Tower",
        "text": "The Eiffel Tower was completed in 1889 for the World's Fair. "
        "It is 330 metres tall.",
    },
    {"evidence_id": "e2", "title": "Paris", "text": "Paris is the capital of France."},
]
FRANCE = [
    {"evidence_id": "p1", "text": "Paris is the capital of France."},
    {"evidence_id": "p2", "text": "Lyon is the third-largest city in France."},
]


def generate_records(count: int) -> list[dict[str, Any]]:
    """Records without an answer (the pattern writes one), grouped two per question."""
    records = []
    for i in range(count):
        tower = i % 2 == 0
        records.append(
            {
                "id": f"g{i}",
                "question": "When was the Eiffel Tower completed?"
                if tower
                else "What is the capital of France?",
                "gold_answer": "In 1889." if tower else "Paris.",
                "evidence": TOWER if tower else FRANCE,
                "gold_citations": [{"evidence_id": "e1" if tower else "p1"}],
                "group": f"question-{i // 2}",
            }
        )
    return records


VERIFY_ONLY = [
    ("The capital of France is Lyon. [cite:p1]", True, "contradiction"),
    ("Paris is the capital of France. [cite:p1]", False, None),
    ("Paris is the capital of France. [cite:p2]", True, "wrong_citation"),
    ("Lyon is the third-largest city in France. [cite:p2]", False, None),
    ("Paris has twelve million inhabitants. [cite:p1]", True, "unsupported_claim"),
    ("Paris, the capital of France, was founded in 52 BC. [cite:p1]", True, "unsupported_claim"),
]


def verify_only_records(count: int) -> list[dict[str, Any]]:
    """Records with an answer and a gold label (cycling through :data:`VERIFY_ONLY`)."""
    records = []
    for i in range(count):
        answer, error, error_type = VERIFY_ONLY[i % len(VERIFY_ONLY)]
        record: dict[str, Any] = {
            "id": f"v{i}",
            "question": "What is the capital of France?",
            "gold_answer": "Paris.",
            "evidence": FRANCE,
            "gold_citations": [{"evidence_id": "p1"}],
            "answer": answer,
            "gold_error": error,
            "group": f"vq-{i // 3}",
        }
        if error_type:
            record["error_type"] = error_type
        records.append(record)
    return records


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def mixed_file(path: Path, generated: int = 4, verified: int = 6) -> Path:
    return write_jsonl(path, generate_records(generated) + verify_only_records(verified))


def tally_in_batches(results: Sequence[ResultRecord], size: int) -> SummaryTally:
    """A summary tally merged from tallies of ``size`` results each, as a Ray run's driver
    merges its workers' batches."""
    merged = SummaryTally()
    for start in range(0, len(results), size):
        part = SummaryTally()
        for result in results[start : start + size]:
            part.add(result)
        merged.merge(part)
    return merged
