"""Instruction following under small prompt changes, paired by prompt.

Every output of a varied question set (``assay instructions vary``, then ``assay generate``) is
checked against its prompt's instructions by the deterministic checker. Each variant is then
compared with the original prompt on the prompts where the same target model answered both:
the change in the share of prompts whose instructions were all followed, with a bootstrap
interval over prompts, the prompts it lost and gained, and McNemar's exact test on those. A
prompt counts as robustly followed when every variant of it was.

A cell with no output (a failed or missing generation) is counted as missing, never as an
instruction not followed, and leaves its prompt out of the pairs it belongs to.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from ..data.importers.ifeval import VARIANT
from ..data.importers.ifeval_labels import dimension_truth, is_format_instruction
from ..data.questions import QuestionSet, TargetOutput, refuse_edited_prompt
from ..errors import ConfigError, InputError
from ..metrics import Estimate, bootstrap_ci, mcnemar_exact_p
from ..tables import Table
from .registry import check_response
from .types import InstructionResult, Mode
from .variants import VARIANT_KINDS
from .varied_set import INSTRUCTIONS_FIELD, IFEvalMeta, instructions_of

BASELINE = VARIANT  # "original"
SAME_SET_HINT = "give the question set the outputs were generated from"
Cell = tuple[str, str, str]  # target, question, variant


class OutputCheck(BaseModel):
    """The verdicts on one output (a line of the verdicts file)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str
    prompt_variant: str
    target_model: str
    output_id: str
    source: str
    mode: Mode
    follow_all_instructions: bool
    results: tuple[InstructionResult, ...]
    prompt: str  # the variant's prompt the output answered
    response: str  # the output's text


def check_outputs(
    questions: QuestionSet,
    questions_path: Path,
    outputs: Iterable[TargetOutput],
    mode: Mode,
    *,
    instructions_field: str = INSTRUCTIONS_FIELD,
) -> list[OutputCheck]:
    """Each output checked against its question's instructions. Refused, naming where the
    output is: an output of a question or variant the set does not hold, one that answered
    another prompt than the set now gives (``vary`` run again with another seed), and a second
    output of one target for one question and variant."""
    checks = []
    seen: dict[Cell, str] = {}
    instructions: dict[str, IFEvalMeta] = {}
    for output in outputs:
        named = f"the output for question {output.question_id!r} variant {output.prompt_variant!r}"
        found = questions.variant(output.question_id, output.prompt_variant)
        if found is None:
            raise InputError(
                f"{named} has no such question and variant in {questions_path}",
                path=Path(output.source),
                hint=SAME_SET_HINT,
            )
        question, variant = found
        refuse_edited_prompt(
            output.prompt_hash, variant, named, (output.source, None), hint=SAME_SET_HINT
        )
        cell = (output.target_model, output.question_id, output.prompt_variant)
        if cell in seen:
            raise InputError(
                f"{named} of {output.target_model} is also at {seen[cell]}: one output per "
                "target, question and variant",
                path=Path(output.source),
                hint="give each target's outputs once",
            )
        seen[cell] = output.source
        meta = instructions.get(question.question_id)
        if meta is None:  # read and checked once per question, not once per output
            meta = instructions[question.question_id] = instructions_of(
                question, questions_path, instructions_field
            )
        results = check_response(
            meta.instruction_id_list, meta.kwargs, variant.prompt, output.text, mode=mode
        )
        checks.append(
            OutputCheck(
                question_id=output.question_id,
                prompt_variant=output.prompt_variant,
                target_model=output.target_model,
                output_id=output.output_id,
                source=output.source,
                mode=mode,
                follow_all_instructions=all(r.followed for r in results),
                results=tuple(results),
                prompt=variant.prompt,
                response=output.text,
            )
        )
    return checks


def checker_labels(checks: Sequence[OutputCheck]) -> list[dict[str, object]]:
    """The checker's verdicts as judge labels (the format ``assay judge agreement --labels``
    reads): per output, ``INSTRUCTION_COMPLIANCE`` over every instruction and
    ``FORMAT_COMPLIANCE`` over the format ones (none for an output without one), each 2 when
    every counted instruction was followed, 0 when none was, 1 otherwise."""
    labels: list[dict[str, object]] = []
    for check in checks:
        counted = {
            "INSTRUCTION_COMPLIANCE": [r.followed for r in check.results],
            "FORMAT_COMPLIANCE": [
                r.followed for r in check.results if is_format_instruction(r.instruction_id)
            ],
        }
        labels += [
            {
                "question_id": check.question_id,
                "prompt_variant": check.prompt_variant,
                "target_model": check.target_model,
                "output_id": check.output_id,
                "dimension": dimension,
                "score": dimension_truth(followed).score,
                "annotator": f"instructions-{check.mode}",
            }
            for dimension, followed in counted.items()
            if followed
        ]
    return labels


# ---------------------------------------------------------------- statistics


class VariantRow(BaseModel):
    target_model: str
    variant: str
    outputs: int
    missing: int  # cells of this variant with no output
    prompt_level: float | None  # share of outputs that followed every instruction
    instruction_level: float | None  # share of instructions followed


class PairedRow(BaseModel):
    target_model: str
    variant: str
    baseline: str
    pairs: int  # prompts the target answered under both
    baseline_rate: float
    variant_rate: float
    difference: float  # variant_rate - baseline_rate
    ci_low: float
    ci_high: float
    lost: int  # followed under the baseline, not under the variant
    gained: int
    mcnemar_p: float


class TargetRow(BaseModel):
    target_model: str
    prompts: int  # prompts with an output under each of their variants
    baseline_rate: float | None
    robust_rate: float | None  # followed under every variant
    any_rate: float | None  # followed under at least one variant
    unstable_rate: float | None  # followed under some variants, not others


class InstructionRow(BaseModel):
    target_model: str
    instruction_id: str
    pairs: int  # (prompt, variant) pairs with both outputs, for this instruction
    baseline_followed: int
    lost: int
    gained: int


class TargetContrastRow(BaseModel):
    """Two targets' effects of one variant, on the prompts both answered under both."""

    variant: str
    first: str
    second: str
    prompts: int
    first_effect: float  # the first target's variant share minus its baseline share
    second_effect: float
    difference: float  # first_effect - second_effect
    ci_low: float
    ci_high: float


class RobustnessSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: Mode
    questions: int
    baseline: str
    confidence: float
    n_resamples: int
    seed: int
    variants: list[VariantRow]
    paired: list[PairedRow]
    targets: list[TargetRow]
    instructions: list[InstructionRow]
    contrasts: list[TargetContrastRow]  # every pair of targets, per variant


@dataclass(frozen=True)
class _Grid:
    """The checks by target x question x variant, over the set's question x variant cells;
    ``labels``: the baseline first, then the kinds ``vary`` writes in their order, then any
    other label in the order the set first gives it."""

    by_cell: Mapping[Cell, OutputCheck]
    cells: Sequence[tuple[str, str]]
    baseline: str
    labels: list[str]

    @classmethod
    def of(cls, checks: Sequence[OutputCheck], questions: QuestionSet, baseline: str) -> _Grid:
        cells = questions.cells()
        known = [baseline, *VARIANT_KINDS]
        labels = list(dict.fromkeys(label for _, label in cells))
        labels.sort(key=lambda x: known.index(x) if x in known else len(known))
        by_cell = {(c.target_model, c.question_id, c.prompt_variant): c for c in checks}
        return cls(by_cell, cells, baseline, labels)

    def get(self, target: str, question_id: str, label: str) -> OutputCheck | None:
        return self.by_cell.get((target, question_id, label))

    def pairs(self, target: str, label: str) -> list[tuple[OutputCheck, OutputCheck]]:
        """(baseline, variant) checks of the prompts the target answered under both."""
        found = [
            (self.get(target, q, self.baseline), self.get(target, q, label))
            for q, v in self.cells
            if v == label
        ]
        return [(b, a) for b, a in found if b is not None and a is not None]


@dataclass(frozen=True)
class _Bootstrap:
    """The interval settings of a summary: a percentile bootstrap over prompts."""

    confidence: float
    n_resamples: int
    seed: int

    def mean(self, differences: npt.NDArray[np.float64]) -> Estimate:
        return bootstrap_ci(
            np.mean,
            differences,
            n_resamples=self.n_resamples,
            confidence=self.confidence,
            seed=self.seed,
        )


def summarize_robustness(
    questions: QuestionSet,
    checks: Sequence[OutputCheck],
    mode: Mode,
    *,
    baseline: str = BASELINE,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> RobustnessSummary:
    """The tables of the module doc; ``baseline`` is the variant each other is paired with."""
    grid = _Grid.of(checks, questions, baseline)
    if baseline not in grid.labels:
        raise ConfigError(
            f"no prompt variant {baseline!r} in the question set to pair the others with",
            hint="give --baseline one of " + ", ".join(map(repr, grid.labels[:10])),
        )
    targets = sorted({c.target_model for c in checks})
    bootstrap = _Bootstrap(confidence, n_resamples, seed)
    return RobustnessSummary(
        mode=mode,
        questions=questions.question_count,
        baseline=baseline,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        variants=[row for target in targets for row in _variant_rows(target, grid)],
        paired=[row for target in targets for row in _paired_rows(target, grid, bootstrap)],
        targets=[_target_row(target, questions, grid) for target in targets],
        instructions=[row for target in targets for row in _instruction_rows(target, grid)],
        contrasts=list(_contrast_rows(targets, grid, bootstrap)),
    )


def _variant_rows(target: str, grid: _Grid) -> Iterable[VariantRow]:
    for label in grid.labels:
        wanted = [q for q, v in grid.cells if v == label]
        found = [c for q in wanted if (c := grid.get(target, q, label)) is not None]
        yield VariantRow(
            target_model=target,
            variant=label,
            outputs=len(found),
            missing=len(wanted) - len(found),
            prompt_level=_share([c.follow_all_instructions for c in found]),
            instruction_level=_share([r.followed for c in found for r in c.results]),
        )


def _paired_rows(target: str, grid: _Grid, bootstrap: _Bootstrap) -> Iterable[PairedRow]:
    for label in grid.labels[1:]:
        pairs = grid.pairs(target, label)
        if not pairs:
            continue
        before = np.array([b.follow_all_instructions for b, _ in pairs], dtype=np.float64)
        after = np.array([a.follow_all_instructions for _, a in pairs], dtype=np.float64)
        estimate = bootstrap.mean(after - before)
        lost = int(((before == 1) & (after == 0)).sum())
        gained = int(((before == 0) & (after == 1)).sum())
        yield PairedRow(
            target_model=target,
            variant=label,
            baseline=grid.baseline,
            pairs=len(pairs),
            baseline_rate=float(before.mean()),
            variant_rate=float(after.mean()),
            difference=estimate.value,
            ci_low=estimate.low,
            ci_high=estimate.high,
            lost=lost,
            gained=gained,
            mcnemar_p=mcnemar_exact_p(lost, gained),
        )


def _contrast_rows(
    targets: Sequence[str], grid: _Grid, bootstrap: _Bootstrap
) -> Iterable[TargetContrastRow]:
    """Is one target's accuracy moved more by a variant than another's? Paired by prompt:
    per prompt, each target's change (variant minus baseline), then the difference."""
    for label in grid.labels[1:]:
        changes = {target: _changes(grid.pairs(target, label)) for target in targets}
        for first, second in itertools.combinations(targets, 2):
            shared = sorted(changes[first].keys() & changes[second].keys())
            if not shared:
                continue
            a = np.array([changes[first][q] for q in shared], dtype=np.float64)
            b = np.array([changes[second][q] for q in shared], dtype=np.float64)
            estimate = bootstrap.mean(a - b)
            yield TargetContrastRow(
                variant=label,
                first=first,
                second=second,
                prompts=len(shared),
                first_effect=float(a.mean()),
                second_effect=float(b.mean()),
                difference=estimate.value,
                ci_low=estimate.low,
                ci_high=estimate.high,
            )


def _changes(pairs: Sequence[tuple[OutputCheck, OutputCheck]]) -> dict[str, int]:
    """question -> +1 gained, -1 lost, 0 the same."""
    return {
        after.question_id: int(after.follow_all_instructions) - int(before.follow_all_instructions)
        for before, after in pairs
    }


def _target_row(target: str, questions: QuestionSet, grid: _Grid) -> TargetRow:
    """Over the prompts answered under every one of their variants, the baseline among them."""
    complete = []
    for question in questions.questions:
        labels = [v.variant for v in question.variants]
        found = [grid.get(target, question.question_id, label) for label in labels]
        if grid.baseline in labels and all(c is not None for c in found):
            verdicts = {
                x: c.follow_all_instructions for x, c in zip(labels, found, strict=True) if c
            }
            complete.append((verdicts[grid.baseline], list(verdicts.values())))
    return TargetRow(
        target_model=target,
        prompts=len(complete),
        baseline_rate=_share([first for first, _ in complete]),
        robust_rate=_share([all(every) for _, every in complete]),
        any_rate=_share([any(every) for _, every in complete]),
        unstable_rate=_share([any(every) and not all(every) for _, every in complete]),
    )


def _instruction_rows(target: str, grid: _Grid) -> Iterable[InstructionRow]:
    """Per instruction id: how often a variant lost or gained it against the baseline."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for label in grid.labels[1:]:
        for baseline, check in grid.pairs(target, label):
            for before, after in zip(baseline.results, check.results, strict=True):
                row = counts[before.instruction_id]
                row[0] += 1
                row[1] += before.followed
                row[2] += before.followed and not after.followed
                row[3] += after.followed and not before.followed
    for instruction_id, (pairs, followed, lost, gained) in sorted(counts.items()):
        yield InstructionRow(
            target_model=target,
            instruction_id=instruction_id,
            pairs=pairs,
            baseline_followed=followed,
            lost=lost,
            gained=gained,
        )


def _share(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


# ---------------------------------------------------------------- rendering


def robustness_tables(summary: RobustnessSummary) -> list[Table]:
    level = f"{summary.confidence:.0%}"
    return [
        Table(
            title="Per variant",
            columns=["target", "variant", "outputs", "missing", "prompt-level", "instr-level"],
            rows=[
                [
                    r.target_model,
                    r.variant,
                    r.outputs,
                    r.missing,
                    _pct(r.prompt_level),
                    _pct(r.instruction_level),
                ]
                for r in summary.variants
            ],
        ),
        Table(
            title=f"Each variant against {summary.baseline!r}, paired by prompt",
            columns=[
                "target",
                "variant",
                "pairs",
                summary.baseline,
                "variant",
                "difference",
                f"{level} CI",
                "lost",
                "gained",
                "McNemar p",
            ],
            rows=[
                [
                    r.target_model,
                    r.variant,
                    r.pairs,
                    _pct(r.baseline_rate),
                    _pct(r.variant_rate),
                    _signed(r.difference),
                    f"[{_signed(r.ci_low)}, {_signed(r.ci_high)}]",
                    r.lost,
                    r.gained,
                    f"{r.mcnemar_p:.3g}",
                ]
                for r in summary.paired
            ],
            note=f"prompt-level shares; the interval is a percentile bootstrap over prompts "
            f"({summary.n_resamples} resamples, seed {summary.seed}); lost: followed under "
            f"{summary.baseline!r} only, gained: under the variant only",
        ),
        Table(
            title="Per target, over prompts answered under every variant",
            columns=["target", "prompts", summary.baseline, "robust (all)", "any", "unstable"],
            rows=[
                [
                    r.target_model,
                    r.prompts,
                    _pct(r.baseline_rate),
                    _pct(r.robust_rate),
                    _pct(r.any_rate),
                    _pct(r.unstable_rate),
                ]
                for r in summary.targets
            ],
            note="robust: every instruction followed under every variant; unstable: under "
            "some variants and not others",
        ),
    ]


def contrast_table(summary: RobustnessSummary) -> Table:
    """Each pair of targets per variant (empty with one target)."""
    level = f"{summary.confidence:.0%}"
    return Table(
        title="Targets compared: a variant's effect on one minus its effect on the other",
        columns=[
            "variant",
            "first",
            "second",
            "prompts",
            "effect on first",
            "effect on second",
            "difference",
            f"{level} CI",
        ],
        rows=[
            [
                r.variant,
                r.first,
                r.second,
                r.prompts,
                _signed(r.first_effect),
                _signed(r.second_effect),
                _signed(r.difference),
                f"[{_signed(r.ci_low)}, {_signed(r.ci_high)}]",
            ]
            for r in summary.contrasts
        ],
        note="paired by prompt, over the prompts both targets answered under the variant and "
        "the baseline; an interval that excludes 0 says the variant moves one target more",
    )


def instruction_table(summary: RobustnessSummary, limit: int = 10) -> Table:
    """The instruction ids whose verdict a variant changed, those it lost most often first."""
    changed = [r for r in summary.instructions if r.lost or r.gained]
    rows = sorted(changed, key=lambda r: (-r.lost, r.gained, r.instruction_id))
    return Table(
        title=f"Instruction ids a variant changed, most often lost first (first {limit})",
        columns=[
            "target",
            "instruction id",
            "pairs",
            f"followed ({summary.baseline})",
            "lost",
            "gained",
        ],
        rows=[
            [r.target_model, r.instruction_id, r.pairs, r.baseline_followed, r.lost, r.gained]
            for r in rows[:limit]
        ],
    )


def _pct(value: float | None) -> str:
    return "" if value is None else f"{value:.1%}"


def _signed(value: float) -> str:
    return f"{100 * value:+.1f} pts"


def summary_markdown(summary: RobustnessSummary) -> str:
    """Every table of the summary as Markdown, with its title and note."""
    tables = [*robustness_tables(summary), instruction_table(summary)]
    if summary.contrasts:
        tables.append(contrast_table(summary))
    parts = []
    for table in tables:
        parts.append(f"## {table.title}\n\n{table.markdown()}\n")
        if table.note:
            parts.append(f"{table.note}\n")
    return "\n".join(parts)
