"""Judge scores against IFEval-style programmatic labels: what is compared, and the numbers."""

from __future__ import annotations

import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from assay.data.importers.ifeval_labels import IFEvalLabel, InstructionLabel
from assay.judge.ground_truth import judge_label_agreement, score_agreement

from .test_analyze import record


def label(question: str, followed: list[tuple[str, bool]]) -> IFEvalLabel:
    items = tuple(
        InstructionLabel(
            instruction_id=instruction,
            format=instruction.startswith("punctuation:"),
            followed_strict=ok,
            followed_loose=True,
        )
        for instruction, ok in followed
    )
    return IFEvalLabel(
        question_id=question,
        prompt_variant="A",
        target_model="t",
        output_id=f"t/{question}/A",
        ifeval_key=1,
        instructions=items,
    )


LABELS = [
    label("Q1", [("punctuation:no_comma", True), ("keywords:existence", True)]),  # 2 / 2
    label("Q2", [("punctuation:no_comma", False), ("keywords:existence", True)]),  # I 1, F 0
    label("Q3", [("keywords:existence", False)]),  # I 0, no format instruction
    label("Q4", [("punctuation:no_comma", True)]),  # 2 / 2
]


def test_only_valid_final_evaluations_with_labels_are_compared() -> None:
    records = [
        record("j", "t", "Q1", "A", (2, 2, 2, 2)),
        record("j", "t", "Q2", "A", (2, 1, 2, 2)),
        record("j", "t", "Q3", "A", (1, 2, 2, 2)),
        record("j", "t", "Q4", "A", None),  # invalid: counted, not compared
        record("j", "t", "Q5", "A", (0, 0, 0, 0)),  # no label: left out
    ]
    (result,) = judge_label_agreement(records, LABELS)
    assert (result.samples, result.valid, result.invalid, result.unlabelled) == (4, 3, 1, 1)
    assert sum(result.invalid_flags.values()) >= 1
    instruction, fmt = result.dimensions
    assert instruction.dimension == "INSTRUCTION_COMPLIANCE"
    assert instruction.n == 3 and instruction.accuracy == pytest.approx(2 / 3)
    assert instruction.confusion == ((0, 0, 1), (0, 1, 0), (0, 0, 1))  # Q3: truth 0, judge 2
    assert fmt.n == 2 and fmt.no_truth == 1  # Q3 has no format instruction
    assert fmt.confusion == ((0, 0, 1), (0, 0, 0), (0, 0, 1))


def test_score_agreement_matches_scikit_learn() -> None:
    truth = [2, 2, 1, 0, 2, 1, 0, 2]
    judge = [2, 1, 1, 2, 2, 0, 0, 2]
    result = score_agreement("INSTRUCTION_COMPLIANCE", truth, judge)
    assert result.kappa_linear == pytest.approx(
        cohen_kappa_score(truth, judge, weights="linear", labels=[0, 1, 2])
    )
    assert result.confusion == tuple(map(tuple, confusion_matrix(truth, judge, labels=[0, 1, 2])))
    assert result.accuracy == pytest.approx(5 / 8)


def test_constant_scores_give_undefined_kappa_and_empty_input_gives_none() -> None:
    constant = score_agreement("FORMAT_COMPLIANCE", [2, 2], [2, 2])
    assert constant.accuracy == 1.0 and constant.kappa_linear is None
    assert "undefined" in constant.kappa_note
    empty = score_agreement("FORMAT_COMPLIANCE", [], [])
    assert empty.n == 0 and empty.accuracy is None
