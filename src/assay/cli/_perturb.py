"""``assay perturb``: labelled answers with injected grounding errors, one per failure bucket."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from ..data.grounded import SkippedRecord, dump_record, iter_records
from ..errors import ConfigError
from ..verify.perturb import BUCKETS, PerturbStats, perturb_records, stats_lines
from ._common import check_out_file


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "perturb",
        help="inject grounding errors into gold answers (labelled verify-only records)",
        description="From records with a gold answer and gold citations, write one labelled "
        "answer per failure bucket (ids <id>::<bucket>, gold_error and error_type set by "
        "construction, group = the source id). Seeded: the same seed gives the same file.",
    )
    parser.add_argument("--data", type=Path, required=True, help="input grounded-QA JSONL")
    parser.add_argument("--out", type=Path, required=True, help="output JSONL (overwritten)")
    parser.add_argument(
        "--seed", type=int, default=0, help="seeds every choice, with the id and bucket (0)"
    )
    parser.add_argument(
        "--buckets",
        default=",".join(BUCKETS),
        help=f"comma-separated buckets (default: all): {', '.join(BUCKETS)}",
    )
    parser.add_argument(
        "--skip-invalid", action="store_true", help="skip bad input lines and report them"
    )
    parser.set_defaults(handler=_perturb)


def _perturb(args: argparse.Namespace) -> int:
    buckets = _buckets(args.buckets)
    if args.out.resolve() == args.data.resolve():
        raise ConfigError("--out must differ from --data")
    check_out_file(args.out)
    skipped: list[SkippedRecord] = []
    stats = PerturbStats()
    records = iter_records(args.data, skip_invalid=args.skip_invalid, skipped=skipped)
    written = _write(
        args.out, perturb_records(records, seed=args.seed, buckets=buckets, stats=stats)
    )
    print(f"wrote {written} labelled answers to {args.out}")
    for line in stats_lines(stats):
        print(line)
    for skip in skipped:
        print(f"  skipped line {skip.line}: {skip.field or 'record'}: {skip.reason}")
    return 0


def _buckets(text: str) -> list[str]:
    chosen = [b.strip() for b in text.split(",") if b.strip()]
    unknown = [b for b in chosen if b not in BUCKETS]
    if unknown or not chosen:
        raise ConfigError(
            f"unknown bucket(s): {', '.join(unknown) or '(none given)'}",
            hint=f"choose from: {', '.join(BUCKETS)}",
        )
    return chosen


def _write(path: Path, records: Any) -> int:
    """Write to a temporary file, then rename: a failed run leaves no half-written output."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    count = 0
    try:
        with partial.open("w", encoding="utf-8") as handle:
            for record in records:
                handle.write(dump_record(record) + "\n")
                count += 1
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return count
