"""PNG plots of a robustness summary, for the run directory and its report.

``variant_effects.png``: per target, each variant's change in prompt-level accuracy against the
baseline with its bootstrap interval (a forest plot: an interval that crosses 0 is no evidence
of an effect). ``draw_noise.png``, with repeated draws: per variant, how often two draws of it
disagree beside how often a draw of it and one of the baseline do (the gap is the variant's
own effect).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..figures import png_figure
from .robustness import RobustnessSummary

EFFECTS_FILE = "variant_effects.png"
NOISE_FILE = "draw_noise.png"
TITLES = {
    "variant_effects": "Each variant against the baseline: change in prompt-level accuracy",
    "draw_noise": "Draws: disagreement within a variant and against the baseline",
}


def write_robustness_plots(summary: RobustnessSummary, folder: Path) -> list[Path]:
    """The plots the summary has data for; returns their paths."""
    written = []
    if summary.paired:
        written.append(_effects(summary, folder / EFFECTS_FILE))
    if any(row.across is not None for row in summary.noise):
        written.append(_noise(summary, folder / NOISE_FILE))
    return written


def _effects(summary: RobustnessSummary, path: Path) -> Path:
    targets = sorted({row.target_model for row in summary.paired})
    height = 1.2 + 0.35 * len(summary.paired) + 0.4 * len(targets)
    with png_figure(
        path, rows=len(targets), heights=(1,) * len(targets), size=(6.5, height)
    ) as axes:
        for ax, target in zip(axes, targets, strict=True):
            rows = [row for row in summary.paired if row.target_model == target]
            y = np.arange(len(rows))[::-1]
            values = np.array([100 * row.difference for row in rows])
            low = values - np.array([100 * row.ci_low for row in rows])
            high = np.array([100 * row.ci_high for row in rows]) - values
            ax.errorbar(values, y, xerr=[low, high], fmt="o", color="C0", capsize=3)
            ax.axvline(0, color="0.6", linestyle="--", linewidth=1)
            ax.set_yticks(y, [f"{row.variant} (n={row.pairs})" for row in rows])
            ax.set_title(target, fontsize=9)
        axes[-1].set_xlabel(
            f"points against {summary.baseline!r} ({summary.confidence:.0%} bootstrap interval)"
        )
    return path


def _noise(summary: RobustnessSummary, path: Path) -> Path:
    rows = [row for row in summary.noise if row.across is not None]
    labels = [f"{row.variant}\n{row.target_model}" for row in rows]
    y = np.arange(len(rows))[::-1]
    with png_figure(path, size=(6.5, 1.2 + 0.5 * len(rows))) as (ax,):
        within = [100 * row.within_variant for row in rows]
        across = [100 * (row.across or 0.0) for row in rows]
        ax.barh(y + 0.2, within, height=0.4, color="C0", label="two draws of the variant")
        ax.barh(y - 0.2, across, height=0.4, color="C1", label="a draw of it and of the baseline")
        ax.set_yticks(y, labels, fontsize=8)
        ax.set_xlabel("chance that two draws disagree on following every instruction (%)")
        ax.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=2, frameon=False)
    return path
