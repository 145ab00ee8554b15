"""Every metric per slice of a run: ``assay bench summarize|compare --by meta.KEY``.

A slice is the results whose input record's ``meta`` has one value at KEY (records without the
key form the slice ``(none)``). Each slice gets the whole summary, intervals included, computed
exactly as for the run; the slices' counts add up to the run's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from ..data.meta import SliceKey, parse_by
from ..runs import write_atomic
from ..tables import Cell, Table
from .results import RESULTS_FILE, ResultRecord, iter_results
from .summary import BenchSummary, SummaryTally, build_summary

SLICES_DIR = "slices"
COLUMNS = ("balanced_accuracy", "auroc", "recall", "precision", "ece_uniform")


class RunTallies:
    """A run's results counted in one pass over results.jsonl: the whole run's tally and, for
    each ``--by`` option, a tally per slice. Counts are kept, not results, so memory grows
    with a few numbers per result rather than with the records."""

    def __init__(self, options: Sequence[str], *, whole: bool = True) -> None:
        # the whole run's tally only for a command that writes the run's summary (compare
        # reads summary.json): counting every result into it is most of a pass's work
        self.whole = SummaryTally() if whole else None
        self._keys = {option: SliceKey(parse_by(option)) for option in options}
        self._slices: dict[str, dict[str, SummaryTally]] = {option: {} for option in options}

    @classmethod
    def read(cls, run_dir: Path, options: Sequence[str], *, whole: bool = True) -> RunTallies:
        """Every line of ``run_dir``'s results checked and counted; a ``--by`` key no result
        has is a ConfigError."""
        tallies = cls(options, whole=whole)
        for result in iter_results(run_dir / RESULTS_FILE):
            tallies.add(result)
        for key in tallies._keys.values():
            key.check()
        return tallies

    def add(self, result: ResultRecord) -> None:
        if self.whole is not None:
            self.whole.add(result)
        for option, key in self._keys.items():
            value = key.value_of(result.meta)
            if (tally := self._slices[option].get(value)) is None:
                tally = self._slices[option][value] = SummaryTally()
            tally.add(result)

    def slice_summaries(
        self, run_dir: Path, option: str, *, n_resamples: int | None = None
    ) -> dict[str, BenchSummary]:
        """Each slice's whole summary, intervals included, in sorted order of the values
        (once per option: making a summary finishes its tally)."""
        return {
            value: build_summary(
                run_dir, tally=tally, n_resamples=n_resamples, plots=False, is_slice=True
            )
            for value, tally in sorted(self._slices[option].items())
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
