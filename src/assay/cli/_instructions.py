"""``assay instructions``: deterministic checks of verifiable instructions (IFEval's ids)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

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
from ..instructions.inspect_dataset import write_inspect_dataset
from ..instructions.lm_eval_tasks import TASK_PREFIX, write_lm_eval_tasks
from ..instructions.variants import VARIANT_KINDS
from ..instructions.varied_set import NOT_APPLIED, vary_inputs
from ..runs import write_atomic
from ._common import (
    check_out_file,
)
from ._import import write_jsonl
from ._robustness import register_robustness


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
    register_robustness(commands)
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
        "--inspect",
        type=Path,
        metavar="FILE",
        help="write the variants as an inspect_ai dataset (JSON lines, a sample per prompt x "
        "wording, for json_dataset(FILE) and the instructions_followed() scorer), for `assay "
        "import inspect` to bring back",
    )
    vary.add_argument(
        "--lm-eval-metrics",
        choices=("lm-eval", "assay"),
        default="lm-eval",
        help="how the tasks score: lm-eval's IFEval functions (default; they download NLTK's "
        "punkt_tab data at first use) or assay's instruction checker (no download; assay "
        "importable where lm-eval runs)",
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
    if args.out is None and args.lm_eval is None and args.inspect is None:
        raise ConfigError(
            "give --out (a question set), --lm-eval DIR (lm-eval tasks), --inspect FILE (an "
            "inspect_ai dataset), or several"
        )
    for written in (args.out, args.inspect):
        if written is not None:
            check_out_file(written, inputs=[args.inputs])
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
            questions,
            args.variants,
            args.lm_eval,
            repeats=args.lm_eval_repeats,
            metrics=args.lm_eval_metrics,
        )
        _print_lm_eval_steps(tasks, args)
    if args.inspect is not None:
        args.inspect.parent.mkdir(parents=True, exist_ok=True)
        samples = write_inspect_dataset(questions, args.inspect)
        _print_inspect_steps(samples, args.inspect)
    return 0


def _print_inspect_steps(samples: int, path: Path) -> None:
    print(f"wrote {samples} inspect_ai samples (a prompt x wording each) to {path}")
    print(
        f"next: inspect_ai's eval() of Task(dataset=json_dataset({str(path)!r}), "
        "solver=generate(), scorer=assay.integrations.inspect_ai.instructions_followed())\n"
        "      assay import inspect LOG --out IMPORTED\n"
        "      assay instructions robustness --questions IMPORTED/questions.jsonl --outputs "
        "IMPORTED --instructions-field meta.metadata  (with --epochs N: --repeats-as-draws)"
    )


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
