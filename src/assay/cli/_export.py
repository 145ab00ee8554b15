"""``assay export RUN``: a run's rows as CSV, Parquet or JSONL (one per example, claim check
or evaluation), or a judge archive in the per-file layout."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..report.export import ExportFormat

HELP = "a run's results as CSV, Parquet or JSONL rows (for pandas, spreadsheets, papers)"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "export",
        help=HELP,
        description="One row per example of a bench run (--claims: per claim check), per "
        "evaluation of a judge run, or per output of an instruction-robustness run (--claims: "
        "per instruction verdict), with ids, labels, scores, flags, the gold label and its "
        "source, cost, and the records' meta as meta.KEY columns.",
    )
    parser.add_argument(
        "run", type=Path, help="a run directory (bench, judge or instruction robustness)"
    )
    parser.add_argument(
        "--format",
        choices=("csv", "parquet", "jsonl", "files"),
        help="default: the one the --out suffix names (.csv, .jsonl, .parquet), else csv (also "
        "on stdout); a --format the suffix contradicts is refused. files: a judge run's archive "
        "in the one-JSON-file-per-evaluation layout, written to the directory --out",
    )
    parser.add_argument(
        "--out", type=Path, help="file (directory for --format files) to write; default: stdout"
    )
    parser.add_argument(
        "--claims",
        action="store_true",
        help="bench runs: one row per claim check; instruction-robustness runs: one row per "
        "instruction verdict",
    )
    parser.add_argument(
        "--spreadsheet",
        action="store_true",
        help="CSV to open in a spreadsheet: a text cell starting with = + - @ (which a "
        "spreadsheet would run as a formula) gets a leading apostrophe; numbers are unchanged",
    )
    parser.set_defaults(handler=_export)


def _export(args: argparse.Namespace) -> int:
    from ..report.export import UnreadableEvaluations, export_run, load_run
    from ..runs import check_not_being_written
    from ._common import check_out_file

    check_not_being_written(args.run)  # a run still being written would export in part
    if args.format == "files":
        return _export_files(args.run, args.out)
    check_out_file(args.out)  # first: replacing a file the run keeps is the worse mistake
    fmt = _row_format(args.format, args.out)
    if args.spreadsheet and fmt != "csv":
        from ..errors import ConfigError

        raise ConfigError(f"--spreadsheet applies to CSV; the format here is {fmt}")
    with warnings.catch_warnings():  # said once below, in the CLI's own words
        warnings.simplefilter("ignore", UnreadableEvaluations)
        run = load_run(args.run)
    judged = [run] if run.kind == "judge" else run.draws if run.kind == "judge-draws" else []
    for judge_run in judged:  # each draw's archive is its own
        from ..report._html_judge import warn_unreadable

        warn_unreadable(judge_run.path, judge_run.unreadable, "export")
    if args.claims and run.kind in ("judge", "judge-draws"):
        print("note: --claims applies to bench runs; one row per evaluation", file=sys.stderr)
    out, count = export_run(run, fmt, args.out, claims=args.claims, spreadsheet=args.spreadsheet)
    if out is not None:
        print(f"wrote {count} rows to {out}", file=sys.stderr)
    return 0


_SUFFIX_FORMATS: dict[str, ExportFormat] = {".csv": "csv", ".jsonl": "jsonl", ".parquet": "parquet"}


def _row_format(given: ExportFormat | None, out: Path | None) -> ExportFormat:
    """``--format``, or the one ``--out``'s suffix names (csv for any other name and for
    stdout). A ``--format`` the suffix contradicts is refused: CSV text in ``q.parquet`` is
    a file no Parquet reader opens, and nothing would say so."""
    from ..errors import ConfigError

    named = None if out is None else _SUFFIX_FORMATS.get(out.suffix.lower())
    if given is None:
        return named or "csv"
    if named is not None and named != given:
        raise ConfigError(
            f"--format {given} contradicts --out {out}, whose suffix names {named}",
            hint=f"leave out --format to write {named}, or give --out a name that ends in .{given}",
        )
    return given


def _export_files(run_dir: Path, out: Path | None) -> int:
    from ..errors import ConfigError
    from ..judge.archive import PROTOCOL_FILE, export_per_file
    from ._common import check_run_dir

    if out is None:
        raise ConfigError("--format files needs --out DIR")
    check_run_dir(out, "--out")
    if not (run_dir / PROTOCOL_FILE).is_file():
        raise ConfigError(f"{run_dir}: --format files takes a judge run (no {PROTOCOL_FILE})")
    count = export_per_file(run_dir, out)
    print(f"wrote {count} evaluation files to {out}", file=sys.stderr)
    return 0
