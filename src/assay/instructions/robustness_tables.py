"""A robustness summary as tables: the Markdown ``robustness`` prints and writes, and the
tables the report draws (:mod:`assay.report._html_robustness`)."""

from __future__ import annotations

from ..tables import Table
from .robustness import RobustnessSummary


def robustness_tables(summary: RobustnessSummary) -> list[Table]:
    level = f"{summary.confidence:.0%}"
    return [
        Table(
            title="Per variant",
            columns=["target", "variant", "outputs", "missing", "prompt-level", "instr-level"],
            rows=[
                [
                    r.target_model,
                    r.variant,
                    r.outputs,
                    r.missing,
                    _pct(r.prompt_level),
                    _pct(r.instruction_level),
                ]
                for r in summary.variants
            ],
        ),
        Table(
            title=f"Each variant against {summary.baseline!r}, paired by prompt",
            columns=[
                "target",
                "variant",
                "pairs",
                summary.baseline,
                "variant",
                "difference",
                f"{level} CI",
                "lost",
                "gained",
                "p",
            ],
            rows=[
                [
                    r.target_model,
                    r.variant,
                    r.pairs,
                    _pct(r.baseline_rate),
                    _pct(r.variant_rate),
                    _signed(r.difference),
                    f"[{_signed(r.ci_low)}, {_signed(r.ci_high)}]",
                    r.lost,
                    r.gained,
                    f"{r.p_value:.3g} ({r.test})",
                ]
                for r in summary.paired
            ],
            note=_paired_note(summary),
        ),
        _target_table(summary),
    ]


def _paired_note(summary: RobustnessSummary) -> str:
    resampled = f"{summary.n_resamples} resamples, seed {summary.seed}"
    note = (
        f"prompt-level shares; the interval is a percentile bootstrap over prompts "
        f"({resampled}); lost: followed under {summary.baseline!r} only, gained: under the "
        "variant only; p: McNemar's exact test"
    )
    if not summary.draws:
        return note
    return (
        f"over {len(summary.draws)} draws: a prompt's share is the share of its draws that "
        f"followed every instruction; the interval is a percentile bootstrap over prompts "
        f"({resampled}); lost and gained: prompts whose share fell or rose; p: McNemar's exact "
        f"test with one draw per cell, else a permutation test dealing each prompt's followed "
        f"draws anew between the two variants ({resampled})"
    )


def _target_table(summary: RobustnessSummary) -> Table:
    draws = bool(summary.draws)
    return Table(
        title="Per target, over prompts answered under every variant",
        columns=[
            "target",
            "prompts",
            summary.baseline,
            "robust (all)",
            "any",
            "unstable",
            *(["draws disagree"] if draws else []),
        ],
        rows=[
            [
                r.target_model,
                r.prompts,
                _pct(r.baseline_rate),
                _pct(r.robust_rate),
                _pct(r.any_rate),
                _pct(r.unstable_rate),
                *([_pct(r.resampling_unstable_rate)] if draws else []),
            ]
            for r in summary.targets
        ],
        note="robust: every instruction followed under every variant; unstable: under "
        "some variants and not others"
        + (
            "; with draws, every draw counts: robust is followed in every draw of every "
            "variant, and draws disagree: some variant's own draws disagree (sampling alone)"
            if draws
            else ""
        ),
    )


def noise_table(summary: RobustnessSummary) -> Table:
    """Sampling noise against the variant's own effect (rows only with repeated draws)."""
    level = f"{summary.confidence:.0%}"
    return Table(
        title="Draws: how often sampling alone changes a verdict, and how much more a variant does",
        columns=[
            "target",
            "variant",
            "prompts",
            "draws",
            "two draws of the variant disagree",
            f"two draws of {summary.baseline!r} disagree",
            "a draw of each disagrees",
            "excess",
            f"{level} CI",
        ],
        rows=[
            [
                r.target_model,
                r.variant,
                r.prompts,
                r.draws,
                _pct(r.within_variant),
                _pct(r.within_baseline),
                _pct(r.across),
                "" if r.excess is None else _signed(r.excess),
                ""
                if r.ci_low is None or r.ci_high is None
                else f"[{_signed(r.ci_low)}, {_signed(r.ci_high)}]",
            ]
            for r in summary.noise
        ],
        note="over the prompts with two draws or more of both; each chance is averaged over "
        "prompts, from every pair of distinct draws; excess: the chance a draw of each "
        "disagrees minus the mean of the two within-variant chances, an unbiased estimate of "
        "the mean squared change the variant makes to a prompt's chance of being followed "
        "(0 when the variant changes nothing; a bootstrap interval over prompts)",
    )


def contrast_table(summary: RobustnessSummary) -> Table:
    """Each pair of targets per variant (empty with one target)."""
    level = f"{summary.confidence:.0%}"
    return Table(
        title="Targets compared: a variant's effect on one minus its effect on the other",
        columns=[
            "variant",
            "first",
            "second",
            "prompts",
            "effect on first",
            "effect on second",
            "difference",
            f"{level} CI",
        ],
        rows=[
            [
                r.variant,
                r.first,
                r.second,
                r.prompts,
                _signed(r.first_effect),
                _signed(r.second_effect),
                _signed(r.difference),
                f"[{_signed(r.ci_low)}, {_signed(r.ci_high)}]",
            ]
            for r in summary.contrasts
        ],
        note="paired by prompt, over the prompts both targets answered under the variant and "
        "the baseline; an interval that excludes 0 says the variant moves one target more",
    )


def instruction_table(summary: RobustnessSummary, limit: int = 10) -> Table:
    """The instruction ids whose verdict a variant changed, those it lost most often first."""
    changed = [r for r in summary.instructions if r.lost or r.gained]
    rows = sorted(changed, key=lambda r: (-r.lost, r.gained, r.instruction_id))
    return Table(
        title=f"Instruction ids a variant changed, most often lost first (first {limit})",
        columns=[
            "target",
            "instruction id",
            "pairs",
            f"followed ({summary.baseline})",
            "lost",
            "gained",
        ],
        rows=[
            [
                r.target_model,
                r.instruction_id,
                r.pairs,
                _count(r.baseline_followed),
                r.lost,
                r.gained,
            ]
            for r in rows[:limit]
        ],
    )


def _count(value: float) -> str:
    """A count, or a sum of shares over draws to one decimal."""
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


def _pct(value: float | None) -> str:
    return "" if value is None else f"{value:.1%}"


def _signed(value: float) -> str:
    return f"{100 * value:+.1f} pts"


def same_text_note(summary: RobustnessSummary) -> str | None:
    """A warning when most cells' draws are one text: the backend repeating its answers
    (sampled long answers, as IFEval's, rarely repeat word for word)."""
    if 2 * summary.same_text_cells <= summary.repeated_cells:
        return None
    return (
        f"{summary.same_text_cells} of the {summary.repeated_cells} cells with two draws or "
        "more have the same text in every draw: if the backend repeated its answers "
        "(temperature 0, or one seed for every request, as lm-eval's API models send), the "
        "draws measure less sampling noise than there is"
    )


def _draws_line(summary: RobustnessSummary) -> str:
    listed = ", ".join(
        f"{draw} `{source}` ({count} outputs)"
        for draw, (source, count) in enumerate(
            zip(summary.draws, summary.draw_outputs, strict=True), start=1
        )
    )
    same = (
        f" {summary.same_text_cells} of the {summary.repeated_cells} cells with two draws or "
        "more have the same text in every draw."
    )
    return f"Draws: {listed}.{same}\n"


def summary_markdown(summary: RobustnessSummary) -> str:
    """Every table of the summary as Markdown, with its title and note."""
    tables = [*robustness_tables(summary), instruction_table(summary)]
    if summary.noise:
        tables.append(noise_table(summary))
    if summary.contrasts:
        tables.append(contrast_table(summary))
    parts = [_draws_line(summary)] if summary.draws else []
    for table in tables:
        parts.append(f"## {table.title}\n\n{table.markdown()}\n")
        if table.note:
            parts.append(f"{table.note}\n")
    return "\n".join(parts)
