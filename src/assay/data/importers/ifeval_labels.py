"""Programmatic ground truth for judge runs on IFEval: IFEval's own per-instruction pass/fail,
aggregated onto two dimensions of the judge protocol.

- ``INSTRUCTION_COMPLIANCE``: every instruction of the prompt.
- ``FORMAT_COMPLIANCE``: the format-type instructions only (:data:`FORMAT_PREFIXES`); prompts
  without one have no format ground truth (``None``), never a made-up pass.

Each dimension gets a 0-2 score on the protocol's scale: 2 = every counted instruction followed,
0 = none followed, 1 = some followed. A labels file is JSONL, one :class:`IFEvalLabel` per output,
keyed like the outputs manifest (question_id, prompt_variant, target_model, output_id).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...errors import InputError, describe_problem, field_path
from ._common import read_rows

FORMAT_PREFIXES = (
    "detectable_format:",
    "change_case:",
    "startend:",
    "punctuation:",
    "length_constraints:",
)
Dimension = Literal["INSTRUCTION_COMPLIANCE", "FORMAT_COMPLIANCE"]
Mode = Literal["strict", "loose"]


def is_format_instruction(instruction_id: str) -> bool:
    return instruction_id.startswith(FORMAT_PREFIXES)


class InstructionLabel(BaseModel):
    """One verifiable instruction of a prompt and whether IFEval's checker found it followed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    instruction_id: str
    kwargs: dict[str, Any] = Field(default_factory=dict)
    format: bool  # counts toward FORMAT_COMPLIANCE
    followed_strict: bool
    followed_loose: bool | None = None  # None when no loose results were imported


class DimensionTruth(BaseModel):
    """The ground truth of one protocol dimension for one output, in one IFEval mode."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    instructions: int = Field(ge=1)
    followed: int = Field(ge=0)
    score: int = Field(ge=0, le=2)  # 2 all followed, 1 some, 0 none

    @property
    def all_followed(self) -> bool:
        return self.followed == self.instructions


class IFEvalLabel(BaseModel):
    """IFEval's programmatic labels for one target output."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str
    prompt_variant: str
    target_model: str
    output_id: str
    ifeval_key: int
    instructions: tuple[InstructionLabel, ...] = Field(min_length=1)

    def truth(self, dimension: Dimension, mode: Mode = "strict") -> DimensionTruth | None:
        """The dimension's ground truth; None when no instruction counts toward it (or, for
        ``loose``, when no loose results were imported)."""
        counted = [
            item
            for item in self.instructions
            if dimension == "INSTRUCTION_COMPLIANCE" or item.format
        ]
        outcomes = [_outcome(item, mode) for item in counted]
        if not outcomes or None in outcomes:
            return None
        return dimension_truth([bool(outcome) for outcome in outcomes])


def dimension_truth(followed: Sequence[bool]) -> DimensionTruth:
    done = sum(followed)
    score = 2 if done == len(followed) else (0 if done == 0 else 1)
    return DimensionTruth(instructions=len(followed), followed=done, score=score)


def _outcome(item: InstructionLabel, mode: Mode) -> bool | None:
    return item.followed_strict if mode == "strict" else item.followed_loose


def load_ifeval_labels(path: Path) -> Iterator[IFEvalLabel]:
    """Read a labels file written by ``assay import ifeval``."""
    for line, row in read_rows(path, "IFEval labels"):
        try:
            yield IFEvalLabel.model_validate(row)
        except ValidationError as error:
            first = error.errors()[0]
            field = field_path(first["loc"]) or None
            raise InputError(describe_problem(first), path=path, line=line, field=field) from None
