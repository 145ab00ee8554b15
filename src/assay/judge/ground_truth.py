"""Agreement of a judge's compliance scores with external programmatic labels (IFEval).

One use of :mod:`.agreement` (``assay judge agreement RUN --labels FILE`` takes ground truth of
any kind). IFEval's per-instruction pass/fail, aggregated onto the protocol's 0-2 scale by
:meth:`IFEvalLabel.truth`, is ground truth for ``INSTRUCTION_COMPLIANCE`` and
``FORMAT_COMPLIANCE``. Only valid evaluations are compared (an invalid reply has no score and is
counted as invalid, never as a disagreement); per sample and judge the evaluation used is the
one :func:`final_evaluations` picks (the valid attempt if any). Statistics: accuracy (exact
score match), linear-weighted Cohen's kappa on the 0/1/2 scale, and the confusion matrix (rows
= ground truth, columns = judge).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from ..data.importers.ifeval_labels import Dimension, IFEvalLabel, Mode
from . import agreement
from .agreement import ScoreAgreement
from .archive import EvaluationRecord
from .evaluations import Evaluation, as_evaluations, final_evaluations
from .protocol import SCORE_VALUES

COMPARED_DIMENSIONS: tuple[Dimension, ...] = ("INSTRUCTION_COMPLIANCE", "FORMAT_COMPLIANCE")
SampleKey = tuple[str, str, str, str]


class JudgeLabelAgreement(BaseModel):
    """One judge's valid/invalid counts and its agreement with the labels per dimension."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    judge_model: str
    mode: Mode
    samples: int  # judged samples that have a label (final evaluation per sample)
    valid: int
    invalid: int
    invalid_flags: dict[str, int]  # flag -> invalid final evaluations carrying it
    unlabelled: int  # judged samples whose output has no label (left out everywhere)
    dimensions: tuple[ScoreAgreement, ...]


def score_agreement(
    dimension: str, truth: Sequence[int], predicted: Sequence[int], *, no_truth: int = 0
) -> ScoreAgreement:
    """Accuracy, linear-weighted kappa and confusion matrix of two 0-2 score lists (the one
    implementation in :mod:`.agreement`, on the rubric's 0-2 scale)."""
    return agreement.score_agreement(
        dimension, truth, predicted, list(SCORE_VALUES), no_truth=no_truth
    )


def judge_label_agreement(
    records: Iterable[EvaluationRecord | Evaluation],
    labels: Iterable[IFEvalLabel],
    *,
    mode: Mode = "strict",
) -> list[JudgeLabelAgreement]:
    """Per judge model: validity of its final evaluations and agreement with the labels."""
    by_key = {_label_key(label): label for label in labels}
    finals = final_evaluations(as_evaluations(records))
    judges = sorted({record.judge_model for record in finals})
    return [_one_judge(judge, finals, by_key, mode) for judge in judges]


def _one_judge(
    judge: str,
    finals: Sequence[Evaluation],
    by_key: dict[SampleKey, IFEvalLabel],
    mode: Mode,
) -> JudgeLabelAgreement:
    mine = [r for r in finals if r.judge_model == judge]
    labelled = [r for r in mine if _record_key(r) in by_key]
    valid = [r for r in labelled if r.valid]
    invalid = [r for r in labelled if not r.valid]
    flags = Counter(flag for r in invalid for flag in r.flags)
    dimensions = tuple(_dimension(d, valid, by_key, mode) for d in COMPARED_DIMENSIONS)
    return JudgeLabelAgreement(
        judge_model=judge,
        mode=mode,
        samples=len(labelled),
        valid=len(valid),
        invalid=len(invalid),
        invalid_flags=dict(sorted(flags.items())),
        unlabelled=len(mine) - len(labelled),
        dimensions=dimensions,
    )


def _dimension(
    dimension: Dimension,
    valid: Sequence[Evaluation],
    by_key: dict[SampleKey, IFEvalLabel],
    mode: Mode,
) -> ScoreAgreement:
    truth: list[int] = []
    predicted: list[int] = []
    no_truth = 0
    for record in valid:
        label_truth = by_key[_record_key(record)].truth(dimension, mode)
        if label_truth is None:
            no_truth += 1  # e.g. a prompt without a format instruction: nothing to compare
            continue
        truth.append(label_truth.score)
        predicted.append(record.score(dimension))
    return score_agreement(dimension, truth, predicted, no_truth=no_truth)


def _label_key(label: IFEvalLabel) -> SampleKey:
    return (label.question_id, label.prompt_variant, label.target_model, label.output_id)


def _record_key(record: Evaluation) -> SampleKey:
    return (record.question_id, record.prompt_variant, record.target_model, record.output_id)
