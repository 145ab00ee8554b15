"""Labels of the user's own for datasets that carry none (``deepeval``, ``ragas``).

One field of each row, named by ``--error-field PATH`` (true = the output has a grounding
error) or ``--grounded-field PATH`` (true = grounded), dotted for a nested one
(``additional_metadata.hallucinated``). The field holds true or false (JSON's booleans, or the text
``true``/``false`` in any case, as a CSV cell holds them), or, with
``--error-value VALUE`` (once or more), a category: those values mean an error, any other value
grounded. A row
without the field is unlabelled; a name that no kept row has, and an error value that no row
holds, are refused as the misspellings they most likely are.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import InputError
from ..records import GroundedQARecord
from ._common import Row, RowReader, field_value


@dataclass(frozen=True)
class LabelField:
    """A field of the user's own as the label: ``path`` into the row; ``true_means_error`` says
    which way a boolean points; ``error_values`` (compared as text, ignoring case) make it a
    field of categories instead."""

    path: tuple[str, ...]
    true_means_error: bool
    error_values: tuple[str, ...] = ()

    @classmethod
    def parse(
        cls, text: str, *, true_means_error: bool, error_values: Sequence[str] = ()
    ) -> LabelField:
        path = tuple(text.split("."))
        if not all(part.strip() for part in path):
            raise ValueError(f"{text!r}: expected a field name, dotted for a nested one")
        if any(not value.strip() for value in error_values):
            raise ValueError("--error-value: expected a value that means an error")
        values = tuple(value.strip() for value in error_values)
        return cls(path=path, true_means_error=true_means_error, error_values=values)

    @property
    def name(self) -> str:
        return ".".join(self.path)

    @property
    def option(self) -> str:
        return "--error-field" if self.true_means_error else "--grounded-field"

    def describe(self) -> str:
        """The label convention in words, for the import report."""
        if self.error_values:
            named = " or ".join(repr(value) for value in self.error_values)
            return (
                f"field {self.name!r} = {named} -> grounding error (gold_error=true), "
                "any other value -> grounded, no value -> unlabelled"
            )
        error, grounded = ("true", "false") if self.true_means_error else ("false", "true")
        return (
            f"field {self.name!r} {error} -> grounding error (gold_error=true), {grounded} -> "
            "grounded, no value -> unlabelled"
        )

    def value(self, row: Row) -> Any:
        """The field's value in ``row`` (None where the row lacks it). A flat column whose
        name holds dots (a CSV header) is found as it is."""
        return field_value(row, self.path)[1]

    def read(self, reader: RowReader) -> bool | None:
        """The row's gold_error: None (unlabelled) where the row lacks the field."""
        value = self.value(reader.row)
        if value is None or value == "":
            return None
        if self.error_values:
            return label_text(value) in {error.lower() for error in self.error_values}
        flag = _boolean(value)
        if flag is None:
            shown = json.dumps(value, ensure_ascii=False)[:80]
            reader.fail(
                self.name,
                f"the label named by {self.option} must be true or false, got {shown} (a field "
                "of categories takes --error-value VALUE)",
                shape=False,
            )
        return flag if self.true_means_error else not flag

    def check_seen(self, records: Sequence[GroundedQARecord], path: Path) -> None:
        """Refuse a field no kept record has, and an error value no record holds: every
        record would be unlabelled, or grounded, without a word."""
        if records and all(record.gold_error is None for record in records):
            raise InputError(
                f"{self.option} {self.name}: no row has this field; the records would all be "
                "unlabelled",
                path=path,
                field=self.name,
            )
        if not self.error_values:
            return
        seen = Counter(
            label_text(value)
            for record in records
            # the field as the record's meta kept it, for the error's list of values
            if (value := self.value(record.meta or {})) is not None
        )
        for error in self._values_no_row_holds(records, seen):
            held = ", ".join(f"{value!r} ({count})" for value, count in seen.most_common(10))
            raise InputError(
                f"no row's {self.name!r} is {error!r} (--error-value)"
                + (f"; the field holds {held}" if held else ""),
                path=path,
                field=self.name,
            )

    def _values_no_row_holds(
        self, records: Sequence[GroundedQARecord], seen: Counter[str]
    ) -> list[str]:
        """The error values no record holds, each most likely a typo. Where the records' meta
        does not keep the field, only "no record is an error" can be told."""
        if not seen:
            return [] if any(record.gold_error for record in records) else [*self.error_values]
        return [error for error in self.error_values if error.lower() not in seen]


def label_text(value: Any) -> str:
    """A label as text, as a CSV cell holds it: JSON's true is ``true``, 1 is ``1``."""
    if isinstance(value, bool | int | float):
        value = json.dumps(value)
    return str(value).strip().lower()


def _boolean(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    text = value.strip().lower() if isinstance(value, str) else None
    return True if text == "true" else False if text == "false" else None
