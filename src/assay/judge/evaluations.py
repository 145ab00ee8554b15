"""What statistics need of an archived evaluation, small enough to hold millions of them.

An :class:`~.archive.EvaluationRecord` keeps the prompt, the output, the reply and every check:
kilobytes in memory. :class:`Evaluation` keeps the ids, validity, flags, scores and verdict,
with the repeated strings (model names, method, variant) shared, so `assay judge analyze`,
`agreement` and the slices over a million evaluations stay within a few hundred megabytes.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from .archive import EvaluationRecord, iter_archive
from .protocol import DIMENSION_KEYS

_SCORE_TUPLES: dict[tuple[int, ...], tuple[int, ...]] = {}


SampleKey = tuple[str, str, str]  # question, prompt variant, target model


@dataclass(frozen=True, slots=True)
class Evaluation:
    """One archived attempt, as the statistics see it (``scores`` in rubric order)."""

    question_id: str
    prompt_variant: str
    target_model: str
    output_id: str
    judge_model: str
    method: str
    attempt: int
    valid: bool
    flags: tuple[str, ...]
    scores: tuple[int, ...] | None
    overall_score: int | None
    verdict: str | None
    blind: bool
    sample_meta: dict[str, Any] | None
    output_chars: int | None = None  # the evaluated output's length in characters

    @classmethod
    def of(cls, record: EvaluationRecord, output_chars: int | None = None) -> Evaluation:
        """``output_chars``: the output's length where ``record`` was read without its texts
        (default: the length of the record's own output)."""
        c = record.classification
        scores = None if c.scores is None else tuple(c.scores[key] for key in DIMENSION_KEYS)
        if scores is not None:  # 81 combinations of four 0-2 scores: one tuple each
            scores = _SCORE_TUPLES.setdefault(scores, scores)
        shared = sys.intern  # a question has many evaluations, a verdict millions
        return cls(
            question_id=shared(record.question_id),
            prompt_variant=shared(record.prompt_variant),
            target_model=shared(record.target_model),
            output_id=record.output_id,
            judge_model=shared(record.judge_model),
            method=shared(record.method),
            attempt=record.attempt,
            valid=record.valid,
            flags=tuple(shared(flag) for flag in record.flags),
            scores=scores,
            overall_score=c.overall_score,
            verdict=None if c.verdict is None else shared(c.verdict),
            blind=bool(record.aliases),
            sample_meta=record.sample_meta,
            output_chars=len(record.evaluated_output) if output_chars is None else output_chars,
        )

    @property
    def sample(self) -> SampleKey:
        return (self.question_id, self.prompt_variant, self.target_model)

    @property
    def work_key(self) -> tuple[str, str, str, str, str]:
        return (
            self.question_id,
            self.prompt_variant,
            self.target_model,
            self.output_id,
            self.judge_model,
        )

    def score(self, field: str) -> int:
        """A dimension's score or ``overall_score`` (valid evaluations only)."""
        if field == "overall_score":
            assert self.overall_score is not None
            return self.overall_score
        assert self.scores is not None
        return self.scores[DIMENSION_KEYS.index(field)]


def as_evaluations(records: Iterable[EvaluationRecord | Evaluation]) -> list[Evaluation]:
    return [r if isinstance(r, Evaluation) else Evaluation.of(r) for r in records]


def load_evaluations(
    run_dir: Path, outputs: dict[SampleKey, str] | None = None
) -> tuple[list[Evaluation], list[str]]:
    """Every readable evaluation of a run (either layout), and where each unreadable one is.
    ``outputs``, when given, gets each sample's fingerprint of the output text judged (from
    the first record that has one): what tells draws of the targets from draws of the judge."""
    evaluations, unreadable = [], []
    for item in iter_archive(run_dir, summary_only=True):
        record = item.record
        if record is None:
            unreadable.append(f"{item.where}: {item.error}"[:300])
            continue
        evaluation = Evaluation.of(record, item.output_chars)
        evaluations.append(evaluation)
        if outputs is not None and record.judged is not None:
            outputs.setdefault(evaluation.sample, record.judged.output)
    return evaluations, unreadable


class _Attempt(Protocol):
    @property
    def work_key(self) -> tuple[str, str, str, str, str]: ...
    @property
    def attempt(self) -> int: ...
    @property
    def valid(self) -> bool: ...


A = TypeVar("A", bound=_Attempt)


def final_evaluations(records: Iterable[A]) -> list[A]:
    """Per sample x judge: the valid attempt if any (the first, by attempt number), else the
    last attempt; in the order each sample x judge first appears."""
    best: dict[tuple[str, ...], A] = {}
    for record in records:
        key = record.work_key
        held = best.get(key)
        if held is None or _preferred(record, held):
            best[key] = record
    return list(best.values())


def _preferred(new: _Attempt, held: _Attempt) -> bool:
    if new.valid != held.valid:
        return new.valid
    # among valid attempts the earliest counts; among invalid ones the latest (a tie: the later)
    return new.attempt < held.attempt if new.valid else new.attempt >= held.attempt
