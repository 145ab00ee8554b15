"""Which of two judges agrees better with the labels, on the samples both judged.

Two judges' agreement intervals can overlap while one is closer to the labels on nearly every
resample: the samples that are hard for one judge are mostly hard for the other. For each pair
of judges of one method and each labelled dimension, over the labelled samples both judged
validly, the difference ``B - A`` of accuracy and quadratic kappa against the labels'
consensus gets an interval from one bootstrap of questions applied to both judges: per
question, both judges' confusion matrices are stacked, so a resample weights the same
questions in both.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .agreement import (
    AgreementTables,
    JudgeDifference,
    JudgeRole,
    Unit,
    confusion_accuracy,
    confusion_kappa,
    lower_median,
    scale_of,
    table_interval,
)

ScoresByRole = Mapping[tuple[JudgeRole, str], Mapping[Unit, int]]  # (role, dimension) -> scores


def judge_differences(
    scores: ScoresByRole,
    labels: Mapping[str, Mapping[Unit, Mapping[str, int]]],
    *,
    n_resamples: int,
    seed: int,
) -> tuple[JudgeDifference, ...]:
    """Every pair of judges of one method, per dimension, that share a labelled sample."""
    differences = []
    roles = sorted({role for role, _ in scores})
    for dimension, units in labels.items():
        for first, second in itertools.combinations(roles, 2):
            if first.method != second.method:
                continue  # self-judgments are a diagnostic apart, not compared with others
            a, b = scores.get((first, dimension), {}), scores.get((second, dimension), {})
            shared = sorted(key for key in a.keys() & b.keys() if key in units)
            if shared:
                pair = (first, second)
                differences.append(
                    _difference(pair, dimension, shared, (a, b), units, n_resamples, seed)
                )
    return tuple(differences)


def _difference(
    pair: tuple[JudgeRole, JudgeRole],
    dimension: str,
    shared: list[Unit],
    scores: tuple[Mapping[Unit, int], Mapping[Unit, int]],
    units: Mapping[Unit, Mapping[str, int]],
    n_resamples: int,
    seed: int,
) -> JudgeDifference:
    consensus = np.array([lower_median(units[key].values()) for key in shared], dtype=float)
    tables = AgreementTables.of([key[0] for key in shared], scale_of(dimension))
    stacked = np.stack(
        [
            tables.confusion(consensus, np.array([side[key] for key in shared], dtype=float))
            for side in scores
        ],
        axis=1,
    )  # questions x judge (A, B) x truth x predicted
    interval = table_interval(len(shared), n_resamples, seed)
    return JudgeDifference(
        method=pair[0].method,
        dimension=dimension,
        judge_a=pair[0].judge_model,
        judge_b=pair[1].judge_model,
        n=len(shared),
        questions=tables.n_clusters,
        accuracy=interval(stacked, _b_minus_a(confusion_accuracy)),
        kappa_quadratic=interval(stacked, _b_minus_a(confusion_kappa("quadratic"))),
    )


def _b_minus_a(statistic: Callable[[Any], float]) -> Callable[[Any], float]:
    return lambda pair: statistic(pair[1]) - statistic(pair[0])
