"""Report content of a directory of judge draw runs (``assay judge run --draws``, then
``assay judge analyze`` of the directory): the scores and variant effects over the draws and
the draw-noise table. Each draw's evaluations are in that draw's own report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..judge.draws import DrawsSummary, draw_runs
from ..judge.draws_plots import TITLES as PLOT_TITLES
from ..judge.draws_report import (
    HEADLINE,
    describe_draws,
    draws_tables,
    headline_method,
    methods_of,
)
from ._html_common import RunContent, isolated
from ._html_generic import base_section, summary_metrics
from ._html_label_agreement import label_agreement_tables
from ._html_model import Metric


def judge_draws_content(run_dir: Path, run: dict[str, Any]) -> RunContent:
    section = base_section(run_dir, run, PLOT_TITLES)
    section.documents = []  # results_analysis.md holds the tables drawn below
    try:
        summary = DrawsSummary.model_validate(section.summary)
    except ValidationError as error:
        section.notes.append(f"summary.json is not a judge draws summary: {error}")
        section.metrics = summary_metrics(section.summary)
        return RunContent(section=section)
    section.description = describe_draws(summary)
    section.notes += list(summary.notes)
    runs = draw_runs(run_dir)
    section.notes.append(
        "each draw's evaluations, with their prompts and replies: "
        + ", ".join(f"`assay report {run}`" for run in runs)
        if runs
        else "the draws are repeats of the judge run in the folder above: its report opens "
        "each evaluation (`<variant> (repeat k)`)"
    )
    section.headline = headline(summary)
    section.tables = [t for method in methods_of(summary) for t in draws_tables(summary, method)]
    section.tables += label_agreement_tables(run_dir, section.notes, draws=True)
    return RunContent(section=section)


def headline(summary: DrawsSummary) -> list[Metric]:
    """The overall score per judge x target x variant over the draws: cross-judged, or
    self-judged (marked) in a run with no cross-judging."""
    method = headline_method(summary)
    mark = " (self-judged)" if method == "self_judge" else ""
    return [
        Metric(
            label=f"overall, {isolated(r.target_model)} x {r.prompt_variant} "
            f"(judge {isolated(r.judge_model)}){mark}",
            value=r.mean,
            ci_low=r.ci_low,
            ci_high=r.ci_high,
            path=f"scores[{i}].mean",
            note=f"{r.questions} questions, {r.evaluations} valid evaluations over the draws",
        )
        for i, r in enumerate(summary.scores)
        if r.method == method and r.dimension == HEADLINE
    ]
