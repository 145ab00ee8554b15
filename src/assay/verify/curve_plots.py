"""PNG plots of detector metrics: reliability, PR, ROC, coverage-accuracy, score histograms.

Each function computes nothing itself beyond calling :mod:`assay.metrics`, writes one PNG
(creating the parent directory) and returns its path, drawn with :mod:`assay.figures` (the
object API on an Agg canvas: no pyplot state or GUI backend is touched, nothing stays open).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from assay.figures import png_figure
from assay.metrics import (
    CoverageCurve,
    ReliabilityCurve,
    average_precision_score,
    precision_recall_curve,
    roc_auc_score,
    roc_curve,
)
from assay.metrics._validation import binary_labels, check_same_length, finite_scores

REFERENCE_STYLE: dict[str, Any] = {"color": "0.6", "linestyle": "--", "linewidth": 1}


def plot_reliability(
    curve: ReliabilityCurve, path: str | Path, *, title: str = "Reliability diagram"
) -> Path:
    """Observed frequency against mean predicted probability per bin, with counts per bin.

    The dashed diagonal is perfect calibration; empty bins are left out. The lower panel shows
    how many examples each bin holds, since a large gap in a bin of three examples means little.
    """
    filled = ~curve.empty
    centers = (curve.bin_edges[:-1] + curve.bin_edges[1:]) / 2
    widths = np.diff(curve.bin_edges)
    with png_figure(path, rows=2, heights=(3, 1)) as (top, bottom):
        top.plot([0, 1], [0, 1], **REFERENCE_STYLE, label="perfect calibration")
        top.plot(
            curve.mean_predicted[filled],
            curve.observed_frequency[filled],
            marker="o",
            label=f"model ({curve.strategy} bins; numbers = examples per bin)",
        )
        for x, y, count in zip(
            curve.mean_predicted[filled],
            curve.observed_frequency[filled],
            curve.counts[filled],
            strict=True,
        ):
            top.annotate(str(count), (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
        top.set(xlim=(0, 1), ylim=(-0.03, 1.1), ylabel="Observed frequency of y = 1", title=title)
        top.set_yticks(np.linspace(0, 1, 6))
        top.legend(loc="upper left")
        bottom.bar(centers, curve.counts, width=widths * 0.95, color="0.5")
        bottom.set(xlabel="Mean predicted probability", ylabel="Count")
    return Path(path)


def plot_pr_curve(
    y_true: Any, score: Any, path: str | Path, *, title: str = "Precision-recall curve"
) -> Path:
    """Precision against recall, with the prevalence (a random detector) as reference."""
    precision, recall, _ = precision_recall_curve(y_true, score)
    average_precision = average_precision_score(y_true, score)
    prevalence = float(np.mean(binary_labels(y_true, "y_true")))
    with png_figure(path) as (axes,):
        axes.step(recall, precision, where="post", label=f"AP = {average_precision:.3f}")
        axes.axhline(prevalence, **REFERENCE_STYLE, label=f"prevalence = {prevalence:.3f}")
        axes.set(xlim=(0, 1), ylim=(0, 1.02), xlabel="Recall", ylabel="Precision", title=title)
        axes.legend(loc="lower left")
    return Path(path)


def plot_roc_curve(y_true: Any, score: Any, path: str | Path, *, title: str = "ROC curve") -> Path:
    """True-positive rate against false-positive rate, with the chance diagonal."""
    fpr, tpr, _ = roc_curve(y_true, score)
    auroc = roc_auc_score(y_true, score)
    with png_figure(path) as (axes,):
        axes.plot(fpr, tpr, label=f"AUROC = {auroc:.3f}")
        axes.plot([0, 1], [0, 1], **REFERENCE_STYLE, label="chance")
        axes.set(
            xlim=(0, 1),
            ylim=(0, 1.02),
            xlabel="False-positive rate",
            ylabel="True-positive rate",
            title=title,
        )
        axes.legend(loc="lower right")
    return Path(path)


def plot_coverage_accuracy(
    curve: CoverageCurve, path: str | Path, *, title: str = "Coverage vs accuracy"
) -> Path:
    """Accuracy of the kept examples against the share kept, most confident first."""
    full_accuracy = float(curve.accuracy[-1])
    with png_figure(path) as (axes,):
        marker = "." if len(curve.coverage) <= 50 else None  # dots only while they stay legible
        axes.step(
            curve.coverage, curve.accuracy, where="post", marker=marker, label="kept examples"
        )
        axes.axhline(full_accuracy, **REFERENCE_STYLE, label=f"all kept = {full_accuracy:.3f}")
        axes.set(
            xlim=(0, 1.02),
            ylim=(0, 1.02),
            xlabel="Coverage (share answered)",
            ylabel="Accuracy of answered",
            title=title,
        )
        axes.legend(loc="lower left")
    return Path(path)


def plot_not_drawn(path: str | Path, *, title: str, reason: str) -> Path:
    """A figure that holds no curve and says why (the data cannot define the curve).

    A run's plots/ always holds the same files, so a reader (or a script) finds each one and
    learns from the file itself why it is empty instead of wondering whether it was lost.
    """
    import textwrap

    with png_figure(path) as (axes,):
        axes.set_axis_off()
        axes.set_title(title)
        message = "\n".join(textwrap.wrap(f"No curve: {reason}", width=60))
        axes.text(0.5, 0.5, message, ha="center", va="center", transform=axes.transAxes)
    return Path(path)


def plot_score_distribution(
    y_true: Any,
    score: Any,
    path: str | Path,
    *,
    title: str = "Score distribution by class",
    class_names: tuple[str, str] = ("y = 0", "y = 1"),
) -> Path:
    """Overlaid histograms of the score for each true class (shared bins)."""
    truth = binary_labels(y_true, "y_true")
    scores = finite_scores(score, "score")
    check_same_length(y_true=truth, score=scores)
    low, high = float(scores.min()), float(scores.max())
    bins = np.linspace(low, high if high > low else low + 1.0, 31)
    with png_figure(path) as (axes,):
        for mask, name in ((~truth, class_names[0]), (truth, class_names[1])):
            if mask.any():
                label = f"{name} (n = {int(mask.sum())})"
                axes.hist(scores[mask], bins=bins, alpha=0.55, label=label)
        axes.set(xlabel="Score", ylabel="Count", title=title)
        axes.legend(loc="upper center")
    return Path(path)
