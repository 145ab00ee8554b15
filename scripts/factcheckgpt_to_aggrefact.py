#!/usr/bin/env python3
"""Turn the Factcheck-Bench annotations of Wang et al., "Factcheck-Bench: Fine-Grained
Evaluation Benchmark for Automatic Fact-checkers" (2023; github.com/yuxiaw/Factcheck-GPT,
``factcheck-GPT-benchmark.jsonl``) into LLM-AggreFact rows, one per claim and its retrieved
evidence.

    python scripts/factcheckgpt_to_aggrefact.py factcheck-GPT-benchmark.jsonl --out fcg_rows.jsonl
    assay import aggrefact fcg_rows.jsonl --out factcheckgpt.jsonl
    assay bench run --data factcheckgpt.jsonl --pattern entailment --verifier learned --out runs/fcg

Each line of the file is one ChatGPT response: its sentences, each sentence's claims, and for
each claim the passages a search engine retrieved for it (``auto_evidence``) with an
annotator's stance of each passage towards the claim (``stance_claim_autoEvid``:
``completely-support``, ``partially-support``, ``refute``, ``irrelevant``). A row's document is
the claim's passages separated by blank lines (one evidence item each after the import); the
claim is grounded in them (label 1) when at least one passage completely supports it, an error
(label 0) otherwise: partial support counts as no support, as LLM-AggreFact counts it. The
label is about the evidence, not about the world (a true claim the passages do not support is
an error here). Claims without passages, or whose stances do not match their passages one for
one, are counted and left out. This rule was fixed before any checker was scored on the rows;
each row also names its response's prompt as its ``group`` (added after, it changes only the
bootstrap intervals: they resample whole answers);
LLM-AggreFact builds its FactCheck-GPT rows with rules of its own, so the numbers are near its
figures' kind of data, not the same rows.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

NAME = "FactCheck-GPT"
SUPPORTS = "completely-support"


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The file's responses; a line that is not one stops the script with its location."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SystemExit(f"{path}: cannot read: {error}") from None
    objects = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise SystemExit(f"{path}:{number}: not a JSON line: {error.msg}") from None
        if not isinstance(item, dict) or not isinstance(item.get("sentences"), dict):
            raise SystemExit(f"{path}:{number}: expected a response with 'sentences'")
        for name, sentence in item["sentences"].items():
            check_sentence(path, number, name, sentence)
        objects.append(item)
    return objects


def check_sentence(path: Path, number: int, name: str, sentence: object) -> None:
    """A sentence whose claims, passages or stances are not lists cannot be read one for one."""
    if not isinstance(sentence, dict):
        raise SystemExit(f"{path}:{number}: field 'sentences.{name}': not an object")
    for field in ("claims", "auto_evidence", "stance_claim_autoEvid"):
        value = sentence.get(field)
        if value is not None and not isinstance(value, list):
            raise SystemExit(f"{path}:{number}: field 'sentences.{name}.{field}': not a list")


def rows(responses: list[dict[str, Any]], tally: Counter[str]) -> Iterator[dict[str, object]]:
    """One row per claim with passages; ``tally`` counts stances and what was left out."""
    for response in responses:
        for sentence in response["sentences"].values():
            claims = sentence.get("claims") or []
            passages = sentence.get("auto_evidence") or []
            stances = sentence.get("stance_claim_autoEvid") or []
            for index, claim in enumerate(claims):
                found = passages[index] if index < len(passages) else []
                judged = stances[index] if index < len(stances) else []
                texts = [p.strip() for p in found if isinstance(p, str) and p.strip()]
                if not texts:
                    tally["left out: no passages"] += 1
                    continue
                if len(judged) != len(found):
                    tally["left out: stances do not match passages"] += 1
                    continue
                tally.update(f"stance {s}" for s in judged)
                grounded = SUPPORTS in judged
                tally["grounded" if grounded else "error"] += 1
                yield {
                    "dataset": NAME,
                    "doc": "\n\n".join(texts),
                    "claim": claim,
                    "label": int(grounded),
                    "group": response.get("prompt") or "",  # claims of one answer: one cluster
                }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("benchmark", type=Path, help="factcheck-GPT-benchmark.jsonl")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    responses = read_lines(args.benchmark)
    tally: Counter[str] = Counter()
    written = list(rows(responses, tally))
    with args.out.open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in written)
    print(
        f"{NAME}: {len(written)} claims of {len(responses)} responses "
        f"(grounded {tally['grounded']}, error {tally['error']})"
    )
    for key in sorted(k for k in tally if k not in ("grounded", "error")):
        print(f"  {key}: {tally[key]}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
