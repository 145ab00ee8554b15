"""A varied question set as lm-evaluation-harness tasks: one task per wording, so that the
models a user already runs under lm-eval (``vllm``, ``hf``, ``local-chat-completions``, ...)
answer every variant, and ``assay import lm-eval`` brings the samples back as questions and
outputs that ``assay instructions robustness`` pairs by prompt.

Every task reads the same documents (IFEval's ``key``, ``prompt``, ``instruction_id_list``,
``kwargs``, and ``variants``: every wording of the prompt), so that the importer meets one
document per prompt under each task, and sends the wording its name gives
(``doc_to_text``). A task holds the prompts its wording applies to. The tasks score with
lm-eval's own IFEval metrics, which hold the response to the original prompt where an
instruction names it (``combination:repeat_prompt``); ``robustness`` checks each response
against the wording it answered.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..data.importers.ifeval import VARIANT
from ..data.questions import Question
from ..runs import write_atomic
from .varied_set import META_KEY, IFEvalMeta

TASK_PREFIX = "ifeval_varied"
METRICS_MODULE = "ifeval_metrics"
# lm-eval resolves a task file's ``!function`` names against a module beside it
METRICS_SOURCE = {
    "lm-eval": '''"""lm-eval's IFEval scoring for the ifeval_varied_* tasks (assay wrote this file).

lm-eval resolves ``!function`` names in a task file against a module beside it, so this module
only names lm-eval's functions. They load NLTK's punkt_tab data, downloaded at first use."""

from lm_eval.tasks.ifeval.utils import agg_inst_level_acc, process_results

__all__ = ["agg_inst_level_acc", "process_results"]
''',
    "assay": '''"""IFEval's metrics by assay's instruction checker for the ifeval_varied_* tasks
(assay wrote this file): each task checks its responses against the wording it sent."""

from assay.instructions.lm_eval_metrics import agg_inst_level_acc, metrics_for

__all__ = ["agg_inst_level_acc"]
''',
}
# as lm-eval's own ifeval task: greedy, up to 1280 tokens (lm_eval --gen_kwargs overrides)
GENERATION = {"until": [], "do_sample": False, "temperature": 0.0, "max_gen_toks": 1280}
METRICS = (
    ("prompt_level_strict_acc", "mean"),
    ("inst_level_strict_acc", f"!function {METRICS_MODULE}.agg_inst_level_acc"),
    ("prompt_level_loose_acc", "mean"),
    ("inst_level_loose_acc", f"!function {METRICS_MODULE}.agg_inst_level_acc"),
)


def task_name(label: str) -> str:
    """``ifeval_varied_<label>``, with the characters lm-eval task names avoid as ``_``."""
    return f"{TASK_PREFIX}_" + "".join(c if c.isalnum() else "_" for c in label)


def write_lm_eval_tasks(
    questions: Sequence[Question],
    labels: Sequence[str],
    folder: Path,
    *,
    repeats: int = 1,
    metrics: str = "lm-eval",
) -> list[str]:
    """A task per label (``original`` first) in ``folder``, each with its documents file; the
    task names, in that order. The tasks name their documents by absolute path, since lm-eval
    resolves ``data_files`` against the directory it runs in. ``repeats``: lm-eval asks each
    prompt that many times (sampled draws, with ``--gen_kwargs do_sample=True,temperature=T``),
    which ``robustness --repeats-as-draws`` reads as draws. ``metrics``: ``lm-eval`` scores with
    lm-eval's IFEval functions, ``assay`` with :mod:`.lm_eval_metrics`."""
    folder.mkdir(parents=True, exist_ok=True)
    documents = [_document(question) for question in questions]
    lines = [json.dumps(doc, ensure_ascii=False) + "\n" for doc in documents]
    module = METRICS_SOURCE[metrics]
    names = []
    for label in [VARIANT, *labels]:
        name = task_name(label)
        data = folder / f"{name}.jsonl"
        write_atomic(
            data,
            "".join(
                line for doc, line in zip(documents, lines, strict=True) if label in doc["variants"]
            ),
        )
        scorer = "process_results" if metrics == "lm-eval" else task_scorer(name)
        if metrics == "assay":  # a scorer per task, which knows the wording its task sent
            module += f"{scorer} = metrics_for({json.dumps(label)})\n"
        write_atomic(
            folder / f"{name}.yaml", _task_yaml(name, label, data.resolve(), repeats, scorer)
        )
        names.append(name)
    write_atomic(folder / f"{METRICS_MODULE}.py", module)
    return names


def task_scorer(name: str) -> str:
    return f"process_results_{name}"


def _document(question: Question) -> dict[str, Any]:
    meta = IFEvalMeta.model_validate((question.meta or {})[META_KEY])
    key = meta.key if meta.key is not None else meta.input_line
    return {
        "key": key,
        "prompt": question.variants[0].prompt,
        "instruction_id_list": meta.instruction_id_list,
        "kwargs": meta.kwargs,
        "variants": {v.variant: v.prompt for v in question.variants},
    }


def _task_yaml(name: str, label: str, data: Path, repeats: int, scorer: str) -> str:
    """The task file; strings are written as JSON strings, which YAML reads alike."""
    lines = [
        f"# the {label!r} wording of `assay instructions vary`'s prompts (assay writes this file)",
        f"task: {name}",
        "dataset_path: json",
        "dataset_kwargs:",
        "  data_files:",
        f"    train: {json.dumps(str(data))}",
        "test_split: train",
        "output_type: generate_until",
        f"doc_to_text: {json.dumps('{{variants[' + json.dumps(label) + ']}}')}",
        "doc_to_target: 0",
        *([f"repeats: {repeats}"] if repeats > 1 else []),
        "generation_kwargs:",
        *(f"  {key}: {json.dumps(value)}" for key, value in GENERATION.items()),
        f"process_results: !function {METRICS_MODULE}.{scorer}",
        "metric_list:",
    ]
    for metric, aggregation in METRICS:
        lines += [f"  - metric: {metric}", f"    aggregation: {aggregation}"]
        lines.append("    higher_is_better: true")
    lines += ["metadata:", "  version: 1.0"]
    return "\n".join(lines) + "\n"
