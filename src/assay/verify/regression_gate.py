"""``bench compare --fail-if-worse METRIC``: a check for CI that a new run is not worse than a
baseline on the same labelled answers.

The first run is the baseline; every later run is compared with it on the answers both scored
(the paired metric differences of :mod:`.paired_runs`). A run is *worse* on a metric when the
paired interval of its difference lies wholly on the wrong side of 0; a difference the interval
cannot tell from 0 passes. A check that cannot be made (no shared labelled answer, a metric
undefined on these labels) fails too, with its reason: a gate that was not checked has not
passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the CLI imports this module for its choices, before any command runs
    from .compare import Comparison

HIGHER_IS_BETTER = ("auroc", "auprc", "balanced_accuracy", "accuracy", "f1", "precision", "recall")
LOWER_IS_BETTER = ("ece_uniform", "ece_quantile", "mce", "brier")
GATE_METRICS = HIGHER_IS_BETTER + LOWER_IS_BETTER


def regressions(comparison: Comparison, metrics: Sequence[str]) -> list[str]:
    """One line per later run x metric that is worse than the baseline, or cannot be checked."""
    baseline = comparison.names[0]
    found = []
    for pair in comparison.pairs:
        if pair.run_a != baseline:
            continue
        if pair.differences is None:
            found.append(f"{pair.run_b}: no labelled answer shared with {baseline}: not checked")
            continue
        for metric in metrics:
            problem = _worse(pair.differences["metrics"][metric], metric)
            if problem:
                found.append(f"{pair.run_b} {metric}: {problem} against {baseline}")
    return found


def _worse(block: dict[str, Any], metric: str) -> str | None:
    difference, low, high = block.get("difference"), block.get("low"), block.get("high")
    if difference is None:
        return f"undefined ({block.get('reason')}): not checked"
    if low is None or high is None:
        return "no interval: not checked"
    text = f"{difference:+.3f} [{low:+.3f}, {high:+.3f}]"
    if metric in HIGHER_IS_BETTER and high < 0:
        return f"lower by {text}"
    if metric in LOWER_IS_BETTER and low > 0:
        return f"higher by {text}"
    return None
