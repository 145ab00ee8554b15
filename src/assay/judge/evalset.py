"""The evaluation set: question x prompt variant x target model, with a coverage report.

Coverage is checked before any judge call: an expected cell without an output is *missing*,
a cell with two or more outputs is *duplicated* (ambiguous, so none of them is judged), and an
output whose question or variant is not in the question set is *unexpected*.
"""

from __future__ import annotations

import hashlib
import itertools
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ..arrays import sorted_array
from ..data.questions import QuestionLookup, TargetOutput, refuse_edited_prompt
from ..errors import InputError

CoverageKind = Literal["missing", "duplicated", "unexpected"]
OutputSource = Callable[[], Iterable[TargetOutput]]  # reads the outputs afresh on each call


class Sample(BaseModel):
    """One evaluation unit: an output and what the judge needs to hold it to."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str
    prompt_variant: str
    target_model: str
    output_id: str
    output_text: str
    prompt: str
    required_structure: str | None = None
    constraints: tuple[str, ...] = ()
    intent: str | None = None
    # the question's and the output's own fields (the output's win on a clash): archived with
    # every evaluation for slicing, never shown to the judge
    meta: dict[str, Any] | None = None
    source: str = ""  # where the output was read (file and line): what an error names

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.question_id, self.prompt_variant, self.target_model, self.output_id)


class CoverageIssue(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: CoverageKind
    question_id: str
    prompt_variant: str
    target_model: str
    sources: tuple[str, ...] = ()

    def describe(self) -> str:
        cell = f"{self.question_id} x {self.prompt_variant} x {self.target_model}"
        where = f" ({', '.join(self.sources)})" if self.sources else ""
        return f"{self.kind}: {cell}{where}"


class CoverageReport(BaseModel):
    """Set-level INCOMPLETE_COVERAGE: what the cross product expects and what is there."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    questions: int
    variants: int
    target_models: tuple[str, ...]
    expected: int
    aligned: int
    issues: tuple[CoverageIssue, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.issues

    def count(self, kind: CoverageKind) -> int:
        return sum(1 for issue in self.issues if issue.kind == kind)

    def describe(self, limit: int = 20) -> str:
        head = (
            f"evaluation set: {_counted(self.questions, 'question')}, "
            f"{_counted(self.variants, 'question x variant cell')}, "
            f"{_counted(len(self.target_models), 'target model')} -> {self.expected} expected, "
            f"{self.aligned} aligned; missing {self.count('missing')}, duplicated "
            f"{self.count('duplicated')}, unexpected {self.count('unexpected')}"
        )
        lines = [head, *(f"  {issue.describe()}" for issue in self.issues[:limit])]
        if len(self.issues) > limit:
            lines.append(f"  ... and {len(self.issues) - limit} more")
        return "\n".join(lines)


class EvalSet:
    """The aligned samples of a question set and its outputs, with the coverage report.

    The samples are not held: each iteration reads the outputs again from their source (a
    manifest is read line by line) and builds a sample for every output of an aligned cell,
    in the order the outputs come. What stays in memory is the question set, the coverage
    report and the identities of duplicated cells, so a run over a million outputs holds
    about what one over a thousand does.
    """

    def __init__(
        self,
        questions: QuestionLookup,
        outputs: OutputSource,
        coverage: CoverageReport,
        duplicated: frozenset[int],
        aligned_by_target: dict[str, int],
    ) -> None:
        self.questions = questions
        self.coverage = coverage
        self.aligned_by_target = aligned_by_target  # target model -> aligned samples
        self._outputs = outputs
        self._duplicated = duplicated

    def __iter__(self) -> Iterator[Sample]:
        targets = self.aligned_by_target
        for output in self._outputs():
            if _expected(self.questions, targets, output) and (
                not self._duplicated or _cell_id(output.key) not in self._duplicated
            ):
                yield _sample(self.questions, output)

    def __len__(self) -> int:
        return self.coverage.aligned

    @property
    def samples(self) -> tuple[Sample, ...]:
        """Every aligned sample, materialised (for small sets; a run iterates instead)."""
        return tuple(self)


HELD_OUTPUTS_UP_TO = 4096
_HELD_OUTPUT_CHARS = 8_000_000


def build_eval_set(
    questions: QuestionLookup,
    outputs: Iterable[TargetOutput] | OutputSource,
    target_models: Sequence[str] | None = None,
    held_up_to: int = HELD_OUTPUTS_UP_TO,
) -> EvalSet:
    """The aligned samples of the cross product and the coverage report.

    ``outputs`` is a collection, or a function that reads them afresh on each call (what
    ``assay judge run`` passes, so that a million outputs are never held at once); a one-shot
    iterator is read into a list first. ``target_models`` fixes which targets are expected
    (default: every target seen). One pass over the outputs checks coverage, keeping an
    8-byte identity per expected output; a second reads again only if some cell is
    duplicated, to name the outputs involved. Outputs read from a function are kept from the
    coverage pass when there are at most ``held_up_to`` of them (and at most 8 million
    characters of text): reading a small set again would cost more CPU than holding it.
    """
    source = _as_source(outputs)
    survey = _Survey(questions, target_models)
    held: list[TargetOutput] | None = [] if callable(outputs) else None
    characters = 0
    for output in source():
        survey.take(output)
        if held is not None:
            held.append(output)
            characters += len(output.text)
            if len(held) > held_up_to or characters > _HELD_OUTPUT_CHARS:
                held = None  # a large set: read again on each pass
    if held is not None:
        source = _as_source(held)
    targets = tuple(target_models) if target_models else tuple(survey.per_target)
    _refuse_shared_output_ids(source, survey.repeated_output_ids())
    repeated = survey.repeated()
    found = _sources_of(source(), frozenset(repeated)) if repeated else {}
    aligned_by_target = {target: survey.per_target.get(target, 0) for target in targets}
    for (_, _, target), sources in found.values():
        aligned_by_target[target] -= len(sources)
    cells = sum(1 for _ in questions.cells())
    expected = cells * len(targets)
    issues = _issues(questions, targets, survey, expected - survey.distinct(), found)
    report = CoverageReport(
        questions=questions.question_count,
        variants=cells,
        target_models=targets,
        expected=expected,
        aligned=sum(aligned_by_target.values()),
        issues=tuple(issues),
    )
    return EvalSet(questions, source, report, frozenset(repeated), aligned_by_target)


class _Survey:
    """One pass over the outputs: per expected output its cell's 8-byte identity (sorted once
    the pass is over), outputs per target, and the unexpected outputs with their sources."""

    def __init__(self, questions: QuestionLookup, targets: Sequence[str] | None) -> None:
        self.questions = questions
        self.targets = None if targets is None else dict.fromkeys(targets)
        self.ids = array("Q")
        self.output_ids = array("Q")  # per expected output, its (target, output_id) identity
        self.per_target: dict[str, int] = {}  # expected outputs per target, in order seen
        self.unexpected: dict[tuple[str, str, str], list[str]] = {}
        self._sorted = False

    def take(self, output: TargetOutput) -> None:
        if not _expected(self.questions, self.targets, output):
            self.unexpected.setdefault(output.key, []).append(output.source)
            return
        if output.prompt_hash is not None:  # refused in this pass, before a run writes
            found = self.questions.variant(output.question_id, output.prompt_variant)
            assert found is not None  # an expected cell
            refuse_edited_prompt(
                output.prompt_hash,
                found[1],
                f"the output for question {output.question_id!r} variant {output.prompt_variant!r}",
                (output.source, None),
                hint="generate the outputs again for the edited prompt, or judge them against "
                "the question set they were generated from",
            )
        self.ids.append(_cell_id(output.key))
        self.output_ids.append(_output_identity(output))
        self.per_target[output.target_model] = self.per_target.get(output.target_model, 0) + 1

    def repeated(self) -> set[int]:
        """Identities of cells with two or more outputs."""
        return {a for a, b in itertools.pairwise(self._sorted_ids()) if a == b}

    def repeated_output_ids(self) -> frozenset[int]:
        """Identities of (target, output_id) pairs given to two or more outputs."""
        self.output_ids = sorted_array(self.output_ids)
        return frozenset(a for a, b in itertools.pairwise(self.output_ids) if a == b)

    def distinct(self) -> int:
        ids = self._sorted_ids()
        return len(ids) - sum(a == b for a, b in itertools.pairwise(ids))

    def has(self, cell_id: int) -> bool:
        ids = self._sorted_ids()
        index = bisect_left(ids, cell_id)
        return index < len(ids) and ids[index] == cell_id

    def _sorted_ids(self) -> array[int]:
        if not self._sorted:
            self.ids = sorted_array(self.ids)
            self._sorted = True
        return self.ids


def _expected(
    questions: QuestionLookup, targets: Mapping[str, object] | None, output: TargetOutput
) -> bool:
    """Whether an output's question and variant are in the set and its target is expected."""
    in_set = questions.has_variant(output.question_id, output.prompt_variant)
    return in_set and (targets is None or output.target_model in targets)


def _issues(
    questions: QuestionLookup,
    targets: Sequence[str],
    survey: _Survey,
    missing: int,
    duplicated: dict[int, tuple[tuple[str, str, str], list[str]]],
) -> list[CoverageIssue]:
    """Missing and duplicated cells in the cross product's order, then unexpected outputs in
    the order read, each with the outputs involved."""
    issues: list[CoverageIssue] = []
    if missing or duplicated:
        for target in targets:
            for question_id, variant in questions.cells():
                cell = (question_id, variant, target)
                cell_id = _cell_id(cell)
                if cell_id in duplicated:
                    issues.append(_issue("duplicated", cell, duplicated[cell_id][1]))
                elif missing and not survey.has(cell_id):
                    issues.append(_issue("missing", cell, ()))
    for cell, sources in survey.unexpected.items():
        issues.append(_issue("unexpected", cell, sources))
    return issues


def _sources_of(
    outputs: Iterable[TargetOutput], wanted: frozenset[int]
) -> dict[int, tuple[tuple[str, str, str], list[str]]]:
    found: dict[int, tuple[tuple[str, str, str], list[str]]] = {}
    for output in outputs:
        cell_id = _cell_id(output.key)
        if cell_id in wanted:
            found.setdefault(cell_id, (output.key, []))[1].append(output.source)
    return found


def _refuse_shared_output_ids(source: OutputSource, repeated: frozenset[int]) -> None:
    """An output_id names one output of its target model. Given to outputs of two different
    cells, it would give both one blind alias and make a label naming it ambiguous; the same
    cell listed twice is a duplicated cell, reported with the coverage instead."""
    if not repeated:
        return
    first_seen: dict[int, TargetOutput] = {}
    for output in source():
        identity = _output_identity(output)
        if identity not in repeated:
            continue
        earlier = first_seen.setdefault(identity, output)
        if earlier.key != output.key:
            raise InputError(
                f"the output_id {output.output_id!r} of {output.target_model} is also given "
                f"to question {earlier.question_id!r} variant {earlier.prompt_variant!r} "
                f"({earlier.source}); an output_id must name one output",
                path=output.source,
                field="output_id",
            )


def _output_identity(output: TargetOutput) -> int:
    return _cell_id((output.target_model, output.output_id, ""))


def _cell_id(cell: tuple[str, str, str]) -> int:
    """A cell's 8-byte identity (ids hold no control characters, so the join is unambiguous;
    a collision among a million cells has odds of about 1 in 30 million)."""
    joined = "\x1f".join(cell).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(joined, digest_size=8).digest(), "big")


def _as_source(outputs: Iterable[TargetOutput] | OutputSource) -> OutputSource:
    if callable(outputs):
        return outputs
    held = outputs if isinstance(outputs, Sequence) else list(outputs)
    return lambda: held


def _issue(kind: CoverageKind, cell: tuple[str, str, str], sources: Sequence[str]) -> CoverageIssue:
    return CoverageIssue(
        kind=kind,
        question_id=cell[0],
        prompt_variant=cell[1],
        target_model=cell[2],
        sources=tuple(sources),
    )


def _sample(questions: QuestionLookup, output: TargetOutput) -> Sample:
    found = questions.variant(output.question_id, output.prompt_variant)
    assert found is not None  # only expected cells reach here
    question, variant = found
    return Sample(
        question_id=output.question_id,
        prompt_variant=output.prompt_variant,
        target_model=output.target_model,
        output_id=output.output_id,
        output_text=output.text,
        prompt=variant.prompt,
        required_structure=variant.required_structure,
        constraints=variant.constraints,
        intent=question.intent,
        meta={**(question.meta or {}), **(output.meta or {})} or None,
        source=output.source,
    )


def _counted(count: int, noun: str) -> str:
    """``1 target model``, ``2 target models``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
