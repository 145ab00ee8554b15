"""The ``assay`` command. Thin: parse arguments, build typed settings, call the Python API.

Each command group lives in its own module with a ``register(subparsers)`` function; the list
below is the whole command tree.

Exit codes (docs/errors.md): 0 done; 1 done, but some model calls failed after every retry
(rerun the same command to retry them), an archive is inconsistent, or an internal error;
2 bad input, settings or usage; 3 ``--executor batch`` wrote requests (import their answers,
then run the same command again); 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pydantic import ValidationError

from .. import __version__
from ..errors import AssayError
from . import _batch, _bench, _import, _instructions, _judge, _models, _perturb, _report

# (module, registered in this order). A new command group is a module with register().
COMMAND_GROUPS = [_models, _import, _instructions, _bench, _judge, _batch, _perturb, _report]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="assay",
        description="Auditable evaluation of language-model outputs.",
    )
    parser.add_argument("--version", action="version", version=f"assay {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks for errors (default: one line)"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for group in COMMAND_GROUPS:
        group.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(args_list)
    args.argv = args_list  # the retry hint repeats the command as given
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    debug = bool(args.debug)
    try:
        return int(args.handler(args))
    except AssayError as error:
        if debug:
            raise
        print(f"error: {error}", file=sys.stderr)
        return 2
    except ValidationError as error:  # a setting out of range, caught by the typed config
        if debug:
            raise
        print(f"error: invalid setting: {_describe_validation(error)}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and friends: not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print(
            "\ninterrupted: finished work is kept; run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    except Exception as error:  # a bug in assay: one line unless asked for the traceback
        if debug:
            raise
        print(
            f"internal error: {type(error).__name__}: {error}\n"
            "  rerun with --debug for the traceback",
            file=sys.stderr,
        )
        return 1


def _describe_validation(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        field = ".".join(str(p) for p in item["loc"]) or "value"
        parts.append(f"{field}: {item['msg']}")
    return "; ".join(parts)
