"""The evaluation set: question x prompt variant x target model, with a coverage report.

Coverage is checked before any judge call: an expected cell without an output is *missing*,
a cell with two or more outputs is *duplicated* (ambiguous, so none of them is judged), and an
output whose question or variant is not in the question set is *unexpected*.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ..data.questions import QuestionSet, TargetOutput

CoverageKind = Literal["missing", "duplicated", "unexpected"]


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


class EvalSet(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    samples: tuple[Sample, ...]
    coverage: CoverageReport


def build_eval_set(
    questions: QuestionSet,
    outputs: Sequence[TargetOutput],
    target_models: Sequence[str] | None = None,
) -> EvalSet:
    """The aligned samples of the cross product and the coverage report.

    ``target_models`` fixes which targets are expected (default: every target seen).
    """
    targets = tuple(target_models) if target_models else _seen_targets(outputs)
    by_cell: dict[tuple[str, str, str], list[TargetOutput]] = defaultdict(list)
    for output in outputs:
        by_cell[output.key].append(output)
    issues: list[CoverageIssue] = []
    samples: list[Sample] = []
    expected_cells = [(q, v, t) for t in targets for q, v in questions.cells()]
    for cell in expected_cells:
        found = by_cell.get(cell, [])
        if len(found) == 1:
            samples.append(_sample(questions, found[0]))
        else:
            kind: CoverageKind = "missing" if not found else "duplicated"
            issues.append(_issue(kind, cell, found))
    expected_set = set(expected_cells)
    for cell, found in by_cell.items():
        if cell not in expected_set:
            issues.append(_issue("unexpected", cell, found))
    report = CoverageReport(
        questions=len(questions.questions),
        variants=len(questions.cells()),
        target_models=targets,
        expected=len(expected_cells),
        aligned=len(samples),
        issues=tuple(issues),
    )
    return EvalSet(samples=tuple(samples), coverage=report)


def _seen_targets(outputs: Sequence[TargetOutput]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(output.target_model for output in outputs))


def _issue(
    kind: CoverageKind, cell: tuple[str, str, str], found: Sequence[TargetOutput]
) -> CoverageIssue:
    return CoverageIssue(
        kind=kind,
        question_id=cell[0],
        prompt_variant=cell[1],
        target_model=cell[2],
        sources=tuple(output.source for output in found),
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
