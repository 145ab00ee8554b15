"""Instruction following under small prompt changes, paired by prompt.

Every output of a varied question set (``assay instructions vary``, then ``assay generate``) is
checked against its prompt's instructions by the deterministic checker. Each variant is then
compared with the original prompt on the prompts where the same target model answered both:
the change in the share of prompts whose instructions were all followed, with a bootstrap
interval over prompts, the prompts it lost and gained, and McNemar's exact test on those. A
prompt counts as robustly followed when every variant of it was.

A cell with no output (a failed or missing generation) is counted as missing, never as an
instruction not followed, and leaves its prompt out of the pairs it belongs to.

With repeated draws (several ``--outputs``, each a generation of the same set with its own
seed), a cell's verdict is the share of its draws that followed every instruction, and every
comparison is over those shares, still paired by prompt; the p-value is then a permutation test
within each prompt instead of McNemar's. The draws also give the noise floor: how often two
draws of one prompt disagree, against how often a draw of the baseline and one of the variant
do. The excess of the second over the first estimates the mean squared change the variant
makes to a prompt's chance of being followed, which sampling alone does not produce.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from ..data.importers.ifeval import VARIANT
from ..data.importers.ifeval_labels import dimension_truth, is_format_instruction
from ..data.questions import (
    PromptVariant,
    Question,
    QuestionSet,
    TargetOutput,
    refuse_edited_prompt,
)
from ..errors import ConfigError, InputError
from ..metrics import Estimate, bootstrap_ci, mcnemar_exact_p, within_item_permutation_p
from .lm_eval_tasks import task_name
from .registry import check_response
from .types import InstructionResult, Mode
from .variants import VARIANT_KINDS
from .varied_set import INSTRUCTIONS_FIELD, IFEvalMeta, instructions_of

BASELINE = VARIANT  # "original"
SAME_SET_HINT = "give the question set the outputs were generated from"
Cell = tuple[str, str, str]  # target, question, variant
Draws = tuple["OutputCheck", ...]  # a cell's outputs, one per draw, in draw order


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
    # with repeated draws, which one (1, 2, ...: the summary's draws[k-1] names it); else 0
    draw: int = 0


def check_outputs(
    questions: QuestionSet,
    questions_path: Path,
    outputs: Iterable[TargetOutput],
    mode: Mode,
    *,
    instructions_field: str = INSTRUCTIONS_FIELD,
    draw: int | None = None,
) -> list[OutputCheck]:
    """Each output checked against its question's instructions. ``draw``: the outputs are that
    draw (1, 2, ...) of repeated draws (call once per draw). Refused, naming where the output
    is: an output of a question or variant the set does not hold, one that answered another
    prompt than the set now gives (``vary`` run again with another seed), and a second output
    of one target for one question and variant."""
    checks = []
    seen: dict[Cell, str] = {}
    instructions: dict[str, IFEvalMeta] = {}
    for output in outputs:
        cell = (output.target_model, output.question_id, output.prompt_variant)
        _refuse_second_output(output, seen.get(cell), draw is not None)
        seen[cell] = output.source
        question, variant = _answered(questions, questions_path, output)
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
                draw=draw or 0,
            )
        )
    return checks


def _named(output: TargetOutput) -> str:
    return f"the output for question {output.question_id!r} variant {output.prompt_variant!r}"


def _answered(
    questions: QuestionSet, questions_path: Path, output: TargetOutput
) -> tuple[Question, PromptVariant]:
    """The question and variant the output answered, refused unless the set holds them with
    the prompt the output was generated from."""
    found = questions.variant(output.question_id, output.prompt_variant)
    if found is None:
        raise InputError(
            f"{_named(output)} has no such question and variant in {questions_path}",
            path=Path(output.source),
            hint=SAME_SET_HINT,
        )
    refuse_edited_prompt(
        output.prompt_hash, found[1], _named(output), (output.source, None), hint=SAME_SET_HINT
    )
    return found


def _refuse_second_output(output: TargetOutput, earlier: str | None, draws: bool) -> None:
    if earlier is None:
        return
    one = "one output per target, question and variant" + (" in each draw" if draws else "")
    raise InputError(
        f"{_named(output)} of {output.target_model} is also at {earlier}: {one}",
        path=Path(output.source),
        hint="give each target's outputs once"
        + (
            ""
            if draws
            else "; outputs of several generations with their own --seed are "
            "repeated draws: pass --draws"
        ),
    )


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
    outputs: int  # every draw counted
    missing: int  # cells of this variant with no output in any draw
    prompt_level: float | None  # share of outputs that followed every instruction
    instruction_level: float | None  # share of instructions followed


class PairedRow(BaseModel):
    target_model: str
    variant: str
    baseline: str
    pairs: int  # prompts the target answered under both
    baseline_rate: float  # mean over those prompts of the share of draws followed
    variant_rate: float
    difference: float  # variant_rate - baseline_rate
    ci_low: float
    ci_high: float
    lost: int  # prompts followed less often under the variant than under the baseline
    gained: int
    # mcnemar: one draw per cell (exact); permutation: repeated draws, dealt within each prompt
    test: Literal["mcnemar", "permutation"] = "mcnemar"
    p_value: float


class TargetRow(BaseModel):
    target_model: str
    prompts: int  # prompts with an output under each of their variants
    baseline_rate: float | None
    robust_rate: float | None  # followed under every variant, in every draw
    any_rate: float | None  # followed under at least one variant, in one draw
    unstable_rate: float | None  # followed under some variants or draws, not others
    # some variant whose draws disagree among themselves (None: no cell has two draws)
    resampling_unstable_rate: float | None = None


class NoiseRow(BaseModel):
    """How often two draws disagree: of one prompt and variant, and of the baseline and the
    variant, over the prompts with at least two draws of each."""

    target_model: str
    variant: str
    prompts: int
    draws: int  # outputs of this variant on those prompts
    within_variant: float  # chance that two draws of the variant disagree
    within_baseline: float | None  # the same for the baseline (None on the baseline's row)
    across: float | None  # chance that a baseline draw and a variant draw disagree
    excess: float | None  # across minus the mean of the two within: the variant's own flips
    ci_low: float | None
    ci_high: float | None


class InstructionRow(BaseModel):
    target_model: str
    instruction_id: str
    pairs: int  # (prompt, variant) pairs with both outputs, for this instruction
    baseline_followed: float  # summed over the pairs: the share of baseline draws following it
    lost: int  # pairs where the variant's draws followed it less often
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
    draws: list[str] = []  # what draw k (at k-1) is, when there are repeated draws
    draw_outputs: list[int] = []  # the outputs each draw holds (an unfinished draw: fewer)
    # cells with two draws or more, and those among them whose draws are all the same text (a
    # backend that repeats a seeded or greedy answer: such draws measure no sampling noise)
    repeated_cells: int = 0
    same_text_cells: int = 0
    noise: list[NoiseRow] = []  # with repeated draws


@dataclass(frozen=True)
class _Grid:
    """The checks by target x question x variant (each cell's draws), over the set's question x
    variant cells; ``labels``: the baseline first, then the kinds ``vary`` writes in their
    order (as themselves, then as the lm-eval tasks of ``vary --lm-eval``), then any other label
    in the order the set first gives it."""

    by_cell: Mapping[Cell, Draws]
    cells: Sequence[tuple[str, str]]
    baseline: str
    labels: list[str]

    @classmethod
    def of(cls, checks: Sequence[OutputCheck], questions: QuestionSet, baseline: str) -> _Grid:
        cells = questions.cells()
        known = [baseline, *VARIANT_KINDS, *map(task_name, VARIANT_KINDS)]
        labels = list(dict.fromkeys(label for _, label in cells))
        labels.sort(key=lambda x: known.index(x) if x in known else len(known))
        by_cell: dict[Cell, list[OutputCheck]] = defaultdict(list)
        for check in sorted(checks, key=lambda c: c.draw):
            by_cell[(check.target_model, check.question_id, check.prompt_variant)].append(check)
        return cls({cell: tuple(draws) for cell, draws in by_cell.items()}, cells, baseline, labels)

    def get(self, target: str, question_id: str, label: str) -> Draws:
        return self.by_cell.get((target, question_id, label), ())

    def pairs(self, target: str, label: str) -> list[tuple[Draws, Draws]]:
        """(baseline, variant) draws of the prompts the target answered under both."""
        found = [
            (self.get(target, q, self.baseline), self.get(target, q, label))
            for q, v in self.cells
            if v == label
        ]
        return [(b, a) for b, a in found if b and a]

    @property
    def repeated(self) -> bool:
        """Whether any cell has more than one draw."""
        return any(len(draws) > 1 for draws in self.by_cell.values())


def _rate(draws: Draws) -> float:
    """The share of a cell's draws that followed every instruction."""
    return sum(c.follow_all_instructions for c in draws) / len(draws)


def _followed(draws: Draws) -> int:
    return sum(c.follow_all_instructions for c in draws)


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
    draws: Sequence[str] = (),
) -> RobustnessSummary:
    """The tables of the module doc; ``baseline`` is the variant each other is paired with;
    ``draws`` names the source of each draw index, when the checks are repeated draws."""
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
        draws=list(draws),
        draw_outputs=[sum(c.draw == draw for c in checks) for draw in range(1, len(draws) + 1)],
        repeated_cells=sum(len(d) > 1 for d in grid.by_cell.values()),
        same_text_cells=sum(
            len(d) > 1 and len({c.response for c in d}) == 1 for d in grid.by_cell.values()
        ),
        noise=[row for target in targets for row in _noise_rows(target, grid, bootstrap)],
    )


def _variant_rows(target: str, grid: _Grid) -> Iterable[VariantRow]:
    for label in grid.labels:
        wanted = [grid.get(target, q, label) for q, v in grid.cells if v == label]
        found = [check for draws in wanted for check in draws]
        yield VariantRow(
            target_model=target,
            variant=label,
            outputs=len(found),
            missing=sum(not draws for draws in wanted),
            prompt_level=_share([c.follow_all_instructions for c in found]),
            instruction_level=_share([r.followed for c in found for r in c.results]),
        )


def _paired_rows(target: str, grid: _Grid, bootstrap: _Bootstrap) -> Iterable[PairedRow]:
    for label in grid.labels[1:]:
        pairs = grid.pairs(target, label)
        if not pairs:
            continue
        before = np.array([_rate(b) for b, _ in pairs], dtype=np.float64)
        after = np.array([_rate(a) for _, a in pairs], dtype=np.float64)
        estimate = bootstrap.mean(after - before)
        lost = int((after < before).sum())
        gained = int((after > before).sum())
        single = all(len(b) == len(a) == 1 for b, a in pairs)
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
            test="mcnemar" if single else "permutation",
            p_value=mcnemar_exact_p(lost, gained) if single else _permutation_p(pairs, bootstrap),
        )


def _permutation_p(pairs: Sequence[tuple[Draws, Draws]], bootstrap: _Bootstrap) -> float:
    return within_item_permutation_p(
        [_followed(b) for b, _ in pairs],
        [len(b) for b, _ in pairs],
        [_followed(a) for _, a in pairs],
        [len(a) for _, a in pairs],
        n_resamples=bootstrap.n_resamples,
        seed=bootstrap.seed,
    )


def _noise_rows(target: str, grid: _Grid, bootstrap: _Bootstrap) -> Iterable[NoiseRow]:
    """Per variant, over the prompts with two draws or more of it (and of the baseline)."""
    if not grid.repeated:
        return
    for label in grid.labels:
        pairs = [
            (b, a)
            for q, v in grid.cells
            if v == label
            for b, a in [(grid.get(target, q, grid.baseline), grid.get(target, q, label))]
            if len(a) > 1 and (label == grid.baseline or len(b) > 1)
        ]
        if not pairs:
            continue
        within = np.array([_disagreement(a) for _, a in pairs], dtype=np.float64)
        row = NoiseRow(
            target_model=target,
            variant=label,
            prompts=len(pairs),
            draws=sum(len(a) for _, a in pairs),
            within_variant=float(within.mean()),
            within_baseline=None,
            across=None,
            excess=None,
            ci_low=None,
            ci_high=None,
        )
        if label != grid.baseline:
            row = _with_excess(row, pairs, within, bootstrap)
        yield row


def _with_excess(
    row: NoiseRow,
    pairs: Sequence[tuple[Draws, Draws]],
    within: npt.NDArray[np.float64],
    bootstrap: _Bootstrap,
) -> NoiseRow:
    within_baseline = np.array([_disagreement(b) for b, _ in pairs], dtype=np.float64)
    across = np.array([_cross_disagreement(b, a) for b, a in pairs], dtype=np.float64)
    # per prompt, an unbiased estimate of (p_variant - p_baseline)^2
    excess = bootstrap.mean(across - (within + within_baseline) / 2)
    return row.model_copy(
        update={
            "within_baseline": float(within_baseline.mean()),
            "across": float(across.mean()),
            "excess": excess.value,
            "ci_low": excess.low,
            "ci_high": excess.high,
        }
    )


def _disagreement(draws: Draws) -> float:
    """The chance that two distinct draws of a cell disagree (``k`` of ``n`` followed)."""
    n, k = len(draws), _followed(draws)
    return 2 * k * (n - k) / (n * (n - 1))


def _cross_disagreement(first: Draws, second: Draws) -> float:
    """The chance that a draw of one cell and a draw of the other disagree."""
    n1, k1, n2, k2 = len(first), _followed(first), len(second), _followed(second)
    return (k1 * (n2 - k2) + k2 * (n1 - k1)) / (n1 * n2)


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


def _changes(pairs: Sequence[tuple[Draws, Draws]]) -> dict[str, float]:
    """question -> the variant's share of draws followed minus the baseline's (+1 gained, -1
    lost with one draw each)."""
    return {after[0].question_id: _rate(after) - _rate(before) for before, after in pairs}


def _target_row(target: str, questions: QuestionSet, grid: _Grid) -> TargetRow:
    """Over the prompts answered under every one of their variants, the baseline among them."""
    complete: list[tuple[Draws, list[Draws]]] = []
    for question in questions.questions:
        labels = [v.variant for v in question.variants]
        found = [grid.get(target, question.question_id, label) for label in labels]
        if grid.baseline in labels and all(found):
            complete.append((found[labels.index(grid.baseline)], found))
    verdicts = [
        [c.follow_all_instructions for draws in every for c in draws] for _, every in complete
    ]
    return TargetRow(
        target_model=target,
        prompts=len(complete),
        baseline_rate=_share([_rate(first) for first, _ in complete]),
        robust_rate=_share([all(every) for every in verdicts]),
        any_rate=_share([any(every) for every in verdicts]),
        unstable_rate=_share([any(every) and not all(every) for every in verdicts]),
        resampling_unstable_rate=_share(
            [any(0 < _rate(draws) < 1 for draws in every) for _, every in complete]
        )
        if grid.repeated
        else None,
    )


def _instruction_rows(target: str, grid: _Grid) -> Iterable[InstructionRow]:
    """Per instruction id: how often a variant lost or gained it against the baseline (with
    draws: followed by a smaller or larger share of the variant's draws)."""
    counts: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0, 0])
    for label in grid.labels[1:]:
        for baseline, draws in grid.pairs(target, label):
            for index, result in enumerate(baseline[0].results):
                before = _instruction_rate(baseline, index)
                after = _instruction_rate(draws, index)
                row = counts[result.instruction_id]
                row[0] += 1
                row[1] += before
                row[2] += after < before
                row[3] += after > before
    for instruction_id, (pairs, followed, lost, gained) in sorted(counts.items()):
        yield InstructionRow(
            target_model=target,
            instruction_id=instruction_id,
            pairs=int(pairs),
            baseline_followed=followed,
            lost=int(lost),
            gained=int(gained),
        )


def _instruction_rate(draws: Draws, index: int) -> float:
    return sum(c.results[index].followed for c in draws) / len(draws)


def _share(flags: Sequence[bool] | Sequence[float]) -> float | None:
    return sum(flags) / len(flags) if flags else None
