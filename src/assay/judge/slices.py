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
from ..runs import write_atomic
from .analysis_types import AnalysisSettings, JudgeSummary
from .analyze import summarize
from .archive import EvaluationRecord, iter_archive

SLICES_DIR = "slices"


def sliced_summaries(
    run_dir: Path, option: str, settings: AnalysisSettings
) -> dict[str, JudgeSummary]:
    path = parse_by(option)
    records = [item.record for item in iter_archive(run_dir) if item.record is not None]
    groups = slices(records, lambda r: r.sample_meta, path)
    return {value: _summary(items, settings, run_dir) for value, items in groups.items()}


def _summary(
    records: Sequence[EvaluationRecord], settings: AnalysisSettings, run_dir: Path
) -> JudgeSummary:
    return summarize(records, settings, run_dir=str(run_dir))


def write_slices(run_dir: Path, option: str, summaries: dict[str, JudgeSummary]) -> Path:
    target = run_dir / SLICES_DIR / f"{option}.json"
    target.parent.mkdir(exist_ok=True)
    payload = {"by": option, "slices": {k: v.model_dump(mode="json") for k, v in summaries.items()}}
    write_atomic(target, json.dumps(payload, indent=2))
    return target


def slices_markdown(option: str, summaries: dict[str, JudgeSummary]) -> str:
    """Per slice: its counts, and the overall score per judge x target x variant with its CI."""
    lines = [
        f"| {option} | samples x judges | valid | valid rate | judge | target | variant "
        "| n | mean overall [95% CI] |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for value, summary in summaries.items():
        counts = summary.counts
        head = f"| {value} | {counts.work_items} | {counts.valid} | {counts.valid_rate:.3f}"
        rows = [s for s in summary.scores if s.dimension == "overall_score"]
        if not rows:
            lines.append(f"{head} | | | | 0 | n/a |")
        for row in rows:
            lines.append(
                f"{head} | {row.judge_model} | {row.target_model} | {row.prompt_variant} "
                f"| {row.n} | {row.mean:.2f} [{row.ci_low:.2f}, {row.ci_high:.2f}] |"
            )
    return "\n".join(lines)
