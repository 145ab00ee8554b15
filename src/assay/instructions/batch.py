"""Checking a file of responses against the instructions of their prompts."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..errors import InputError
from .ifeval_data import PromptInstructions, PromptResponse, read_inputs, read_responses
from .registry import check_response
from .types import InstructionResult, Mode


class ResponseCheck(BaseModel):
    """All instruction verdicts for one response (one line of the responses file)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    line: int
    key: int | None
    prompt: str
    mode: Mode
    follow_all_instructions: bool
    results: list[InstructionResult]


class CheckSummary(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    responses: int
    prompt_level: float  # share of responses that follow all their instructions
    instruction_level: float
    followed_by_id: dict[str, tuple[int, int]]  # id -> (followed, total)


class CheckedFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    checks: list[ResponseCheck]
    # Lines of responses whose prompt is not in the inputs file. They are skipped, as IFEval's
    # own evaluation skips them (its GPT-4 file has one: a reworded Shinto-shrine prompt).
    unmatched_lines: list[int]


def check_responses_file(responses_path: Path, inputs_path: Path, mode: Mode) -> CheckedFile:
    inputs = read_inputs(inputs_path)
    checks: list[ResponseCheck] = []
    unmatched: list[int] = []
    for item in read_responses(responses_path):
        if item.prompt not in inputs:
            unmatched.append(item.line)
            continue
        checks.append(_check_one(item, inputs[item.prompt], inputs_path, mode))
    return CheckedFile(checks=checks, unmatched_lines=unmatched)


def _check_one(
    item: PromptResponse,
    found: tuple[int, PromptInstructions],
    inputs_path: Path,
    mode: Mode,
) -> ResponseCheck:
    input_line, instructions = found
    try:
        results = check_response(
            instructions.instruction_id_list,
            instructions.kwargs,
            instructions.prompt,
            item.response,
            mode=mode,
        )
    except InputError as error:  # a bad instruction or kwarg: point at the inputs file
        raise InputError(
            error.reason, path=inputs_path, line=input_line, field=error.field, hint=error.hint
        ) from None
    return ResponseCheck(
        line=item.line,
        key=instructions.key,
        prompt=item.prompt,
        mode=mode,
        follow_all_instructions=all(r.followed for r in results),
        results=results,
    )


def summarize(checks: list[ResponseCheck]) -> CheckSummary:
    followed: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for check in checks:
        for result in check.results:
            total[result.instruction_id] += 1
            followed[result.instruction_id] += result.followed
    instructions = sum(total.values())
    return CheckSummary(
        responses=len(checks),
        prompt_level=sum(c.follow_all_instructions for c in checks) / len(checks)
        if checks
        else 0.0,
        instruction_level=sum(followed.values()) / instructions if instructions else 0.0,
        followed_by_id={i: (followed[i], total[i]) for i in sorted(total)},
    )
