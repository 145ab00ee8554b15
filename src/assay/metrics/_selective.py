"""Selective prediction: answer only when confident, and see what that buys.

Examples are kept from the most confident down. Examples with equal confidence are kept or
dropped together (a threshold cannot split them), so the curve has one point per distinct
confidence value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from assay.metrics._validation import (
    FloatArray,
    binary_labels,
    check_same_length,
    finite_scores,
)


@dataclass(frozen=True)
class CoverageCurve:
    """Coverage (share kept), accuracy and risk (1 - accuracy) of the kept examples.

    Point ``k`` keeps every example with ``confidence >= thresholds[k]``; coverage increases
    along the arrays and ends at 1.0.
    """

    coverage: FloatArray
    accuracy: FloatArray
    risk: FloatArray
    thresholds: FloatArray

    def accuracy_at_coverage(self, coverage: float) -> float:
        """Accuracy of the smallest kept set whose coverage reaches ``coverage``."""
        if not 0.0 < coverage <= 1.0:
            raise ValueError(f"coverage must be in (0, 1], got {coverage}")
        index = int(np.searchsorted(self.coverage, coverage - 1e-12, side="left"))
        return float(self.accuracy[min(index, len(self.accuracy) - 1)])

    def to_dict(self) -> dict[str, list[float]]:
        return {
            "coverage": [float(v) for v in self.coverage],
            "accuracy": [float(v) for v in self.accuracy],
            "risk": [float(v) for v in self.risk],
            "thresholds": [float(v) if math.isfinite(v) else 0.0 for v in self.thresholds],
        }


def risk_coverage_curve(correct: Any, confidence: Any) -> CoverageCurve:
    """Coverage, accuracy and risk when keeping the most confident examples first.

    ``correct`` is 1 where the kept answer is right; ``confidence`` is any real score where
    higher means "more sure".
    """
    right = binary_labels(correct, "correct")
    conf = finite_scores(confidence, "confidence")
    check_same_length(correct=right, confidence=conf)
    order = np.argsort(-conf, kind="stable")
    sorted_conf = conf[order]
    last_of_run = np.r_[np.flatnonzero(np.diff(sorted_conf)), len(conf) - 1]
    kept = (last_of_run + 1).astype(np.float64)
    accuracy = np.cumsum(right[order], dtype=np.float64)[last_of_run] / kept
    return CoverageCurve(
        coverage=kept / len(conf),
        accuracy=accuracy,
        risk=1.0 - accuracy,
        thresholds=sorted_conf[last_of_run],
    )


def area_under_risk_coverage(correct: Any, confidence: Any) -> float:
    """AURC: step-wise area under the risk-coverage curve (lower is better).

    Sum over points of (coverage_k - coverage_k-1) * risk_k. Without ties this equals the
    mean, over k = 1..n, of the error rate among the k most confident examples.
    """
    curve = risk_coverage_curve(correct, confidence)
    return float(np.sum(np.diff(np.r_[0.0, curve.coverage]) * curve.risk))
