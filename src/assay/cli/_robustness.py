"""``assay instructions robustness``: every output of a varied question set checked, each
variant paired with the baseline by prompt, with repeated draws (``--draws``, generations
with their own seed; ``--repeats-as-draws``, promptfoo's and lm-eval's repeats) apart from the
variants' own effect."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..data.questions import (
    QuestionSet,
    TargetOutput,
    draw_folders,
    iter_outputs,
    load_questions,
)
from ..errors import ConfigError, InputError
from ..instructions import MODES
from ..instructions.repeats import outputs_by_repeat, questions_without_repeats
from ..instructions.robustness import (
    BASELINE,
    OutputCheck,
    RobustnessSummary,
    check_outputs,
    summarize_robustness,
)
from ..instructions.robustness_run import write_robustness_run
from ..instructions.robustness_tables import same_text_note, summary_markdown
from ..instructions.varied_set import INSTRUCTIONS_FIELD
from ._common import (
    add_report_option,
    check_bootstrap_options,
    check_run_dir,
    write_run_report,
)
from ._draws import check_draw_settings, note_sampled_single_draws


def register_robustness(commands: Any) -> None:
    robustness = commands.add_parser(
        "robustness",
        help="instruction following under each variant, paired with the original prompt",
        description="Checks every output of a varied question set against its prompt's "
        "instructions and compares each variant with the original prompt, paired by prompt: "
        "the change in prompt-level accuracy with a bootstrap interval, the prompts lost and "
        "gained, McNemar's exact test, and the share of prompts followed under every variant.",
    )
    robustness.add_argument(
        "--questions", type=Path, required=True, help="the question set `vary` wrote"
    )
    robustness.add_argument(
        "--outputs",
        type=Path,
        action="extend",
        nargs="+",
        required=True,
        help="outputs manifests or directories (`assay generate --out`), one or more: other "
        "targets, or with --draws other draws of the same targets (a directory of draw-K "
        "folders, as `generate --draws` writes, is its draws)",
    )
    robustness.add_argument(
        "--draws",
        action="store_true",
        help="each --outputs is one draw of the same cells (`assay generate` with its own "
        "--seed, at a temperature above 0): compares shares of draws followed and measures "
        "how often sampling alone changes a verdict",
    )
    robustness.add_argument(
        "--repeats-as-draws",
        action="store_true",
        help="variants named '<variant> (repeat k)', as `assay import` names promptfoo's "
        "--repeat and lm-eval's repeats, are draw k of <variant>",
    )
    robustness.add_argument("--mode", choices=MODES, default="strict", help="default: strict")
    robustness.add_argument(
        "--baseline",
        default=BASELINE,
        help=f"the variant each other one is paired with (default: {BASELINE})",
    )
    robustness.add_argument(
        "--instructions-field",
        default=INSTRUCTIONS_FIELD,
        help="where each question keeps its instructions, a dotted path under meta (default: "
        f"{INSTRUCTIONS_FIELD}; a promptfoo import's test metadata: meta.metadata.ifeval)",
    )
    robustness.add_argument(
        "--out",
        type=Path,
        help="write the result here as a run directory: summary.json, verdicts.jsonl (every "
        "output's verdicts and reasons), labels.jsonl (the verdicts as judge labels, for "
        "`assay judge agreement --labels`; with draws labels-draw-K.jsonl), robustness.md, "
        "plots/ and report.html",
    )
    add_report_option(robustness)
    robustness.add_argument(
        "--resamples", type=int, default=2000, help="bootstrap resamples (default: 2000)"
    )
    robustness.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    robustness.add_argument(
        "--fail-if-variant-loses",
        type=float,
        nargs="?",
        const=0.0,
        default=None,
        metavar="MARGIN",
        help="exit 1 (after writing everything) when a variant's paired interval of the "
        "change in prompt-level accuracy lies wholly below -MARGIN: it surely loses more than "
        "MARGIN (default 0) against the baseline, for CI",
    )
    robustness.set_defaults(handler=_robustness)


def _robustness(args: argparse.Namespace) -> int:
    if args.draws:
        args.outputs = _draw_folders(args.outputs)
    _check_robustness_options(args)
    questions = load_questions(args.questions)
    if args.repeats_as_draws:
        questions = questions_without_repeats(questions, args.questions)
    checks = _checked_outputs(args, questions)
    if not checks:
        raise InputError("no outputs to check", path=args.outputs[0])
    summary = summarize_robustness(
        questions,
        checks,
        args.mode,
        baseline=args.baseline,
        n_resamples=args.resamples,
        seed=args.seed,
        draws=_draw_names(args, checks),
    )
    print(summary_markdown(summary))
    note = same_text_note(summary)
    if note is not None:
        print(f"note: {note}", file=sys.stderr)
    if args.out is not None:
        config = {
            "questions": str(args.questions),
            "outputs": [str(path) for path in args.outputs],
            "mode": args.mode,
            "baseline": args.baseline,
            "draws": args.draws,
            "repeats_as_draws": args.repeats_as_draws,
            "instructions_field": args.instructions_field,
            "resamples": args.resamples,
            "seed": args.seed,
        }
        written = write_robustness_run(args.out, summary, checks, config)
        print("wrote " + ", ".join(str(path) for path in written))
        write_run_report(args.out, args)
    return _robustness_gate(summary, args.fail_if_variant_loses)


def _robustness_gate(summary: RobustnessSummary, margin: float | None) -> int:
    """Exit 1, naming each, when a variant surely loses more than ``margin`` of prompt-level
    accuracy against the baseline (its interval lies wholly below -margin)."""
    if margin is None:
        return 0
    losing = [row for row in summary.paired if row.ci_high < -margin]
    for row in losing:
        print(
            f"loses: {row.target_model} {row.variant}: prompt-level {row.difference:+.3f} "
            f"[{row.ci_low:+.3f}, {row.ci_high:+.3f}] against {row.baseline} over {row.pairs} "
            f"prompts (more than {margin:g})",
            file=sys.stderr,
        )
    if losing:
        return 1
    print(f"no variant surely loses more than {margin:g} against the baseline", file=sys.stderr)
    return 0


def _checked_outputs(args: argparse.Namespace, questions: QuestionSet) -> list[OutputCheck]:
    """Every output of every --outputs checked; with draws, each draw apart (numbered from 1),
    so a cell is refused twice within one draw only."""
    outputs = (o for path in args.outputs for o in iter_outputs(path))
    sources: list[tuple[int | None, Iterable[TargetOutput]]]
    if args.repeats_as_draws:
        sources = list(enumerate(outputs_by_repeat(outputs), start=1))
    elif args.draws:
        check_draw_settings(args.outputs)
        sources = [(draw, iter_outputs(path)) for draw, path in enumerate(args.outputs, start=1)]
    else:
        note_sampled_single_draws(args.outputs, "robustness --draws")
        sources = [(None, outputs)]
    return [
        check
        for draw, drawn in sources
        for check in check_outputs(
            questions,
            args.questions,
            drawn,
            args.mode,
            instructions_field=args.instructions_field,
            draw=draw,
        )
    ]


def _draw_names(args: argparse.Namespace, checks: list[OutputCheck]) -> list[str]:
    """What each draw stands for (draw k at index k-1): an --outputs, or a repeat."""
    if args.draws:
        return [str(path) for path in args.outputs]
    if args.repeats_as_draws:
        return [f"repeat {draw}" for draw in range(1, max(c.draw for c in checks) + 1)]
    return []


def _check_robustness_options(args: argparse.Namespace) -> None:
    """Every option before anything is read."""
    check_bootstrap_options(args)
    field = args.instructions_field
    if not field.startswith("meta.") or "" in field.split("."):
        raise ConfigError(
            f"--instructions-field: expected a dotted path under meta (meta.KEY[.KEY...]), "
            f"got {field!r}"
        )
    if args.out is not None:
        check_run_dir(args.out, "--out")
    resolved = [path.resolve() for path in args.outputs]
    again = next((p for i, p in enumerate(args.outputs) if resolved[i] in resolved[:i]), None)
    if again is not None:
        raise ConfigError(f"--outputs: {again} is given twice")
    if args.draws and len(args.outputs) < 2:
        raise ConfigError("--draws: give two --outputs or more, one per draw")
    if args.draws and args.repeats_as_draws:
        raise ConfigError("--draws and --repeats-as-draws: give one of them")


def _draw_folders(paths: list[Path]) -> list[Path]:
    """Each path, or, for a directory of ``draw-K`` folders (``generate --draws``), those."""
    return [draw for path in paths for draw in draw_folders(path) or [path]]
