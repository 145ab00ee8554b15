"""Values shared by the instruction checkers: results, the checker signature, kwargs access."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from ..errors import InputError

Mode = Literal["strict", "loose"]
MODES: tuple[Mode, ...] = ("strict", "loose")

# IFEval writes comparisons as words; these are the two it uses.
Relation = Literal["less than", "at least"]
RELATIONS: tuple[Relation, ...] = ("less than", "at least")


class CheckResult(BaseModel):
    """One checker's verdict on one response, with a reason a person can verify by reading."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    followed: bool
    reason: str


class InstructionResult(BaseModel):
    """The verdict for one instruction of one prompt, as :func:`check_response` returns it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    instruction_id: str
    kwargs: dict[str, Any]
    mode: Mode
    followed: bool
    reason: str
    covered: bool  # False: the id has a checker, but its agreement with IFEval is below target


class InstructionChecker(Protocol):
    def __call__(self, response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult: ...


def passed(reason: str) -> CheckResult:
    return CheckResult(followed=True, reason=reason)


def failed(reason: str) -> CheckResult:
    return CheckResult(followed=False, reason=reason)


def verdict(ok: bool, reason: str) -> CheckResult:
    return CheckResult(followed=ok, reason=reason)


def kwargs_error(name: str, message: str) -> InputError:
    return InputError(message, field=f"kwargs.{name}")


def require_int(kwargs: Mapping[str, Any], name: str, *, minimum: int = 0) -> int:
    value = kwargs.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise kwargs_error(name, f"expected an integer, got {value!r}")
    if value < minimum:
        raise kwargs_error(name, f"expected an integer >= {minimum}, got {value}")
    return value


def require_str(kwargs: Mapping[str, Any], name: str, *, allow_empty: bool = False) -> str:
    value = kwargs.get(name)
    if not isinstance(value, str):
        raise kwargs_error(name, f"expected a string, got {value!r}")
    if not allow_empty and not value.strip():
        raise kwargs_error(name, "expected a non-empty string")
    return value


def require_str_list(kwargs: Mapping[str, Any], name: str) -> list[str]:
    value = kwargs.get(name)
    if not isinstance(value, list) or not value:
        raise kwargs_error(name, f"expected a non-empty list of strings, got {value!r}")
    if not all(isinstance(item, str) and item.strip() for item in value):
        raise kwargs_error(name, f"expected only non-empty strings, got {value!r}")
    return list(value)


def require_relation(kwargs: Mapping[str, Any], name: str) -> Relation:
    value = kwargs.get(name)
    for relation in RELATIONS:
        if value == relation:
            return relation
    raise kwargs_error(name, f"expected one of {list(RELATIONS)}, got {value!r}")


def compare(count: int, relation: Relation, target: int) -> bool:
    return count < target if relation == "less than" else count >= target


def reject_unknown(kwargs: Mapping[str, Any], allowed: frozenset[str]) -> None:
    """IFEval's files carry ``null`` for kwargs an instruction does not use; those are ignored."""
    unknown = sorted(k for k, v in kwargs.items() if v is not None and k not in allowed)
    if unknown:
        expected = ", ".join(sorted(allowed)) or "none"
        raise kwargs_error(unknown[0], f"unexpected argument (this instruction takes: {expected})")
