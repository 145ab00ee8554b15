"""``assay merge SHARD... --out DIR``: the run directories of ``--shard K/N`` runs (``bench
run``, ``generate``, ``judge run``), one per machine, joined into the run the command without
``--shard`` would have made. ``bench merge`` is the same for bench runs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import RunError
from ._common import add_report_option, check_run_dir, write_run_report

HELP = "join the run directories of --shard K/N runs (bench, generate, judge) into one run"


def register(subparsers: Any) -> None:
    add_merge_parser(subparsers, "merge", HELP)


def add_merge_parser(commands: Any, name: str, help_text: str) -> None:
    merge = commands.add_parser(
        name,
        help=help_text,
        description="Join the run directories of `--shard K/N` runs (`bench run`, `generate`, "
        "`judge run`; "
        "one per K, from any machines) into one run: the run the command without --shard "
        "would have made, which it resumes. Every shard is checked before anything is written.",
    )
    merge.add_argument("shards", type=Path, nargs="+", help="the shards' run directories")
    merge.add_argument("--out", type=Path, required=True, help="the merged run's directory")
    add_report_option(merge)
    merge.set_defaults(handler=merge_command)


def merge_command(args: argparse.Namespace) -> int:
    check_run_dir(args.out, "--out")
    draws = _draws(args.shards)
    if not draws:
        return _merge_kind(args)
    codes = []
    for name in draws:  # `--draws` wrote a run per draw: each draw's shards merge apart
        print(f"{name}:")
        shards = [shard / name for shard in args.shards]
        codes.append(
            _merge_kind(
                argparse.Namespace(**{**vars(args), "shards": shards, "out": args.out / name})
            )
        )
    return max(codes)


def _draws(shards: list[Path]) -> list[str]:
    """The ``draw-K`` runs every shard directory holds (``generate --draws``, ``judge run
    --draws``), the same in each; none when the shards are runs themselves."""
    from ..judge.draws import DRAW_FOLDER
    from ..runs import RUN_FILE

    def found(shard: Path) -> list[str]:
        if not shard.is_dir() or (shard / RUN_FILE).exists():
            return []
        names = [
            p.name
            for p in shard.iterdir()
            if DRAW_FOLDER.fullmatch(p.name) and (p / RUN_FILE).is_file()
        ]
        return sorted(names, key=lambda name: int(name.removeprefix("draw-")))

    first = found(shards[0])
    for shard in shards[1:]:
        if (names := found(shard)) != first:
            raise RunError(
                f"{shard} holds the draws {', '.join(names) or 'none'}, {shards[0]} "
                f"{', '.join(first) or 'none'}: the shards of one run hold the same draws"
            )
    return first


def _merge_kind(args: argparse.Namespace) -> int:
    from ..runs import read_run_log

    first = args.shards[0]
    log = read_run_log(first) if first.is_dir() else None
    kind = log.kind if log is not None else None
    if kind == "bench":
        return _merge_bench(args)
    if kind == "generate":
        return _merge_generated(args)
    if kind == "judge":
        return _merge_judged(args)
    raise RunError(
        f"{first}: not the directory of a `bench run`, `generate` or `judge run` with --shard "
        f"({'no run.json' if log is None else f'a {kind} run'})",
        hint="give the run directories of the shards of one run",
    )


def _merge_bench(args: argparse.Namespace) -> int:
    from ..verify.shard_merge import merge_bench
    from ..verify.summary import SUMMARY_FILE, BenchSummary
    from ._bench import headline

    report = merge_bench(args.shards, args.out)
    summary = BenchSummary.model_validate_json(
        (report.out_dir / SUMMARY_FILE).read_text(encoding="utf-8")
    )
    retry = (
        f", {report.incomplete} with failed calls (`bench run` without --shard on "
        f"{report.out_dir} retries them)"
        if report.incomplete
        else ""
    )
    print(f"{report.out_dir}: {report.shards} shards merged, {report.results} examples{retry}")
    print(headline(summary))
    write_run_report(report.out_dir, args)
    return 0


def _merge_generated(args: argparse.Namespace) -> int:
    from ..judge.generate_merge import merge_generated

    report = merge_generated(args.shards, args.out)
    retry = (
        f", {report.failed} failed calls (`generate` without --shard into {report.out_dir} "
        "asks for them again)"
        if report.failed
        else ""
    )
    print(
        f"{report.out_dir}: {report.shards} shards merged, {report.outputs} outputs{retry} "
        f"-> {report.out_dir / 'manifest.jsonl'}"
    )
    return 0


def _merge_judged(args: argparse.Namespace) -> int:
    from ..judge.judge_merge import merge_judged

    report = merge_judged(args.shards, args.out)
    print(
        f"{report.out_dir}: {report.shards} shards merged, {report.pairs} sample x judge pairs "
        f"({report.records} evaluations, {report.valid} valid); next: assay judge analyze "
        f"{report.out_dir}"
    )
    return 0
