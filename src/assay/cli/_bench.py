"""``assay bench run | summarize | compare``: the verifier benchmark.

``scripts/verifier_benchmark.py`` is ``assay bench run`` under the spec's name; both accept the
spec's underscore spellings (``--max_examples``, ``--out_dir``) and dashed ones.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..model import DEFAULT_MODEL
from ..verify.defaults import DEFAULT_VERIFIER
from ..verify.regression_gate import GATE_METRICS
from ._common import (
    add_prices_option,
    add_report_option,
    apply_prices,
    money_line,
    print_served_warnings,
    report_failed_calls,
    shows_money,
    write_run_report,
)

if TYPE_CHECKING:
    from ..verify.compare import Comparison
    from ..verify.slices import RunTallies

PATTERNS = ("best_of_n", "entailment", "self_consistency")
DEFAULT_THRESHOLD = 0.5


def register(subparsers: Any) -> None:
    bench = subparsers.add_parser(
        "bench", help="verifier benchmark: generate -> verify -> revise on grounded QA"
    )
    commands = bench.add_subparsers(dest="bench_command", metavar="COMMAND")
    add_run_parser(commands)
    summarize = commands.add_parser("summarize", help="rebuild summary.json and plots/ of a run")
    summarize.add_argument("run", type=Path, help="run directory")
    summarize.add_argument("--no-plots", action="store_true", help="skip the plots")
    add_report_option(summarize)
    summarize.add_argument("--n-resamples", type=int, help="bootstrap resamples (default: run's)")
    _add_calibration_option(summarize)
    _add_by_option(summarize)
    add_prices_option(summarize)
    summarize.set_defaults(handler=_summarize)
    _add_calibrate_parser(commands)
    compare = commands.add_parser("compare", help="runs side by side, as markdown")
    compare.add_argument("runs", type=Path, nargs="+", help="run directories")
    compare.add_argument("--out", type=Path, help="also write the markdown to this file")
    compare.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help="also write the runs' detection metrics and paired differences as JSON",
    )
    compare.add_argument(
        "--fail-if-worse",
        metavar="METRIC",
        action="append",
        default=[],
        choices=GATE_METRICS,
        help="exit 1 when a later run is worse than the first on this metric: its paired "
        "interval on the shared labelled answers lies wholly on the worse side of 0 "
        f"(repeatable; one of {', '.join(GATE_METRICS)})",
    )
    _add_by_option(compare)
    add_prices_option(compare)
    compare.set_defaults(handler=_compare)
    _add_merge_parser(commands)
    bench.set_defaults(handler=lambda args: _help(bench))


def _add_by_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--by",
        metavar="meta.KEY",
        action="append",
        default=[],
        help="also every metric per value of the records' meta.KEY, with intervals "
        "(repeatable; written to RUN/slices/meta.KEY.json)",
    )


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


RUN_DESCRIPTION = (
    "Run a verifier pattern over a grounded-QA JSONL file into a run directory "
    "(results.jsonl, summary.json, plots/). Rerunning the same command resumes."
)


def add_run_parser(commands: Any) -> argparse.ArgumentParser:
    run: argparse.ArgumentParser = commands.add_parser(
        "run",
        help="run a verifier pattern over a grounded-QA JSONL file",
        description=RUN_DESCRIPTION,
    )
    add_run_arguments(run)
    add_report_option(run)
    run.set_defaults(handler=run_command)
    return run


def script_parser(prog: str) -> argparse.ArgumentParser:
    """``assay bench run`` as a program of its own, named ``prog`` in its usage and errors
    (``scripts/verifier_benchmark.py``, the spec's entry point)."""
    parser = argparse.ArgumentParser(prog=prog, description=RUN_DESCRIPTION)
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks for errors (default: one line)"
    )
    add_run_arguments(parser)
    add_report_option(parser)
    parser.set_defaults(handler=run_command)
    return parser


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    from ._batch import add_executor_options
    from ._common import add_model_options

    parser.add_argument("--data", type=Path, required=True, help="grounded-QA JSONL file")
    parser.add_argument(
        "--pattern", required=True, choices=PATTERNS, help="the verifier pattern to run"
    )
    parser.add_argument("--n", type=int, default=5, help="candidates / samples (default 5)")
    parser.add_argument("--seed", type=int, default=0, help="sample i uses seed+i (default 0)")
    parser.add_argument(
        "--max_examples",
        "--max-examples",
        dest="max_examples",
        type=int,
        default=0,
        help="first N valid records of the file (default 0: all)",
    )
    parser.add_argument(
        "--out_dir",
        "--out-dir",
        "--out",  # as `judge run` names its run directory
        dest="out_dir",
        type=Path,
        help="run directory (default runs/<data>-<pattern>-n<n>-s<seed>)",
    )
    _add_role_arguments(parser)
    parser.add_argument("--no-revise", action="store_true", help="never revise failed answers")
    parser.add_argument(
        "--threshold",
        type=float,
        help="pass when p_error < threshold (default 0.5; not with --calibration)",
    )
    parser.add_argument("--temperature", type=float, default=0.7, help="answer sampling (0.7)")
    parser.add_argument("--max-tokens", type=int, default=256, help="tokens per answer (256)")
    parser.add_argument(
        "--critique-max-tokens", type=int, default=384, help="tokens per critique (384)"
    )
    parser.add_argument(
        "--skip-invalid", action="store_true", help="skip bad input lines (listed in the run)"
    )
    parser.add_argument(
        "--injected-labels",
        action="store_true",
        help="the file's gold labels were made by `assay perturb` (label source 'injected')",
    )
    parser.add_argument("--n-resamples", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--shard",
        metavar="K/N",
        help="run the K-th of N shards of the records, by question (one per machine; `assay "
        "merge` joins their run directories into one run)",
    )
    _add_calibration_option(parser)
    add_prices_option(parser)
    add_model_options(parser)
    add_executor_options(parser, ray=True)


def _add_role_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("models")
    group.add_argument("--generator", default=DEFAULT_MODEL, help=f"answers ({DEFAULT_MODEL})")
    group.add_argument(
        "--verifier",
        default=DEFAULT_VERIFIER,
        help="claim checker: a model, a model-free checker 'lexical' or 'learned', or "
        f"'learned+MODEL' (learned decides, the model's opinion kept apart; default "
        f"{DEFAULT_VERIFIER})",
    )
    group.add_argument(
        "--checker-votes",
        type=int,
        default=1,
        help="samples per claim check for vote probabilities",
    )
    group.add_argument(
        "--claim-check",
        choices=("auto", "single_pass", "json"),
        default="auto",
        help="a model verifier's claim check: one next-token Yes/No question read from "
        "logprobs (single_pass), or generated JSON with rationale and supporting ids (json); "
        "auto: single_pass where the backend returns logprobs",
    )
    group.add_argument(
        "--claim-template",
        choices=("assay", "minicheck"),
        default="assay",
        help="the single-pass prompt: assay's, or Bespoke-MiniCheck's 'Document/Claim' format",
    )
    group.add_argument(
        "--claim-evidence-cut",
        choices=("page_order", "relevance"),
        default="page_order",
        help="single-pass evidence over its 6,000-character budget: cut in page order "
        "(default), or keep the snippets most relevant to the claim",
    )
    group.add_argument(
        "--claim-splitter",
        choices=("rules", "model"),
        default="rules",
        help="entailment: split answers into atomic claims by the rules or by a model "
        "(the --splitter model; the rules when its reply is unusable, recorded per answer)",
    )
    group.add_argument(
        "--splitter",
        help="the claim-splitter model (default: the verifier model, else the generator)",
    )
    group.add_argument(
        "--critic", help="self-consistency critic (default: the verifier model, else generator)"
    )
    group.add_argument("--oracle", help="model that labels generated answers (label source oracle)")


def config_from_args(args: argparse.Namespace) -> Any:
    from ..runs.shards import parse_shard
    from ..verify.benchmark import BenchmarkConfig
    from ._batch import check_executor_options
    from ._common import check_run_dir, model_options, typed_option

    check_executor_options(args)
    shard = None if args.shard is None else parse_shard(args.shard)
    of_shard = "" if shard is None else f"-shard{shard.index}of{shard.count}"
    out_dir = args.out_dir or Path("runs") / (
        f"{Path(args.data).stem}-{args.pattern}-n{args.n}-s{args.seed}{of_shard}"
    )
    check_run_dir(out_dir, typed_option(args, "--out_dir", "--out-dir", "--out"))
    if args.max_examples < 0:
        option = typed_option(args, "--max_examples", "--max-examples")
        raise ConfigError(f"{option}: must be 0 (all) or a positive number")
    if args.threshold is None:
        args.threshold = DEFAULT_THRESHOLD
    if not 0.0 <= args.threshold <= 1.0:  # NaN too, which no bound of the config names
        raise ConfigError(f"--threshold: must be a number in [0, 1], got {args.threshold}")
    # an option out of range is a pydantic ValidationError, reported under the option's name
    # by the CLI (assay.cli.describe_settings_error)
    return BenchmarkConfig(
        data=args.data,
        pattern=args.pattern,
        out_dir=out_dir,
        n=args.n,
        seed=args.seed,
        max_examples=args.max_examples or None,
        generator=args.generator,
        verifier=args.verifier,
        critic=args.critic,
        oracle=args.oracle,
        revise=not args.no_revise,
        threshold=args.threshold,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        critique_max_tokens=args.critique_max_tokens,
        checker_votes=args.checker_votes,
        claim_check=args.claim_check,
        claim_template=args.claim_template,
        claim_evidence_cut=args.claim_evidence_cut,
        claim_splitter=args.claim_splitter,
        splitter=args.splitter,
        skip_invalid=args.skip_invalid,
        concurrency=args.concurrency,
        executor=args.executor,
        ray_batch_size=args.ray_batch_size,
        ray_node_wait_s=args.ray_node_wait,
        n_resamples=args.n_resamples,
        injected_labels=args.injected_labels,
        model_options=model_options(args),
        shard=shard,
    )


def run_command(args: argparse.Namespace) -> int:
    from ..verify.benchmark import run_benchmark
    from ..verify.summary import SUMMARY_FILE, BenchSummary
    from ._batch import batch_session, finish_batch
    from ._calibrate import calibration_threshold

    calibration = getattr(args, "calibration", None)
    if calibration is not None:  # the file is checked whole here, before any work
        args.threshold = calibration_threshold(calibration, args.threshold)
    config = config_from_args(args)
    if getattr(args, "prices", None) is not None:
        from ..runs.prices import load_prices

        load_prices(args.prices)  # a bad table stops the run before it starts
    with batch_session(args):
        report = run_benchmark(
            config, progress=False if args.no_progress else None, calibration=calibration
        )
    summary = BenchSummary.model_validate_json(
        (report.run_dir / SUMMARY_FILE).read_text(encoding="utf-8")
    )
    if apply_prices(args, [report.run_dir]):
        from ..verify.summary import refresh_money

        summary = refresh_money(report.run_dir)
    # an example waiting on batch answers was taken up but not run: it is counted apart
    done = f"{report.ran - report.deferred} run now, {report.already_done} already done"
    if report.deferred:
        done += f", {report.deferred} waiting on batch answers"
    print(f"{report.run_dir}: {report.selected} examples ({done}), {report.calls} model calls")
    print_served_warnings(report.served_warnings, report.run_dir)
    if report.skipped_invalid:
        print(f"skipped {report.skipped_invalid} invalid line(s): see skipped_records.jsonl")
    if report.left_out:
        print(f"left out {report.left_out} record(s) after the first --max_examples")
    if report.in_other_shards:
        print(f"{report.in_other_shards} record(s) belong to the other shards of --shard")
    waiting = finish_batch(args, f"{report.deferred} example(s) wait on batch answers")
    if waiting is not None:
        return waiting
    print(headline(summary))
    write_run_report(report.run_dir, args)
    return report_failed_calls(args, report.failed, "example(s) with model calls that")


def headline(summary: Any) -> str:
    """Three lines: counts, detection, cost; with failures, a line of their reasons between."""
    from ..verify.summary import failure_reasons_line

    counts = summary.counts
    lines = [
        f"scored {counts['scored']}/{counts['results']}, verifier failures "
        f"{counts['verifier_failures']}, examples with failed calls "
        f"{counts.get('examples_with_failed_calls', 0)}, labelled and scored "
        f"{counts['used_for_detection']}"
    ]
    if (reasons := failure_reasons_line(counts)) is not None:
        lines.append(reasons)
    if summary.detection is not None:
        lines.append("detection (positive = grounding error): " + _metrics_line(summary.detection))
    else:
        lines.append(f"detection: {summary.detection_note}")
    if summary.detection_second_opinion is not None:
        lines.append(
            "second opinion, same answers: " + _metrics_line(summary.detection_second_opinion)
        )
    if summary.cost.per_example:
        lines.append(cost_line(summary.cost, (summary.config or {}).get("verifier")))
    if shows_money(summary.money):
        lines.append(money_line(summary.money, "example"))
    return "\n".join(lines)


def cost_line(cost: Any, verifier: str | None) -> str:
    """``cost: 1.00 calls, 250 tokens per example, ...``. With a model in the claim checks,
    a check's wall time holds each call's wait behind the calls in flight (the embedded model
    runs one at a time): the line says so, and the model's own time per call is beside it."""
    from ..verify.defaults import MODEL_FREE_CHECKERS

    per = cost.per_example
    line = f"cost: {per['calls']:.2f} calls, {per['tokens']:.0f} tokens per example"
    if cost.check_ms_per_claim is not None:
        line += f", {cost.check_ms_per_claim:.1f} ms per claim check"
        if cost.calls and verifier not in MODEL_FREE_CHECKERS:
            line += " (wall time, waits for the model included)"
    if cost.calls:
        line += f", {cost.latency_ms / cost.calls:.0f} ms of model time per call"
    return line


HEADLINE_METRICS = (
    "balanced_accuracy",
    "auroc",
    "precision",
    "recall",
    "f1",
    "ece_uniform",
    "brier",
)


def _metrics_line(detection: dict[str, Any]) -> str:
    """Each headline metric with its 95% interval: ``auroc 0.766 [0.652, 0.871]``."""
    metrics = detection["metrics"]
    parts = []
    for name in HEADLINE_METRICS:
        metric = metrics[name]
        if metric["value"] is None:
            continue
        interval = (
            f" [{metric['low']:.3f}, {metric['high']:.3f}]"
            if metric.get("low") is not None and metric.get("high") is not None
            else ""
        )
        parts.append(f"{name} {metric['value']:.3f}{interval}")
    return ", ".join(parts)


def _summarize(args: argparse.Namespace) -> int:
    from ..runs import RunDirLock, partial_tail
    from ..verify.results import RESULTS_FILE
    from ..verify.summary import write_summary
    from ._calibrate import adopt_calibration

    if not (args.run / RESULTS_FILE).is_file():
        raise ConfigError(f"{args.run}: no {RESULTS_FILE} (not a bench run directory?)")
    if args.n_resamples is not None and args.n_resamples < 0:
        raise ConfigError(f"--n-resamples: must be 0 or more, got {args.n_resamples}")
    with RunDirLock(args.run):  # a run still writing its results is not summarised under it
        tallies = _check_before_writing(args, [args.run], whole=True)
        if partial_tail(args.run / RESULTS_FILE):
            print(
                f"note: {args.run / RESULTS_FILE}: its last line is unfinished (a run stopped "
                "while writing it) and is left out (a bench run that appends to the file cuts "
                "it first)",
                file=sys.stderr,
            )
        adopt_calibration(args.calibration, args.run, replace=True)
        apply_prices(args, [args.run])
        summary = write_summary(
            args.run,
            n_resamples=args.n_resamples,
            plots=not args.no_plots,
            tally=tallies[args.run].whole,
        )
        print(f"wrote {args.run / 'summary.json'}")
        print(headline(summary))
        _print_slices([args.run], args.by, args.n_resamples, tallies)
        write_run_report(args.run, args)
    return 0


def _check_before_writing(
    args: argparse.Namespace, runs: list[Path], *, whole: bool
) -> dict[Path, RunTallies]:
    """Every option and file a command reads, checked before it writes into any run: the
    calibration file and price table, each run's run.json and results.jsonl, and the ``--by``
    options, a key no record of a run has included (one located error for the first problem).
    Each run's results are read once, into the counts its slices and (``whole``) its summary
    are made of."""
    from ..runs import read_run_log
    from ..verify.calibration import read_calibration
    from ..verify.slices import RunTallies

    if getattr(args, "calibration", None) is not None:
        read_calibration(args.calibration)
    if getattr(args, "prices", None) is not None:
        from ..runs.prices import load_prices

        load_prices(args.prices)
    tallies = {}
    for run in runs:
        read_run_log(run)
        tallies[run] = RunTallies.read(run, getattr(args, "by", []), whole=whole)
    return tallies


def _print_slices(
    runs: list[Path], options: list[str], n_resamples: int | None, tallies: dict[Path, RunTallies]
) -> str:
    """Each run's slices, from the counts of its one read, written into the run and printed;
    returns the markdown."""
    from ..verify.slices import slices_markdown, write_slices

    blocks = []
    for option in dict.fromkeys(options):  # a summary is made once from a slice's tally
        for run in dict.fromkeys(runs):
            summaries = tallies[run].slice_summaries(run, option, n_resamples=n_resamples)
            write_slices(run, option, summaries)
            label = str(run) if len(runs) > 1 else ""
            blocks.append(slices_markdown(option, summaries, run=label))
    text = "".join(f"\n{block}\n" for block in blocks)
    sys.stdout.write(text)
    return text


def _add_calibration_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--calibration",
        type=Path,
        help="apply a calibration file from `assay bench calibrate` (kept in the run)",
    )


def _add_calibrate_parser(commands: Any) -> None:
    from ._calibrate import register_calibrate

    register_calibrate(commands)


def _compare(args: argparse.Namespace) -> int:
    from ..runs import RunDirLock
    from ..verify.compare import MAX_PAIRED_RUNS, compare_runs
    from ..verify.regression_gate import regressions
    from ._common import check_out_file

    check_out_file(args.out)
    check_out_file(args.json)
    if args.fail_if_worse and not 2 <= len(args.runs) <= MAX_PAIRED_RUNS:
        raise ConfigError(
            f"--fail-if-worse: give a baseline run and 1 to {MAX_PAIRED_RUNS - 1} runs to check "
            f"against it, got {len(args.runs)} run(s)"
        )
    with contextlib.ExitStack() as locks:  # --prices and --by write into the runs
        for run in dict.fromkeys(args.runs):
            locks.enter_context(RunDirLock(run))
        tallies = _check_before_writing(args, args.runs, whole=False)  # summary.json serves
        if apply_prices(args, args.runs):
            from ..verify.summary import refresh_money

            for run in args.runs:
                refresh_money(run)
        comparison = compare_runs(args.runs, args.by)
        text = comparison.markdown
        sys.stdout.write(text)
        text += _print_slices(args.runs, args.by, None, tallies)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    found = regressions(comparison, args.fail_if_worse) if args.fail_if_worse else []
    if args.json is not None:
        _write_comparison_json(args.json, comparison, args.fail_if_worse, found)
    return _gate_verdict(args.fail_if_worse, found)


def _write_comparison_json(
    path: Path, comparison: Comparison, gated: list[str], found: list[str]
) -> None:
    import json

    from ..runs import write_atomic

    runs = [
        {"name": name, "path": str(run_dir), "detection": summary.detection}
        for name, run_dir, summary in zip(
            comparison.names, comparison.run_dirs, comparison.summaries, strict=True
        )
    ]
    pairs = [
        {"run_a": pair.run_a, "run_b": pair.run_b, "differences": pair.differences}
        for pair in comparison.pairs
    ]
    payload: dict[str, Any] = {"kind": "bench-compare", "runs": runs, "paired_differences": pairs}
    if gated:
        payload["gate"] = {"baseline": comparison.names[0], "metrics": gated, "failed": found}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(payload, indent=2, allow_nan=False))


def _gate_verdict(gated: list[str], found: list[str]) -> int:
    """Exit 1, naming each failure, when a gated run is worse than the baseline."""
    if not gated:
        return 0
    for line in found:
        print(f"worse: {line}", file=sys.stderr)
    if found:
        return 1
    print(f"no run is worse than the baseline on {', '.join(gated)}", file=sys.stderr)
    return 0


def _add_merge_parser(commands: Any) -> None:
    from ._merge import add_merge_parser

    add_merge_parser(commands, "merge", "join the run directories of `bench run --shard K/N`")
