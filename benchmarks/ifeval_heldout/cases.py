"""The held-out cases, whole. A case of smollm2_cases.jsonl names its IFEval prompt by ``key``
(the dataset stays in ../shared/data and is not copied here); its prompt, instruction ids and
kwargs are read from IFEval's input_data.jsonl. Edge cases carry their own. Used by both
compare.py (assay's environment) and reference_verdicts.py (the reference's), so it imports
neither."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

IFEVAL_INPUTS = Path(__file__).resolve().parents[3] / "shared/data/ifeval/input_data.jsonl"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def load_cases(path: Path, inputs: Path = IFEVAL_INPUTS) -> list[dict[str, Any]]:
    """Each case as ``{"id", "prompt", "response", "instruction_id_list", "kwargs"}``."""
    cases = read_jsonl(path)
    if not any("key" in case for case in cases):
        return cases
    by_key = {row["key"]: row for row in read_jsonl(inputs)}
    fields = ("prompt", "instruction_id_list", "kwargs")
    return [
        {**case, **{f: by_key[case["key"]][f] for f in fields}} if "key" in case else case
        for case in cases
    ]
