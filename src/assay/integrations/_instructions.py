"""What the instruction checks inside other tools share: a sample's IFEval instructions read
from the tool's own fields, checked, and explained one instruction per line.

Imports no other tool, so every integration can use it (promptfoo loads its file by path, so
the imports here are absolute).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.errors import InputError
from assay.instructions import MODES, InstructionResult, Mode, check_response


def instruction_mode(value: object, name: str = "mode") -> Mode:
    """``value`` as a checking mode, refused (naming ``name``) unless strict or loose: a tool
    refuses it when the check is set up, not at its first sample."""
    if value not in MODES:
        raise ValueError(f"{name} must be one of {list(MODES)}, got {value!r}")
    return value


def check_instructions(
    instructions: Any,
    arguments: Any,
    *,
    prompt: str,
    response: str,
    mode: Mode,
    fields: tuple[str, str],
) -> list[InstructionResult]:
    """Each instruction's verdict on ``response``. ``fields`` name where the ids and their
    arguments came from (``("metadata.instruction_id_list", "metadata.kwargs")``): a
    ValueError names them, and the id or argument at fault, when they cannot be checked.
    Arguments may be None when no instruction takes any."""
    if not isinstance(instructions, list) or not instructions:
        got = "none" if instructions is None else type(instructions).__name__
        raise ValueError(f"{fields[0]}: expected a non-empty list of instruction ids, got {got}")
    try:
        return check_response(
            instructions,
            [{}] * len(instructions) if arguments is None else arguments,
            prompt,
            response,
            mode=mode,
        )
    except InputError as error:
        raise ValueError(f"{_located(error.field, fields)}: {error.reason}") from None


def _located(field: str | None, fields: tuple[str, str]) -> str:
    """The checker's field (``instruction_id_list[0]``, ``kwargs[1].relation``) under the
    names the tool's sample gives them."""
    ids_field, kwargs_field = fields
    if field is None:
        return kwargs_field
    for own, given in (("instruction_id_list", ids_field), ("kwargs", kwargs_field)):
        if field.startswith(own):
            return given + field.removeprefix(own)
    return field


def instructions_explanation(verdicts: Sequence[InstructionResult], mode: Mode) -> str:
    """How many instructions were followed, then each one's verdict and reason."""
    followed = sum(verdict.followed for verdict in verdicts)
    lines = [f"{followed} of {len(verdicts)} instructions followed ({mode})"]
    for verdict in verdicts:
        state = "followed" if verdict.followed else "not followed"
        lines.append(f"{verdict.instruction_id}: {state}: {verdict.reason}")
    return "\n".join(lines)
