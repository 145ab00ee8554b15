"""Checks as they run: each has a name, passed or not, the flag a failure carries, details."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from .protocol import ALL_FLAGS


class Check(BaseModel):
    """One check: its name, whether it passed, the flag a failure carries, and details."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    passed: bool
    flag: str | None = None
    detail: str = ""


class Findings:
    """Collects checks as they run."""

    def __init__(self) -> None:
        self.checks: list[Check] = []
        self.warnings: list[str] = []

    def check(self, name: str, passed: bool, flag: str, detail: str = "") -> bool:
        failed = not passed
        self.checks.append(
            Check(name=name, passed=passed, flag=flag if failed else None, detail=detail * failed)
        )
        return passed

    def fail(self, name: str, flag: str, detail: str = "") -> None:
        self.check(name, False, flag, detail)

    def flags(self) -> tuple[str, ...]:
        raised = {c.flag for c in self.checks if not c.passed}
        return tuple(flag for flag in ALL_FLAGS if flag in raised)
