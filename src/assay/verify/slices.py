"""Every metric per slice of a run: ``assay bench summarize|compare --by meta.KEY``.

A slice is the results whose input record's ``meta`` has one value at KEY (records without the
key form the slice ``(none)``). Each slice gets the whole summary, intervals included, computed
exactly as for the run; the slices' counts add up to the run's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from ..data.meta import parse_by, slices
from ..runs import write_atomic
from ..tables import Cell, Table
from .results import RESULTS_FILE, ResultRecord, iter_results
from .summary import BenchSummary, build_summary

SLICES_DIR = "slices"
COLUMNS = ("balanced_accuracy", "auroc", "recall", "precision", "ece_uniform")


def sliced_summaries(
    run_dir: Path,
    option: str,
    *,
    n_resamples: int | None = None,
    results: Sequence[ResultRecord] | None = None,
) -> dict[str, BenchSummary]:
    """The run's summary per value at ``option``'s key (``results``: the run's results, already
    read; default: read from its results.jsonl)."""
    path = parse_by(option)
    records = iter_results(run_dir / RESULTS_FILE) if results is None else results
    groups = slices(records, lambda r: r.meta, path)
    return {
        value: build_summary(run_dir, results=items, n_resamples=n_resamples, plots=False)
        for value, items in groups.items()
    }


def write_slices(run_dir: Path, option: str, summaries: dict[str, BenchSummary]) -> Path:
    """``slices/<option>.json``: the slices' summaries, read by the report."""
    target = run_dir / SLICES_DIR / f"{option}.json"
    target.parent.mkdir(exist_ok=True)
    payload = {"by": option, "slices": {k: v.model_dump(mode="json") for k, v in summaries.items()}}
    write_atomic(target, json.dumps(payload, indent=2))
    return target


def slices_markdown(option: str, summaries: dict[str, BenchSummary], run: str = "") -> str:
    """One row per slice: its size, error rate and the headline metrics with their intervals."""
    header = ["run"] if run else []
    rows: list[list[Cell]] = [
        [*([run] if run else []), *slice_cells(value, summary)]
        for value, summary in summaries.items()
    ]
    return Table(columns=[*header, option, "n", "error rate", *COLUMNS], rows=rows).markdown()


def slice_cells(value: str, summary: BenchSummary) -> list[str]:
    detection = summary.detection or {}
    metrics = detection.get("metrics") or {}
    rate = metrics.get("positive_rate", {}).get("value")
    return [
        value,
        str(summary.counts.get("results", 0)),
        "n/a" if rate is None else f"{rate:.3f}",
        *(_with_interval(metrics.get(name) or {}) for name in COLUMNS),
    ]


def _with_interval(metric: dict[str, object]) -> str:
    value, low, high = metric.get("value"), metric.get("low"), metric.get("high")
    if not isinstance(value, float | int):
        return "n/a"
    if isinstance(low, float | int) and isinstance(high, float | int):
        return f"{value:.3f} [{low:.3f}, {high:.3f}]"
    return f"{value:.3f}"
