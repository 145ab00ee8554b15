"""The four plots of a bench run, drawn by :mod:`assay.verify.curve_plots` (matplotlib, lazily)."""

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


def write_plots(
    plots_dir: Path,
    truth: np.ndarray[Any, Any],
    p_error: np.ndarray[Any, Any],
    *,
    threshold: float,
) -> tuple[dict[str, str], str | None]:
    """Write every plot the labels allow; returns {name: relative path} and a note on the rest."""
    from ..metrics import reliability_curve, risk_coverage_curve
    from . import curve_plots as plots

    plots_dir.mkdir(parents=True, exist_ok=True)
    paths = {name: plots_dir / file for name, file in PLOT_FILES.items()}
    written: dict[str, str] = {}
    plots.plot_reliability(
        reliability_curve(truth, p_error, n_bins=15),
        paths["calibration"],
        title="Reliability of p_error (15 equal-width bins)",
    )
    written["calibration"] = f"plots/{PLOT_FILES['calibration']}"
    plots.plot_coverage_accuracy(
        risk_coverage_curve(~truth, 1.0 - p_error),
        paths["coverage_accuracy"],
        title="Coverage vs accuracy (= grounded), lowest p_error kept first",
    )
    written["coverage_accuracy"] = f"plots/{PLOT_FILES['coverage_accuracy']}"
    if truth.all() or not truth.any():
        return written, "PR and ROC curves need both grounded and erroneous answers"
    plots.plot_pr_curve(
        truth, p_error, paths["pr_curve"], title="Error detection: precision-recall"
    )
    plots.plot_roc_curve(truth, p_error, paths["roc_curve"], title="Error detection: ROC")
    written["pr_curve"] = f"plots/{PLOT_FILES['pr_curve']}"
    written["roc_curve"] = f"plots/{PLOT_FILES['roc_curve']}"
    return written, None
