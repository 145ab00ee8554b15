"""PNG plots of a judge summary. matplotlib is imported here only, with the Agg backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .analysis_types import JudgeSummary
from .protocol import DIMENSION_KEYS, VERDICTS

SHORT = {key: f"D{i}" for i, key in enumerate(DIMENSION_KEYS, start=1)}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def write_plots(summary: JudgeSummary, out_dir: Path) -> list[str]:
    """Write the plots that have data; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, draw in (
        ("dimension_means_cross.png", _dimension_means),
        ("verdicts.png", _verdicts),
        ("invalid_rates.png", _invalid_rates),
    ):
        path = out_dir / name
        if draw(summary, path):
            written.append(str(path))
    return written


def _dimension_means(summary: JudgeSummary, path: Path) -> bool:
    rows = [r for r in summary.scores if r.method == "cross_judge" and r.dimension in SHORT]
    if not rows:
        return False
    plt = _pyplot()
    cells = sorted({(r.judge_model, r.target_model, r.prompt_variant) for r in rows})
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(cells) + 3), 4))
    width = 0.8 / len(DIMENSION_KEYS)
    for d, key in enumerate(DIMENSION_KEYS):
        by_cell = {
            (r.judge_model, r.target_model, r.prompt_variant): r for r in rows if r.dimension == key
        }
        xs = [i + d * width for i, cell in enumerate(cells) if cell in by_cell]
        found = [by_cell[cell] for cell in cells if cell in by_cell]
        errors = [[r.mean - r.ci_low for r in found], [r.ci_high - r.mean for r in found]]
        ax.bar(xs, [r.mean for r in found], width, yerr=errors, capsize=2, label=SHORT[key])
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(cells))])
    ax.set_xticklabels([f"{t}\n{v}\njudge {j}" for j, t, v in cells], fontsize=7)
    ax.set_ylim(0, 2.2)
    ax.set_ylabel("mean score (0-2)")
    ax.set_title(f"Cross-judge mean scores, {summary.confidence:.0%} bootstrap CI")
    ax.legend(fontsize=8)
    return _save(plt, fig, path)


def _verdicts(summary: JudgeSummary, path: Path) -> bool:
    rows = summary.verdicts
    if not rows:
        return False
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(rows) + 3), 4))
    labels = [f"{r.target_model}\n{r.prompt_variant}\n{r.judge_model}\n{r.method}" for r in rows]
    bottom = [0.0] * len(rows)
    for verdict in VERDICTS:
        shares = [r.counts[verdict] / r.n if r.n else 0.0 for r in rows]
        ax.bar(range(len(rows)), shares, bottom=bottom, label=verdict)
        bottom = [b + s for b, s in zip(bottom, shares, strict=True)]
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, fontsize=6)
    ax.set_ylabel("share of valid evaluations")
    ax.set_title("Verdict distribution (valid evaluations only)")
    ax.legend(fontsize=8)
    return _save(plt, fig, path)


def _invalid_rates(summary: JudgeSummary, path: Path) -> bool:
    rows = summary.invalid_rates
    if not rows:
        return False
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(rows) + 3), 4))
    labels = [f"{r.judge_model}\n{r.target_model}\n{r.prompt_variant}\n{r.method}" for r in rows]
    ax.bar(range(len(rows)), [r.rate for r in rows], label="final")
    ax.plot(range(len(rows)), [r.first_attempt_rate for r in rows], "kx", label="first attempt")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, fontsize=6)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("invalid-evaluation rate")
    ax.set_title("Invalid evaluations per judge x target x variant")
    ax.legend(fontsize=8)
    return _save(plt, fig, path)


def _save(plt: Any, fig: Any, path: Path) -> bool:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
