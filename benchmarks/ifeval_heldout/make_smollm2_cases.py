"""Turn `assay generate` outputs for IFEval prompts into held-out cases (smollm2_cases.jsonl).

The question set is a sample of IFEval's prompts, one question per prompt, ``question_id`` ``k``
+ IFEval's key (``make_questions`` below writes it). After

    python benchmarks/ifeval_heldout/make_smollm2_cases.py questions DATA/input_data.jsonl Q.jsonl
    assay generate --questions Q.jsonl --model llamacpp/smollm2 --out GEN \
        --max-tokens 300 --temperature 0 --seed 0 --concurrency 1
    python benchmarks/ifeval_heldout/make_smollm2_cases.py cases DATA/input_data.jsonl GEN... OUT

OUT has one case per generated output (of one or more GEN directories): its IFEval key and the
response; the prompt and its instructions are read from DATA when the cases are used
(``cases.load_cases``), so no part of the dataset is copied into the repository.
smollm2_cases.jsonl holds 148 of the 150: the run was stopped, on a
loaded 2-core machine, while the last two were still generating.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

SAMPLE = 150
PER_ID = 6  # every instruction id in at least this many sampled prompts
SEED = 20240601


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def make_questions(inputs: Path, out: Path) -> None:
    rows = read_jsonl(inputs)
    random.seed(SEED)
    random.shuffle(rows)
    chosen: dict[int, dict[str, Any]] = {}
    for instruction_id in sorted({i for r in rows for i in r["instruction_id_list"]}):
        have = sum(instruction_id in r["instruction_id_list"] for r in chosen.values())
        for row in rows:
            if have >= PER_ID:
                break
            if instruction_id in row["instruction_id_list"] and row["key"] not in chosen:
                chosen[row["key"]] = row
                have += 1
    for row in rows:
        if len(chosen) >= SAMPLE:
            break
        chosen.setdefault(row["key"], row)
    with out.open("w", encoding="utf-8") as f:
        for row in chosen.values():
            variants = {"plain": {"prompt": row["prompt"]}}
            f.write(json.dumps({"question_id": f"k{row['key']}", "variants": variants}) + "\n")


def make_cases(inputs: Path, generated: list[Path], out: Path) -> None:
    by_key = {row["key"]: row for row in read_jsonl(inputs)}
    outputs = [(d, e) for d in generated for e in read_jsonl(d / "manifest.jsonl")]
    with out.open("w", encoding="utf-8") as f:
        for directory, entry in sorted(outputs, key=lambda o: int(o[1]["question_id"][1:])):
            row = by_key[int(entry["question_id"][1:])]
            response = (directory / entry["path"]).read_text(encoding="utf-8")
            # the prompt and its instructions stay in the dataset: cases.load_cases reads them
            case = {"id": f"smollm2-{row['key']}", "key": row["key"], "response": response}
            f.write(json.dumps(case, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["questions"] and len(sys.argv) == 4:
        make_questions(Path(sys.argv[2]), Path(sys.argv[3]))
    elif sys.argv[1:2] == ["cases"] and len(sys.argv) >= 5:
        make_cases(Path(sys.argv[2]), [Path(a) for a in sys.argv[3:-1]], Path(sys.argv[-1]))
    else:
        sys.exit(__doc__)
