"""Checking a file of responses against the instructions of their prompts."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..errors import InputError
from .ifeval_data import PromptInstructions, PromptResponse, read_inputs, read_responses
from .registry import check_kwargs, check_response
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
    refuse_bad_instructions(inputs, inputs_path)
    checks: list[ResponseCheck] = []
    unmatched: list[int] = []
    for item in read_responses(responses_path):
        if item.prompt not in inputs:
            unmatched.append(item.line)
            continue
        checks.append(_check_one(item, inputs[item.prompt], inputs_path, mode))
    return CheckedFile(checks=checks, unmatched_lines=unmatched)


def refuse_bad_instructions(
    inputs: dict[str, tuple[int, PromptInstructions]], inputs_path: Path
) -> None:
    """Every line of the inputs file is checked, not only those a response asks for: a bad
    instruction is bad input whether or not this responses file reaches it, as a bad record
    stops `bench run` however many records it runs."""
    for input_line, instructions in sorted(inputs.values(), key=lambda found: found[0]):
        try:
            check_kwargs(instructions.instruction_id_list, instructions.kwargs, instructions.prompt)
        except InputError as error:
            raise _at_inputs_line(error, inputs_path, input_line) from None


def _at_inputs_line(error: InputError, inputs_path: Path, input_line: int) -> InputError:
    """A bad instruction or kwarg, pointed at its line of the inputs file."""
    return InputError(
        error.reason, path=inputs_path, line=input_line, field=error.field, hint=error.hint
    )


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
    except InputError as error:
        raise _at_inputs_line(error, inputs_path, input_line) from None
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
