"""``assay report RUN_DIR [RUN_DIR ...] [--out FILE]``: a self-contained HTML report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import ConfigError


def register(subparsers: Any) -> None:
    report = subparsers.add_parser(
        "report",
        help="write a self-contained HTML report of a run (several runs: side by side)",
        description="Write one HTML file that opens offline: metrics with intervals, plots, "
        "tables, and every example or evaluation, filterable and openable. One run directory "
        "gives RUN_DIR/report.html; several give a side-by-side comparison.",
    )
    report.add_argument("runs", type=Path, nargs="+", metavar="RUN_DIR", help="run directories")
    report.add_argument(
        "--out",
        type=Path,
        help="the HTML file to write (default: RUN_DIR/report.html for one run; "
        "required for several)",
    )
    report.add_argument(
        "--max-mb",
        type=float,
        default=28.0,
        help="size budget of the file in MB; long texts are cut to fit (default: 28)",
    )
    report.add_argument(
        "--sample",
        type=int,
        default=20_000,
        help="a run with more items shows every failed or invalid one and a seeded sample of "
        "this many of the rest; counts and metrics always cover all (default: 20000)",
    )
    report.add_argument("--sample-seed", type=int, default=0, help="seed of that sample")
    report.set_defaults(handler=_report)


def _report(args: argparse.Namespace) -> int:
    from ..report._html_common import SampleSettings
    from ..report.html import ReportOptions, write_comparison, write_report
    from ._common import check_out_file

    if not 0 < args.max_mb < 1e9:  # NaN and infinity too
        raise ConfigError(f"--max-mb must be a positive number of megabytes, got {args.max_mb}")
    if args.sample < 1:
        raise ConfigError("--sample must be at least 1")
    sampling = SampleSettings(size=args.sample, seed=args.sample_seed)
    options = ReportOptions(max_bytes=int(args.max_mb * 1_000_000), sampling=sampling)
    runs: list[Path] = args.runs
    check_out_file(args.out)
    if len(runs) > 1 and args.out is None:
        raise ConfigError("several run directories need --out FILE for the comparison report")
    if len(runs) == 1:
        path = write_report(runs[0], out=args.out, options=options)
    else:
        path = write_comparison(runs, args.out, options=options)
    size = path.stat().st_size / 1_000_000
    print(f"wrote {path} ({size:.1f} MB); open it in a browser, it needs no network")
    if size > args.max_mb:
        print(
            f"warning: {path} is over --max-mb {args.max_mb:g}: texts were cut to the shortest "
            "length (40 characters), and the tables, numbers and plots, which are never cut, "
            "take the rest; give a larger --max-mb, or a smaller --sample",
            file=sys.stderr,
        )
    return 0
