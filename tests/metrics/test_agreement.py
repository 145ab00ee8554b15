"""Cohen's kappa against scikit-learn; Krippendorff's alpha on published worked examples."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.metrics as skm

from assay.metrics import cohen_kappa_score, krippendorff_alpha

NAN = np.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers x
# 12 units with missing values. Published: nominal 0.743, ordinal 0.815, interval 0.849.
RELIABILITY_DATA = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]
# Same paper, section A: two observers, binary data, ten units. Published alpha: 0.095.
BINARY_DATA = [[0, 1, 0, 0, 0, 0, 0, 0, 1, 0], [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]]


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_matches_sklearn(seed: int, weights: str | None) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, 40)
    b = np.where(rng.random(40) < 0.6, a, rng.integers(0, 3, 40))
    assert cohen_kappa_score(a, b, weights=weights) == pytest.approx(  # type: ignore[arg-type]
        skm.cohen_kappa_score(a, b, weights=weights)
    )


def test_kappa_with_labels_uses_label_order_for_distance() -> None:
    a, b = [0, 1, 2, 2], [0, 2, 2, 1]
    ordered = cohen_kappa_score(a, b, weights="linear", labels=[0, 1, 2])
    assert ordered == pytest.approx(skm.cohen_kappa_score(a, b, weights="linear", labels=[0, 1, 2]))


def test_kappa_undefined_and_bad_weights_raise() -> None:
    with pytest.raises(ValueError, match="undefined"):
        cohen_kappa_score([1, 1, 1], [1, 1, 1])
    with pytest.raises(ValueError, match="weights"):
        cohen_kappa_score([0, 1], [1, 0], weights="cubic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="different lengths"):
        cohen_kappa_score([0, 1], [1])


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_krippendorff_published_example(level: str, published: float) -> None:
    alpha = krippendorff_alpha(RELIABILITY_DATA, level=level)  # type: ignore[arg-type]
    assert alpha == pytest.approx(published, abs=5e-4)


def test_krippendorff_binary_example() -> None:
    assert krippendorff_alpha(BINARY_DATA) == pytest.approx(0.095, abs=5e-4)


def test_krippendorff_perfect_agreement_is_one() -> None:
    assert krippendorff_alpha([[0, 1, 2, 1], [0, 1, 2, 1]], level="ordinal") == pytest.approx(1)


def test_krippendorff_degenerate_inputs_raise() -> None:
    with pytest.raises(ValueError, match="two or more raters"):
        krippendorff_alpha([[1, NAN], [NAN, 2]])
    with pytest.raises(ValueError, match="one value"):
        krippendorff_alpha([[1, 1], [1, 1]])
    with pytest.raises(ValueError, match="2-D"):
        krippendorff_alpha([1, 2, 3])
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha(BINARY_DATA, level="ratio")  # type: ignore[arg-type]
