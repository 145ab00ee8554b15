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

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict

from ..data.importers.ifeval import VARIANT
from ..data.questions import QuestionSet, TargetOutput
from ..errors import InputError
from ..metrics import bootstrap_ci, mcnemar_exact_p
from ..tables import Table
from .registry import check_response
from .types import InstructionResult, Mode
from .variants import VARIANT_KINDS
from .varied_set import instructions_of

BASELINE = VARIANT  # "original"


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


def check_outputs(
    questions: QuestionSet, questions_path: Path, outputs: Iterable[TargetOutput], mode: Mode
) -> list[OutputCheck]:
    """Each output checked against its question's instructions; an output of a question or
    variant the set does not hold is refused, naming where the output is."""
    checks = []
    for output in outputs:
        found = questions.variant(output.question_id, output.prompt_variant)
        if found is None:
            raise InputError(
                f"the output for question {output.question_id!r} variant "
                f"{output.prompt_variant!r} has no such question and variant in {questions_path}",
                path=Path(output.source),
                hint="give the question set the outputs were generated from",
            )
        question, variant = found
        meta = instructions_of(question, questions_path)
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
            )
        )
    return checks


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


Cell = tuple[str, str, str]  # target, question, variant


def summarize_robustness(
    questions: QuestionSet,
    checks: Sequence[OutputCheck],
    mode: Mode,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> RobustnessSummary:
    by_cell = {(c.target_model, c.question_id, c.prompt_variant): c for c in checks}
    targets = sorted({c.target_model for c in checks})
    cells = questions.cells()
    paired = [
        row
        for target in targets
        for row in _paired_rows(target, cells, by_cell, confidence, n_resamples, seed)
    ]
    return RobustnessSummary(
        mode=mode,
        questions=questions.question_count,
        baseline=BASELINE,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        variants=[row for target in targets for row in _variant_rows(target, cells, by_cell)],
        paired=paired,
        targets=[_target_row(target, questions, by_cell) for target in targets],
        instructions=[row for target in targets for row in _instruction_rows(target, by_cell)],
    )


def _variant_labels(cells: Sequence[tuple[str, str]]) -> list[str]:
    """The baseline first, then the kinds ``vary`` writes in their order, then any other
    label in the order the set first gives it."""
    known = [BASELINE, *VARIANT_KINDS]
    labels = list(dict.fromkeys(label for _, label in cells))
    return sorted(labels, key=lambda label: known.index(label) if label in known else len(known))


def _variant_rows(
    target: str, cells: Sequence[tuple[str, str]], by_cell: Mapping[Cell, OutputCheck]
) -> Iterable[VariantRow]:
    for label in _variant_labels(cells):
        wanted = [q for q, v in cells if v == label]
        found = [by_cell[(target, q, label)] for q in wanted if (target, q, label) in by_cell]
        results = [r.followed for c in found for r in c.results]
        yield VariantRow(
            target_model=target,
            variant=label,
            outputs=len(found),
            missing=len(wanted) - len(found),
            prompt_level=_share([c.follow_all_instructions for c in found]),
            instruction_level=_share(results),
        )


def _paired_rows(
    target: str,
    cells: Sequence[tuple[str, str]],
    by_cell: Mapping[Cell, OutputCheck],
    confidence: float,
    n_resamples: int,
    seed: int,
) -> Iterable[PairedRow]:
    for label in _variant_labels(cells)[1:]:
        pairs = [
            (by_cell[(target, q, BASELINE)], by_cell[(target, q, label)])
            for q, v in cells
            if v == label and (target, q, BASELINE) in by_cell and (target, q, label) in by_cell
        ]
        if not pairs:
            continue
        before = np.array([b.follow_all_instructions for b, _ in pairs], dtype=np.float64)
        after = np.array([a.follow_all_instructions for _, a in pairs], dtype=np.float64)
        estimate = bootstrap_ci(
            np.mean, after - before, n_resamples=n_resamples, confidence=confidence, seed=seed
        )
        lost = int(((before == 1) & (after == 0)).sum())
        gained = int(((before == 0) & (after == 1)).sum())
        yield PairedRow(
            target_model=target,
            variant=label,
            baseline=BASELINE,
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


def _target_row(
    target: str, questions: QuestionSet, by_cell: Mapping[Cell, OutputCheck]
) -> TargetRow:
    """Over the prompts answered under every one of their variants."""
    complete = []
    for question in questions.questions:
        found = [by_cell.get((target, question.question_id, v.variant)) for v in question.variants]
        if all(c is not None for c in found):
            complete.append([c.follow_all_instructions for c in found if c is not None])
    return TargetRow(
        target_model=target,
        prompts=len(complete),
        baseline_rate=_share([verdicts[0] for verdicts in complete]),
        robust_rate=_share([all(verdicts) for verdicts in complete]),
        any_rate=_share([any(verdicts) for verdicts in complete]),
        unstable_rate=_share([any(verdicts) and not all(verdicts) for verdicts in complete]),
    )


def _instruction_rows(target: str, by_cell: Mapping[Cell, OutputCheck]) -> Iterable[InstructionRow]:
    """Per instruction id: how often a variant lost or gained it against the baseline."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for (owner, question_id, label), check in by_cell.items():
        baseline = by_cell.get((target, question_id, BASELINE))
        if owner != target or label == BASELINE or baseline is None:
            continue
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


def instruction_table(summary: RobustnessSummary, limit: int = 10) -> Table:
    """The instruction ids the variants lost most often (net of those they gained)."""
    changed = [r for r in summary.instructions if r.lost or r.gained]
    rows = sorted(changed, key=lambda r: (r.gained - r.lost, -r.lost, r.instruction_id))
    return Table(
        title=f"Instruction ids most often lost under a variant (first {limit})",
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
