"""Agreement statistics against an independent implementation (scikit-learn)."""

from __future__ import annotations

import pytest
from sklearn.metrics import cohen_kappa_score

from assay.instructions.agreement import Confusion


def confusion_of(labels: list[bool], verdicts: list[bool]) -> Confusion:
    confusion = Confusion()
    for label, verdict in zip(labels, verdicts, strict=True):
        confusion.add(label, verdict)
    return confusion


@pytest.mark.parametrize(
    ("labels", "verdicts"),
    [
        ([True] * 19 + [False] * 6, [True] * 17 + [False] * 8),
        ([True, False, True, False, True], [True, True, False, False, True]),
        ([True, False], [False, True]),
    ],
)
def test_kappa_matches_scikit_learn(labels: list[bool], verdicts: list[bool]) -> None:
    confusion = confusion_of(labels, verdicts)
    assert confusion.total == len(labels)
    assert confusion.kappa == pytest.approx(cohen_kappa_score(labels, verdicts))


def test_kappa_is_undefined_when_both_sides_say_one_class() -> None:
    assert confusion_of([True, True], [True, True]).kappa is None
    assert Confusion().kappa is None


def test_confusion_cells_and_sum() -> None:
    confusion = confusion_of([True, True, False, False], [True, False, True, False])
    assert confusion.matrix() == "1/1/1/1" and confusion.agreed == 2
    assert confusion.plus(confusion).matrix() == "2/2/2/2"
