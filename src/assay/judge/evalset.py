"""The evaluation set: question x prompt variant x target model, with a coverage report.

Coverage is checked before any judge call: an expected cell without an output is *missing*,
a cell with two or more outputs is *duplicated* (ambiguous, so none of them is judged), and an
output whose question or variant is not in the question set is *unexpected*.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

from ..data.questions import QuestionSet, TargetOutput

if TYPE_CHECKING:  # numpy is imported where coverage is counted: `assay --help` never loads it
    import numpy as np
    import numpy.typing as npt

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
            f"evaluation set: {self.questions} questions, {self.variants} question x variant "
            f"cells, {len(self.target_models)} target models -> {self.expected} expected, "
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
    report and the identities of the cells left out, so a run over a million outputs holds
    about what one over a thousand does.
    """

    def __init__(
        self,
        questions: QuestionSet,
        outputs: OutputSource,
        coverage: CoverageReport,
        left_out: frozenset[int],
        aligned_by_target: dict[str, int],
    ) -> None:
        self.questions = questions
        self.coverage = coverage
        self.aligned_by_target = aligned_by_target  # target model -> aligned samples
        self._outputs = outputs
        self._left_out = left_out

    def __iter__(self) -> Iterator[Sample]:
        for output in self._outputs():
            if _cell_id(output.key) not in self._left_out:
                yield _sample(self.questions, output)

    def __len__(self) -> int:
        return self.coverage.aligned

    @property
    def samples(self) -> tuple[Sample, ...]:
        """Every aligned sample, materialised (for small sets; a run iterates instead)."""
        return tuple(self)


def build_eval_set(
    questions: QuestionSet,
    outputs: Iterable[TargetOutput] | OutputSource,
    target_models: Sequence[str] | None = None,
) -> EvalSet:
    """The aligned samples of the cross product and the coverage report.

    ``outputs`` is a collection, or a function that reads them afresh on each call (what
    ``assay judge run`` passes, so that a million outputs are never held at once); a one-shot
    iterator is read into a list first. ``target_models`` fixes which targets are expected
    (default: every target seen). One pass over the outputs checks coverage and keeps an
    8-byte identity per output; a second reads again only if some cell is duplicated or
    unexpected, to name the outputs involved.
    """
    import numpy as np

    source = _as_source(outputs)
    survey = _survey(source())
    targets = tuple(target_models) if target_models else tuple(survey.targets)
    expected = _expected_ids(questions, targets)
    found, counts = np.unique(survey.cell_ids, return_counts=True)
    repeated = found[counts > 1]
    unexpected = np.setdiff1d(found, expected, assume_unique=True)
    missing = _id_set(np.setdiff1d(expected, found, assume_unique=True))
    left_out = frozenset(_id_set(repeated) | _id_set(unexpected))
    aligned_by_target = _aligned_by_target(survey, left_out, targets)
    cells = _CellKinds(missing, _id_set(repeated), _id_set(unexpected))
    issues = _issues(questions, targets, source, cells)
    report = CoverageReport(
        questions=len(questions.questions),
        variants=len(questions.cells()),
        target_models=targets,
        expected=len(expected),
        aligned=sum(aligned_by_target.values()),
        issues=tuple(issues),
    )
    return EvalSet(questions, source, report, left_out, aligned_by_target)


class _Survey(NamedTuple):
    """One pass over the outputs: the targets in order of appearance, and per output its
    cell's identity and its target's index."""

    targets: dict[str, int]
    cell_ids: npt.NDArray[np.uint64]
    target_index: npt.NDArray[np.int64]


def _survey(outputs: Iterable[TargetOutput]) -> _Survey:
    import numpy as np

    targets: dict[str, int] = {}
    ids = array("Q")
    which = array("q")
    for output in outputs:
        ids.append(_cell_id(output.key))
        which.append(targets.setdefault(output.target_model, len(targets)))
    return _Survey(
        targets,
        np.frombuffer(ids, dtype=np.uint64) if ids else np.zeros(0, dtype=np.uint64),
        np.frombuffer(which, dtype=np.int64) if which else np.zeros(0, dtype=np.int64),
    )


def _expected_ids(questions: QuestionSet, targets: Sequence[str]) -> npt.NDArray[np.uint64]:
    import numpy as np

    ids = array("Q", (_cell_id((q, v, t)) for t in targets for q, v in questions.cells()))
    return np.unique(np.frombuffer(ids, dtype=np.uint64) if ids else np.zeros(0, np.uint64))


def _aligned_by_target(
    survey: _Survey, left_out: frozenset[int], targets: Sequence[str]
) -> dict[str, int]:
    import numpy as np

    kept = ~np.isin(survey.cell_ids, np.fromiter(left_out, np.uint64, len(left_out)))
    per_index = np.bincount(survey.target_index[kept], minlength=len(survey.targets))
    by_name = {name: int(per_index[index]) for name, index in survey.targets.items()}
    return {target: by_name.get(target, 0) for target in targets}


class _CellKinds(NamedTuple):
    """Identities of the cells with a coverage issue (usually none)."""

    missing: set[int]
    repeated: set[int]  # two or more outputs: duplicated if expected, else unexpected
    unexpected: set[int]


def _issues(
    questions: QuestionSet, targets: Sequence[str], source: OutputSource, cells: _CellKinds
) -> list[CoverageIssue]:
    """Missing and duplicated cells in the cross product's order, then unexpected ones in
    the outputs' order, each with the outputs involved (a second pass, only if needed)."""
    if not (cells.missing or cells.repeated or cells.unexpected):
        return []
    named = frozenset(cells.repeated | cells.unexpected)
    found = _sources_of(source(), named) if named else {}
    issues: list[CoverageIssue] = []
    if cells.missing or cells.repeated - cells.unexpected:
        for target in targets:
            for question_id, variant in questions.cells():
                cell = (question_id, variant, target)
                cell_id = _cell_id(cell)
                if cell_id in cells.missing:
                    issues.append(_issue("missing", cell, ()))
                elif cell_id in cells.repeated:
                    issues.append(_issue("duplicated", cell, found[cell_id][1]))
    for cell_id, (cell, sources) in found.items():
        if cell_id in cells.unexpected:
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


def _cell_id(cell: tuple[str, str, str]) -> int:
    """A cell's 8-byte identity (ids hold no control characters, so the join is unambiguous;
    a collision among a million cells has odds of about 1 in 30 million)."""
    joined = "\x1f".join(cell).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(joined, digest_size=8).digest(), "big")


def _id_set(ids: npt.NDArray[np.uint64]) -> set[int]:
    return {int(cell_id) for cell_id in ids}


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


def _sample(questions: QuestionSet, output: TargetOutput) -> Sample:
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
    )
