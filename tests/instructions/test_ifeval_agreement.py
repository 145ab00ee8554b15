"""On IFEval's own data: every id assay claims to cover agrees with IFEval's labels >= 95%."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.instructions import Mode, covered_instruction_ids, measure_agreement
from assay.instructions.agreement import TARGET, render_markdown


@pytest.mark.parametrize("mode", ["strict", "loose"])
def test_every_covered_id_meets_the_target(shared_data: Path, mode: Mode) -> None:
    report = measure_agreement(shared_data / "ifeval", mode)
    rows = {row.instruction_id: row for row in report.rows}
    covered = covered_instruction_ids()
    assert len(covered) >= 20
    # an id with nothing compared (agreement None) is below the target too, and named as such
    below = {
        i: "nothing compared" if agreement is None else f"{agreement:.1%} of {rows[i].count}"
        for i in covered
        if (agreement := rows[i].agreement) is None or agreement < TARGET
    }
    assert not below, f"covered ids below {TARGET:.0%} agreement ({mode}): {below}"
    assert all(rows[i].count >= 10 for i in covered)
    assert report.prompts == 540
    assert report.instructions + sum(r.excluded for r in report.rows) == 832
    accuracy = report.covered_instruction_accuracy
    assert accuracy is not None and accuracy >= TARGET


def test_table_marks_targets_and_uncovered_ids(shared_data: Path) -> None:
    table = render_markdown([measure_agreement(shared_data / "ifeval", "strict")])
    assert "| `punctuation:no_comma` | 66 |" in table
    assert "✓" in table
    assert "| no |" in table  # english_capital is listed, as not covered
    assert "+2 excluded" in table  # letter_frequency on '#' and '!'
