"""``--executor batch`` (generate, judge run, bench run) and ``assay batch import``.

A batch session writes every model call that misses the response cache into batch input files
(OpenAI Batch API format, also read by ``vllm run-batch``) instead of sending it, then stops
with exit code 3 and says what to do next. ``assay batch import`` puts the answers into the
response cache; the same command, run again, continues from the cache (docs/scaling.md).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, InputError

if TYPE_CHECKING:
    from ..model import ImportReport

#: Exit code of a session that wrote batch requests: import their answers, then rerun.
EXIT_BATCH_PENDING = 3
PROBLEMS_SHOWN = 20
#: Records (bench) or sample x judge pairs (judge, generate) per Ray task.
DEFAULT_RAY_BATCH_SIZE = 256
# Options that only one executor reads: given with another, they would be ignored silently
# (--batch-dir under live: every call sent now, at full price, where a batch was meant).
_EXECUTOR_OF_OPTION = {
    "batch_dir": ("--batch-dir", "batch"),
    "ray_batch_size": ("--ray-batch-size", "ray"),
    "ray_node_wait": ("--ray-node-wait", "ray"),
}


def add_executor_options(parser: argparse.ArgumentParser, *, ray: bool = False) -> None:
    """``--executor live|batch`` (and ``ray`` where the command can run on a Ray cluster)."""
    group = parser.add_argument_group("executor")
    group.add_argument(
        "--executor",
        choices=("live", "batch", "ray") if ray else ("live", "batch"),
        default="live",
        help="live: send model calls now from this process (default); batch: write the calls "
        "that miss the response cache into batch input files (OpenAI Batch API / vllm "
        "run-batch) and stop"
        + (
            "; ray: run the records on a Ray cluster (RAY_ADDRESS, else a local one; the "
            "'ray' extra), results the same"
            if ray
            else ""
        ),
    )
    group.add_argument(
        "--batch-dir", type=Path, help="directory of the batch input files (--executor batch)"
    )
    if ray:
        group.add_argument(
            "--ray-batch-size",
            type=int,
            help="records (bench), outputs (generate) or sample x judge pairs (judge) per Ray "
            f"task (--executor ray; default {DEFAULT_RAY_BATCH_SIZE})",
        )
        group.add_argument(
            "--ray-node-wait",
            metavar="SECONDS",
            help="how long a run whose Ray cluster has lost every node with CPUs waits for one "
            "to join before it ends, resumable (--executor ray; default 30; 'forever': "
            "wait as Ray does)",
        )


def check_executor_options(args: argparse.Namespace) -> None:
    """Refuse an executor option given with another executor, a bad ``--ray-node-wait``, and
    a ``RAY_ADDRESS`` where no cluster answers; fills in the defaults of ``--ray-batch-size``
    and ``--ray-node-wait`` (seconds, or None: for ever). Commands call it before they read or
    write anything, so a refusal leaves nothing behind."""
    executor = getattr(args, "executor", "live")
    for dest, (option, wanted) in _EXECUTOR_OF_OPTION.items():
        if getattr(args, dest, None) is not None and executor != wanted:
            raise ConfigError(
                f"{option} is read only with --executor {wanted}, and this run's executor is "
                f"{executor}",
                hint=f"add --executor {wanted}, or drop {option}",
            )
    if hasattr(args, "ray_batch_size") and args.ray_batch_size is None:
        args.ray_batch_size = DEFAULT_RAY_BATCH_SIZE
    if hasattr(args, "ray_node_wait"):
        from ..runs._ray import NO_CPU_GRACE_S, parse_node_wait

        given = args.ray_node_wait
        if given is None:
            args.ray_node_wait = NO_CPU_GRACE_S
        elif isinstance(given, str):  # not parsed yet (a command checks its options once)
            args.ray_node_wait = parse_node_wait(given)
    if executor == "ray":
        from ..runs._ray import check_address

        check_address()


def batch_dir(args: argparse.Namespace) -> Path | None:
    """The batch directory of a ``--executor batch`` session, None for a live one."""
    if getattr(args, "executor", "live") != "batch":
        return None
    if args.batch_dir is None:
        raise ConfigError("--executor batch needs --batch-dir DIR (where the requests go)")
    if args.no_cache:
        raise ConfigError(
            "--executor batch needs the response cache: batch answers are imported into it",
            hint="drop --no-cache",
        )
    if args.batch_dir.exists() and not args.batch_dir.is_dir():
        raise ConfigError(f"--batch-dir {args.batch_dir} is a file, not a directory")
    return Path(args.batch_dir)


@contextmanager
def batch_session(args: argparse.Namespace) -> Iterator[None]:
    """Hold the batch directory's lock while a session writes requests into it; afterwards
    ``args.batch_written`` says what was written (a new session starts a new file set)."""
    directory = batch_dir(args)
    if directory is None:
        yield
        return
    from ..model import BatchWriter
    from ..runs import RunDirLock

    with RunDirLock(directory):
        try:
            yield
        finally:
            args.batch_written = BatchWriter.shared(directory).close()
            BatchWriter.forget(directory)


def finish_batch(args: argparse.Namespace, waiting: str) -> int | None:
    """After a batch session: None when nothing was written (the run completed from the
    cache), else print the files and the next steps and return :data:`EXIT_BATCH_PENDING`."""
    directory = batch_dir(args)
    written = getattr(args, "batch_written", None)
    if directory is None or written is None or written.requests == 0:
        return None
    from ._common import rerun_command

    command = rerun_command(args)
    files = "\n".join(f"  {path}" for path in written.files)
    print(
        f"{waiting}; wrote {written.requests} request(s) that missed the response cache to "
        f"{len(written.files)} batch input file(s), and sent none:\n{files}\n"
        "next:\n"
        "  1. run each file as a batch: OpenAI Batch API (endpoint /v1/chat/completions), or\n"
        "     vllm run-batch -i INPUT.jsonl -o OUTPUT.jsonl --model MODEL\n"
        f"  2. assay batch import --batch-dir {shlex.quote(str(directory))} "
        "OUTPUT.jsonl [ERRORS.jsonl]\n"
        f"  3. run this command again (it continues from the cache):\n  {command}",
    )
    return EXIT_BATCH_PENDING


def register(subparsers: Any) -> None:
    batch = subparsers.add_parser(
        "batch", help="batch files (OpenAI Batch API, vllm run-batch): import their answers"
    )
    commands = batch.add_subparsers(dest="batch_command", metavar="COMMAND")
    imp = commands.add_parser(
        "import",
        help="put batch output (and error) files into the response cache",
        description="Put the answers of batch output files (OpenAI Batch API or vllm "
        "run-batch format) into the response cache; errors become typed call failures. "
        "Lines with an unknown or repeated custom_id, or a body that does not parse, are "
        "reported (file:line) and skipped (exit 1); files of which no line can be imported "
        "are refused (exit 2).",
    )
    imp.add_argument("files", type=Path, nargs="+", help="OUTPUT.jsonl [ERRORS.jsonl ...]")
    imp.add_argument(
        "--batch-dir",
        type=Path,
        help="directory of the batch input files (default: the first file's directory)",
    )
    imp.add_argument(
        "--cache-path", type=Path, help="response cache file (default: ~/.cache/assay/...)"
    )
    imp.set_defaults(handler=_import)
    batch.set_defaults(handler=lambda _args: _help(batch))


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _check_batch_files(paths: list[Path]) -> None:
    """Files, and not all empty: a batch that ran writes a line per request into its output
    or error file (an empty error file beside a full output file is usual)."""
    from ..data.jsonl import check_input_file, iter_lines

    for path in paths:
        check_input_file(path, hint="give the batch's output file")
    if not any(raw.strip() for path in paths for _, raw in iter_lines(path)):
        names = ", ".join(map(str, paths))
        raise InputError(
            f"{names}: the file is empty (no batch output line in it)"
            if len(paths) == 1
            else f"{names}: every file is empty (no batch output line in them)",
            hint="give the output file of a batch that has finished",
        )


def _import(args: argparse.Namespace) -> int:
    from ..model import (
        ResponseCache,
        default_cache_path,
        import_batch_output,
        input_files,
        requested_ids,
    )
    from ..runs import RunDirLock
    from ._common import check_out_file

    _check_batch_files(args.files)
    directory = args.batch_dir or args.files[0].parent
    inputs = input_files(directory)
    if not inputs:
        raise ConfigError(
            f"{directory}: no batch input files (input-*.jsonl) here",
            hint="pass --batch-dir, the directory the run wrote its requests to",
        )
    busy = "wait for that process to finish (a batch session or an import), then import again"
    with RunDirLock(directory, busy_hint=busy):  # never while a run writes requests into it
        check_out_file(args.cache_path, "--cache-path")  # the answers are written there
        requested = requested_ids(inputs)
        cache = ResponseCache.shared(args.cache_path or default_cache_path())
        report = import_batch_output(cache, args.files, requested)
        cache.flush()
    if report.problems and not report.answers + report.failures:
        raise _nothing_imported(report, directory)
    print(
        f"imported {report.answers} answer(s) and {report.failures} error(s) into "
        f"{cache.path}; skipped {len(report.problems)} line(s)"
    )
    for problem in report.problems[:PROBLEMS_SHOWN]:
        print(f"  skipped {problem}", file=sys.stderr)
    if len(report.problems) > PROBLEMS_SHOWN:
        print(f"  ... and {len(report.problems) - PROBLEMS_SHOWN} more", file=sys.stderr)
    if report.problems:  # done in part, as a run with failed calls: exit 1, and the way on
        print(
            "next: run the command that wrote the requests again (it writes the skipped "
            "lines' requests again)"
        )
        return 1
    print("next: run the command that wrote the requests again")
    return 0


def _nothing_imported(report: ImportReport, directory: Path) -> InputError:
    """Files of which no line could be imported are bad input (exit 2), not an import done
    in part: most often the output of another batch directory's requests."""
    skipped = len(report.problems)
    more = f" (and {skipped - 1} more line(s) skipped)" if skipped > 1 else ""
    if report.unknown_ids == skipped:
        hint = (
            f"no input file of {directory} asked for these custom_ids: give --batch-dir the "
            "directory the run wrote these requests to"
        )
    else:
        hint = "give the output (and error) file of a finished batch of this directory's requests"
    return InputError(f"{report.problems[0]}{more}; nothing was imported", hint=hint)
