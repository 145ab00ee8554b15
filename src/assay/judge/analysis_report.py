"""results_analysis.md from a :class:`~assay.judge.analyze.JudgeSummary`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from ..tables import Cell, Table
from .analysis_types import JudgeSummary, ScoreRow
from .protocol import VERDICTS

METHOD_TITLES = {
    "cross_judge": "Cross-judging (primary)",
    "self_judge": "Self-judging (diagnostic, not a primary statistic)",
}


def render_report(summary: JudgeSummary) -> str:
    counts = summary.counts
    level = f"{summary.confidence:.0%}"
    parts = [
        "# Judge results analysis\n",
        f"Run `{summary.run_dir}`, protocol fingerprint `{summary.fingerprint}`. "
        f"Judges: {', '.join(summary.judges)}. Targets: {', '.join(summary.targets)}.\n",
        f"{counts.work_items} sample x judge evaluations ({counts.records} archived attempts): "
        f"**{counts.valid} valid**, {counts.invalid} invalid "
        f"(valid rate {number(counts.valid_rate, 3)}; first attempts valid: "
        f"{counts.first_attempt_valid}/{counts.first_attempts}, "
        f"{number(counts.first_attempt_valid_rate, 3)}).\n",
        "Invalid evaluations are not FAIL: they never enter the score statistics below and are "
        "counted in the invalid-evaluation section. Intervals are "
        f"{level} {summary.bootstrap}, {summary.n_resamples} resamples.\n",
        f"Verdict thresholds: `{summary.thresholds}`.\n",
        _coverage_line(summary),
        *(f"Note: {note}\n" for note in summary.notes),
    ]
    for method, title in METHOD_TITLES.items():
        parts.append(f"## {title}\n")
        parts.append(_scores_section(method, summary))
        parts.append(_verdicts_section(method, summary))
        parts.append(_variant_section(method, summary))
    parts.append(_invalid_section(summary))
    parts.append(_self_preference_section(summary))
    parts.append(_length_section(summary))
    parts.append(_agreement_section(summary))
    if summary.plots:
        parts.append("## Plots\n\n" + "\n".join(f"- `{p}`" for p in summary.plots) + "\n")
    return "\n".join(parts)


def _coverage_line(summary: JudgeSummary) -> str:
    coverage = summary.coverage
    if coverage is None:
        return "Coverage: no coverage.json in this run.\n"
    if coverage.complete:
        return f"Coverage: complete, {coverage.aligned} of {coverage.expected} cells aligned.\n"
    lines = "\n".join(f"- {issue.describe()}" for issue in coverage.issues)
    return (
        f"Coverage: **incomplete** (INCOMPLETE_COVERAGE at set level), {coverage.aligned} of "
        f"{coverage.expected} cells aligned; judged with --allow-incomplete:\n\n{lines}\n"
    )


def number(value: float | None, digits: int = 2) -> str:
    if value is None or math.isnan(value):
        return "n/a"
    return f"{value:.{digits}f}"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    cells: list[list[Cell]] = [
        [cell if isinstance(cell, str | int | float | bool) else str(cell) for cell in row]
        for row in rows
    ]
    return Table(columns=list(header), rows=cells).markdown() + "\n"


def with_ci(value: float, low: float | None, high: float | None) -> str:
    return f"{number(value)} [{number(low)}, {number(high)}]"


def _scores_section(method: str, summary: JudgeSummary) -> str:
    rows = [r for r in summary.scores if r.method == method]
    cells: dict[tuple[str, str, str], dict[str, ScoreRow]] = {}
    for row in rows:
        cells.setdefault((row.judge_model, row.target_model, row.prompt_variant), {})[
            row.dimension
        ] = row
    dims = ("FORMAT_COMPLIANCE", "INSTRUCTION_COMPLIANCE", "SEMANTIC_FIDELITY", "COMPLETENESS")
    header = ["judge", "target", "variant", "n", "D1", "D2", "D3", "D4", "overall"]
    table_rows = [
        [
            *cell,
            by_dim["overall_score"].n,
            *(with_ci(by_dim[d].mean, by_dim[d].ci_low, by_dim[d].ci_high) for d in dims),
            with_ci(
                by_dim["overall_score"].mean,
                by_dim["overall_score"].ci_low,
                by_dim["overall_score"].ci_high,
            ),
        ]
        for cell, by_dim in cells.items()
    ]
    return "### Mean scores (valid evaluations)\n\n" + markdown_table(header, table_rows)


def _verdicts_section(method: str, summary: JudgeSummary) -> str:
    rows = [
        [r.judge_model, r.target_model, r.prompt_variant, r.n, *(r.counts[v] for v in VERDICTS)]
        for r in summary.verdicts
        if r.method == method
    ]
    header = ["judge", "target", "variant", "n", *VERDICTS]
    return "### Verdict distribution\n\n" + markdown_table(header, rows)


def _variant_section(method: str, summary: JudgeSummary) -> str:
    rows = [
        [
            r.judge_model,
            r.target_model,
            f"{r.variant} - {r.baseline}",
            r.dimension,
            r.n_pairs,
            with_ci(r.mean_difference, r.ci_low, r.ci_high),
        ]
        for r in summary.variant_effects
        if r.method == method
    ]
    header = ["judge", "target", "variant - baseline", "dimension", "pairs", "mean diff [CI]"]
    return "### Prompt-variant effect (paired by question)\n\n" + markdown_table(header, rows)


def _invalid_section(summary: JudgeSummary) -> str:
    rows = [
        [
            r.method,
            r.judge_model,
            r.target_model,
            r.prompt_variant,
            f"{r.invalid}/{r.n} ({number(r.rate)})",
            f"{r.first_attempt_invalid}/{r.first_attempt_n} ({number(r.first_attempt_rate)})",
            ", ".join(f"{flag} {count}" for flag, count in r.flags.items()) or "-",
        ]
        for r in summary.invalid_rates
    ]
    header = ["method", "judge", "target", "variant", "invalid", "first attempt invalid", "flags"]
    return "## Invalid evaluations\n\n" + markdown_table(header, rows)


def _self_preference_section(summary: JudgeSummary) -> str:
    rows = [
        [
            r.model,
            r.dimension,
            r.n_pairs,
            number(r.self_mean),
            number(r.cross_mean),
            with_ci(r.difference, r.ci_low, r.ci_high),
            ", ".join(r.cross_judges),
            r.judging,
        ]
        for r in summary.self_preference
    ]
    header = [
        "model",
        "dimension",
        "pairs",
        "self",
        "cross",
        "self - cross [CI]",
        "cross judges",
        "judging",
    ]
    intro = (
        "Self-judge score minus the mean cross-judge score on the same outputs (both valid). "
        "A positive difference suggests self-preference. `judging` says whether the judges "
        "saw opaque aliases (blind) or the real target model and output id; a blind self-judge "
        "still writes `method: self_judge`, which the protocol requires it to be told.\n\n"
    )
    return "## Self-preference\n\n" + intro + markdown_table(header, rows)


LENGTH_INTRO = (
    "Per judge, over pairs of its valid evaluations of two outputs to the same question whose "
    "lengths (characters) and overall scores differ: the share the longer output won. 0.5 is "
    "no preference; well above it, the judge favours longer outputs (verbosity bias), or "
    "longer outputs were better here: `judge agreement` gives the share over pairs the labels "
    "score alike."
)


def _length_section(summary: JudgeSummary) -> str:
    rows = [
        [r.method, r.judge_model, r.questions, r.pairs,
         with_ci(r.longer_higher, r.ci_low, r.ci_high)]
        for r in summary.length_preference
    ]  # fmt: skip
    header = ["method", "judge", "questions", "pairs", "longer scored higher [CI]"]
    none = "No pair of outputs to one question differs in both length and score."
    body = markdown_table(header, rows) if rows else none
    return "## Length preference\n\n" + LENGTH_INTRO + "\n\n" + body


def _agreement_section(summary: JudgeSummary) -> str:
    rows = [
        [
            r.scope,
            r.dimension,
            r.statistic,
            " / ".join(r.judges),
            r.n_units,
            number(r.value, 3) if r.value is not None else f"n/a ({r.note})",
        ]
        for r in summary.agreement
    ]
    header = ["scope", "dimension", "statistic", "judges", "units", "value"]
    intro = (
        "Agreement on samples validly judged by two or more judges. `cross_only` uses "
        "cross-judge evaluations only; `all_methods` includes self-judging.\n\n"
    )
    return "## Agreement between judges\n\n" + intro + markdown_table(header, rows)
