"""The ``assay`` command. Thin: parse arguments, build typed settings, call the Python API.

Each command group lives in its own module with a ``register(subparsers)`` function;
``COMMANDS`` below is the whole command tree. Only the module of the command being run is
imported (``assay --help`` lists the commands from ``COMMANDS`` alone), so starting the
command costs what that command needs, not what every command needs.

Exit codes (docs/errors.md): 0 done; 1 done, but some model calls failed after every retry
(rerun the same command to retry them), a batch import done in part, a Ray worker that died
after every retry (rerun to resume), an archive is inconsistent, or an internal error;
2 bad input, settings or usage; 3 ``--executor batch`` wrote requests (import their answers,
then run the same command again); 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from .. import __version__
from ..errors import AssayError
from ..interrupts import sigterm_as_interrupt, sigterm_received

# command -> (the module that registers it, its one-line help). A new command group is a
# module with register(subparsers) and its commands here; tests/test_cli.py checks that each
# module registers exactly these commands with these help lines.
COMMANDS: dict[str, tuple[str, str]] = {
    "models": ("_models", "list model providers"),
    "ping": ("_models", "send one prompt to a model and print the reply"),
    "import": ("_import", "convert a public benchmark file into assay's input format"),
    "instructions": ("_instructions", "check verifiable instructions (IFEval ids) without a model"),
    "bench": ("_bench", "verifier benchmark: generate -> verify -> revise on grounded QA"),
    "generate": (
        "_judge",
        "run every question x variant through target models, write outputs",
    ),
    "judge": ("_judge", "the judge protocol: run, validate, analyze"),
    "merge": (
        "_merge",
        "join the run directories of --shard K/N runs (bench, generate, judge) into one run",
    ),
    "batch": ("_batch", "batch files (OpenAI Batch API, vllm run-batch): import their answers"),
    "perturb": (
        "_perturb",
        "inject grounding errors into gold answers (labelled verify-only records)",
    ),
    "report": (
        "_report",
        "write a self-contained HTML report of a run (several runs: side by side)",
    ),
    "export": (
        "_export",
        "a run's results as CSV, Parquet or JSONL rows (for pandas, spreadsheets, papers)",
    ),
    "track": (
        "_track",
        "log runs into MLflow or Weights & Biases: params, metrics with intervals, artifacts",
    ),
}


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with ``argv``, only the named command's module is loaded (the others are
    listed by name and help). Without it, every command is built in full."""
    parser = argparse.ArgumentParser(
        prog="assay",
        description="Auditable evaluation of language-model outputs.",
    )
    parser.add_argument("--version", action="version", version=f"assay {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks for errors (default: one line)"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = _modules_for(argv)
    registered: set[str] = set()
    for command, (module_name, help_line) in COMMANDS.items():
        if command in registered:
            continue
        if wanted is None or module_name in wanted:
            module = importlib.import_module(f".{module_name}", __name__)
            module.register(subparsers)
            registered.update(c for c, (m, _) in COMMANDS.items() if m == module_name)
        else:
            subparsers.add_parser(command, help=help_line, add_help=False)
    return parser


def _modules_for(argv: Sequence[str] | None) -> set[str] | None:
    """The modules the arguments need: the first known command's, none for bare options."""
    if argv is None:
        return None
    command = next((a for a in argv if a in COMMANDS), None)
    return set() if command is None else {COMMANDS[command][0]}


def _print_anything() -> None:
    """Model text printed as it is may hold a lone surrogate, which the terminal's encoding
    cannot take: it is printed as its escape (``\\ud800``), as stderr already does."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    return run_command_line(build_parser(args_list), args_list)


def run_command_line(
    parser: argparse.ArgumentParser, args_list: list[str], program: Sequence[str] = ("assay",)
) -> int:
    """Run the command ``args_list`` names in ``parser``, with the CLI's error handling (one
    line per error, the exit codes of docs/errors.md). ``program`` is how the user invoked
    it, which the hints that say what to run again repeat."""
    # --debug is the top-level parser's, but an error's hint says "rerun with --debug", which
    # users add at the end: accepted anywhere on the line
    debug = "--debug" in args_list
    args = parser.parse_args([a for a in args_list if a != "--debug"])
    args.argv = args_list  # the retry hint repeats the command as given
    args.program = list(program)
    _print_anything()
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    from pydantic import ValidationError  # loaded by every command anyway; not by --help

    try:
        with sigterm_as_interrupt():
            return int(args.handler(args))
    except AssayError as error:
        return _fail(f"error: {error}", error.exit_code, debug)
    except ValidationError as error:  # a setting out of range, caught by the typed config
        options = option_strings(parser, args, args_list)
        return _fail(f"error: {describe_settings_error(error, options)}", 2, debug)
    except BrokenPipeError:  # output piped into `head` and friends: not an error
        sys.stderr.close()
        return 0
    except OSError as error:  # a file or folder the command cannot read or write
        if error.filename is None:
            return _internal_error(error, debug)
        return _fail(f"error: {_describe_os_error(error)}", 2, debug)
    except KeyboardInterrupt:
        stop, code = ("terminated (SIGTERM)", 143) if sigterm_received() else ("interrupted", 130)
        print(
            f"\n{stop}: finished work is kept; run the same command again to resume",
            file=sys.stderr,
        )
        return code
    except Exception as error:  # a bug in assay: one line unless asked for the traceback
        return _internal_error(error, debug)


def _internal_error(error: Exception, debug: bool) -> int:
    hint = "" if debug else "\n  rerun with --debug for the traceback"
    return _fail(f"internal error: {type(error).__name__}: {error}{hint}", 1, debug)


def _describe_os_error(error: OSError) -> str:
    """``runs/x/summary.json: Permission denied``. A rename names its destination: files are
    written to a temporary name and renamed into place, and the temporary name means nothing
    to the user."""
    from ..runs import atomic_target

    path = atomic_target(str(error.filename if error.filename2 is None else error.filename2))
    return f"{path}: {error.strerror or type(error).__name__}"


def _fail(message: str, code: int, debug: bool) -> int:
    """Print the error (after its traceback with ``--debug``); the exit code is the same
    either way."""
    if debug:
        traceback.print_exc(file=sys.stderr)
    print(message, file=sys.stderr)
    return code


# Settings fields that come from an option of another name: (settings class, field) -> the
# option's argparse dest. Every other field is read from the option of its own name.
FIELD_OPTIONS: dict[tuple[str, str], str] = {
    ("ModelOptions", "request_timeout_s"): "timeout",
    ("ModelOptions", "max_retry_after_s"): "max_retry_after",
    ("ModelOptions", "max_concurrency"): "concurrency",
    ("ModelOptions", "cache"): "no_cache",
    ("JudgeRunConfig", "max_attempts"): "judge_attempts",
    ("JudgeRunConfig", "timestamp"): "date",
    ("DecodingSettings", "max_tokens"): "judge_max_tokens",
    ("DecodingSettings", "constrained"): "constrained",
    ("BenchmarkConfig", "revise"): "no_revise",
}


def describe_settings_error(error: Any, options: dict[str, str]) -> str:
    """One line per problem of a settings class built from options, each under the option
    the user typed (``--judge-attempts: ...``), or ``invalid setting: field: ...``."""
    from ..errors import describe_problem

    parts = []
    for item in error.errors():
        loc = [str(p) for p in item["loc"]]
        field = loc[0] if loc else ""
        dest = FIELD_OPTIONS.get((error.title, field), field)
        option = options.get(dest)
        where = option if option is not None else "invalid setting: " + (".".join(loc) or "value")
        parts.append(f"{where}: {describe_problem(item)}")
    return "\nerror: ".join(parts)


def option_strings(
    parser: argparse.ArgumentParser, args: argparse.Namespace, argv: Sequence[str]
) -> dict[str, str]:
    """argparse dest -> the option string the user typed for it (else its first long form),
    over the parsers of the command that ran (``assay judge run``: the top-level parser,
    ``judge``'s and ``run``'s)."""
    typed = {a.split("=", 1)[0] for a in argv if a.startswith("-")}
    found: dict[str, str] = {}
    current: argparse.ArgumentParser | None = parser
    while current is not None:
        following: argparse.ArgumentParser | None = None
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = getattr(args, action.dest, None) if action.dest else None
                following = action.choices.get(chosen) if isinstance(chosen, str) else None
            elif action.option_strings:
                strings = list(action.option_strings)
                given = [s for s in strings if s in typed]
                long = [s for s in strings if s.startswith("--")]
                found[action.dest] = (given or long or strings)[0]
        current = following
    return found
