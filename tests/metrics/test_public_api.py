"""The package exports exactly its documented names, and every one of them exists."""

from __future__ import annotations

import assay.metrics as metrics

EXPECTED = {
    "METRIC_NAMES",
    "PAIRED_METRIC_NAMES",
    "BinaryCounts",
    "CoverageCurve",
    "Estimate",
    "ReliabilityCurve",
    "accuracy_score",
    "alpha_from_coincidences",
    "area_under_risk_coverage",
    "average_precision_score",
    "balanced_accuracy_score",
    "bootstrap_ci",
    "brier_score_loss",
    "cluster_mean_ci",
    "cluster_table_ci",
    "coincidence_tables",
    "cohen_kappa_score",
    "confusion_matrix",
    "confusion_tables",
    "expected_calibration_error",
    "kappa_from_confusion",
    "krippendorff_alpha",
    "maximum_calibration_error",
    "mcnemar_exact_p",
    "paired_detection_differences",
    "precision_recall_curve",
    "precision_recall_f1",
    "reliability_curve",
    "risk_coverage_curve",
    "roc_auc_score",
    "roc_curve",
    "summarize_binary_detection",
    "within_item_mean_permutation_p",
    "within_item_permutation_p",
}


def test_all_is_exactly_the_public_api() -> None:
    assert set(metrics.__all__) == EXPECTED
    public = {name for name in vars(metrics) if not name.startswith("_")}
    assert public - {"grounding"} == EXPECTED  # grounding is a public submodule


def test_importing_metrics_does_not_import_matplotlib() -> None:
    import subprocess
    import sys

    code = "import sys, assay.metrics; print('matplotlib' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False"
