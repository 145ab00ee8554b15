"""IFEval's four lm-eval metrics computed by assay's instruction checker, for the tasks
``assay instructions vary --lm-eval DIR --lm-eval-metrics assay`` writes.

lm-eval's own IFEval metric loads NLTK's ``punkt_tab`` data, which it downloads at first use;
on a machine without it (offline, or a fresh cache) lm-eval stops at scoring, after every
answer was generated. These functions need nothing beyond assay, check each response against
the wording its task sent (the prompt a ``combination:repeat_prompt`` response must repeat),
and give lm-eval's table the numbers ``assay instructions robustness`` reports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .registry import check_response

Metrics = dict[str, bool | list[bool]]


def metrics_for(label: str) -> Callable[[Mapping[str, Any], Sequence[str]], Metrics]:
    """lm-eval's ``process_results`` for the task of one wording: the response checked in
    strict and loose mode against the document's instructions and that wording's prompt."""

    def process_results(doc: Mapping[str, Any], results: Sequence[str]) -> Metrics:
        prompt = doc["variants"][label]
        found: Metrics = {}
        for mode in ("strict", "loose"):
            verdicts = check_response(
                doc["instruction_id_list"], doc["kwargs"], prompt, results[0], mode=mode
            )
            followed = [verdict.followed for verdict in verdicts]
            found[f"prompt_level_{mode}_acc"] = all(followed)
            found[f"inst_level_{mode}_acc"] = followed
        return found

    return process_results


def agg_inst_level_acc(items: Sequence[Sequence[bool]]) -> float:
    """The instruction-level share: every instruction of every response counted once."""
    flat = [followed for item in items for followed in item]
    return sum(flat) / len(flat) if flat else 0.0
