"""The errors assay raises, in one place.

AssayError                 base class; the CLI prints its message and exits non-zero
├── ConfigError            a bad option, an unknown provider, a missing model file, ...
├── InputError             bad input data; names the file, the line and the field
└── RunError               a run directory that cannot be used (other fingerprint, ...)

A model call that fails is *not* an exception: it comes back from the model layer as a
:class:`assay.model.CallFailure` value so that one failed call never stops a whole run.
"""

from __future__ import annotations

from pathlib import Path


class AssayError(Exception):
    """Base class. ``hint`` says how to fix the problem, when there is a known fix."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if self.hint is None else f"{self.message}\n  hint: {self.hint}"


class ConfigError(AssayError):
    """A setting, option or model name that cannot work."""


class RunError(AssayError):
    """A run directory that cannot be created, resumed or extended."""


class InputError(AssayError):
    """Bad input data, located as precisely as possible."""

    def __init__(
        self,
        message: str,
        *,
        path: Path | str | None = None,
        line: int | None = None,
        field: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.path = None if path is None else str(path)
        self.line = line
        self.field = field
        super().__init__(_locate(message, self.path, line, field), hint=hint)
        self.reason = message


def _locate(message: str, path: str | None, line: int | None, field: str | None) -> str:
    where = ""
    if path is not None:
        where = path if line is None else f"{path}:{line}"
    if field is not None:
        where = f"{where} field '{field}'" if where else f"field '{field}'"
    return f"{where}: {message}" if where else message
