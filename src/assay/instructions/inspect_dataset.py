"""A varied question set as an inspect_ai dataset: one sample per prompt x wording, so that the
models a user already runs under inspect_ai answer every variant, and ``assay import inspect``
brings the log back as questions (one per prompt) with a variant per wording, which
``assay instructions robustness`` pairs by prompt.

Each sample is a line of inspect's JSON-lines dataset form (``json_dataset(FILE)``): its ``id``
is ``<question id>:<variant>``, its ``input`` the wording, and its ``metadata`` IFEval's
``instruction_id_list`` and ``kwargs`` (what ``instructions_followed()`` scores with, and what
``robustness --instructions-field meta.metadata`` reads back) and, under ``assay``, the
question and variant the sample stands for (the importer's ``PLACEMENT_KEY``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..data.importers.inspect_logs import PLACEMENT_KEY
from ..data.questions import Question
from ..runs import write_atomic
from .varied_set import META_KEY, IFEvalMeta


def write_inspect_dataset(questions: Sequence[Question], path: Path) -> int:
    """Every question x variant as a sample line of ``path``; returns how many samples."""
    lines = [
        json.dumps(sample, ensure_ascii=False) + "\n"
        for question in questions
        for sample in _samples(question)
    ]
    write_atomic(path, "".join(lines))
    return len(lines)


def _samples(question: Question) -> list[dict[str, Any]]:
    meta = IFEvalMeta.model_validate((question.meta or {})[META_KEY])
    instructions = {
        "instruction_id_list": meta.instruction_id_list,
        "kwargs": meta.kwargs,
        **({"key": meta.key} if meta.key is not None else {}),
    }
    return [
        {
            "id": f"{question.question_id}:{variant.variant}",
            "input": variant.prompt,
            "metadata": {
                **instructions,
                PLACEMENT_KEY: {
                    "question_id": question.question_id,
                    "variant": variant.variant,
                },
            },
        }
        for variant in question.variants
    ]
