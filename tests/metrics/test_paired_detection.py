"""Two detectors on the same examples: B - A per metric with a paired bootstrap interval."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from assay.metrics import (
    PAIRED_METRIC_NAMES,
    bootstrap_ci,
    paired_detection_differences,
    roc_auc_score,
    summarize_binary_detection,
)


def _two_detectors(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Labels, clusters of four, and two detectors that share most of their noise: B is A
    with a small, consistent push towards the truth."""
    rng = np.random.default_rng(seed)
    truth = rng.random(n) < 0.4
    shared = rng.normal(size=n)
    logit_a = 0.8 * (truth * 2 - 1) + shared
    logit_b = logit_a + 0.25 * (truth * 2 - 1) + 0.1 * rng.normal(size=n)
    clusters = np.arange(n) // 4
    return truth, 1 / (1 + np.exp(-logit_a)), 1 / (1 + np.exp(-logit_b)), clusters


def test_each_side_is_what_the_summary_of_that_detector_reports() -> None:
    truth, a, b, clusters = _two_detectors(600, 1)
    paired = paired_detection_differences(
        truth, a, b, threshold_a=0.5, threshold_b=0.4, clusters=clusters, n_resamples=200
    )
    alone_a = summarize_binary_detection(truth, a, clusters=clusters, n_resamples=0)["metrics"]
    alone_b = summarize_binary_detection(truth, b, threshold=0.4, clusters=clusters, n_resamples=0)[
        "metrics"
    ]
    assert set(paired["metrics"]) == set(PAIRED_METRIC_NAMES)
    assert "positive_rate" not in paired["metrics"]
    for name, row in paired["metrics"].items():
        assert row["a"] == pytest.approx(alone_a[name]["value"])
        assert row["b"] == pytest.approx(alone_b[name]["value"])
        assert row["difference"] == pytest.approx(row["b"] - row["a"])
        assert row["low"] <= row["difference"] <= row["high"]
    assert paired["n"] == 600 and paired["n_clusters"] == 150


def test_a_detector_against_itself_differs_by_exactly_nothing() -> None:
    truth, a, _, clusters = _two_detectors(300, 2)
    paired = paired_detection_differences(truth, a, a, clusters=clusters, n_resamples=300)
    for row in paired["metrics"].values():
        assert row["difference"] == 0.0 and row["low"] == 0.0 and row["high"] == 0.0


def test_pairing_sees_a_consistent_gain_that_two_separate_intervals_hide() -> None:
    truth, a, b, clusters = _two_detectors(400, 3)
    options: dict[str, Any] = {"clusters": clusters, "n_resamples": 1000, "seed": 5}
    alone_a = summarize_binary_detection(truth, a, **options)["metrics"]["auroc"]
    alone_b = summarize_binary_detection(truth, b, **options)["metrics"]["auroc"]
    assert alone_b["low"] < alone_a["high"]  # the intervals overlap
    paired = paired_detection_differences(truth, a, b, **options)["metrics"]["auroc"]
    assert paired["low"] > 0  # the paired interval excludes no difference


def test_the_interval_matches_a_plain_paired_cluster_bootstrap() -> None:
    # few distinct scores, so the sums are exact; the same resampling drawn another way
    rng = np.random.default_rng(4)
    truth, a, b, clusters = _two_detectors(500, 4)
    a, b = np.round(a * 20) / 20, np.round(b * 20) / 20
    fast = paired_detection_differences(truth, a, b, clusters=clusters, n_resamples=2000)
    slow = bootstrap_ci(
        lambda y, p, q: roc_auc_score(y, q) - roc_auc_score(y, p),
        truth,
        a,
        b,
        clusters=clusters,
        n_resamples=2000,
        seed=int(rng.integers(1000)),
    )
    auroc = fast["metrics"]["auroc"]
    assert auroc["difference"] == pytest.approx(slow.value)
    assert auroc["low"] == pytest.approx(slow.low, abs=0.01)
    assert auroc["high"] == pytest.approx(slow.high, abs=0.01)


def test_undefined_metrics_name_why_and_bad_input_is_refused() -> None:
    truth = np.zeros(20, dtype=bool)
    p = np.linspace(0.05, 0.95, 20)
    paired = paired_detection_differences(truth, p, p[::-1], n_resamples=50)
    assert paired["metrics"]["auroc"]["difference"] is None
    assert "no positive" in paired["metrics"]["auroc"]["reason"]
    assert paired["metrics"]["brier"]["difference"] is not None
    assert paired["n_clusters"] is None and "paired" in paired["bootstrap"]["method"]
    with pytest.raises(ValueError, match="p_error_b has 10"):
        paired_detection_differences(truth, p, p[:10])
    with pytest.raises(ValueError, match="n_resamples"):
        paired_detection_differences(truth, p, p, n_resamples=-1)
