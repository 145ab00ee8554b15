"""Two runs on the same labelled answers, record by record: what ``bench compare`` pairs.

Every paired section of a comparison reads a run's results once, into one :class:`ScoredRow`
per finished record. :func:`metric_differences` then gives, for two runs, each detection
metric's difference with an interval from one bootstrap of the shared questions applied to
both runs (:func:`assay.metrics.paired_detection_differences`): two verifiers whose separate
intervals overlap can still differ consistently, which only the paired interval shows.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..data.meta import meta_value, parse_by
from ..metrics import paired_detection_differences
from .calibration import Calibration, run_calibration
from .results import RESULTS_FILE, iter_results
from .summary import BenchSummary

PAIRED_RESAMPLES = 1000
PAIRED_SEED = 0


@dataclass(frozen=True)
class ScoredRow:
    """What the paired sections need of one finished record of a run."""

    answer: int  # hash of the answer judged (compared within one process: Python salts it)
    gold_error: bool | None
    p_error: float | None  # as the verifier wrote it (a run's calibration maps it later)
    verdict_right: bool | None  # the gate flagged exactly an erroneous answer
    cluster: str
    score_method: str
    claims: int
    slices: tuple[str, ...] = ()  # its value at each --by key asked for, in order


def scored_rows(run_dir: Path, by: Sequence[str] = ()) -> dict[str, ScoredRow]:
    """id -> row of every record of the run whose model calls all finished (``by``: the
    ``meta.KEY`` options whose values each row keeps)."""
    paths = [parse_by(option) for option in by]
    rows = {}
    for result in iter_results(run_dir / RESULTS_FILE):
        if not result.complete:
            continue
        right = None
        if result.gold_error is not None and result.verifier_pass is not None:
            right = result.verifier_pass != result.gold_error
        rows[result.id] = ScoredRow(
            answer=hash(result.selected_answer),
            gold_error=result.gold_error,
            p_error=result.verifier_score,
            verdict_right=right,
            cluster=result.cluster,
            score_method=result.score_method,
            claims=len(result.claim_checks),
            slices=tuple(meta_value(result.meta, path) for path in paths),
        )
    return rows


@dataclass(frozen=True)
class PairedRun:
    """One side of a pair: its rows, the summary's threshold and the run directory."""

    run_dir: Path
    rows: dict[str, ScoredRow]
    summary: BenchSummary

    @functools.cached_property
    def calibration(self) -> Calibration | None:
        """The run's calibration file, read once however many pairs and slices use it."""
        return run_calibration(self.run_dir)


def metric_differences(
    first: PairedRun, second: PairedRun, in_slice: tuple[int, str] | None = None
) -> dict[str, Any] | None:
    """B - A of every detection metric over the answers both runs scored with the same answer
    and label, each run's scores through its own calibration and at its own threshold (as its
    summary has them); None when they share no such answer. ``unpaired`` counts the shared
    ids left out because the runs judged different answers or labels there. ``in_slice``:
    (index of a --by key in the rows' ``slices``, value): only run A's records of that slice."""
    both = [
        key
        for key, row in first.rows.items()
        if _scored(row)
        and (in_slice is None or row.slices[in_slice[0]] == in_slice[1])
        and (other := second.rows.get(key)) is not None
        and _scored(other)
    ]
    same = [key for key in both if _same_answer(first.rows[key], second.rows[key])]
    if not same:
        return None
    truth = np.array([first.rows[key].gold_error for key in same], dtype=bool)
    differences = paired_detection_differences(
        truth,
        _calibrated(first, same),
        _calibrated(second, same),
        threshold_a=_threshold(first),
        threshold_b=_threshold(second),
        clusters=np.array([first.rows[key].cluster for key in same], dtype=object),
        n_resamples=PAIRED_RESAMPLES,
        seed=PAIRED_SEED,
    )
    return {**differences, "unpaired": len(both) - len(same)}


def _scored(row: ScoredRow) -> bool:
    return row.gold_error is not None and row.p_error is not None


def _same_answer(first: ScoredRow, second: ScoredRow) -> bool:
    return first.answer == second.answer and first.gold_error == second.gold_error


def _calibrated(side: PairedRun, keys: Sequence[str]) -> np.ndarray[Any, Any]:
    scores = np.array([side.rows[key].p_error for key in keys], dtype=float)
    calibration = side.calibration
    return scores if calibration is None else calibration.apply(scores)


def _threshold(side: PairedRun) -> float:
    threshold = side.summary.threshold
    return 0.5 if threshold is None else float(threshold)
