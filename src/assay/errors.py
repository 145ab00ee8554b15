"""The errors assay raises, in one place.

AssayError                 base class; the CLI prints its message and exits non-zero
├── ConfigError            a bad option, an unknown provider, a missing model file, ...
├── InputError             bad input data; names the file, the line and the field
├── RunError               a run directory that cannot be used (other fingerprint, ...)
└── ExecutorError          work the executor lost after every retry (a Ray worker that died),
                           or an error not assay's own raised on another Ray node

A model call that fails is *not* an exception: it comes back from the model layer as a
:class:`assay.model.CallFailure` value so that one failed call never stops a whole run.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Characters of a value an error message echoes; a longer one is cut with an ellipsis.
SHOWN_CHARS = 80
#: Characters an error message holds at most (a backstop for values echoed in full).
MESSAGE_CHARS = 2000


def shown(value: Any, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` as error messages echo a value: at most ``limit`` characters, a longer
    one cut with an ellipsis and its length (``'aaaa…' (20,000,000 characters)``)."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return repr(value)
    return f"{text[:limit]!r}… ({len(text):,} characters)"


def type_name(value: Any) -> str:
    """A value's type as error messages name it: ``null`` for None, as in the JSON it came
    from, else the Python type (``got list``)."""
    return "null" if value is None else type(value).__name__


def kind_name(kind: type) -> str:
    """The JSON a field must hold, as error messages name it (``expected a string``); any
    mapping is ``an object``."""
    return _KIND_NAMES.get(kind, "an object")


_KIND_NAMES: dict[type, str] = {
    str: "a string",
    int: "an integer",
    bool: "true or false",
    list: "a list",
}


def shorten_message(message: str, limit: int = MESSAGE_CHARS) -> str:
    """A message of at most about ``limit`` characters: its middle left out when longer."""
    if len(message) <= limit:
        return message
    head, tail = message[: limit * 3 // 4], message[-limit // 4 :]
    return f"{head} … ({len(message) - len(head) - len(tail):,} characters left out) … {tail}"


def field_path(loc: Any) -> str:
    """A pydantic error location as a field name: ``thresholds.pass_min``, ``variants[0].text``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def validation_problems(error: Any) -> list[Any]:
    """The problems of a pydantic ValidationError, unknown keys first: a misspelt key
    (``inputs:``) is both an unknown key and a missing one (``input``), and only the unknown
    one names the typo. A list too short only because its bad items were dropped is left out:
    pydantic counts it "after validation", so one bad item of a one-item list would also read
    as an empty list, which the file does not hold."""
    problems = error.errors()
    kept = [item for item in problems if not _short_after_dropping_items(item, problems)]
    return sorted(kept, key=lambda item: item.get("type") != "extra_forbidden")


def _short_after_dropping_items(item: Any, problems: list[Any]) -> bool:
    """A "too short" list with a problem of its own items among ``problems``."""
    if item.get("type") != "too_short":
        return False
    loc = tuple(item.get("loc", ()))
    inner = (tuple(other.get("loc", ())) for other in problems)
    return any(len(other) > len(loc) and other[: len(loc)] == loc for other in inner)


def describe_validation(
    error: Any, where: str, line_of: Callable[[tuple[Any, ...]], int | None] | None = None
) -> str:
    """A pydantic ValidationError of the file (or setting) ``where``: one line per problem,
    unknown keys first, ``FILE:3 field 'thresholds.pass_min': Input should be a valid
    integer`` (the line when ``line_of`` finds the field's); the lines after the first start
    with ``error:`` as the first one does when the command prints it."""
    lines = []
    for item in validation_problems(error):
        loc = tuple(item.get("loc", ()))
        line = line_of(loc) if line_of is not None and loc else None
        located = where if line is None else f"{where}:{line}"
        if field := field_path(loc):  # FILE:3 field 'x', as InputError says; FILE: field 'x'
            located += f" field '{field}'" if line else f": field '{field}'"
        lines.append(f"{located}: {describe_problem(item)}")
    return "\nerror: ".join(lines)


def yaml_problem(error: Any) -> str:
    """A YAML parser error in one line: ``line 3, column 5: could not find expected ':'``."""
    line = yaml_line(error)
    where = "" if line is None else f"line {line}, "
    return f"{where}{_yaml_problem_at_column(error)}"


def yaml_line(error: Any) -> int | None:
    """The line (1-based) a YAML parser error points at, if it points anywhere."""
    mark = getattr(error, "problem_mark", None)
    return None if mark is None or getattr(error, "problem", None) is None else mark.line + 1


def yaml_input_error(error: Any, path: Path | str, what: str) -> InputError:
    """``FILE:LINE: WHAT: column 5: could not find expected ':'``: a YAML error as one
    located line, not the parser's multi-line dump of the text around it."""
    return InputError(f"{what}: {_yaml_problem_at_column(error)}", path=path, line=yaml_line(error))


def _yaml_problem_at_column(error: Any) -> str:
    problem = getattr(error, "problem", None)
    mark = getattr(error, "problem_mark", None)
    if problem is None:
        return " ".join(str(error).split())
    return problem if mark is None else f"column {mark.column + 1}: {problem}"


def describe_problem(item: Any) -> str:
    """One problem of a pydantic ValidationError (an item of ``errors()``) as a message: no
    ``Value error, `` prefix, a NaN or an infinity named as such, long values cut."""
    value = item.get("input")
    if isinstance(value, float) and not math.isfinite(value):
        # pydantic names the bound a NaN fails ("less than or equal to 1"), not the NaN
        return f"{_spelled(value)} is not a number assay accepts (give a finite number)"
    message = str(item.get("msg", ""))
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    return shorten_message(message, limit=MESSAGE_CHARS // 2)


def _spelled(value: float) -> str:
    """A non-finite float as JSON readers and the docs spell it."""
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


class AssayError(Exception):
    """Base class. ``hint`` says how to fix the problem, when there is a known fix."""

    exit_code = 2  # the CLI's exit code for it (docs/errors.md): bad input, nothing written

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        message = shorten_message(message)
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if self.hint is None else f"{self.message}\n  hint: {self.hint}"


class ConfigError(AssayError):
    """A setting, option or model name that cannot work."""


class RunError(AssayError):
    """A run directory that cannot be created, resumed or extended."""


class ExecutorError(AssayError):
    """Work the executor lost and could not get back by retrying it (a Ray worker that died,
    a task killed for lack of memory), or an error that is not assay's own raised on another
    Ray node (named in the message). Unlike the others this comes mid-run: what finished is
    kept, and running the same command again resumes."""

    exit_code = 1


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
