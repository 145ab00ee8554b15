"""The tables of a directory of draw runs (:class:`~assay.judge.draws.DrawsSummary`), rendered
into its results_analysis.md, its HTML report and the printed lines."""

from __future__ import annotations

from collections.abc import Sequence

from ..tables import Table
from .analysis_report import METHOD_TITLES, number, with_ci
from .draws import DrawEffectRow, DrawNoiseRow, DrawScoreRow, DrawsSummary

HEADLINE = "overall_score"
SCORE_COLUMNS = [
    *("judge", "target", "variant", "dimension", "questions", "evaluations", "mean [CI]"),
    *("per draw", "within-question SD"),
]
EFFECT_COLUMNS = [
    *("judge", "target", "variant - baseline", "dimension", "pairs", "mean diff [CI]"),
    *("p (permutation)", "per draw"),
]
NOISE_COLUMNS = [
    *("judge", "target", "variant", "dimension", "questions", "within variant"),
    *("within baseline", "across", "excess [CI]"),
]
NOISE_NOTE = (
    "Mean squared differences in squared score points. within: two draws of one question "
    "under one variant; across: a draw of the baseline and one of the variant; excess = "
    "across - the mean of the two within, an unbiased estimate of the squared change the "
    "variant makes to a question's expected score (an interval covering 0: no effect beyond "
    "resampling)."
)


def describe_draws(summary: DrawsSummary) -> str:
    valid = ", ".join(
        f"{name} {n}" for name, n in zip(summary.draws, summary.draw_valid, strict=True)
    )
    return (
        f"{len(summary.draws)} draws of the target outputs, each judged under protocol "
        f"fingerprint {summary.fingerprint} (valid evaluations: {valid})"
    )


def methods_of(summary: DrawsSummary) -> list[str]:
    """The methods with rows, cross-judging (primary) first."""
    return [m for m in METHOD_TITLES if any(r.method == m for r in summary.scores)]


def headline_method(summary: DrawsSummary) -> str:
    """Cross-judging, the primary method; self-judging in a run with no cross-judging."""
    methods = methods_of(summary)
    return methods[0] if methods else "cross_judge"


def draws_tables(summary: DrawsSummary, method: str) -> list[Table]:
    title = METHOD_TITLES[method]
    tables = [_scores_table([r for r in summary.scores if r.method == method], title)]
    effects = [r for r in summary.variant_effects if r.method == method]
    if effects:
        tables.append(_effects_table(effects, title))
    noise = [r for r in summary.noise if r.method == method]
    if noise:
        tables.append(_noise_table(noise, title))
    return tables


def render_draws_report(summary: DrawsSummary) -> str:
    level = f"{summary.confidence:.0%}"
    parts = [
        "# Judge results over repeated draws\n",
        f"Run `{summary.run_dir}`: {describe_draws(summary)}. Each draw's own analysis is in "
        "its folder.\n",
        "A mean is over questions, each question's valid draws averaged first; intervals "
        f"are {level} {summary.bootstrap}, {summary.n_resamples} resamples, so they hold the "
        "noise of sampling the target as well as the choice of questions. A variant's p value "
        "comes from shuffling each question's draws between the variant and the baseline. "
        "*per draw* is what each draw's analysis alone reports.\n",
        *(f"Note: {note}\n" for note in summary.notes),
    ]
    for method in methods_of(summary):
        parts.append(f"## {METHOD_TITLES[method]}\n")
        for table in draws_tables(summary, method):
            heading = table.title.split(": ", 1)[-1]
            note = f"{table.note}\n\n" if table.note else ""
            parts.append(f"### {heading}\n\n{note}{table.markdown()}\n")
    if summary.plots:
        parts.append("## Plots\n\n" + "\n".join(f"- `{p}`" for p in summary.plots) + "\n")
    return "\n".join(parts)


def _scores_table(rows: Sequence[DrawScoreRow], title: str) -> Table:
    return Table(
        title=f"{title}: Mean scores over draws",
        columns=SCORE_COLUMNS,
        rows=[
            [
                r.judge_model,
                r.target_model,
                r.prompt_variant,
                r.dimension,
                r.questions,
                r.evaluations,
                with_ci(r.mean, r.ci_low, r.ci_high),
                _per_draw(r.draw_means),
                number(r.within_sd),
            ]
            for r in rows
        ],
    )


def _effects_table(rows: Sequence[DrawEffectRow], title: str) -> Table:
    return Table(
        title=f"{title}: Prompt-variant effect over draws",
        columns=EFFECT_COLUMNS,
        rows=[
            [
                r.judge_model,
                r.target_model,
                f"{r.variant} - {r.baseline}",
                r.dimension,
                r.n_pairs,
                with_ci(r.mean_difference, r.ci_low, r.ci_high),
                number(r.p_value, 3),
                _per_draw(r.draw_effects),
            ]
            for r in rows
        ],
    )


def _noise_table(rows: Sequence[DrawNoiseRow], title: str) -> Table:
    return Table(
        title=f"{title}: Draw noise against the variant's effect",
        note=NOISE_NOTE,
        columns=NOISE_COLUMNS,
        rows=[
            [
                r.judge_model,
                r.target_model,
                r.variant,
                r.dimension,
                r.questions,
                number(r.within_variant),
                "" if r.within_baseline is None else number(r.within_baseline),
                "" if r.across is None else number(r.across),
                ""
                if r.excess is None or r.ci_low is None or r.ci_high is None
                else with_ci(r.excess, r.ci_low, r.ci_high),
            ]
            for r in rows
        ],
    )


def _per_draw(values: Sequence[float | None]) -> str:
    return " / ".join(number(v) for v in values)


def draws_lines(summary: DrawsSummary) -> list[str]:
    """The printed summary: the overall score and the variant effects, cross-judged first
    (self-judged rows, a diagnostic, are marked)."""
    lines = [
        f"{len(summary.draws)} draws ({', '.join(summary.draws)}), each question's draws "
        "averaged; overall_score:"
    ]
    for method in methods_of(summary):
        mark = " (self-judged)" if method == "self_judge" else ""
        for r in summary.scores:
            if r.method == method and r.dimension == HEADLINE:
                lines.append(
                    f"  {r.judge_model} on {r.target_model} x {r.prompt_variant}{mark}: "
                    f"{with_ci(r.mean, r.ci_low, r.ci_high)} over {r.questions} questions "
                    f"(per draw {_per_draw(r.draw_means)}; within-question SD "
                    f"{number(r.within_sd)})"
                )
        for e in summary.variant_effects:
            if e.method == method and e.dimension == HEADLINE:
                lines.append(
                    f"  {e.judge_model} on {e.target_model}{mark}: {e.variant} - {e.baseline} "
                    f"{with_ci(e.mean_difference, e.ci_low, e.ci_high)}, p "
                    f"{number(e.p_value, 3)} (per draw {_per_draw(e.draw_effects)})"
                )
    lines += [f"note: {note}" for note in summary.notes]
    return lines
