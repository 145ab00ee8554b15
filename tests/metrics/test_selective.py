"""Risk-coverage curves and AURC."""

from __future__ import annotations

import numpy as np
import pytest

from assay.metrics import area_under_risk_coverage, risk_coverage_curve


@pytest.mark.parametrize("seed", range(20))
def test_aurc_without_ties_is_mean_prefix_risk(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 100))
    correct = rng.integers(0, 2, n)
    confidence = rng.random(n)
    order = sorted(range(n), key=lambda i: -confidence[i])
    prefix_risks = [1 - sum(correct[j] for j in order[: k + 1]) / (k + 1) for k in range(n)]
    assert area_under_risk_coverage(correct, confidence) == pytest.approx(sum(prefix_risks) / n)


def test_ties_are_kept_together() -> None:
    curve = risk_coverage_curve([1, 0, 1, 1], [0.9, 0.5, 0.5, 0.1])
    np.testing.assert_allclose(curve.coverage, [0.25, 0.75, 1.0])
    np.testing.assert_allclose(curve.accuracy, [1.0, 2 / 3, 0.75])
    np.testing.assert_allclose(curve.risk, 1 - curve.accuracy)
    np.testing.assert_allclose(curve.thresholds, [0.9, 0.5, 0.1])
    assert curve.accuracy_at_coverage(0.5) == pytest.approx(2 / 3)


def test_confidence_that_ranks_errors_last_beats_reversed() -> None:
    correct = [1, 1, 1, 0, 0]
    good = area_under_risk_coverage(correct, [5, 4, 3, 2, 1])
    bad = area_under_risk_coverage(correct, [1, 2, 3, 4, 5])
    assert good < bad


def test_degenerate_inputs_raise() -> None:
    with pytest.raises(ValueError, match="empty"):
        risk_coverage_curve([], [])
    with pytest.raises(ValueError, match="different lengths"):
        risk_coverage_curve([1, 0], [0.5])
    with pytest.raises(ValueError, match="NaN"):
        risk_coverage_curve([1, 0], [0.5, float("nan")])
