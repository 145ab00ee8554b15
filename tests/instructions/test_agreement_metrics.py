"""Agreement statistics against an independent implementation (scikit-learn)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from assay.instructions.agreement import Confusion, compare_with_labels, render_markdown
from assay.instructions.ifeval_data import LabelledResponse, PromptInstructions


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


def test_agreement_over_nothing_compared_is_undefined_not_zero() -> None:
    # IFEval checks a random letter for letter_frequency on '#', so that instruction is
    # excluded: its id has a row but no compared instance, hence no agreement at all
    item = PromptInstructions(
        key=1,
        prompt="Write about ###.",
        instruction_id_list=["keywords:letter_frequency"],
        kwargs=[{"letter": "#", "let_frequency": 2, "let_relation": "at least"}],
    )
    label = LabelledResponse(
        prompt=item.prompt,
        response="### and #",
        instruction_id_list=item.instruction_id_list,
        follow_instruction_list=[True],
    )
    report = compare_with_labels({item.prompt: (1, item)}, [label], "strict", Path("x.jsonl"))
    (row,) = report.rows
    assert (row.count, row.excluded, row.agreement) == (0, 1, None)
    assert not row.meets_target
    assert report.instruction_accuracy is None
    assert report.covered_instruction_accuracy is None
    assert report.prompt_accuracy == 1.0  # prompt level still counts the excluded instruction
    table = render_markdown([report])
    assert "| `keywords:letter_frequency` | 0 (+1 excluded) | n/a | n/a | 0/0/0/0 |" in table
