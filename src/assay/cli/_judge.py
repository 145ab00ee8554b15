"""``assay generate`` and ``assay judge run|validate|analyze``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import functools
import json
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from ..data.questions import (
    MANIFEST_NAME,
    QuestionSet,
    QuestionSubset,
    TargetOutput,
    draw_folders,
    iter_outputs,
    load_question_index,
    load_questions,
)
from ..errors import ConfigError, InputError, yaml_input_error
from ..judge.archive import RecheckReport, recheck_archive
from ..judge.evalset import build_eval_set
from ..judge.generate import GenerateSettings, generate_outputs
from ..judge.protocol import DECODING_MODES, DecodingSettings, Protocol, load_protocol
from ..judge.run import JudgeRunConfig, refuse_unresumable, run_judges
from ..model import Model, ModelOptions, get_model, open_cache
from ..runs import RunDirLock
from ..runs.shards import parse_shard
from ._batch import add_executor_options, batch_session, check_executor_options, finish_batch
from ._common import (
    add_model_options,
    add_prices_option,
    add_report_option,
    apply_prices,
    check_bootstrap_options,
    check_run_dir,
    model_options,
    money_line,
    print_served_warnings,
    report_failed_calls,
    shows_money,
    write_run_report,
)
from ._draws import check_draw_settings, note_sampled_single_draws

if TYPE_CHECKING:  # loaded only by the commands that analyse
    from ..judge.agreement import Label
    from ..judge.analysis_types import AnalysisResult, AnalysisSettings
    from ..judge.draws import LoadedDraws
    from ..judge.draws_agreement import DrawsAgreementReport
    from ..judge.evaluations import Evaluation

SEED_MAX = 2**31 - 1  # the largest seed a backend takes (model.Seed)


def register(subparsers: Any) -> None:
    _register_generate(subparsers)
    judge = subparsers.add_parser("judge", help="the judge protocol: run, validate, analyze")
    commands = judge.add_subparsers(dest="judge_command", metavar="COMMAND")
    _register_run(commands)
    validate = commands.add_parser(
        "validate", help="re-check a judge run's archives offline (no model calls)"
    )
    validate.add_argument("run_dir", type=Path)
    validate.add_argument("--json", action="store_true", help="print the report as JSON")
    validate.set_defaults(handler=_validate)
    analyze = commands.add_parser(
        "analyze", help="write results_analysis.md, summary.json and plots for a judge run"
    )
    analyze.add_argument("run_dir", type=Path)
    analyze.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    analyze.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    analyze.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    analyze.add_argument(
        "--baseline",
        metavar="VARIANT",
        help="the prompt variant each other one is compared with, paired by question "
        "(default: the first label in sorted order; `original` for a set `instructions vary` "
        "wrote)",
    )
    analyze.add_argument(
        "--by",
        metavar="meta.KEY",
        action="append",
        default=[],
        help="also every metric per value of the samples' meta.KEY (questions' and manifest "
        "lines' own fields; repeatable; written to RUN/slices/meta.KEY.json)",
    )
    analyze.add_argument(
        "--repeats-as-draws",
        action="store_true",
        help="also read the run's repeats (`<variant> (repeat k)`, as `assay import` names "
        "promptfoo's --repeat and lm-eval's repeats) as draws of their variant: the joint "
        "analysis goes to RUN_DIR/repeats",
    )
    add_prices_option(analyze)
    add_report_option(analyze)
    analyze.set_defaults(handler=_analyze)
    _register_agreement(commands)
    judge.set_defaults(handler=lambda _args: _usage(judge))


def _register_agreement(commands: Any) -> None:
    agreement = commands.add_parser(
        "agreement",
        help="agreement of a judge run with labels of any kind (e.g. human annotations)",
        description="Per judge and dimension, on valid evaluations: accuracy, weighted kappa, "
        "Krippendorff's alpha and the confusion matrix against the labels' consensus, with "
        "95% bootstrap intervals over questions; with several annotators, their agreement "
        "among themselves on the same samples. Labels: JSONL or CSV with question_id, "
        "prompt_variant, target_model, dimension, score[, annotator][, output_id]. RUN_DIR "
        "may hold draw-K judge runs (`judge run --draws` or `--judge-draws`): each draw's "
        "agreement, then the draws pooled and, for draws of the judge, the judge's median.",
    )
    agreement.add_argument("run_dir", type=Path)
    agreement.add_argument(
        "--labels",
        type=Path,
        action="append",
        required=True,
        help="labels file (repeatable); for a directory of draws, a file serves every draw and "
        "a folder gives draw k labels-draw-k.jsonl",
    )
    agreement.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    agreement.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    agreement.add_argument(
        "--by",
        action="append",
        default=[],
        metavar="meta.KEY",
        help="also the agreement per value of a key of the samples' meta (repeatable; one "
        "judge run, not a directory of draws)",
    )
    agreement.add_argument(
        "--out", type=Path, help="JSON file to write (default RUN_DIR/agreement.json)"
    )
    agreement.add_argument(
        "--repeats-as-draws",
        action="store_true",
        help="also read the run's repeats (`<variant> (repeat k)`) as draws, each with the "
        "labels of its repeat: the draws' agreement goes to RUN_DIR/repeats/agreement.json",
    )
    agreement.set_defaults(handler=_agreement)


def _agreement(args: argparse.Namespace) -> int:
    from ..judge.agreement import (
        AGREEMENT_FILE,
        label_agreement,
        load_labels,
        report_markdown,
        sliced_agreement,
        write_report,
    )
    from ..judge.draws import draw_runs
    from ..judge.draws_agreement import draws_agreement_markdown, write_draws_agreement
    from ..judge.evaluations import load_evaluations
    from ..judge.slices import check_slices
    from ._common import check_out_file

    check_bootstrap_options(args)
    runs = draw_runs(args.run_dir)
    if runs and args.repeats_as_draws:
        raise ConfigError(
            f"--repeats-as-draws: {args.run_dir} holds draw-K runs; its draws are read as such",
            hint="leave out --repeats-as-draws",
        )
    if runs and args.by:
        raise ConfigError(
            f"--by with a directory of draws ({args.run_dir}): slice one draw's agreement",
            hint=f"assay judge agreement {args.run_dir / runs[0].name} --labels ... --by ...",
        )
    if runs:
        return _draws_agreement(args, runs)
    _require_judge_run(args.run_dir)
    files = [_labels_file_of(path, args.run_dir) for path in args.labels]
    out = args.out or args.run_dir / AGREEMENT_FILE
    check_out_file(out, inputs=files)
    per_file = [(path, load_labels(path)) for path in files]
    labels = [label for _, found in per_file for label in found]
    # a run still appending records is not compared under it: its agreement.json would say
    # "labels name samples no judge evaluated" of samples merely not judged yet
    with _run_lock(args.run_dir):
        outputs: dict[tuple[str, str, str], str] = {}
        records, unreadable = load_evaluations(args.run_dir, outputs=outputs)
        check_slices(records, args.by)
        repeats = (
            _repeats_agreement(args, (records, unreadable), outputs, per_file)
            if args.repeats_as_draws
            else None
        )
        report = label_agreement(
            records,
            labels,
            n_resamples=args.resamples,
            seed=args.seed,
            files=[str(p) for p in files],
        )
        sliced = [
            sliced_agreement(records, labels, option, n_resamples=args.resamples, seed=args.seed)
            for option in args.by
        ]
        report = report.model_copy(update={"slices": tuple(sliced)})
        write_report(report, out)
        if repeats is not None:
            (args.run_dir / REPEATS_DIR).mkdir(exist_ok=True)
            write_draws_agreement(repeats, args.run_dir / REPEATS_DIR / AGREEMENT_FILE)
    print(report_markdown(report), end="")
    print(f"wrote {out}")
    if repeats is not None:
        print(f"\nthe repeats as draws:\n\n{draws_agreement_markdown(repeats)}", end="")
        print(f"wrote {args.run_dir / REPEATS_DIR / AGREEMENT_FILE}")
    return 0


def _repeats_agreement(
    args: argparse.Namespace,
    loaded: tuple[list[Evaluation], list[str]],
    outputs: dict[tuple[str, str, str], str],
    labels: list[tuple[Path, list[Label]]],
) -> DrawsAgreementReport:
    """The run's repeats read as draws, each with its repeat's labels (checked, like the
    run's own agreement, before anything is written)."""
    from ..judge.draws import repeats_as_draws
    from ..judge.draws_agreement import draws_agreement, repeats_for_agreement

    draws = repeats_as_draws(args.run_dir, loaded)
    draws, per_draw, same_outputs = repeats_for_agreement(draws, labels, outputs)
    report, _ = draws_agreement(
        args.run_dir / REPEATS_DIR, draws, per_draw, same_outputs=same_outputs,
        n_resamples=args.resamples, seed=args.seed,
    )  # fmt: skip
    return report


def _labels_file_of(path: Path, run_dir: Path) -> Path:
    """A labels file as given, or the labels.jsonl of a folder (an `instructions robustness`
    run); a folder of labels-draw-K.jsonl only is for a directory of draws."""
    from ..data.questions import LABELS_FILE

    if not path.is_dir():
        return path
    if (path / LABELS_FILE).is_file():
        return path / LABELS_FILE
    raise ConfigError(
        f"--labels {path}: the folder holds no {LABELS_FILE}; a folder of labels-draw-K.jsonl "
        f"is for a directory of draws, and {run_dir} is one judge run",
        hint="give a labels file, or the folder `assay instructions robustness` wrote",
    )


def _draws_agreement(args: argparse.Namespace, runs: list[Path]) -> int:
    """A directory of draw-K judge runs: each draw's agreement (RUN/draw-k/agreement.json),
    then the draws together (RUN/agreement.json), every draw locked and its labels read first."""
    from ..judge.agreement import AGREEMENT_FILE, write_report
    from ..judge.draws import load_draws
    from ..judge.draws_agreement import (
        draws_agreement,
        draws_agreement_markdown,
        labels_per_draw,
        refuse_shared_labels_of_other_outputs,
        write_draws_agreement,
    )
    from ._common import check_out_file

    out = args.out or args.run_dir / AGREEMENT_FILE
    check_out_file(out, inputs=args.labels)
    labels = labels_per_draw(args.labels, [run.name for run in runs])
    with contextlib.ExitStack() as locks:
        for run in runs:
            locks.enter_context(_run_lock(run))
        loaded = load_draws(args.run_dir, outputs=True)
        same_outputs = refuse_shared_labels_of_other_outputs(args.labels, loaded)
        report, per_draw = draws_agreement(
            args.run_dir, loaded, labels, same_outputs=same_outputs,
            n_resamples=args.resamples, seed=args.seed,
        )  # fmt: skip
        for run, own in zip(runs, per_draw, strict=True):
            write_report(own, run / AGREEMENT_FILE)
        write_draws_agreement(report, out)
    print(draws_agreement_markdown(report), end="")
    print(f"wrote {out} and {AGREEMENT_FILE} in each draw")
    return 0


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _register_generate(subparsers: Any) -> None:
    gen = subparsers.add_parser(
        "generate", help="run every question x variant through target models, write outputs"
    )
    gen.add_argument("--questions", type=Path, required=True, help="question set (.jsonl/.yaml)")
    gen.add_argument("--model", action="append", required=True, help="target model (repeatable)")
    gen.add_argument("--out", type=Path, required=True, help="output directory")
    gen.add_argument("--max-tokens", type=int, default=512, help="tokens per output (512)")
    gen.add_argument("--temperature", type=float, default=0.0, help="sampling (0)")
    gen.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling (1)")
    gen.add_argument("--seed", type=int, default=0, help="sampling seed, 0 to 2^31-1 (0)")
    gen.add_argument("--system-prompt", help="a system message sent before every prompt")
    gen.add_argument(
        "--draws",
        type=int,
        default=1,
        metavar="N",
        help="sample every prompt N times, at a temperature above 0: draw k (seed SEED+k-1) "
        "goes to OUT/draw-k, for `assay instructions robustness --draws` (default 1: the "
        "outputs go to OUT)",
    )
    gen.add_argument(
        "--shard",
        metavar="K/N",
        help="generate for the K-th of N shards of the questions (one per machine; `assay "
        "merge` joins the output directories)",
    )
    add_model_options(gen)
    add_executor_options(gen, ray=True)
    gen.set_defaults(handler=_generate)


def _register_run(commands: Any) -> None:
    run = commands.add_parser("run", help="judge target outputs under the strict protocol")
    run.add_argument("--questions", type=Path, required=True, help="question set (.jsonl/.yaml)")
    run.add_argument(
        "--outputs",
        type=Path,
        action="append",
        required=True,
        help="target outputs: a manifest .jsonl or a directory (repeatable)",
    )
    run.add_argument("--judge", action="append", required=True, help="judge model (repeatable)")
    run.add_argument(
        "--mode",
        choices=("cross", "self", "both"),
        default="cross",
        help="cross = judges judge only other models' outputs (default, primary); self = only "
        "their own; both = all pairs",
    )
    run.add_argument("--out", type=Path, required=True, help="run directory (resumed if it exists)")
    run.add_argument(
        "--judge-attempts",
        type=int,
        default=1,
        help="attempts per sample: 1 = evaluate once (default); more = bounded re-asks of "
        "invalid replies, each archived",
    )
    run.add_argument(
        "--constrained",
        choices=DECODING_MODES,
        default="exact",
        help="constrained decoding: exact = only protocol-valid replies for each sample "
        "(default), schema = structure-only JSON schema, off = free text; a backend that "
        "takes no JSON schema decodes free text (recorded per evaluation)",
    )
    run.add_argument(
        "--no-blind",
        dest="blind",
        action="store_false",
        help="show the judge the real target model and output id (default: opaque aliases)",
    )
    run.add_argument(
        "--judge-max-tokens",
        type=int,
        default=1024,
        help="tokens per judge reply (1024; exact decoding raises it to the longest valid reply)",
    )
    run.add_argument("--temperature", type=float, default=0.0, help="judge sampling (0)")
    run.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling (1)")
    run.add_argument(
        "--seed", type=int, default=0, help="judge seed, 0 to 2^31-1; re-ask k uses seed+k-1 (0)"
    )
    run.add_argument(
        "--date",
        type=_iso_date,
        help="the date judges see in each request's meta.timestamp (YYYY-MM-DD; default: "
        "today, UTC): give a run's date to ask exactly the requests it asked",
    )
    run.add_argument(
        "--protocol", type=Path, help="YAML/JSON protocol settings (thresholds, finer rubric, ...)"
    )
    run.add_argument(
        "--allow-outside-paths",
        action="store_true",
        help="let a manifest's 'path' name files outside the manifest's folder "
        "(refused by default: a manifest must not make assay read arbitrary files)",
    )
    run.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="judge the aligned samples even when outputs are missing, duplicated or unexpected",
    )
    run.add_argument(
        "--archive-layout",
        choices=("shards", "files"),
        default="shards",
        help="how a new run stores evaluations: append-only JSONL shards with repeated texts "
        "stored once (default), or one JSON file per evaluation; a resumed run keeps its own",
    )
    run.add_argument(
        "--draws",
        action="store_true",
        help="each --outputs is a directory of draw-K folders (`assay generate --draws`): draw "
        "k is judged into OUT/draw-k, a judge run of its own, and `assay judge analyze OUT` "
        "reads the draws together",
    )
    run.add_argument(
        "--judge-draws",
        type=int,
        default=1,
        metavar="N",
        help="judge the same outputs N times at a --temperature above 0: draw k (judge seed "
        "SEED+k-1) goes to OUT/draw-k, so that `assay judge analyze OUT` sets the judge's own "
        "sampling noise apart (default 1: one run into OUT)",
    )
    run.add_argument(
        "--judge-seed-per-draw",
        action="store_true",
        help="with --draws at a --temperature above 0: judge draw k with seed SEED+k-1, so "
        "each draw samples the targets and the judge anew (default: one judge seed)",
    )
    run.add_argument(
        "--shard",
        metavar="K/N",
        help="judge the K-th of N shards of the questions (one per machine; `assay merge` "
        "joins the run directories)",
    )
    add_model_options(run)
    add_executor_options(run, ray=True)
    run.set_defaults(handler=_run)


def _iso_date(text: str) -> str:
    # The protocol's own rule: a date the validator would reject in a reply is no request date.
    from ..judge.validate import is_protocol_date

    if not is_protocol_date(text):
        raise argparse.ArgumentTypeError(f"expected a date as YYYY-MM-DD, got {text!r}")
    return text


def _open_models(names: Sequence[str], options: ModelOptions) -> list[Model]:
    """One model per distinct name, all sharing one response cache."""
    from ..judge.stub_replies import RESPONDERS

    options = options.with_stub_responders(RESPONDERS)
    cache = open_cache(options)
    return [get_model(name, options, cache=cache) for name in dict.fromkeys(names)]


async def _close(models: Sequence[Model]) -> None:
    for model in models:
        await model.aclose()


_T = TypeVar("_T")


def _with_models(
    args: argparse.Namespace, names: Sequence[str], work: Callable[[list[Model]], Awaitable[_T]]
) -> _T:
    """``work`` on the named models, opened for it and closed after it, in the batch session
    the executor options ask for."""

    async def go() -> _T:
        models = _open_models(names, model_options(args))
        try:
            return await work(models)
        finally:
            await _close(models)

    with batch_session(args):
        return asyncio.run(go())


def _generate(args: argparse.Namespace) -> int:
    check_executor_options(args)
    check_run_dir(args.out, "--out")
    if args.draws != 1:
        _check_draws(args)
    questions = load_questions(args.questions)
    settings = GenerateSettings(
        temperature=args.temperature,
        top_p=args.top_p,
        max_tokens=args.max_tokens,
        seed=args.seed,
        system_prompt=args.system_prompt,
        concurrency=args.concurrency,
        executor=args.executor,
        ray_batch_size=args.ray_batch_size,
        ray_node_wait_s=args.ray_node_wait,
        model_options=model_options(args) if args.executor == "ray" else None,
        shard=None if args.shard is None else parse_shard(args.shard),
    )
    if args.draws == 1:
        return _generate_into(args, questions, settings, args.out)
    codes = []
    for draw in range(1, args.draws + 1):
        seed = args.seed + draw - 1
        out = args.out / f"draw-{draw}"
        print(f"draw {draw} of {args.draws}: --seed {seed} -> {out}")
        drawn = settings.model_copy(update={"seed": seed})
        codes.append(_generate_into(args, questions, drawn, out))
    return max(codes)


def _check_draws(args: argparse.Namespace) -> None:
    """--draws N: a temperature to sample at, seeds in range, a live or Ray executor (batch
    files hold one draw's calls), and an --out that is not itself an output directory."""
    _check_seeded_draws(args, "--draws", args.draws, "every draw is the same greedy answer")
    if args.executor == "batch":
        raise ConfigError(
            "--draws with --executor batch: a batch directory holds one draw's calls",
            hint="run one generate per draw, each with its own --seed, --out and --batch-dir",
        )
    if (args.out / MANIFEST_NAME).exists():
        raise ConfigError(
            f"--draws: {args.out} holds outputs of its own; the draws go to draw-K folders of "
            "a directory that holds none"
        )


def _check_seeded_draws(args: argparse.Namespace, option: str, count: int, same: str) -> None:
    """N draws seeded SEED..SEED+N-1 at a temperature above 0 (at 0, ``same`` happens)."""
    if count < 1:
        raise ConfigError(f"{option}: must be 1 or more, got {count}")
    if args.temperature == 0:
        raise ConfigError(
            f"{option}: at --temperature 0 {same}",
            hint="give a temperature above 0 (0.7, for example)",
        )
    last = args.seed + count - 1
    if last > SEED_MAX:
        raise ConfigError(f"{option}: the seeds {args.seed} to {last} pass {SEED_MAX}")


def _generate_into(
    args: argparse.Namespace, questions: QuestionSet, settings: GenerateSettings, out: Path
) -> int:
    summary = _with_models(
        args, args.model, lambda models: generate_outputs(questions, models, out, settings)
    )
    waits = f", {summary.deferred} waiting on batch answers" if summary.deferred else ""
    print(
        f"generated {summary.written} outputs ({summary.already_done} already there, "
        f"{summary.failed} failed calls{waits}) of {summary.expected} -> "
        f"{out / 'manifest.jsonl'}"
    )
    print_served_warnings(summary.served_warnings, out)
    waiting = finish_batch(args, f"{summary.deferred} output(s) wait on batch answers")
    if waiting is not None:
        return waiting
    if summary.failed:
        print(f"failed calls are listed in {out / 'generation_failures.jsonl'}")
    return report_failed_calls(args, summary.failed, "model call(s)")


def _run(args: argparse.Namespace) -> int:
    check_executor_options(args)
    check_run_dir(args.out, "--out")
    if args.judge_draws != 1:
        return _run_judge_draws(args)
    if not args.draws:
        if args.judge_seed_per_draw:
            raise ConfigError(
                "--judge-seed-per-draw without --draws",
                hint="give --draws (outputs in draw-K folders), or --judge-draws N to judge one "
                "set of outputs N times",
            )
        note_sampled_single_draws(args.outputs, "judge run --draws")
        return _run_into(args, args.outputs, args.out, args.seed)
    draws = _output_draws(args)
    for path in args.outputs:  # one target's draws differ only in their seed
        check_draw_settings([path / name for name in draws])
    if args.judge_seed_per_draw:
        same = "every draw's judge gives the reply one seed would"
        _check_seeded_draws(args, "--judge-seed-per-draw", len(draws), same)
    codes = []
    for number, name in enumerate(draws, start=1):
        out = args.out / name
        seed = args.seed + number - 1 if args.judge_seed_per_draw else args.seed
        print(f"{name} ({number} of {len(draws)}): judge --seed {seed} -> {out}")
        codes.append(_run_into(args, [path / name for path in args.outputs], out, seed))
    print(f"next: assay judge analyze {args.out} (each draw, then the draws together)")
    return max(codes)


def _run_judge_draws(args: argparse.Namespace) -> int:
    """--judge-draws N: the same outputs judged N times, judge seed SEED+k-1 into OUT/draw-k."""
    _check_judge_draws(args)
    note_sampled_single_draws(args.outputs, "judge run --draws")
    codes = []
    for draw in range(1, args.judge_draws + 1):
        seed, out = args.seed + draw - 1, args.out / f"draw-{draw}"
        print(f"draw-{draw} ({draw} of {args.judge_draws}): judge --seed {seed} -> {out}")
        codes.append(_run_into(args, args.outputs, out, seed))
    print(f"next: assay judge analyze {args.out} (each draw, then the draws together)")
    return max(codes)


def _check_judge_draws(args: argparse.Namespace) -> None:
    if args.draws:
        raise ConfigError(
            "--judge-draws with --draws: give one",
            hint="--draws judges each draw of the outputs; --judge-draws N judges one set of "
            "outputs N times",
        )
    if args.judge_seed_per_draw:
        raise ConfigError("--judge-seed-per-draw with --judge-draws: each draw has its seed")
    same = "the judge gives the same reply every time"
    _check_seeded_draws(args, "--judge-draws", args.judge_draws, same)
    _refuse_draws_into(args, "--judge-draws")


def _output_draws(args: argparse.Namespace) -> list[str]:
    """--draws: the draw-K folders every --outputs holds (the same in each), judged into
    draw-K folders of an --out that is not itself a judge run."""
    found = {path: [p.name for p in draw_folders(path)] for path in args.outputs}
    for path, names in found.items():
        if not names:
            raise ConfigError(
                f"--draws: {path} holds no draw-K folders with a manifest",
                hint="`assay generate --draws N` writes them; without --draws, give one set "
                "of outputs",
            )
    first, *others = found.items()
    for path, names in others:
        if names != first[1]:
            raise ConfigError(
                f"--draws: {path} holds {', '.join(names)} but {first[0]} holds "
                f"{', '.join(first[1])}",
                hint="every --outputs needs the same draws",
            )
    _refuse_draws_into(args, "--draws")
    return first[1]


def _refuse_draws_into(args: argparse.Namespace, option: str) -> None:
    """Draws go to draw-K judge runs of an --out that is no judge run, called live or on Ray."""
    if args.executor == "batch":
        raise ConfigError(
            f"{option} with --executor batch: a batch directory holds one run's calls",
            hint="judge each draw with its own --out, --seed and --batch-dir",
        )
    if (args.out / "protocol.json").exists():
        raise ConfigError(
            f"{option}: {args.out} is a judge run itself; the draws go to draw-K folders of a "
            "directory that holds none"
        )


def _run_into(args: argparse.Namespace, output_paths: Sequence[Path], out: Path, seed: int) -> int:
    every_question = load_question_index(args.questions)  # a large set is read by offset
    shard = None if args.shard is None else parse_shard(args.shard)
    # a shard judges its own questions, and reads only their outputs (a shard's outputs
    # from `generate --shard`, or every output)
    questions = every_question if shard is None else QuestionSubset(every_question, shard.holds)

    def outputs() -> Iterator[TargetOutput]:  # read afresh on each pass, never held
        for path in output_paths:
            for output in iter_outputs(path, allow_outside_paths=args.allow_outside_paths):
                if shard is None or shard.holds(output.question_id):
                    yield output

    config = JudgeRunConfig(
        mode=args.mode,
        max_attempts=args.judge_attempts,
        concurrency=args.concurrency,
        allow_incomplete=args.allow_incomplete,
        archive_layout=args.archive_layout,
        executor=args.executor,
        ray_batch_size=args.ray_batch_size,
        ray_node_wait_s=args.ray_node_wait,
        model_options=model_options(args) if args.executor == "ray" else None,
        shard=shard,
        shard_items=0 if shard is None else sum(1 for _ in every_question.cells()),
        protocol=_protocol(args.protocol).model_copy(update={"blind": args.blind}),
        timestamp=args.date,
        decoding=DecodingSettings(
            temperature=args.temperature,
            top_p=args.top_p,
            max_tokens=args.judge_max_tokens,
            seed=seed,
            constrained=args.constrained,
        ),
    )
    refuse_unresumable(out, config)
    eval_set = build_eval_set(questions, outputs)
    if eval_set.coverage.complete or args.allow_incomplete:
        print(eval_set.coverage.describe())  # else the error below says it, once
    summary = _with_models(
        args, args.judge, lambda judges: run_judges(eval_set, judges, out, config)
    )
    # a failed call is counted invalid (no reply) but is no judgment: the line says which
    failed = f" ({summary.call_failed} of them failed calls)" if summary.call_failed else ""
    # pairs whose calls wait in a batch file are neither judged nor invalid: counted apart, and
    # the next step is the batch (printed below), not the analysis
    waits = f", {summary.deferred} waiting on batch answers" if summary.deferred else ""
    verb = "" if summary.deferred else "judged "
    next_step = "" if summary.deferred else f"; next: assay judge analyze {out}"
    print(
        f"{verb}{summary.work_items} sample x judge pairs ({summary.already_finished} already "
        f"finished, {summary.attempts_made} attempts now, {summary.model_calls} model calls"
        f"{waits}): {summary.valid} valid, {summary.invalid} invalid{failed}\n"
        f"fingerprint {summary.fingerprint}{next_step}"
    )
    print_served_warnings(summary.served_warnings, out)
    waiting = finish_batch(args, f"{summary.deferred} pair(s) wait on batch answers")
    if waiting is not None:
        return waiting
    return report_failed_calls(
        args, summary.call_failed, "judge call(s)", summary.call_failure_reasons
    )


def _protocol(path: Path | None) -> Protocol:
    from ..data.yaml_keys import line_at, strict_load

    if path is None:
        return Protocol()
    try:
        text = path.read_text(encoding="utf-8")
        data = strict_load(text)  # a key given twice is refused
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the protocol settings: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {error.start + 1})", path=path) from None
    except yaml.YAMLError as error:
        raise yaml_input_error(error, path, "not YAML or JSON") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: protocol settings must be a mapping")
    return load_protocol(data, str(path), functools.partial(line_at, text))


def _validate(args: argparse.Namespace) -> int:
    from ..judge.draws import draw_runs

    runs = draw_runs(args.run_dir)  # a directory of draws: each draw's archive in turn
    if not runs:
        _require_judge_run(args.run_dir)
    reports = []
    for run in runs or [args.run_dir]:
        with _run_lock(run):  # a run still appending records is not checked under it
            reports.append(recheck_archive(run))
    if args.json:
        dumped = [report.model_dump(mode="json") for report in reports]
        print(json.dumps(dumped if runs else dumped[0], indent=2))
    else:
        print("\n".join(_describe_recheck(report) for report in reports))
    return 0 if all(report.consistent for report in reports) else 1


def _require_judge_run(run_dir: Path) -> None:
    """A judge run directory (checked before its lock is taken: the lock would make it)."""
    from ..judge.archive import read_protocol_state

    if read_protocol_state(run_dir) is None:
        raise ConfigError(f"{run_dir} is not a judge run directory (no protocol.json)")


@contextlib.contextmanager
def _run_lock(run_dir: Path) -> Iterator[None]:
    """Hold the run directory's lock while a command reads a judge run (``judge run`` holds
    it while it writes): a run being written is refused with the lock's message, not read
    half-written."""
    lock = RunDirLock(run_dir)
    locked = _try_lock(lock)
    try:
        yield
    finally:
        if locked:
            lock.release()


def _try_lock(lock: RunDirLock) -> bool:
    """Take the lock (a RunError when another process holds it). A directory this process
    may not write cannot be locked, and no assay process of this user can be writing it: it
    is read without the lock, with a note (False)."""
    try:
        lock.acquire()
    except OSError as error:
        if error.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise
        print(f"note: {lock.run_dir} cannot be locked ({error.strerror})", file=sys.stderr)
        return False
    if lock.stale_note:  # a writer that died: what it left is read as it is
        print(f"note: {lock.stale_note}", file=sys.stderr)
    return True


def _describe_recheck(report: RecheckReport) -> str:
    # an unreadable record is neither valid nor invalid: counted apart, the counts add up
    unreadable = f", {len(report.unreadable)} unreadable" if report.unreadable else ""
    lines = [
        f"{report.run_dir}: {report.files} evaluations, {report.valid} valid, "
        f"{report.invalid} invalid{unreadable} (fingerprint {report.fingerprint})",
        *(f"  {flag}: {count}" for flag, count in sorted(report.flag_counts.items())),
    ]
    problems = {
        "unreadable": report.unreadable,
        "in the wrong archive": report.misfiled,
        "classified differently now": report.reclassified,
        "other fingerprint": report.other_fingerprint,
        "attempt archived twice": report.duplicated_attempts,
    }
    for label, paths in problems.items():
        lines += [f"{label}: {path}" for path in paths]
    if not report.readme_present:
        lines.append("invalid_evaluations/README.md is missing")
    lines.append("consistent" if report.consistent else "NOT consistent")
    return "\n".join(lines)


def _analyze(args: argparse.Namespace) -> int:
    from ..judge.draws import draw_runs

    settings = _analysis_settings(args)
    runs = draw_runs(args.run_dir)
    if runs and args.repeats_as_draws:
        raise ConfigError(
            "--repeats-as-draws: the run holds draw-K runs; its draws are read as such",
            hint="leave out --repeats-as-draws",
        )
    with contextlib.ExitStack() as locks:  # a run still appending records is not analysed
        for run in runs or [args.run_dir]:  # every run checked before any is analysed
            _checked_and_locked(run, locks)
        if args.prices is not None:  # read once for every draw
            from ..runs.prices import load_prices

            load_prices(args.prices)
        if runs:
            _analyze_draws(args, settings)
        elif args.repeats_as_draws:
            _analyze_repeats(args, settings)
        else:
            _analyze_one(args, settings)
    return 0


REPEATS_DIR = "repeats"  # where --repeats-as-draws writes the joint analysis of a run


def _checked_and_locked(run_dir: Path, locks: contextlib.ExitStack) -> None:
    """The run's files the analysis reads, checked before it reads the archive or writes
    anything: run.json (named first, whatever the directory holds) and coverage.json; the
    run locked (a run still appending records is not analysed). The --by keys are checked on
    the evaluations read."""
    from ..judge.analyze import read_coverage
    from ..runs import read_run_log

    read_run_log(run_dir)
    _require_judge_run(run_dir)
    locks.enter_context(_run_lock(run_dir))
    read_coverage(run_dir)


def _analyze_one(args: argparse.Namespace, settings: AnalysisSettings) -> None:
    """One judge run, its archive read once for the analysis and every --by slice."""
    from ..judge.evaluations import load_evaluations
    from ..judge.slices import check_slices

    loaded = load_evaluations(args.run_dir)
    check_slices(loaded[0], args.by)
    _analyze_locked(args, args.run_dir, settings, loaded)


def _analyze_locked(
    args: argparse.Namespace,
    run_dir: Path,
    settings: AnalysisSettings,
    loaded: tuple[list[Evaluation], list[str]],
) -> None:
    """One judge run's analysis, its lock held (``loaded``: its evaluations, already read and
    their --by keys checked)."""
    from ..judge.analyze import analyze_run

    apply_prices(args, [run_dir])
    result = analyze_run(run_dir, settings, loaded)
    _print_analysis(result)
    for option in args.by:
        from ..judge.slices import sliced_summaries, slices_markdown, write_slices

        summaries = sliced_summaries(loaded[0], run_dir, option, settings)
        print(f"wrote {write_slices(run_dir, option, summaries)}")
        print(slices_markdown(option, summaries))
    write_run_report(run_dir, args)


def _analyze_draws(args: argparse.Namespace, settings: AnalysisSettings) -> None:
    """A directory of draw-K judge runs: each draw's own analysis, then the draws together
    (checked to share one protocol and hold the --baseline before anything is written)."""
    from ..judge.analyze import refuse_unknown_baseline
    from ..judge.draws import load_draws
    from ..judge.slices import check_slices

    loaded = load_draws(args.run_dir)
    every = [r for evaluations in loaded.evaluations for r in evaluations]
    refuse_unknown_baseline(every, settings.baseline_variant)
    for evaluations in loaded.evaluations:
        check_slices(evaluations, args.by)
    for run, evaluations, unreadable in zip(
        loaded.runs, loaded.evaluations, loaded.unreadable, strict=True
    ):
        print(f"{run.name}:")
        _analyze_locked(args, run, settings, (evaluations, unreadable))
    _write_joint_analysis(args, args.run_dir, loaded, settings)


def _analyze_repeats(args: argparse.Namespace, settings: AnalysisSettings) -> None:
    """The run's own analysis, then its repeats read as draws (a run without repeats is
    refused before anything is written)."""
    from ..judge.draws import repeats_as_draws
    from ..judge.evaluations import load_evaluations
    from ..judge.slices import check_slices

    loaded = load_evaluations(args.run_dir)
    check_slices(loaded[0], args.by)
    repeats = repeats_as_draws(args.run_dir, loaded)
    _analyze_locked(args, args.run_dir, settings, loaded)
    _write_joint_analysis(args, args.run_dir / REPEATS_DIR, repeats, settings)


def _write_joint_analysis(
    args: argparse.Namespace, out: Path, loaded: LoadedDraws, settings: AnalysisSettings
) -> None:
    from ..judge.draws import write_draws_analysis
    from ..judge.draws_report import draws_lines

    out.mkdir(exist_ok=True)
    summary, written = write_draws_analysis(out, loaded, settings)
    print("\n".join(draws_lines(summary)))
    print(f"wrote {', '.join(written)}")
    write_run_report(out, args)


def _analysis_settings(args: argparse.Namespace) -> AnalysisSettings:
    """The analysis options, each checked under the name it was typed with."""
    from ..judge.analysis_types import AnalysisSettings

    check_bootstrap_options(args)
    return AnalysisSettings(
        n_resamples=args.resamples,
        seed=args.seed,
        plots=not args.no_plots,
        baseline_variant=args.baseline,
    )


def _print_analysis(result: AnalysisResult) -> None:
    skipped = result.summary.skipped_unreadable
    if skipped:
        print(f"skipped {len(skipped)} unreadable record(s):", file=sys.stderr)
        for line in skipped:
            print(f"  {line}", file=sys.stderr)
    print(json.dumps(result.headline(), indent=2))
    for note in result.summary.notes:
        print(f"note: {note}")
    money = result.summary.money
    if money is not None and shows_money(money):
        print(money_line(money, "sample x judge"))
        for judge, cost in money.by_model.items():
            usd = "unknown" if cost.usd is None else f"{cost.usd:.6f} {money.currency}"
            tokens = f"{cost.prompt_tokens} prompt + {cost.completion_tokens} completion tokens"
            print(f"  {judge}: {tokens}, {usd}")
    print(f"wrote {', '.join(result.written)}")
