"""Held-out agreement: assay's instruction checker against a reference IFEval implementation.

Compares assay's strict and loose verdicts with the reference's (written by
``reference_verdicts.py``, which runs in its own environment) per instruction id, on each set of
cases, and prints a markdown table; ``--disagreements`` writes every disagreement with assay's
reason. Run with assay's environment:

    PYTHONPATH=src .venv/bin/python benchmarks/ifeval_heldout/compare.py \
        --set smollm2=benchmarks/ifeval_heldout/smollm2_cases.jsonl:REF_SMOLLM2.jsonl \
        --set edge=benchmarks/ifeval_heldout/edge_cases.jsonl:REF_EDGE.jsonl

(``reference_verdicts.py`` says how to make the REF files.)
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cases import load_cases  # this folder's (run as a script)

from assay.instructions import check_response
from assay.instructions.agreement import Confusion, ifeval_label_quirk
from assay.instructions.text import capitalized_words, count_sentences
from assay.instructions.types import MODES


def load(path: Path) -> list[dict[str, Any]]:  # a reference file
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@dataclass
class SetResult:
    confusions: dict[str, dict[str, Confusion]]  # mode -> id -> rows: reference, columns: assay
    excluded: dict[str, int]
    disagreements: list[dict[str, Any]]
    responses: int
    counts_equal: dict[str, int]  # sentences / capital_words: responses where assay counts alike


def compare_set(name: str, cases_path: Path, reference_path: Path) -> SetResult:
    reference = {row["id"]: row for row in load(reference_path)}
    confusions: dict[str, dict[str, Confusion]] = {m: defaultdict(Confusion) for m in MODES}
    excluded: dict[str, int] = defaultdict(int)
    disagreements: list[dict[str, Any]] = []
    counts_equal = {"sentences": 0, "capital_words": 0}
    cases = load_cases(cases_path)
    for case in cases:
        ids, kwargs = case["instruction_id_list"], case["kwargs"]
        counted = reference[case["id"]]
        counts_equal["sentences"] += count_sentences(case["response"]) == counted["sentences"]
        capitals = len(capitalized_words(case["response"]))
        counts_equal["capital_words"] += capitals == counted["capital_words"]
        for mode in MODES:
            results = check_response(ids, kwargs, case["prompt"], case["response"], mode=mode)
            for index, result in enumerate(results):
                if ifeval_label_quirk(result.instruction_id, result.kwargs) is not None:
                    excluded[result.instruction_id] += mode == "strict"
                    continue
                label = reference[case["id"]][mode][index]
                confusions[mode][result.instruction_id].add(label, result.followed)
                if label != result.followed:
                    disagreements.append(
                        {
                            "set": name,
                            "id": case["id"],
                            "mode": mode,
                            "instruction_id": result.instruction_id,
                            "kwargs": result.kwargs,
                            "reference": label,
                            "assay": result.followed,
                            "assay_reason": result.reason,
                            "response": case["response"],
                        }
                    )
    return SetResult(confusions, excluded, disagreements, len(cases), counts_equal)


def cell(confusion: Confusion | None) -> str:
    if confusion is None or confusion.total == 0:
        return "-"
    text = f"{confusion.agreed / confusion.total:.1%}"
    differing = []
    if confusion.label_followed_assay_not:
        differing.append(f"{confusion.label_followed_assay_not} FN")
    if confusion.assay_followed_label_not:
        differing.append(f"{confusion.assay_followed_label_not} NF")
    return text + (f" ({', '.join(differing)})" if differing else "")


def render(sets: dict[str, dict[str, dict[str, Confusion]]]) -> str:
    names = list(sets)
    header = "| instruction id | " + " | ".join(f"{n} n | {n} strict | {n} loose" for n in names)
    lines = [header + " |", "|---|" + "---:|" * (3 * len(names))]
    ids = sorted({i for by_mode in sets.values() for rows in by_mode.values() for i in rows})
    overall = {(n, m): Confusion() for n in names for m in MODES}
    for instruction_id in ids:
        cells = []
        for n in names:
            strict = sets[n]["strict"].get(instruction_id)
            cells.append(str(strict.total if strict else 0))
            for m in MODES:
                confusion = sets[n][m].get(instruction_id)
                cells.append(cell(confusion))
                if confusion is not None:
                    overall[n, m] = overall[n, m].plus(confusion)
        lines.append(f"| `{instruction_id}` | " + " | ".join(cells) + " |")
    totals = []
    for n in names:
        totals.append(f"**{overall[n, 'strict'].total}**")
        totals.extend(f"**{cell(overall[n, m])}**" for m in MODES)
    lines.append("| **all** | " + " | ".join(totals) + " |")
    lines.append("")
    lines.append(
        "n: instructions compared. FN: the reference says followed, assay not; NF: assay says "
        "followed, the reference not."
    )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--set",
        action="append",
        required=True,
        metavar="NAME=CASES.jsonl:REFERENCE.jsonl",
        help="a set of cases and the reference's verdicts on them (repeatable)",
    )
    parser.add_argument("--disagreements", type=Path, help="write each disagreement (JSONL)")
    args = parser.parse_args()
    sets: dict[str, dict[str, dict[str, Confusion]]] = {}
    flagged: list[dict[str, Any]] = []
    counts: list[str] = []
    for spec in args.set:
        name, _, paths = spec.partition("=")
        cases_path, _, reference_path = paths.partition(":")
        result = compare_set(name, Path(cases_path), Path(reference_path))
        sets[name] = result.confusions
        flagged.extend(result.disagreements)
        counts.append(
            f"- {name}: sentence count equal to Punkt's on {result.counts_equal['sentences']}"
            f"/{result.responses} responses, all-capital word count equal to NLTK's on "
            f"{result.counts_equal['capital_words']}/{result.responses}"
        )
        if result.excluded:
            counts.append(
                f"- {name}: excluded (the reference checks a random letter instead): "
                f"{dict(result.excluded)}"
            )
    print(render(sets))
    print("\n".join(counts))
    if args.disagreements:
        with args.disagreements.open("w", encoding="utf-8") as out:
            for row in flagged:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{len(flagged)} disagreements -> {args.disagreements}")


if __name__ == "__main__":
    main()
