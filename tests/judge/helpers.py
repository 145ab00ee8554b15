"""Builders shared by the judge tests: a sample, its expected meta, and a valid reply."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

OUTPUT_TEXT = (
    "## Summary\n"
    "A hash map stores key–value pairs in buckets.\n\n"
    "- Lookup is O(1) on average.\n"
    "- Collisions are resolved by chaining.\n"
    "- Resizing keeps the load factor low."
)

META = {
    "judge_model": "stub/judge",
    "target_model": "stub/target",
    "question_id": "Q1",
    "prompt_variant": "A",
    "output_id": "target/Q1__A.txt",
    "method": "cross_judge",
    "timestamp": "2026-01-02",
}


def valid_body() -> dict[str, Any]:
    """A reply that satisfies every rule for OUTPUT_TEXT and META (verdict PARTIAL, 6)."""
    return copy.deepcopy(
        {
            "meta": META,
            "scores": {
                "FORMAT_COMPLIANCE": 2,
                "INSTRUCTION_COMPLIANCE": 1,
                "SEMANTIC_FIDELITY": 2,
                "COMPLETENESS": 1,
                "overall_score": 6,
            },
            "verdict": "PARTIAL",
            "flags": [],
            "evidence": [
                {"dimension": "FORMAT_COMPLIANCE", "quote": "## Summary", "reason": "heading"},
                {
                    "dimension": "INSTRUCTION_COMPLIANCE",
                    "quote": "Lookup is O(1) on average.",
                    "reason": "three bullets",
                },
                {
                    "dimension": "SEMANTIC_FIDELITY",
                    "quote": "stores key-value pairs",
                    "reason": "on topic",
                },
                {
                    "dimension": "COMPLETENESS",
                    "quote": "Resizing keeps the load factor low",
                    "reason": "covers resizing",
                },
            ],
            "notes": "fine",
        }
    )


def dumps(body: Any) -> str:
    return json.dumps(body, ensure_ascii=False)


QUESTIONS_JSONL: list[dict[str, Any]] = [
    {
        "question_id": "Q1",
        "intent": "explain a data structure",
        "variants": {
            "A": {
                "prompt": "Explain a hash map in exactly three Markdown bullet points.",
                "required_structure": "three Markdown bullet points",
                "constraints": ["no code"],
            },
            "B": {"prompt": "What is a hash map? Three bullets."},
        },
    },
    {
        "question_id": "Q2",
        "variants": [
            {"variant": "A", "prompt": "Name two prime numbers as a JSON list."},
            {"variant": "B", "prompt": "Two primes, JSON array only."},
        ],
    },
]


def write_questions(path: Path, questions: list[dict[str, Any]] | None = None) -> Path:
    rows = QUESTIONS_JSONL if questions is None else questions
    path.write_text("".join(json.dumps(q) + "\n" for q in rows), encoding="utf-8")
    return path


def write_manifest(path: Path, targets: list[str], *, skip: int = 0) -> Path:
    """Inline-text outputs for every question x variant x target (minus ``skip`` lines)."""
    lines = []
    for target in targets:
        for question in ("Q1", "Q2"):
            for variant in ("A", "B"):
                lines.append(
                    {
                        "question_id": question,
                        "prompt_variant": variant,
                        "target_model": target,
                        "output_id": f"{target}/{question}/{variant}",
                        "text": f"Output of {target} for {question} {variant}: 2, 3 and more.",
                    }
                )
    kept = lines[skip:]
    path.write_text("".join(json.dumps(line) + "\n" for line in kept), encoding="utf-8")
    return path
