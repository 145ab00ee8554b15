"""results_analysis.md and the printed lines of a directory of draw runs
(:class:`~assay.judge.draws.DrawsSummary`)."""

from __future__ import annotations

from collections.abc import Sequence

from .analysis_report import METHOD_TITLES, markdown_table, number, with_ci
from .draws import DrawEffectRow, DrawNoiseRow, DrawScoreRow, DrawsSummary

HEADLINE = "overall_score"


def render_draws_report(summary: DrawsSummary) -> str:
    level = f"{summary.confidence:.0%}"
    valid = ", ".join(
        f"{name} {n}" for name, n in zip(summary.draws, summary.draw_valid, strict=True)
    )
    parts = [
        "# Judge results over repeated draws\n",
        f"Run `{summary.run_dir}`: {len(summary.draws)} draws of the target outputs, each "
        f"judged under protocol fingerprint `{summary.fingerprint}` (valid evaluations: "
        f"{valid}). Each draw's own analysis is in its folder.\n",
        "A mean is over questions, each question's valid draws averaged first; intervals "
        f"are {level} {summary.bootstrap}, {summary.n_resamples} resamples, so they hold the "
        "noise of sampling the target as well as the choice of questions. A variant's p value "
        "comes from shuffling each question's draws between the variant and the baseline. "
        "*per draw* is what each draw's analysis alone reports.\n",
        *(f"Note: {note}\n" for note in summary.notes),
    ]
    for method, title in METHOD_TITLES.items():
        if any(row.method == method for row in summary.scores):
            parts += [f"## {title}\n", *_method_sections(method, summary)]
    return "\n".join(parts)


def _method_sections(method: str, summary: DrawsSummary) -> list[str]:
    scores = [r for r in summary.scores if r.method == method]
    effects = [r for r in summary.variant_effects if r.method == method]
    noise = [r for r in summary.noise if r.method == method]
    sections = ["### Mean scores over draws\n\n" + _scores_table(scores)]
    if effects:
        sections.append("### Prompt-variant effect over draws\n\n" + _effects_table(effects))
    if noise:
        sections.append(
            "### Draw noise (mean squared difference, squared score points)\n\n"
            "*within*: two draws of one question under one variant; *across*: a draw of the "
            "baseline and one of the variant; *excess* = across - mean of the two within, an "
            "unbiased estimate of the squared change the variant makes to a question's "
            "expected score (an interval covering 0: no effect beyond resampling).\n\n"
            + _noise_table(noise)
        )
    return sections


def _scores_table(rows: Sequence[DrawScoreRow]) -> str:
    header = ["judge", "target", "variant", "dimension", "questions", "evaluations"]
    header += ["mean [CI]", "per draw", "within-question SD"]
    return markdown_table(
        header,
        (
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
        ),
    )


def _effects_table(rows: Sequence[DrawEffectRow]) -> str:
    header = ["judge", "target", "variant - baseline", "dimension", "pairs", "mean diff [CI]"]
    header += ["p (permutation)", "per draw"]
    return markdown_table(
        header,
        (
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
        ),
    )


def _noise_table(rows: Sequence[DrawNoiseRow]) -> str:
    header = ["judge", "target", "variant", "dimension", "questions", "within variant"]
    header += ["within baseline", "across", "excess [CI]"]
    body = []
    for r in rows:
        excess = "" if r.excess is None else with_ci(r.excess, r.ci_low or 0.0, r.ci_high or 0.0)
        body.append(
            [
                r.judge_model,
                r.target_model,
                r.variant,
                r.dimension,
                r.questions,
                number(r.within_variant),
                "" if r.within_baseline is None else number(r.within_baseline),
                "" if r.across is None else number(r.across),
                excess,
            ]
        )
    return markdown_table(header, body)


def _per_draw(values: Sequence[float | None]) -> str:
    return " / ".join(number(v) for v in values)


def draws_lines(summary: DrawsSummary) -> list[str]:
    """The printed summary: the cross-judged overall score and variant effects."""
    lines = [
        f"{len(summary.draws)} draws ({', '.join(summary.draws)}), each question's draws "
        "averaged; overall_score:"
    ]
    for r in summary.scores:
        if r.method == "cross_judge" and r.dimension == HEADLINE:
            lines.append(
                f"  {r.judge_model} on {r.target_model} x {r.prompt_variant}: "
                f"{with_ci(r.mean, r.ci_low, r.ci_high)} over {r.questions} questions "
                f"(per draw {_per_draw(r.draw_means)}; within-question SD "
                f"{number(r.within_sd)})"
            )
    for e in summary.variant_effects:
        if e.method == "cross_judge" and e.dimension == HEADLINE:
            lines.append(
                f"  {e.judge_model} on {e.target_model}: {e.variant} - {e.baseline} "
                f"{with_ci(e.mean_difference, e.ci_low, e.ci_high)}, p {number(e.p_value, 3)} "
                f"(per draw {_per_draw(e.draw_effects)})"
            )
    lines += [f"note: {note}" for note in summary.notes]
    return lines
