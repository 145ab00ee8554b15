"""``assay instructions``: deterministic checks of verifiable instructions (IFEval's ids)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..data.questions import (
    MANIFEST_NAME,
    QuestionSet,
    TargetOutput,
    iter_outputs,
    load_questions,
)
from ..errors import ConfigError, InputError
from ..instructions import (
    CHECKERS,
    MODES,
    check_responses_file,
    covered_instruction_ids,
    measure_agreement,
    render_markdown,
    summarize,
)
from ..instructions.agreement import AgreementReport, Disagreement
from ..instructions.ifeval_data import INPUTS_FILE
from ..instructions.lm_eval_tasks import TASK_PREFIX, write_lm_eval_tasks
from ..instructions.repeats import outputs_by_repeat, questions_without_repeats
from ..instructions.robustness import (
    BASELINE,
    OutputCheck,
    check_outputs,
    summarize_robustness,
)
from ..instructions.robustness_run import write_robustness_run
from ..instructions.robustness_tables import same_text_note, summary_markdown
from ..instructions.variants import VARIANT_KINDS
from ..instructions.varied_set import INSTRUCTIONS_FIELD, NOT_APPLIED, vary_inputs
from ..judge.generate import PROTOCOL_SETTINGS
from ..runs import read_run_log, write_atomic
from ._common import (
    add_report_option,
    check_bootstrap_options,
    check_out_file,
    check_run_dir,
    write_run_report,
)
from ._import import write_jsonl


def register(subparsers: Any) -> None:
    group = subparsers.add_parser(
        "instructions",
        help="check verifiable instructions (IFEval ids) without a model",
        description="Deterministic checks of verifiable instructions, keyed by IFEval's "
        "instruction ids; run them beside an LLM judge.",
    )
    group.set_defaults(handler=lambda args: _usage(group))
    commands = group.add_subparsers(dest="instructions_command", metavar="COMMAND")
    _register_check(commands)
    _register_agreement(commands)
    _register_vary(commands)
    _register_robustness(commands)
    listing = commands.add_parser("list", help="list instruction ids and whether each is covered")
    listing.set_defaults(handler=_list)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _register_check(commands: Any) -> None:
    check = commands.add_parser(
        "check",
        help="check responses against the instructions of their prompts",
        description="Reads responses in IFEval's input_response format (one JSON object per "
        "line with 'prompt' and 'response'), finds each prompt's instructions in the inputs "
        "file (IFEval's input_data format: 'prompt', 'instruction_id_list', 'kwargs') and "
        "writes one verdict per instruction.",
    )
    check.add_argument("--data", type=Path, required=True, help="responses JSONL")
    check.add_argument(
        "--inputs",
        type=Path,
        help=f"prompts with instructions (default: {INPUTS_FILE} next to --data)",
    )
    check.add_argument("--mode", choices=MODES, default="strict", help="default: strict")
    check.add_argument("--out", type=Path, help="write one JSON line per response here")
    check.set_defaults(handler=_check)


def _register_agreement(commands: Any) -> None:
    agreement = commands.add_parser(
        "agreement",
        help="agreement of assay's checker with IFEval's own labels, per instruction id",
        description="Compares assay's verdicts on IFEval's GPT-4 responses with "
        "eval_results_strict.jsonl / eval_results_loose.jsonl and prints a markdown table.",
    )
    agreement.add_argument(
        "--data-dir", type=Path, required=True, help="folder with IFEval's four data files"
    )
    agreement.add_argument("--mode", choices=[*MODES, "both"], default="both", help="default: both")
    agreement.add_argument("--out", type=Path, help="also write the table to this file")
    agreement.add_argument(
        "--disagreements",
        type=Path,
        help="write every disagreement and exclusion (JSONL, with assay's reason) here",
    )
    agreement.set_defaults(handler=_agreement)


def _register_vary(commands: Any) -> None:
    vary = commands.add_parser(
        "vary",
        help="write IFEval prompts with variants under small changes, as a judge question set "
        "or lm-eval tasks",
        description="Reads prompts in IFEval's input_data format and writes a question set "
        "(the one `assay generate` reads) with the original prompt and a variant per small "
        "change that keeps every instruction checkable: "
        + "; ".join(f"{k.name}: {k.description.rstrip('.')}" for k in VARIANT_KINDS.values())
        + ". Then `assay generate` and `assay instructions robustness`.",
    )
    vary.add_argument(
        "--inputs", type=Path, required=True, help="prompts with instructions (input_data.jsonl)"
    )
    vary.add_argument("--out", type=Path, help="the question set to write (JSONL)")
    vary.add_argument(
        "--lm-eval",
        type=Path,
        metavar="DIR",
        help="write the variants as lm-evaluation-harness tasks in DIR, a task per wording "
        "(lm_eval --include_path DIR), for `assay import lm-eval` to bring back",
    )
    vary.add_argument(
        "--lm-eval-repeats",
        type=int,
        default=1,
        metavar="N",
        help="the tasks ask each prompt N times (lm-eval's repeats; sample with lm_eval "
        "--gen_kwargs do_sample=True,temperature=T), for robustness --repeats-as-draws",
    )
    vary.add_argument(
        "--variants",
        type=_variant_kinds,
        default=list(VARIANT_KINDS),
        help=f"comma-separated kinds (default: all: {','.join(VARIANT_KINDS)})",
    )
    vary.add_argument(
        "--seed", type=int, default=0, help="seed of the random choices (which words get a typo)"
    )
    vary.add_argument(
        "--no-constraints",
        action="store_true",
        help="do not list the instructions as each variant's constraints (a judge of the "
        "outputs then sees only the prompt)",
    )
    vary.add_argument(
        "--limit", type=int, help="only the first N prompts of the file (default: all)"
    )
    vary.set_defaults(handler=_vary)


def _register_robustness(commands: Any) -> None:
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
        "`assay judge agreement --labels`), robustness.md and report.html",
    )
    add_report_option(robustness)
    robustness.add_argument(
        "--resamples", type=int, default=2000, help="bootstrap resamples (default: 2000)"
    )
    robustness.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: 0)")
    robustness.set_defaults(handler=_robustness)


def _variant_kinds(text: str) -> list[str]:
    kinds = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [kind for kind in kinds if kind not in VARIANT_KINDS]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(
            f"unknown variant kind(s) {', '.join(map(repr, unknown))}; "
            f"choose from {', '.join(VARIANT_KINDS)}"
            if unknown
            else "give at least one variant kind"
        )
    return list(dict.fromkeys(kinds))


def _vary(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit: must be 1 or more, got {args.limit}")
    if args.lm_eval_repeats < 1:
        raise ConfigError(f"--lm-eval-repeats: must be 1 or more, got {args.lm_eval_repeats}")
    if args.out is None and args.lm_eval is None:
        raise ConfigError("give --out (a question set), --lm-eval DIR (lm-eval tasks), or both")
    if args.out is not None:
        check_out_file(args.out, inputs=[args.inputs])
    if args.lm_eval is not None and args.lm_eval.exists() and not args.lm_eval.is_dir():
        raise ConfigError(f"--lm-eval: {args.lm_eval} is a file, not a directory")
    questions = vary_inputs(
        args.inputs, args.variants, seed=args.seed, constraints=not args.no_constraints
    )[: args.limit]
    cells = sum(len(q.variants) for q in questions)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_jsonl(args.out, questions)
        print(f"wrote {len(questions)} prompts, {cells} prompt variants, to {args.out}")
    for kind in args.variants:
        skipped = sum(kind in (q.meta or {}).get(NOT_APPLIED, []) for q in questions)
        print(f"  {kind}: {len(questions) - skipped} of {len(questions)} prompts")
    if args.out is not None:
        print(f"next: assay generate --questions {args.out} --model MODEL --out OUTPUTS")
    if args.lm_eval is not None:
        tasks = write_lm_eval_tasks(
            questions, args.variants, args.lm_eval, repeats=args.lm_eval_repeats
        )
        _print_lm_eval_steps(tasks, args)
    return 0


def _print_lm_eval_steps(tasks: list[str], args: argparse.Namespace) -> None:
    print(f"wrote {len(tasks)} lm-eval tasks ({', '.join(tasks)}) to {args.lm_eval}")
    print(
        f"next: lm_eval --model MODEL --model_args ... --include_path {args.lm_eval} "
        f"--tasks {','.join(tasks)} --log_samples --output_path LM_EVAL_OUT\n"
        f"      assay import lm-eval LM_EVAL_OUT/*/samples_{TASK_PREFIX}_*.jsonl --out IMPORTED\n"
        f"      assay instructions robustness --questions IMPORTED/questions.jsonl --outputs "
        f"IMPORTED --instructions-field meta.doc --baseline {tasks[0]}"
        + (" --repeats-as-draws" if args.lm_eval_repeats > 1 else "")
    )


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
    return 0


def _checked_outputs(args: argparse.Namespace, questions: QuestionSet) -> list[OutputCheck]:
    """Every output of every --outputs checked; with --draws each is one draw, so a cell is
    refused twice within one --outputs only."""
    outputs = (o for path in args.outputs for o in iter_outputs(path))
    if args.repeats_as_draws:
        draws: list[Iterable[TargetOutput]] = list(outputs_by_repeat(outputs))
    elif args.draws:
        _check_draw_settings(args.outputs)
        draws = [iter_outputs(path) for path in args.outputs]
    else:
        return check_outputs(
            questions,
            args.questions,
            outputs,
            args.mode,
            instructions_field=args.instructions_field,
        )
    return [
        check
        for draw, drawn in enumerate(draws)
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
    """What each draw index stands for: an --outputs, or a repeat."""
    if args.draws:
        return [str(path) for path in args.outputs]
    if args.repeats_as_draws:
        return [f"repeat {index + 1}" for index in range(max(c.draw for c in checks) + 1)]
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
    """Each path, or, for a directory with no outputs of its own that holds ``draw-K``
    folders (``generate --draws``), those folders in the order of K."""
    expanded = []
    for path in paths:
        found = [] if (path / MANIFEST_NAME).exists() else _numbered_draws(path)
        expanded += found or [path]
    return expanded


def _numbered_draws(path: Path) -> list[Path]:
    if not path.is_dir():
        return []
    draws = [p for p in path.iterdir() if p.is_dir() and re.fullmatch(r"draw-[1-9][0-9]*", p.name)]
    return sorted(draws, key=lambda p: int(p.name.removeprefix("draw-")))


def _check_draw_settings(paths: list[Path]) -> None:
    """Draws must differ only in their seed: refuse draws generated with other decoding
    settings, and say when the draws cannot differ (one seed, or temperature 0). Outputs with
    no generate run log (a manifest of your own, an import) are not checked."""
    logs: dict[Path, dict[str, Any]] = {}
    for path in paths:
        log = read_run_log(path if path.is_dir() else path.parent)
        if log is not None and log.kind == "generate":
            logs[path] = {name: log.config.get(name) for name in PROTOCOL_SETTINGS}
    if not logs:
        return
    first_path, first = next(iter(logs.items()))
    changed = [
        f"{PROTOCOL_SETTINGS[name]} {first[name]!r} in {first_path}, {value!r} in {path}"
        for path, settings in logs.items()
        for name, value in settings.items()
        if name != "seed" and value != first[name]
    ]
    if changed:
        raise ConfigError(
            "--draws: the draws were generated with other settings: " + "; ".join(changed),
            hint="draws of one set differ only in --seed; compare other settings as other "
            "targets, or in separate robustness runs",
        )
    seeds = [settings["seed"] for settings in logs.values()]
    if first["temperature"] == 0:
        print(
            "note: the draws were generated at temperature 0: they differ only by the "
            "backend's own nondeterminism",
            file=sys.stderr,
        )
    elif len(set(seeds)) < len(seeds):
        print(
            "note: two draws were generated with one --seed: a seeded backend gives the same "
            "outputs, which are then not independent draws",
            file=sys.stderr,
        )


def _check(args: argparse.Namespace) -> int:
    inputs = args.inputs or args.data.parent / INPUTS_FILE
    check_out_file(args.out, inputs=[args.data, inputs])
    if not inputs.is_file():
        raise InputError("inputs file not found (pass --inputs)", path=inputs)
    checked = check_responses_file(args.data, inputs, args.mode)
    checks = checked.checks
    if not checks:
        raise InputError(f"no response's prompt matches a prompt in {inputs}", path=args.data)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(args.out, "".join(c.model_dump_json() + "\n" for c in checks))
    summary = summarize(checks)
    covered = set(covered_instruction_ids())
    print(f"{'instruction id':<48} followed / total")
    for instruction_id, (followed, total) in summary.followed_by_id.items():
        note = "" if instruction_id in covered else "  (not covered: below 95% agreement)"
        print(f"{instruction_id:<48} {followed:>4} / {total:<4}{note}")
    print(
        f"\n{summary.responses} responses ({args.mode}): prompt-level "
        f"{summary.prompt_level:.1%}, instruction-level {summary.instruction_level:.1%}"
        + (f"; verdicts in {args.out}" if args.out else "")
    )
    if checked.unmatched_lines:
        lines = ", ".join(map(str, checked.unmatched_lines[:10]))
        more = " ..." if len(checked.unmatched_lines) > 10 else ""
        print(
            f"skipped {len(checked.unmatched_lines)} response(s) whose prompt is not in {inputs} "
            f"(line(s) {lines}{more})"
        )
    return 0


def _agreement(args: argparse.Namespace) -> int:
    read = sorted(args.data_dir.iterdir()) if args.data_dir.is_dir() else []
    check_out_file(args.out, inputs=read)
    check_out_file(args.disagreements, "--disagreements", inputs=[*read, args.out])
    modes = list(MODES) if args.mode == "both" else [args.mode]
    reports = [measure_agreement(args.data_dir, mode) for mode in modes]
    table = render_markdown(reports)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(args.out, table)
    if args.disagreements is not None:
        args.disagreements.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(args.disagreements, _disagreement_lines(reports))
    print(table, end="")
    return 0


def _disagreement_lines(reports: list[AgreementReport]) -> str:
    lines = []
    for report in reports:
        for item in [*report.disagreements, *report.exclusions]:
            kind = "disagreement" if isinstance(item, Disagreement) else "excluded"
            record = {"mode": report.mode, "kind": kind, **item.model_dump(mode="json")}
            lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    return "".join(lines)


def _list(args: argparse.Namespace) -> int:
    covered = set(covered_instruction_ids())
    for instruction_id in CHECKERS:
        print(f"{instruction_id:<48} {'covered' if instruction_id in covered else 'not covered'}")
    return 0
