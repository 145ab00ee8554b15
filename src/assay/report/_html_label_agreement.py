"""A judge run's agreement with labels in its report, as `assay judge agreement` last wrote it
(``RUN/agreement.json``; for a directory of draws, the draws' agreement together)."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from ..errors import InputError
from ..judge.agreement import (
    AGREEMENT_FILE,
    AgreementReport,
    agreement_table,
    judge_differences_table,
    labels_head,
    length_preference_table,
    slice_tables,
)
from ..judge.draws_agreement import (
    DrawsAgreementReport,
    draws_agreement_table,
    draws_labels_head,
    median_curve_table,
)
from ..tables import Table
from ._html_common import read_json_file

RERUN = "`assay judge agreement RUN --labels ...` writes it again"


def label_agreement_tables(run_dir: Path, notes: list[str], *, draws: bool) -> list[Table]:
    """The table of ``RUN/agreement.json``, if the run has one; a damaged file costs its table
    (a note names it), not the report. The file is not recomputed with the report, so the
    table says when it was made: rerun the command after the run gains evaluations."""
    path = run_dir / AGREEMENT_FILE
    if not path.is_file():
        return []
    try:
        data = read_json_file(path)
        if draws:
            over_draws = DrawsAgreementReport.model_validate(data)
            table, head = draws_agreement_table(over_draws), draws_labels_head(over_draws)
            head += "".join(f"; {note}" for note in over_draws.notes)
            curve = median_curve_table(over_draws)
            sliced: list[Table] = [curve] if curve.rows else []
        else:
            one = AgreementReport.model_validate(data)
            table, head = agreement_table(one), labels_head(one)
            sliced = slice_tables(one)
            if one.length_preference:
                sliced.insert(0, length_preference_table(one))
            if one.judge_differences:
                sliced.insert(0, judge_differences_table(one))
    except (InputError, ValidationError) as error:
        problem = str(error).splitlines()[0]
        notes.append(f"agreement with labels left out: {path}: {problem}; {RERUN}")
        return []
    table.note = f"{head}. From {AGREEMENT_FILE}, as `assay judge agreement` last wrote it"
    return [table, *sliced]
