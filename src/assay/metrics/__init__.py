"""Pure numpy metrics for evaluating detectors, judges and verifiers.

Conventions (as in scikit-learn): ``*_score`` is higher-is-better, ``*_error``/``*_loss`` is
lower-is-better, options after ``*`` are keyword-only, and degenerate input (empty arrays,
length mismatch, NaN, probabilities outside [0, 1], one class where two are needed) raises a
``ValueError`` that says what is wrong. The positive class is ``1``/``True``.
"""

from assay.metrics._agreement import (
    alpha_from_coincidences,
    cohen_kappa_score,
    kappa_from_confusion,
    krippendorff_alpha,
)
from assay.metrics._bootstrap import Estimate, bootstrap_ci, cluster_mean_ci
from assay.metrics._calibration import (
    ReliabilityCurve,
    brier_score_loss,
    expected_calibration_error,
    maximum_calibration_error,
    reliability_curve,
)
from assay.metrics._classification import (
    BinaryCounts,
    accuracy_score,
    balanced_accuracy_score,
    confusion_matrix,
    precision_recall_f1,
)
from assay.metrics._paired import (
    mcnemar_exact_p,
    within_item_mean_permutation_p,
    within_item_permutation_p,
)
from assay.metrics._paired_detection import PAIRED_METRIC_NAMES, paired_detection_differences
from assay.metrics._ranking import (
    average_precision_score,
    precision_recall_curve,
    roc_auc_score,
    roc_curve,
)
from assay.metrics._selective import (
    CoverageCurve,
    area_under_risk_coverage,
    risk_coverage_curve,
)
from assay.metrics._summary import METRIC_NAMES, summarize_binary_detection
from assay.metrics._tables import cluster_table_ci, coincidence_tables, confusion_tables

__all__ = [
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
    "cohen_kappa_score",
    "coincidence_tables",
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
]
