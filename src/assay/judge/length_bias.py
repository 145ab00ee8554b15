"""Does a judge prefer longer outputs? The within-question length preference.

Judges are known to favour longer answers (verbosity bias: Zheng et al. 2023, "Judging
LLM-as-a-Judge with MT-Bench and Chatbot Arena"; Dubois et al. 2024, length-controlled
AlpacaEval). Per judge and method, over every pair of its valid evaluations of two outputs to
the same question (any targets or wordings) whose lengths differ and whose overall scores
differ: the share in which the longer output got the higher score. 0.5 is no preference; 1.0
means the longer output always won. Pairs are compared within a question only, so a question
that draws long answers and high scores from every target does not count.

Longer outputs may also be better ones, so on its own this is an association, not proof of a
bias; `judge agreement` gives the same share over pairs the labels score alike, where quality
is held equal. The interval resamples questions (per question: how many pairs the longer won
and lost, summed over the resample).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from .. import metrics
from .analysis_types import AnalysisSettings, LengthPreferenceRow
from .evaluations import Evaluation
from .protocol import DIMENSION_KEYS

OVERALL_SCORES = 2 * len(DIMENSION_KEYS) + 1  # 0..8
Scored = tuple[int, int]  # (output characters, score)
Unit = tuple[str, ...]  # a labelled sample: question, prompt variant, target model


def pair_counts(items: Sequence[Scored], n_scores: int) -> tuple[int, int]:
    """Over every pair with different lengths and different scores: (pairs the longer output
    scored higher, pairs it scored lower). ``n_scores``: scores are 0..n_scores-1."""
    shorter = np.zeros(n_scores, dtype=np.int64)  # scores of the strictly shorter outputs
    won = lost = 0
    for _, group in itertools.groupby(sorted(items), key=lambda item: item[0]):
        scores = [score for _, score in group]
        below = np.cumsum(shorter)  # below[s]: shorter outputs that scored s or less
        total = int(below[-1])
        for score in scores:
            won += int(below[score - 1]) if score > 0 else 0
            lost += total - int(below[score])
        for score in scores:
            shorter[score] += 1
    return won, lost


def length_preference(
    groups: Iterable[Sequence[Scored]],
    n_scores: int,
    *,
    n_resamples: int,
    seed: int,
    confidence: float = 0.95,
) -> tuple[int, int, float | None, float | None, float | None]:
    """(questions with a counted pair, counted pairs, share the longer won, interval low,
    high) over ``groups`` (one per question); no counted pair gives Nones."""
    counts = [pair_counts(items, n_scores) for items in groups]
    return longer_share(counts, n_resamples=n_resamples, seed=seed, confidence=confidence)


def longer_share(
    counts: Sequence[tuple[int, int]], *, n_resamples: int, seed: int, confidence: float = 0.95
) -> tuple[int, int, float | None, float | None, float | None]:
    """The same from each question's (pairs the longer won, pairs it lost)."""
    tables = np.array(counts, dtype=float).reshape(-1, 2)
    tables = tables[tables.sum(axis=1) > 0]
    pairs = int(tables.sum())
    if pairs == 0:
        return 0, 0, None, None, None
    estimate = metrics.cluster_table_ci(
        tables, _longer_won, n_resamples=n_resamples, confidence=confidence, seed=seed,
        n_rows=pairs,
    )  # fmt: skip
    return len(tables), pairs, estimate.value, _finite(estimate.low), _finite(estimate.high)


def at_equal_labels(
    scored: Mapping[Unit, int],
    consensus: Mapping[Unit, int],
    chars: Mapping[Unit, int | None],
    n_scores: int,
) -> list[tuple[int, int]]:
    """Per question, (won, lost) of the longer output over the pairs whose labels agree:
    the judge's length preference with the labelled quality held equal."""
    groups: dict[tuple[str, int], list[Scored]] = defaultdict(list)
    for unit, score in scored.items():
        length = chars.get(unit)
        if length is not None and unit in consensus:
            groups[unit[0], consensus[unit]].append((length, score))
    per_question: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for (question, _), items in groups.items():
        won, lost = pair_counts(items, n_scores)
        per_question[question][0] += won
        per_question[question][1] += lost
    return [(won, lost) for won, lost in (per_question[q] for q in sorted(per_question))]


def _longer_won(table: np.ndarray[tuple[int], np.dtype[np.float64]]) -> float:
    total = float(table.sum())
    if total == 0.0:
        raise ValueError("no pair with different lengths and scores")
    return float(table[0]) / total


def _finite(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def by_question(
    evaluations: Iterable[Evaluation], score: Callable[[Evaluation], int]
) -> list[list[Scored]]:
    """Each question's (length, score) of the evaluations whose output length is known."""
    groups: dict[str, list[Scored]] = defaultdict(list)
    for evaluation in evaluations:
        if evaluation.output_chars is not None:
            groups[evaluation.question_id].append((evaluation.output_chars, score(evaluation)))
    return [groups[key] for key in sorted(groups)]


def length_preference_rows(
    valid: Sequence[Evaluation], settings: AnalysisSettings
) -> Iterable[LengthPreferenceRow]:
    """Per method and judge with a counted pair: the share the longer output won, over its
    valid final evaluations' overall scores (0-8)."""
    groups: dict[tuple[str, str], list[Evaluation]] = defaultdict(list)
    for evaluation in valid:
        groups[evaluation.method, evaluation.judge_model].append(evaluation)
    for (method, judge), group in sorted(groups.items()):
        per_question = by_question(group, lambda r: r.score("overall_score"))
        questions, pairs, share, low, high = length_preference(
            per_question, OVERALL_SCORES, n_resamples=settings.n_resamples,
            seed=settings.seed, confidence=settings.confidence,
        )  # fmt: skip
        if share is not None:
            yield LengthPreferenceRow(
                method=method, judge_model=judge, questions=questions, pairs=pairs,
                longer_higher=share, ci_low=low, ci_high=high,
            )  # fmt: skip
