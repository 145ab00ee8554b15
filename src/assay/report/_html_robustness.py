"""Report content of an instruction-robustness run (``assay instructions robustness --out``):
the headline shares per target, the tables of summary.json, and every output, openable with
its prompt, its text and each instruction's verdict and reason beside the baseline's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InputError
from ..instructions.robustness import OutputCheck, RobustnessSummary
from ..instructions.robustness_plots import TITLES as PLOT_TITLES
from ..instructions.robustness_run import VERDICTS_FILE, read_output_checks
from ..instructions.robustness_tables import (
    contrast_table,
    instruction_table,
    noise_table,
    robustness_tables,
    same_text_note,
)
from ._html_common import ExampleSource, RunContent, clip, compact, isolated, main_cap
from ._html_generic import base_section, summary_metrics
from ._html_model import Cell, Column, Detail, Fact, Metric, Table, TableSection, TextSection

COLUMNS = [
    Column(key="question_id", label="question", type="category", searchable=True),
    Column(key="prompt_variant", label="variant", type="category"),
    Column(key="target_model", label="target", type="category"),
    Column(key="followed", label="all followed", type="category"),
    Column(key="instructions", label="instructions followed", type="text"),
    Column(key="change", label="against the baseline", type="category"),
]
DRAW_COLUMN = Column(key="draw", label="draw", type="category")


def robustness_content(run_dir: Path, run: dict[str, Any], *, examples: bool = True) -> RunContent:
    section = base_section(run_dir, run, PLOT_TITLES)
    section.documents = []  # robustness.md holds the tables drawn below
    try:
        summary = RobustnessSummary.model_validate(section.summary)
    except ValidationError as error:
        section.notes.append(f"summary.json is not a robustness summary: {error}")
        section.metrics = summary_metrics(section.summary)
        return RunContent(section=section)
    section.description = describe(summary)
    note = same_text_note(summary)
    if note is not None:
        section.notes.append(note)
    section.headline = headline(summary)
    section.tables = [
        *robustness_tables(summary),
        instruction_table(summary),
        *([noise_table(summary)] if summary.noise else []),
        *([contrast_table(summary)] if summary.contrasts else []),
    ]
    if not examples:  # the numbers alone (assay track): the verdicts are not read
        return RunContent(section=section)
    checks = _checks(run_dir, section.notes)
    return RunContent(section=section, sources=[_source(checks, summary)])


def describe(summary: RobustnessSummary) -> str:
    targets = sorted({row.target_model for row in summary.targets})
    others = {row.variant for row in summary.variants} - {summary.baseline}
    counts = ", ".join(map(str, summary.draw_outputs))
    draws = f", {len(summary.draws)} draws of each ({counts} outputs)" if summary.draws else ""
    return (
        f"instruction following under {len(others)} prompt variant(s) of "
        f"{summary.questions} prompts{draws}, paired with {summary.baseline!r} "
        f"({summary.mode} mode); target(s): {', '.join(isolated(t) for t in targets)}"
    )


def headline(summary: RobustnessSummary) -> list[Metric]:
    """Per target: the baseline share, the share followed under every variant, the unstable."""
    metrics = []
    for i, row in enumerate(summary.targets):
        for label, key in (
            (summary.baseline, "baseline_rate"),
            ("robust (every variant" + (", every draw)" if summary.draws else ")"), "robust_rate"),
            ("unstable", "unstable_rate"),
            *([("draws disagree", "resampling_unstable_rate")] if summary.draws else []),
        ):
            metrics.append(
                Metric(
                    label=f"{label}, {isolated(row.target_model)}",
                    value=getattr(row, key),
                    path=f"targets[{i}].{key}",
                    note=f"over {row.prompts} prompts answered under every variant",
                )
            )
    return metrics


def _checks(run_dir: Path, notes: list[str]) -> list[OutputCheck]:
    path = run_dir / VERDICTS_FILE
    try:
        return read_output_checks(path)
    except (InputError, OSError) as error:
        notes.append(f"{path} could not be read, so no output is shown: {error}")
        return []


def _source(checks: list[OutputCheck], summary: RobustnessSummary) -> ExampleSource:
    """Every output, beside the baseline's output of its prompt in the same draw (else in the
    first draw there is)."""
    baseline, draws = summary.baseline, bool(summary.draws)
    by_cell: dict[tuple[str, str, int], OutputCheck] = {}
    first_draw: dict[tuple[str, str], OutputCheck] = {}
    for check in checks:
        if check.prompt_variant == baseline:
            by_cell[(check.target_model, check.question_id, check.draw)] = check
            first_draw.setdefault((check.target_model, check.question_id), check)

    def baseline_of(check: OutputCheck) -> OutputCheck | None:
        if check.prompt_variant == baseline:
            return None
        prompt = (check.target_model, check.question_id)
        return by_cell.get((*prompt, check.draw)) or first_draw.get(prompt)

    def detail_of(index: int, cap: int | None) -> dict[str, Any]:
        check = checks[index]
        return compact(detail(check, baseline_of(check), cap))

    def row_of(check: OutputCheck) -> list[Cell]:
        cells = row(check, baseline_of(check), baseline)
        return [*cells, str(check.draw)] if draws else cells

    return ExampleSource(
        title="Outputs and their verdicts",
        source=VERDICTS_FILE,
        columns=[*COLUMNS, DRAW_COLUMN] if draws else COLUMNS,
        rows=[row_of(c) for c in checks],
        detail=detail_of,
    )


def change(check: OutputCheck, before: OutputCheck | None, baseline: str) -> str:
    if check.prompt_variant == baseline:
        return "(the baseline)"
    if before is None:
        return "no baseline output"
    if before.follow_all_instructions == check.follow_all_instructions:
        return "same"
    return "gained" if check.follow_all_instructions else "lost"


def row(check: OutputCheck, before: OutputCheck | None, baseline: str) -> list[Cell]:
    followed = sum(r.followed for r in check.results)
    return [
        check.question_id,
        check.prompt_variant,
        check.target_model,
        "yes" if check.follow_all_instructions else "no",
        f"{followed} of {len(check.results)}",
        change(check, before, baseline),
    ]


def detail(check: OutputCheck, before: OutputCheck | None, cap: int | None) -> Detail:
    sections: list[Any] = [
        TextSection(title="Prompt", text=clip(check.prompt, main_cap(cap)), pre=True),
        TextSection(title="Output", text=clip(check.response, main_cap(cap)), pre=True),
        TableSection(table=verdict_table(check, cap)),
    ]
    if before is not None:
        sections += [
            TextSection(
                title=f"The baseline's prompt ({before.prompt_variant}, draw {before.draw})",
                text=clip(before.prompt, cap),
                pre=True,
                collapsed=True,
            ),
            TextSection(
                title="The baseline's output",
                text=clip(before.response, cap),
                pre=True,
                collapsed=True,
            ),
            TableSection(table=verdict_table(before, cap, "The baseline's verdicts")),
        ]
    facts = [
        Fact(label="question", value=check.question_id),
        Fact(label="variant", value=check.prompt_variant),
        Fact(label="target", value=check.target_model),
        Fact(label="mode", value=check.mode),
        Fact(
            label="all instructions followed",
            value="yes" if check.follow_all_instructions else "no",
            badge="good" if check.follow_all_instructions else "bad",
        ),
        Fact(label="output", value=check.source),
        Fact(label="draw", value=str(check.draw)),
    ]
    title = f"{check.question_id} x {check.prompt_variant} x {check.target_model}"
    return Detail(title=title, facts=facts, sections=sections)


def verdict_table(check: OutputCheck, cap: int | None, title: str = "Verdicts") -> Table:
    return Table(
        title=title,
        columns=["instruction", "arguments", "followed", "reason"],
        rows=[
            [r.instruction_id, clip(str(r.kwargs or ""), cap), r.followed, clip(r.reason, cap)]
            for r in check.results
        ],
    )
