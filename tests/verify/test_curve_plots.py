"""Every plot writes a readable, non-empty PNG into a directory it creates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from assay.metrics import reliability_curve, risk_coverage_curve
from assay.verify.curve_plots import (
    plot_coverage_accuracy,
    plot_pr_curve,
    plot_reliability,
    plot_roc_curve,
    plot_score_distribution,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def scored() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    p = np.clip(0.3 * y + 0.7 * rng.random(300), 0, 1)
    return y, p


def _assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    assert len(data) > 5000  # an empty canvas compresses to far less


def test_all_plots_write_pngs(tmp_path: Path, scored: tuple[np.ndarray, np.ndarray]) -> None:
    y, p = scored
    out = tmp_path / "nested" / "plots"
    written = [
        plot_reliability(reliability_curve(y, p), out / "calibration.png", title="Calibration"),
        plot_pr_curve(y, p, out / "pr_curve.png", title="PR"),
        plot_roc_curve(y, p, out / "roc_curve.png", title="ROC"),
        plot_coverage_accuracy(
            risk_coverage_curve((p >= 0.5) == y, np.abs(p - 0.5)),
            out / "coverage_accuracy.png",
            title="Coverage",
        ),
        plot_score_distribution(y, p, out / "scores.png"),
    ]
    for path in written:
        _assert_png(path)


def test_reliability_with_empty_bins_and_one_class_histogram(tmp_path: Path) -> None:
    curve = reliability_curve([0, 1, 1], [0.05, 0.9, 1.0], n_bins=10, strategy="uniform")
    _assert_png(plot_reliability(curve, tmp_path / "sparse.png"))
    _assert_png(plot_score_distribution([0, 0, 0], [0.5, 0.5, 0.5], tmp_path / "flat.png"))


def test_invalid_input_raises_before_writing(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="only one class"):
        plot_roc_curve([1, 1], [0.2, 0.3], tmp_path / "roc.png")
    assert not (tmp_path / "roc.png").exists()


def test_importing_plots_does_not_import_matplotlib() -> None:
    import subprocess
    import sys

    code = "import sys, assay.verify.curve_plots; print('matplotlib' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False"
