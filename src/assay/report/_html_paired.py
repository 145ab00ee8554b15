"""Bench runs shown together, record by record, as ``bench compare`` pairs them: runs whose
verdicts agree by construction say so, and each run's section gets a table of how every other
run's detection metrics differ from its own on the answers both scored, with paired intervals.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..tables import Cell, Table
from ._html_common import RunContent

if TYPE_CHECKING:
    from ..verify.paired_runs import PairedRun


def pair_bench_runs(run_dirs: Sequence[Path], contents: list[RunContent]) -> None:
    """Notes and paired-difference tables in the sections of the bench runs among
    ``contents`` (two to :data:`~assay.verify.compare.MAX_PAIRED_RUNS` of them; each run's
    results read once)."""
    from ..verify.compare import MAX_PAIRED_RUNS, identical_pairs, load_summary
    from ..verify.paired_runs import PairedRun, scored_rows

    bench = [(d, c) for d, c in zip(run_dirs, contents, strict=True) if c.section.kind == "bench"]
    if not 2 <= len(bench) <= MAX_PAIRED_RUNS:
        return
    names = [c.section.name for _, c in bench]
    runs = [PairedRun(d, scored_rows(d), load_summary(d)) for d, _ in bench]
    summaries = [run.summary for run in runs]
    dirs = [run.run_dir for run in runs]
    by_name = {c.section.name: c for _, c in bench}
    read = [run.rows for run in runs]
    for first, second, shared, same, differ in identical_pairs(names, dirs, summaries, read):
        detail = f"on all {shared} shared records (same: {same}; differ: {differ})"
        by_name[first].section.notes.append(_identical(second, detail))
        by_name[second].section.notes.append(_identical(first, detail))
    differences = _all_differences(runs)
    for index, (_, content) in enumerate(bench):
        table = _differences_table(names, differences, index)
        if table.rows:
            content.section.tables.append(table)


def _identical(other: str, detail: str) -> str:
    return f"identical by construction: the same p_error as {other} {detail}"


def _all_differences(runs: Sequence[PairedRun]) -> dict[tuple[int, int], dict[str, Any] | None]:
    """(this, other) -> the other run's metrics minus this one's: one bootstrap per pair of
    runs, the reverse direction read from it with the sign turned."""
    from ..verify.paired_runs import metric_differences

    found: dict[tuple[int, int], dict[str, Any] | None] = {}
    for this, other in itertools.combinations(range(len(runs)), 2):
        forward = metric_differences(runs[this], runs[other])
        found[this, other] = forward
        found[other, this] = None if forward is None else _reversed(forward)
    return found


def _reversed(differences: dict[str, Any]) -> dict[str, Any]:
    """A - B from B - A: each side swapped, the difference and its interval negated."""
    metrics = {}
    for name, block in differences["metrics"].items():
        flipped = {**block, "a": block["b"], "b": block["a"]}
        if block["difference"] is not None:
            flipped["difference"] = -block["difference"]
        if block["low"] is not None and block["high"] is not None:
            flipped["low"], flipped["high"] = -block["high"], -block["low"]
        metrics[name] = flipped
    return {**differences, "metrics": metrics}


def _differences_table(
    names: Sequence[str], differences: dict[tuple[int, int], dict[str, Any] | None], index: int
) -> Table:
    """Every other run's metrics minus this run's, on the answers both scored."""
    from ..verify.compare import DIFFERENCE_COLUMNS, difference_cells
    from ..verify.paired_runs import PAIRED_RESAMPLES

    rows: list[list[Cell]] = []
    for other, name in enumerate(names):
        pair = differences.get((index, other))
        if pair is None:
            continue
        metrics = pair["metrics"]
        shared = f"{pair['n']} ({pair['n_clusters']} questions)"
        rows.append([name, shared, str(pair["unpaired"]), *difference_cells(metrics)])
    columns = ["other run", "shared answers", "left out"]
    columns += [f"{title}: other - this" for _, title in DIFFERENCE_COLUMNS]
    note = (
        f"On the labelled answers both runs scored (the same answer and label; 'left out': "
        f"shared ids whose answer or label differs). Intervals: {PAIRED_RESAMPLES} resamples "
        "of the shared questions, each applied to both runs: an interval that excludes 0 is "
        "a difference these answers show. Higher is better for AUROC, AUPRC and balanced "
        "accuracy, lower for ECE and Brier. As `assay bench compare` prints it."
    )
    return Table(title="Paired metric differences", columns=columns, rows=rows, note=note)
