"""IFEval's own verdicts (strict and loose) for a file of cases, from a reference implementation.

Run this with a *separate* Python environment that has the reference, never assay's: it imports
``lm_eval.tasks.ifeval`` (the copy of Google's IFEval checker that ``lm-eval`` ships) and nothing
from assay. ``compare.py`` (beside it) then compares assay's verdicts with its output.

Setting up that environment offline (as for docs/instructions.md, "Against a reference
implementation"):

    python3 -m venv /tmp/ifeval-ref
    /tmp/ifeval-ref/bin/pip install nltk==3.10.4 langdetect==1.0.9 immutabledict packaging
    /tmp/ifeval-ref/bin/pip download lm-eval==0.4.13 --no-deps -d /tmp/ifeval-ref/dl
    # only the ifeval task is needed; importing all of lm_eval pulls in torch and more
    mkdir -p /tmp/ifeval-ref/pkg/lm_eval/tasks && cd /tmp/ifeval-ref/pkg \
      && unzip -q /tmp/ifeval-ref/dl/lm_eval-0.4.13-py3-none-any.whl 'lm_eval/tasks/ifeval/*' \
      && touch lm_eval/__init__.py lm_eval/tasks/__init__.py
    # NLTK's punkt_tab sentence data without nltk.download(): llama-index-core ships a copy
    /tmp/ifeval-ref/bin/pip download llama-index-core==0.14.25 --no-deps -d /tmp/ifeval-ref/dl
    mkdir -p /tmp/ifeval-ref/nltk_data && cd /tmp/ifeval-ref/nltk_data && unzip -q \
      /tmp/ifeval-ref/dl/llama_index_core-0.14.25-py3-none-any.whl \
      'llama_index/core/_static/nltk_cache/tokenizers/punkt_tab/*' \
      && mv llama_index/core/_static/nltk_cache/tokenizers . && rm -r llama_index

    NLTK_DATA=/tmp/ifeval-ref/nltk_data PYTHONPATH=/tmp/ifeval-ref/pkg \
      /tmp/ifeval-ref/bin/python benchmarks/ifeval_heldout/reference_verdicts.py \
      CASES.jsonl OUT.jsonl

A case is one JSON line ``{"id", "prompt", "response", "instruction_id_list", "kwargs"}`` (the
``id`` is any string naming it), or ``{"id", "key", "response"}`` for an IFEval prompt, whose
prompt and instructions are read from ../shared/data/ifeval/input_data.jsonl (``cases.py``);
the output has one line per case,
``{"id", "strict": [bool, ...], "loose": [bool, ...], "sentences", "capital_words"}``: the
verdicts in the order of its instructions, and the response's sentence count (NLTK's Punkt) and
all-capital word count (NLTK's word tokenizer) as IFEval's checks count them.
``random`` and langdetect are seeded before every instruction, so the output is reproducible
(langdetect is otherwise random on short text, and IFEval's letter_frequency draws a random
letter when the one asked for is not a-z).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import langdetect
from cases import load_cases  # this folder's (run as a script)
from lm_eval.tasks.ifeval import instructions_util, utils


def verdicts(case: dict[str, Any], mode: str) -> list[bool]:
    test = (
        utils.test_instruction_following_strict
        if mode == "strict"
        else utils.test_instruction_following_loose
    )
    out: list[bool] = []
    for index, instruction_id in enumerate(case["instruction_id_list"]):
        random.seed(0)
        langdetect.DetectorFactory.seed = 0
        one = utils.InputExample(
            key=0,
            instruction_id_list=[instruction_id],
            prompt=case["prompt"],
            kwargs=[case["kwargs"][index]],
        )
        out.append(bool(test(one, case["response"]).follow_instruction_list[0]))
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: ifeval_reference_verdicts.py CASES.jsonl OUT.jsonl", file=sys.stderr)
        return 2
    cases = load_cases(Path(argv[1]))
    with Path(argv[2]).open("w") as out:
        for case in cases:
            row = {"id": case["id"], "strict": verdicts(case, "strict")}
            row["loose"] = verdicts(case, "loose")
            row["sentences"] = instructions_util.count_sentences(case["response"])
            words = instructions_util.nltk.word_tokenize(case["response"])
            row["capital_words"] = sum(1 for word in words if word.isupper())
            out.write(json.dumps(row) + "\n")
    print(f"{len(cases)} cases -> {argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
