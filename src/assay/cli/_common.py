"""Options shared by commands that call models."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..model import ModelOptions
from ..redact import public_command

#: Exit code of a run that finished but left failed model calls (a rerun retries them).
EXIT_FAILED_CALLS = 1
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"


def add_model_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("model access")
    group.add_argument(
        "--base-url",
        help="OpenAI-compatible server for openai/ models (default: $OPENAI_BASE_URL)",
    )
    group.add_argument(
        "--api-key-env",
        default=DEFAULT_API_KEY_ENV,
        help="environment variable holding the API key (default: OPENAI_API_KEY); "
        "keys are never taken on the command line, where they would land in shell history",
    )
    group.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    group.add_argument("--max-attempts", type=int, default=4, help="attempts per call (retries+1)")
    group.add_argument(
        "--max-retry-after",
        type=float,
        default=120.0,
        help="longest wait in seconds a server's Retry-After may impose before a retry (120)",
    )
    group.add_argument("--concurrency", type=int, default=8, help="requests in flight at most")
    group.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    group.add_argument(
        "--cache-path", type=Path, help="response cache file (default: ~/.cache/assay/...)"
    )
    group.add_argument("--n-ctx", type=int, default=4096, help="context size for llamacpp/")
    group.add_argument(
        "--structured-output",
        choices=["auto", "json_schema", "json_object", "off"],
        default="auto",
        help="how openai/ models are asked for JSON-schema output (default: auto-detect)",
    )


def model_options(args: argparse.Namespace) -> ModelOptions:
    from ._batch import batch_dir

    check_out_file(args.cache_path, "--cache-path")  # the cache is written there too
    return ModelOptions(
        base_url=args.base_url,
        api_key=_api_key(args.api_key_env),
        api_key_env=args.api_key_env,
        request_timeout_s=args.timeout,
        max_attempts=args.max_attempts,
        max_retry_after_s=args.max_retry_after,
        max_concurrency=args.concurrency,
        cache=not args.no_cache,
        cache_path=args.cache_path,
        n_ctx=args.n_ctx,
        structured_output=args.structured_output,
        batch_dir=batch_dir(args),
    )


def _api_key(variable: str) -> str | None:
    """The key in the environment variable ``--api-key-env`` names. A variable the user named
    that is not set is an error: a backend would otherwise fall back to OPENAI_API_KEY and
    send that key to whatever server --base-url names."""
    key = os.environ.get(variable) or None
    if key is None and variable != DEFAULT_API_KEY_ENV:
        raise ConfigError(
            f"--api-key-env {variable}: no such environment variable is set (the API key is "
            f"read from it; {DEFAULT_API_KEY_ENV} is not used in its place)",
            hint=f"export {variable}=..., or leave out --api-key-env for a server that takes "
            "no key",
        )
    return key


def typed_option(args: argparse.Namespace, *spellings: str) -> str:
    """The spelling of an option the user typed (``--out_dir`` or ``--out-dir``), else the
    first."""
    given = {a.split("=", 1)[0] for a in getattr(args, "argv", None) or sys.argv[1:]}
    return next((s for s in spellings if s in given), spellings[0])


def check_run_dir(path: Path, option: str) -> Path:
    """A run or output directory: absent (it is made) or a directory, never a file."""
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{option} {path} is a file, not a directory")
    return path


def check_out_file(
    path: Path | None, option: str = "--out", *, inputs: Iterable[Path | None] = ()
) -> None:
    """An output file the command can write once its work is done: not a directory, not
    inside a file (a missing folder is made when the file is written), not one of the
    command's own ``inputs``, and not a file a run keeps (:func:`kept_by_a_run`)."""
    if path is None:
        return
    if path.is_dir():
        raise ConfigError(
            f"{option} {path} is a directory, not a file",
            hint="give a file name (for example one inside that directory)",
        )
    if (file := _file_above(path)) is not None:
        raise ConfigError(f"{option} {path}: {file} is a file, not a directory")
    target = path.resolve()
    if any(source is not None and source.resolve() == target for source in inputs):
        raise ConfigError(f"{option} {path} is one of the command's inputs; choose another path")
    if (run := kept_by_a_run(target)) is not None:
        raise ConfigError(
            f"{option} {path}: is a file the run {_as_given(run, path)} keeps; writing it "
            "would replace the run's own",
            hint="give a file name of its own (for example outside the run directory)",
        )


def _as_given(run: Path, path: Path) -> Path:
    """The run directory as the user's ``path`` names it (``runs/x`` for ``runs/x/a.json``),
    so that the error speaks of the folder they typed; the resolved one when no parent of
    ``path`` is it (a symbolic link on the way)."""
    return next((parent for parent in path.parents if parent.resolve() == run), run)


# What a run directory holds (bench, judge and generate runs): another command's output file
# must not replace one. A run's report.html is not here: `assay report --out` rewrites it.
RUN_OWNED_NAMES = frozenset(
    {
        "results.jsonl", "summary.json", "run.json", "run_log.jsonl", "calibration.json",
        "prices.json", "skipped_records.jsonl", ".assay.lock", "plots", "slices",
        "protocol.json", "archive_blobs.jsonl", "coverage.json", "used_prompt_manifest.md",
        "results_analysis.md", "valid_evaluations", "invalid_evaluations", "quarantine",
        "manifest.jsonl", "generation_failures.jsonl",
    }
)  # fmt: skip
RUN_MARKERS = ("run.json", "protocol.json")  # a directory holding one is a run


def kept_by_a_run(target: Path) -> Path | None:
    """The run directory that keeps the (resolved) path ``target``, if any: a file of the
    run's own (RUN_OWNED_NAMES), or anything in one of its folders (judge shards, plots, a
    target model's outputs). A new file of another name beside them is the user's."""
    for folder in target.parents:
        if any((folder / marker).is_file() for marker in RUN_MARKERS):
            inside = target.relative_to(folder).parts
            return folder if len(inside) > 1 or inside[0] in RUN_OWNED_NAMES else None
    return None


def check_run_dir_parents(path: Path) -> None:
    """A directory to make: not inside a file."""
    if (file := _file_above(path)) is not None:
        raise ConfigError(f"{path}: {file} is a file, not a directory")


def _file_above(path: Path) -> Path | None:
    """The nearest existing folder above ``path`` when it is a file (nothing can be made
    inside it), else None."""
    folder = next((p for p in path.parents if p.exists()), None)
    return folder if folder is not None and not folder.is_dir() else None


def add_report_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-report", action="store_true", help="do not write report.html at the end"
    )


def write_run_report(run_dir: Path, args: argparse.Namespace) -> None:
    """The run's self-contained HTML report, unless ``--no-report`` was given."""
    if getattr(args, "no_report", False):
        return
    from ..report.html import write_report

    print(f"report: {write_report(run_dir)}")


def print_served_warnings(warnings: Iterable[str], run_dir: Path) -> None:
    """Warn, on stderr, of each model whose served name or system fingerprint changed during
    the run (the counts are in run.json's ``served``)."""
    for warning in warnings:
        print(f'warning: {warning} (counts: {run_dir / "run.json"}, "served")', file=sys.stderr)


def report_failed_calls(
    args: argparse.Namespace, failed: int, what: str, reasons: dict[str, int] | None = None
) -> int:
    """Exit 0, or print how many ``what`` failed, why (``reasons``: count per reason, when
    known) and the command that retries them, exit 1."""
    if failed == 0:
        return 0
    command = rerun_command(args)
    why = "".join(f"\n  {reason} ({count})" for reason, count in (reasons or {}).items())
    lead = f"{failed} {what} failed after every retry (counted apart, never as a score)"
    lead += f":{why}\n" if why else "; "
    print(f"{lead}to retry them, run the same command again:\n  {command}", file=sys.stderr)
    return EXIT_FAILED_CALLS


def rerun_command(args: argparse.Namespace) -> str:
    """The command as the user typed it (the program as invoked, ``assay`` or the script),
    with every URL in its public form: what a hint says to run again."""
    argv = getattr(args, "argv", None) or sys.argv[1:]
    return shlex.join([*getattr(args, "program", ["assay"]), *public_command(argv)])


def add_prices_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--prices",
        type=Path,
        help="price table (JSON/YAML/TOML: USD per million input/output tokens per model, "
        "cached-input and batch discounts); kept in the run as prices.json",
    )


def apply_prices(args: argparse.Namespace, runs: list[Path]) -> bool:
    """Keep ``--prices`` in each run directory (summaries read it from there)."""
    if getattr(args, "prices", None) is None:
        return False
    from ..runs.prices import keep_prices, load_prices

    table = load_prices(args.prices)
    for run in runs:
        keep_prices(run, table)
    return True


def shows_money(money: Any) -> bool:
    """Whether to print the money line: the run called a model (a model-free run has nothing
    to price). Its money is known (priced, or in-process and free) or says which price is
    missing."""
    return money is not None and bool(money.by_model)


def money_line(money: Any, unit: str) -> str:
    """``money: 0.012300 USD per example (1.2300 total, 0.4000 billed in these sessions)``,
    ``money: 0 USD (in-process model llamacpp/smollm2: no per-token price)``, or why it is
    unknown."""
    from ..runs.prices import in_process_note

    if not money.known or money.total is None:
        return f"money: unknown ({money.note})"
    if money.by_model == {} and money.total == 0:
        return "money: none (no model calls)"
    cur = money.currency
    if set(money.in_process) == set(money.by_model):
        return f"money: 0 {cur} ({in_process_note(money.in_process)})"
    per = "n/a" if money.per_item is None else f"{money.per_item:.6f} {cur}"
    text = f"money: {per} per {unit} ({money.total:.4f} {cur} total"
    if money.billed is not None:
        text += f", {money.billed:.4f} {cur} billed in these sessions"
    text += ", batch prices" if money.batch else ""
    if not money.in_process:
        return text + ")"
    return f"{text}; {in_process_note(money.in_process)})"  # why some models cost nothing


def check_bootstrap_options(args: argparse.Namespace) -> None:
    """--resamples and --seed (judge analyze and agreement, instructions robustness), each
    named as typed."""
    if args.resamples < 1:
        raise ConfigError(f"--resamples: must be 1 or more, got {args.resamples}")
    if args.seed < 0:
        raise ConfigError(f"--seed: must be 0 or more, got {args.seed}")
