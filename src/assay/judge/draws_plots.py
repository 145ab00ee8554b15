"""The PNG plot of a directory of draw runs: ``draw_scores.png``, per cross-judged (else
self-judged) target x variant, the overall score over the draws (each question's draws
averaged first) with its bootstrap interval, beside the mean each draw alone gives. The spread
of the dots is how far one run of a single draw could have landed."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..figures import png_figure
from .draws import DrawsSummary
from .draws_report import HEADLINE, headline_method

SCORES_FILE = "draw_scores.png"
TITLES = {"draw_scores": "Overall score over the draws, and each draw's own mean"}


def write_draw_plots(summary: DrawsSummary, folder: Path) -> list[Path]:
    method = headline_method(summary)
    rows = [r for r in summary.scores if r.method == method and r.dimension == HEADLINE]
    if not rows:
        return []
    path = folder / SCORES_FILE
    with png_figure(path, size=(6.5, 1.2 + 0.45 * len(rows))) as (ax,):
        y = np.arange(len(rows))[::-1]
        means = np.array([r.mean for r in rows])
        errors = [means - [r.ci_low for r in rows], [r.ci_high for r in rows] - means]
        ax.errorbar(means, y, xerr=errors, fmt="o", color="C0", capsize=3, label="over draws")
        for row, height in zip(rows, y, strict=True):
            each = [m for m in row.draw_means if m is not None]
            ax.plot(each, [height - 0.2] * len(each), "x", color="C1", markersize=5)
        ax.plot([], [], "x", color="C1", label="one draw alone")
        labels = [f"{r.target_model} x {r.prompt_variant}\n(judge {r.judge_model})" for r in rows]
        ax.set_yticks(y, labels, fontsize=7)
        ax.set_xlabel(f"overall score (0-8), {summary.confidence:.0%} bootstrap interval")
        ax.legend(fontsize=7)
    return [path]
