"""``scripts/lfqa_to_aggrefact.py`` on files of the published LFQA-Verification shape (an
annotation file and a docs file, JSON arrays as published, numbered differently): questions
matched by text, the majority and unanimous label rules, questions without documents left out,
and the rows imported by ``assay import aggrefact``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from assay.data.importers import import_grounded

from ..conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "lfqa_to_aggrefact.py"
ANNOTATIONS = [
    {
        "questionid": "webgpt-0",
        "question": "Why is a runners heart rate lower than a non runner",
        "answers": ["Runners have slow hearts.", "Their hearts are green."],
        "annotations": [
            {
                "labels": ["supported", "supported", "partially"],
                "answer": "Runners have slow hearts.",
            },
            {
                "labels": ["not_supported", "supported", "partially"],
                "answer": "Their hearts are green.",
            },
        ],
    },
    {
        "questionid": "webgpt-1",
        "question": "A question with no documents?",
        "answers": ["Anything."],
        "annotations": [{"labels": ["supported"] * 3, "answer": "Anything."}],
    },
]
DOCS = [
    {
        "question_id": 7,
        "question": "Why is a runners  heart rate lower than a non runner",  # spacing differs
        "docs": [
            {"doc_id": "webgpt:0", "title": "T", "text": "Endurance runners develop slow hearts."},
            {
                "doc_id": "webgpt:1",
                "title": "U",
                "text": "Training raises vagal tone.\n\n\nIt helps.",
            },
        ],
    }
]


def convert(
    tmp_path: Path, *extra: str, doc_items: list[dict[str, object]] = DOCS
) -> tuple[list[dict[str, object]], str]:
    annotations, docs = tmp_path / "annotations.json", tmp_path / "docs-webgpt.json"
    annotations.write_text(json.dumps(ANNOTATIONS, indent=4), encoding="utf-8")
    docs.write_text(json.dumps(doc_items, indent=4), encoding="utf-8")
    out = tmp_path / "rows.jsonl"
    command = [sys.executable, str(SCRIPT), "--annotations", str(annotations), "--docs", str(docs)]
    done = subprocess.run(
        [*command, "--out", str(out), *extra], capture_output=True, text=True, check=True
    )
    return [json.loads(line) for line in out.read_text().splitlines()], done.stdout


def test_sentences_become_rows_with_the_majority_label(tmp_path: Path) -> None:
    rows, printed = convert(tmp_path)
    assert [(r["claim"], r["label"]) for r in rows] == [
        ("Runners have slow hearts.", 1),
        ("Their hearts are green.", 0),
    ]
    assert rows[0]["doc"] == (
        "Endurance runners develop slow hearts.\n\nTraining raises vagal tone.\n\n\nIt helps."
    )
    assert "LFQA-annotations: 2 sentences of 1 questions" in printed  # named after the file
    assert "1 questions without documents left out" in printed
    imported = import_grounded("aggrefact", tmp_path / "rows.jsonl")
    assert [r.gold_error for r in imported.records] == [False, True]
    assert len(imported.records[0].evidence) == 3  # one item per paragraph


def test_all_three_annotators_for_the_strict_label(tmp_path: Path) -> None:
    rows, _ = convert(tmp_path, "--label", "all", "--name", "LFQA-webgpt")
    assert [r["label"] for r in rows] == [0, 0]
    assert {r["dataset"] for r in rows} == {"LFQA-webgpt"}


def test_a_question_whose_documents_are_all_empty_is_counted_as_left_out(tmp_path: Path) -> None:
    """Its sentences cannot be checked: they are left out and counted with the questions
    without documents, not dropped unreported."""
    empty: dict[str, object] = {
        "question": "A question with no documents?",
        "docs": [{"title": "V", "text": ""}],
    }
    rows, printed = convert(tmp_path, doc_items=[*DOCS, empty])
    assert [r["claim"] for r in rows] == ["Runners have slow hearts.", "Their hearts are green."]
    assert "2 sentences of 1 questions" in printed
    assert "1 questions without documents left out" in printed


def test_swapped_files_give_one_located_error_not_a_traceback(tmp_path: Path) -> None:
    annotations, docs = tmp_path / "annotations.json", tmp_path / "docs-webgpt.json"
    annotations.write_text(json.dumps(ANNOTATIONS), encoding="utf-8")
    docs.write_text(json.dumps(DOCS), encoding="utf-8")
    swapped = ["--annotations", str(docs), "--docs", str(annotations)]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *swapped, "--out", str(tmp_path / "rows.jsonl")],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"{annotations}: item 0 field 'docs': missing (the item has: annotations, answers, "
        "question, questionid)"
    ]
