"""The four plots of a bench run, drawn by :mod:`assay.verify.curve_plots` (matplotlib, lazily).

The four files are always written, so every run directory holds the same artifacts: a curve
the labels cannot define (no labelled answer, or PR/ROC over one class only) is a figure that
says why, and ``plots_note`` in the summary says the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

PLOT_FILES = {
    "calibration": "calibration.png",
    "pr_curve": "pr_curve.png",
    "roc_curve": "roc_curve.png",
    "coverage_accuracy": "coverage_accuracy.png",
}

PLOT_TITLES = {
    "calibration": "Reliability of p_error (15 equal-width bins)",
    "pr_curve": "Error detection: precision-recall",
    "roc_curve": "Error detection: ROC",
    "coverage_accuracy": "Coverage vs accuracy (= grounded), lowest p_error kept first",
}


def write_plots(
    plots_dir: Path,
    truth: np.ndarray[Any, Any],
    p_error: np.ndarray[Any, Any],
    *,
    threshold: float,
) -> tuple[dict[str, str], str | None]:
    """Write the four plots; returns {name: relative path} and a note on any without a curve."""
    from ..metrics import reliability_curve, risk_coverage_curve
    from . import curve_plots as plots

    plots_dir.mkdir(parents=True, exist_ok=True)
    paths = {name: plots_dir / file for name, file in PLOT_FILES.items()}
    written = {name: f"plots/{file}" for name, file in PLOT_FILES.items()}
    if truth.size == 0:
        reason = "no answer has both a gold label and a verifier score"
        for name, path in paths.items():
            plots.plot_not_drawn(path, title=PLOT_TITLES[name], reason=reason)
        return written, f"every plot says why it has no curve: {reason}"
    plots.plot_reliability(
        reliability_curve(truth, p_error, n_bins=15),
        paths["calibration"],
        title=PLOT_TITLES["calibration"],
    )
    plots.plot_coverage_accuracy(
        risk_coverage_curve(~truth, 1.0 - p_error),
        paths["coverage_accuracy"],
        title=PLOT_TITLES["coverage_accuracy"],
    )
    if truth.all() or not truth.any():
        reason = _one_class_reason(truth)
        for name in ("pr_curve", "roc_curve"):
            plots.plot_not_drawn(paths[name], title=PLOT_TITLES[name], reason=reason)
        return written, f"pr_curve.png and roc_curve.png have no curve: {reason}"
    plots.plot_pr_curve(truth, p_error, paths["pr_curve"], title=PLOT_TITLES["pr_curve"])
    plots.plot_roc_curve(truth, p_error, paths["roc_curve"], title=PLOT_TITLES["roc_curve"])
    return written, None


def _one_class_reason(truth: np.ndarray[Any, Any]) -> str:
    kind = "erroneous" if truth.all() else "grounded"
    return (
        f"the {truth.size} labelled, scored answers are all {kind}; "
        "PR and ROC curves need both grounded and erroneous answers"
    )
