"""How often assay's checker agrees with IFEval's own per-instruction labels.

IFEval ships, next to GPT-4's responses, the verdicts of its own programmatic checker in strict
and loose mode. Treating those as ground truth, this module measures per instruction id: count,
agreement and the confusion matrix (label followed / not followed x assay followed / not
followed), plus instruction-level and prompt-level accuracy over all prompts.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..errors import InputError
from .ifeval_data import (
    INPUTS_FILE,
    LABEL_FILES,
    LabelledResponse,
    PromptInstructions,
    read_inputs,
    read_labels,
)
from .registry import check_response, covered_instruction_ids
from .types import InstructionResult, Mode

TARGET = 0.95


class Confusion(BaseModel):
    """Rows: IFEval's label; columns: assay's verdict."""

    model_config = ConfigDict(extra="forbid")

    both_followed: int = 0
    label_followed_assay_not: int = 0
    assay_followed_label_not: int = 0
    both_not_followed: int = 0

    def add(self, label: bool, assay: bool) -> None:
        if label and assay:
            self.both_followed += 1
        elif label:
            self.label_followed_assay_not += 1
        elif assay:
            self.assay_followed_label_not += 1
        else:
            self.both_not_followed += 1

    @property
    def total(self) -> int:
        return (
            self.both_followed
            + self.label_followed_assay_not
            + self.assay_followed_label_not
            + self.both_not_followed
        )

    @property
    def agreed(self) -> int:
        return self.both_followed + self.both_not_followed

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa (for two classes the same as weighted kappa); None when both sides
        give one class only, where chance agreement is already 1 and kappa is undefined."""
        n = self.total
        if n == 0:
            return None
        label_yes = (self.both_followed + self.label_followed_assay_not) / n
        assay_yes = (self.both_followed + self.assay_followed_label_not) / n
        chance = label_yes * assay_yes + (1 - label_yes) * (1 - assay_yes)
        if chance >= 1.0:
            return None
        return (self.agreed / n - chance) / (1 - chance)

    def plus(self, other: Confusion) -> Confusion:
        return Confusion(
            both_followed=self.both_followed + other.both_followed,
            label_followed_assay_not=self.label_followed_assay_not + other.label_followed_assay_not,
            assay_followed_label_not=self.assay_followed_label_not + other.assay_followed_label_not,
            both_not_followed=self.both_not_followed + other.both_not_followed,
        )

    def matrix(self) -> str:
        return (
            f"{self.both_followed}/{self.label_followed_assay_not}/"
            f"{self.assay_followed_label_not}/{self.both_not_followed}"
        )


class Exclusion(BaseModel):
    """An instruction whose IFEval label is not about the instruction as written."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_line: int
    instruction_id: str
    reason: str


def ifeval_label_quirk(instruction_id: str, kwargs: Mapping[str, Any]) -> str | None:
    """Why IFEval's label for this instruction cannot be compared with a checker's, if it
    cannot. IFEval's letter_frequency swaps a `letter` outside a-z for a random letter before
    checking, so its labels for '#' or '!' are about some other letter."""
    if instruction_id == "keywords:letter_frequency":
        letter = kwargs.get("letter")
        if not (isinstance(letter, str) and len(letter) == 1 and "a" <= letter.lower() <= "z"):
            return f"IFEval checks a random letter instead of {letter!r}"
    return None


class Disagreement(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    input_line: int
    instruction_id: str
    label: bool
    assay_reason: str


class AgreementRow(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    instruction_id: str
    count: int
    excluded: int
    agreement: float | None  # None when every instance was excluded: nothing was compared
    kappa: float | None
    confusion: Confusion
    covered: bool

    @property
    def meets_target(self) -> bool:
        return self.agreement is not None and self.agreement >= TARGET


class AgreementReport(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Mode
    prompts: int
    instructions: int
    # accuracies are None when nothing was compared (no label, or every instance excluded)
    instruction_accuracy: float | None
    instruction_kappa: float | None
    instruction_confusion: Confusion
    prompt_accuracy: float | None  # "follows all its instructions": assay's verdict vs IFEval's
    prompt_kappa: float | None
    prompt_confusion: Confusion
    covered_instruction_accuracy: float | None
    rows: list[AgreementRow]
    disagreements: list[Disagreement]
    exclusions: list[Exclusion]


def measure_agreement(data_dir: Path, mode: Mode) -> AgreementReport:
    inputs = read_inputs(data_dir / INPUTS_FILE)
    labels_path = data_dir / LABEL_FILES[mode]
    labels = read_labels(labels_path)
    return compare_with_labels(inputs, labels, mode, labels_path)


def compare_with_labels(
    inputs: dict[str, tuple[int, PromptInstructions]],
    labels: list[LabelledResponse],
    mode: Mode,
    labels_path: Path,
) -> AgreementReport:
    tally = _Tally()
    for index, labelled in enumerate(labels, start=1):
        line, item = _matching_input(inputs, labelled, labels_path, index)
        results = check_response(
            item.instruction_id_list, item.kwargs, item.prompt, labelled.response, mode=mode
        )
        verdicts = [r.followed for r in results]
        tally.prompts.add(all(labelled.follow_instruction_list), all(verdicts))
        pairs = zip(results, labelled.follow_instruction_list, strict=True)
        for result, label in pairs:
            tally.add(line, result, label)
    return _report(mode, tally)


class _Tally:
    def __init__(self) -> None:
        self.prompts = Confusion()
        self.confusions: dict[str, Confusion] = defaultdict(Confusion)
        self.disagreements: list[Disagreement] = []
        self.exclusions: list[Exclusion] = []

    def add(self, line: int, result: InstructionResult, label: bool) -> None:
        quirk = ifeval_label_quirk(result.instruction_id, result.kwargs)
        if quirk is not None:
            self.exclusions.append(
                Exclusion(input_line=line, instruction_id=result.instruction_id, reason=quirk)
            )
            _ = self.confusions[result.instruction_id]  # the id still gets a row
            return
        self.confusions[result.instruction_id].add(label, result.followed)
        if label != result.followed:
            self.disagreements.append(
                Disagreement(
                    input_line=line,
                    instruction_id=result.instruction_id,
                    label=label,
                    assay_reason=result.reason,
                )
            )


def _matching_input(
    inputs: dict[str, tuple[int, PromptInstructions]],
    labelled: LabelledResponse,
    labels_path: Path,
    line: int,
) -> tuple[int, PromptInstructions]:
    found = inputs.get(labelled.prompt)
    if found is None:
        raise InputError(
            "no prompt in the inputs file matches", path=labels_path, line=line, field="prompt"
        )
    if found[1].instruction_id_list != labelled.instruction_id_list:
        raise InputError(
            "instruction ids differ from the inputs file's",
            path=labels_path,
            line=line,
            field="instruction_id_list",
        )
    return found


def _report(mode: Mode, tally: _Tally) -> AgreementReport:
    covered = set(covered_instruction_ids())
    excluded = Counter(e.instruction_id for e in tally.exclusions)
    rows = [
        AgreementRow(
            instruction_id=instruction_id,
            count=confusion.total,
            excluded=excluded[instruction_id],
            agreement=_ratio(confusion.agreed, confusion.total),
            kappa=confusion.kappa,
            confusion=confusion,
            covered=instruction_id in covered,
        )
        for instruction_id, confusion in sorted(tally.confusions.items())
    ]
    overall = Confusion()
    for row in rows:
        overall = overall.plus(row.confusion)
    covered_rows = [r for r in rows if r.covered]
    covered_total = sum(r.count for r in covered_rows)
    return AgreementReport(
        mode=mode,
        prompts=tally.prompts.total,
        instructions=overall.total,
        instruction_accuracy=_ratio(overall.agreed, overall.total),
        instruction_kappa=overall.kappa,
        instruction_confusion=overall,
        prompt_accuracy=_ratio(tally.prompts.agreed, tally.prompts.total),
        prompt_kappa=tally.prompts.kappa,
        prompt_confusion=tally.prompts,
        covered_instruction_accuracy=_ratio(
            sum(r.confusion.agreed for r in covered_rows), covered_total
        ),
        rows=rows,
        disagreements=tally.disagreements,
        exclusions=tally.exclusions,
    )


def _ratio(part: int, whole: int) -> float | None:
    # an agreement over nothing compared is undefined, not 0%: an id whose instances were all
    # excluded would otherwise read as "0.0%", a checker that always disagrees
    return part / whole if whole else None


def render_markdown(reports: list[AgreementReport]) -> str:
    """One table: a row per instruction id, columns per mode (count, agreement, confusion)."""
    by_mode = {report.mode: {row.instruction_id: row for row in report.rows} for report in reports}
    modes = [report.mode for report in reports]
    header = "| instruction id | n | " + " | ".join(
        f"{m} agreement | {m} kappa | {m} confusion (FF/FN/NF/NN)" for m in modes
    )
    lines = [header + " | covered |", "|" + "---|" * (2 + 3 * len(modes) + 1)]
    ids = sorted({i for rows in by_mode.values() for i in rows})
    for instruction_id in ids:
        cells = []
        for mode in modes:
            row = by_mode[mode].get(instruction_id)
            cells.append(_cells(row))
        first = next(by_mode[m][instruction_id] for m in modes if instruction_id in by_mode[m])
        covered = "yes" if first.covered else "no"
        n = f"{first.count}" + (f" (+{first.excluded} excluded)" if first.excluded else "")
        lines.append(f"| `{instruction_id}` | {n} | " + " | ".join(cells) + f" | {covered} |")
    lines.append("")
    lines.extend(_summary(report) for report in reports)
    lines.append("")
    lines.append(
        "Confusion: FF = both followed, FN = IFEval followed / assay not, NF = assay followed / "
        "IFEval not, NN = neither. Kappa: Cohen's (two classes, so weighted kappa is the same); "
        "n/a where both sides give one class only. Agreement: n/a where nothing was compared."
        f" Agreement marked ✓ when >= {TARGET:.0%}. Excluded: "
        "instructions whose IFEval label is not about the instruction as written "
        "(see `ifeval_label_quirk`); prompt-level accuracy still counts them."
    )
    return "\n".join(lines) + "\n"


def _cells(row: AgreementRow | None) -> str:
    if row is None:
        return "- | - | -"
    mark = " ✓" if row.meets_target else ""
    return f"{_percent(row.agreement)}{mark} | {_kappa(row.kappa)} | {row.confusion.matrix()}"


def _kappa(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _summary(report: AgreementReport) -> str:
    return (
        f"- {report.mode}: {report.prompts} prompts, {report.instructions} instructions. "
        f"Instruction level: accuracy {_percent(report.instruction_accuracy)} "
        f"(covered ids only {_percent(report.covered_instruction_accuracy)}), "
        f"kappa {_kappa(report.instruction_kappa)}, "
        f"confusion {report.instruction_confusion.matrix()}. "
        f"Prompt level (follows all): accuracy {_percent(report.prompt_accuracy)}, "
        f"kappa {_kappa(report.prompt_kappa)}, confusion {report.prompt_confusion.matrix()}."
    )
