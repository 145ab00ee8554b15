"""Every judge metric per slice: ``assay judge analyze --by meta.KEY``.

A slice is the evaluations whose sample's ``meta`` (the question's and the manifest line's own
fields, archived as ``sample_meta``) has one value at KEY. Each slice is summarised exactly as
the run is (counts, scores with intervals, verdicts, invalid rates, agreement); the slices'
counts add up to the run's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from ..data.meta import parse_by, slices
from ..runs import safe_filename, write_atomic
from ..tables import Cell, Table
from .analysis_types import AnalysisSettings, JudgeSummary
from .analyze import summarize
from .evaluations import Evaluation

SLICES_DIR = "slices"


def sliced_summaries(
    records: Sequence[Evaluation], run_dir: Path, option: str, settings: AnalysisSettings
) -> dict[str, JudgeSummary]:
    """The run's summary per value at ``option``'s key, from the evaluations already read."""
    groups = slices(records, lambda r: r.sample_meta, parse_by(option))
    return {value: _summary(items, settings, run_dir) for value, items in groups.items()}


def check_slices(records: Sequence[Evaluation], options: Sequence[str]) -> None:
    """Refuse a ``--by`` option that is malformed or names a key no evaluated sample has,
    before the analysis writes anything."""
    for option in options:
        slices(records, lambda r: r.sample_meta, parse_by(option))


def _summary(
    records: Sequence[Evaluation], settings: AnalysisSettings, run_dir: Path
) -> JudgeSummary:
    return summarize(records, settings, run_dir=str(run_dir))


def slices_file(run_dir: Path, option: str) -> Path:
    """``slices/<option>.json``; a key with characters a file name must not hold (``/``)
    gets a safe name with a short hash (the file's ``by`` keeps the option as given)."""
    return run_dir / SLICES_DIR / (safe_filename(option, max_length=120) + ".json")


def write_slices(run_dir: Path, option: str, summaries: dict[str, JudgeSummary]) -> Path:
    target = slices_file(run_dir, option)
    target.parent.mkdir(exist_ok=True)
    payload = {"by": option, "slices": {k: v.model_dump(mode="json") for k, v in summaries.items()}}
    write_atomic(target, json.dumps(payload, indent=2))
    return target


def slices_markdown(option: str, summaries: dict[str, JudgeSummary]) -> str:
    """Per slice: its counts, and the overall score per judge x target x variant with its CI."""
    rows: list[list[Cell]] = []
    for value, summary in summaries.items():
        counts = summary.counts
        head: list[Cell] = [value, counts.work_items, counts.valid, f"{counts.valid_rate:.3f}"]
        overall = [s for s in summary.scores if s.dimension == "overall_score"]
        rows.extend(
            [*head, r.judge_model, r.target_model, r.prompt_variant, r.n,
             f"{r.mean:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}]"]
            for r in overall
        )  # fmt: skip
        if not overall:
            rows.append([*head, "", "", "", 0, "n/a"])
    columns = [option, "samples x judges", "valid", "valid rate", "judge", "target", "variant"]
    return Table(columns=[*columns, "n", "mean overall [95% CI]"], rows=rows).markdown()
