"""What statistics need of an archived evaluation, small enough to hold millions of them.

An :class:`~.archive.EvaluationRecord` keeps the prompt, the output, the reply and every check:
kilobytes in memory. :class:`Evaluation` keeps the ids, validity, flags, scores and verdict,
with the repeated strings (model names, method, variant) shared, so `assay judge analyze`,
`agreement` and the slices over a million evaluations stay within a few hundred megabytes.
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from .archive import ArchivePart, EvaluationRecord, archive_parts, iter_part
from .protocol import DIMENSION_KEYS


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

    @classmethod
    def of(cls, record: EvaluationRecord) -> Evaluation:
        c = record.classification
        scores = None if c.scores is None else tuple(c.scores[key] for key in DIMENSION_KEYS)
        shared = sys.intern
        return cls(
            question_id=record.question_id,
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
            verdict=c.verdict,
            blind=bool(record.aliases),
            sample_meta=record.sample_meta,
        )

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


# Below this many bytes of shards, starting worker processes costs more than it saves.
_PARALLEL_MIN_BYTES = 64 * 1024 * 1024


def load_evaluations(
    run_dir: Path, *, workers: int | None = None
) -> tuple[list[Evaluation], list[str]]:
    """Every readable evaluation of a run (either layout), and where each unreadable one is.

    A large sharded archive is read by up to ``workers`` processes, a shard each (default:
    the cores this process may use); the result is the same, in the same order.
    """
    parts = archive_parts(run_dir)
    workers = _worker_count(parts, workers)
    evaluations: list[Evaluation] = []
    unreadable: list[str] = []
    read = _read_in_workers(parts, workers) if workers > 1 else None
    if read is None:
        read = [_part_evaluations(part) for part in parts]
    for part_evaluations, part_unreadable in read:
        evaluations.extend(part_evaluations)
        unreadable.extend(part_unreadable)
    return evaluations, unreadable


def _read_in_workers(
    parts: list[ArchivePart], workers: int
) -> list[tuple[list[Evaluation], list[str]]] | None:
    """The parts read by forked worker processes, or None where that cannot run (a fork
    copies the parent as it is: no re-import of ``__main__``, which a notebook or a script
    read from stdin does not have)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            return list(pool.map(_part_evaluations, parts))
    except (ValueError, OSError, BrokenProcessPool):
        return None


def _worker_count(parts: list[ArchivePart], workers: int | None) -> int:
    shards = [part for part in parts if part.shard]
    if sys.platform != "linux":  # forking is the cheap and safe way to start workers there
        return 1
    if workers is None:
        size = sum(part.path.stat().st_size for part in shards)
        workers = len(os.sched_getaffinity(0)) if size >= _PARALLEL_MIN_BYTES else 1
    return max(1, min(workers, len(shards)))


def _part_evaluations(part: ArchivePart) -> tuple[list[Evaluation], list[str]]:
    evaluations, unreadable = [], []
    for item in iter_part(part):
        if item.record is None:
            unreadable.append(f"{item.where}: {item.error}"[:300])
        else:
            evaluations.append(Evaluation.of(item.record))
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
    """Per sample x judge: the valid attempt if any, else the last attempt."""
    by_work: dict[tuple[str, ...], list[A]] = defaultdict(list)
    for record in records:
        by_work[record.work_key].append(record)
    return list(_finals(by_work.values()))


def _finals(groups: Iterable[list[A]]) -> Iterator[A]:
    for attempts in groups:
        attempts.sort(key=lambda r: r.attempt)
        yield next((r for r in attempts if r.valid), attempts[-1])
