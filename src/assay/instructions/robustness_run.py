"""A robustness result as a run directory: what ``assay report`` shows and a reader audits.

``RUN/run.json`` (kind ``robustness``: the command, the settings, assay's version),
``summary.json`` (:class:`RobustnessSummary`), ``verdicts.jsonl`` (one :class:`OutputCheck` per
output: its prompt, its text, every instruction's verdict and reason), ``labels.jsonl`` (the
verdicts as judge labels, :func:`checker_labels`; with draws ``labels-draw-K.jsonl``, one per
draw), ``robustness.md`` (the tables) and ``plots/`` (:mod:`.robustness_plots`). The result
is a function of its inputs: writing it again replaces the files, and removes the label files
and plots the new result has none of.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..data.questions import DRAW_LABELS_GLOB, LABELS_FILE, draw_labels_file
from ..errors import InputError, describe_problem, field_path
from ..runs import (
    RunDirLock,
    RunKind,
    RunLog,
    RunLogger,
    check_run_kind,
    read_numbered_jsonl,
    write_atomic,
)
from .robustness import OutputCheck, RobustnessSummary, checker_labels
from .robustness_plots import EFFECTS_FILE, NOISE_FILE, write_robustness_plots
from .robustness_tables import summary_markdown

KIND: RunKind = "robustness"
SUMMARY_FILE = "summary.json"
VERDICTS_FILE = "verdicts.jsonl"
TABLES_FILE = "robustness.md"
PLOTS_FOLDER = "plots"


def write_robustness_run(
    run_dir: Path,
    summary: RobustnessSummary,
    checks: Sequence[OutputCheck],
    config: dict[str, Any],
) -> list[Path]:
    """Write the run directory (refusing one that holds another kind of run, or is being
    written); returns the files written."""
    check_run_kind(run_dir, KIND, option="--out", needs_log=False)
    with RunDirLock(run_dir):
        log = RunLog(kind=KIND, sample_count=len(checks), config=config)
        logger = RunLogger(run_dir, log)
        contents = {
            SUMMARY_FILE: summary.model_dump_json(indent=2) + "\n",
            VERDICTS_FILE: "".join(c.model_dump_json() + "\n" for c in checks),
            **_label_files(checks, len(summary.draws)),
            TABLES_FILE: summary_markdown(summary),
        }
        for stale in [run_dir / LABELS_FILE, *run_dir.glob(DRAW_LABELS_GLOB)]:
            stale.unlink(missing_ok=True)  # the labels of an earlier result, draws or not
        for name, text in contents.items():
            write_atomic(run_dir / name, text)
        plots = _replace_plots(summary, run_dir / PLOTS_FOLDER)
        logger.finish("success", finished_count=len(checks))
    return [*(run_dir / name for name in contents), *plots]


def read_output_checks(path: Path) -> list[OutputCheck]:
    """A verdicts file, each line validated: a located InputError names the line and field."""
    if not path.is_file():
        raise InputError("the run has no verdicts file", path=path)
    checks = []
    for number, data in read_numbered_jsonl(path):
        try:
            checks.append(OutputCheck.model_validate(data))
        except ValidationError as error:
            first = error.errors()[0]
            raise InputError(
                describe_problem(first), path=path, line=number, field=field_path(first["loc"])
            ) from None
    return checks


def _label_files(checks: Sequence[OutputCheck], draws: int) -> dict[str, str]:
    """labels.jsonl; with draws, a file per draw (``labels-draw-K.jsonl``), since every draw
    answers the same cells under the same output ids, as a judge run on one draw sees them."""
    if not draws:
        return {LABELS_FILE: _label_lines(checks)}
    return {
        draw_labels_file(draw): _label_lines([c for c in checks if c.draw == draw])
        for draw in range(1, draws + 1)
    }


def _label_lines(checks: Sequence[OutputCheck]) -> str:
    return "".join(json.dumps(label) + "\n" for label in checker_labels(checks))


def _replace_plots(summary: RobustnessSummary, folder: Path) -> list[Path]:
    for name in (EFFECTS_FILE, NOISE_FILE):
        (folder / name).unlink(missing_ok=True)
    return write_robustness_plots(summary, folder)
