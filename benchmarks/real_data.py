"""assay on the real data of ../shared/data: the tables of docs/benchmarks.md.

One subcommand per table; each runs what it needs (runs resume: a rerun of finished work calls
no model) and writes its table as markdown to runs/real_data/tables/<name>.md and to stdout.

    python benchmarks/real_data.py prepare            # import the datasets, write the samples
    python benchmarks/real_data.py verify-full        # table 1: model-free checkers, full files
    python benchmarks/real_data.py verify-sample      # table 2: lexical, learned, smollm2, samples
    python benchmarks/real_data.py judge              # table 3: smollm2 judge on IFEval GPT-4
    python benchmarks/real_data.py instructions       # table 4: instruction checker vs IFEval

Every run directory and imported file lives under runs/real_data/ (gitignored): nothing from
../shared/data is copied into the repository.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
OUT = ROOT / "runs" / "real_data"
IMPORTED = OUT / "data"
TABLES = OUT / "tables"
ASSAY = [sys.executable, "-m", "assay"]

SEED = 20261122
VERIFY_SAMPLE = 150
JUDGE_SAMPLE = 120
# The judge reply budget for structure-only decoding: the protocol default is 1024 tokens;
# SmolLM2 under the structure-only grammar often loops (e.g. repeating a flag) until the budget,
# so the budget is 640 (a complete valid reply needs about 300-450 tokens). Exact decoding
# raises it to the longest reply its schema admits, so no reply is ever cut.
JUDGE_MAX_TOKENS = 640
JUDGE_N = 100  # the first JUDGE_N of the seeded sample are judged (see write_ifeval_sample)
JUDGE_MODES = ("exact", "schema")  # --constrained of the two runs, on the same outputs
EMBEDDED = "llamacpp/smollm2"


@dataclass(frozen=True)
class Dataset:
    name: str  # importer name
    label: str  # as printed in tables
    source: Path


DATASETS = (
    Dataset("expertqa", "ExpertQA val", DATA / "expertqa" / "domain_val.jsonl"),
    Dataset("wice", "WiCE dev", DATA / "wice" / "claim_dev.jsonl"),
    Dataset("halueval", "HaluEval QA", DATA / "halueval" / "qa_one-turn_data.json"),
)


def run(command: list[str]) -> None:
    print("+", " ".join(str(part) for part in command), file=sys.stderr, flush=True)
    subprocess.run(command, check=True, cwd=ROOT)


def imported(dataset: Dataset) -> Path:
    return IMPORTED / f"{dataset.name}.jsonl"


def sampled(dataset: Dataset) -> Path:
    return IMPORTED / f"{dataset.name}_sample{VERIFY_SAMPLE}_seed{SEED}.jsonl"


def seeded_sample(lines: list[str], size: int, seed: int) -> list[str]:
    """A seeded random sample (without replacement) in random order: any prefix is random too."""
    rng = random.Random(seed)
    return rng.sample(lines, min(size, len(lines)))


def write_sample(source: Path, target: Path, size: int, seed: int) -> None:
    lines = [line for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    target.write_text("\n".join(seeded_sample(lines, size, seed)) + "\n", encoding="utf-8")


def ifeval_dir() -> Path:
    return IMPORTED / "ifeval_gpt4"


def ifeval_sample_dir(n: int) -> Path:
    return IMPORTED / f"ifeval_gpt4_sample{JUDGE_SAMPLE}_seed{SEED}_first{n}"


def write_ifeval_sample(n: int) -> None:
    """The manifest and labels of a seeded random sample of outputs (questions kept whole)."""
    target = ifeval_sample_dir(n)
    target.mkdir(parents=True, exist_ok=True)
    manifest = (ifeval_dir() / "manifest.jsonl").read_text(encoding="utf-8").splitlines()
    # The first n of the seeded shuffle: a random sample whose prefixes are random samples too,
    # so the judge run can grow n by n (a rerun judges only the new outputs).
    chosen = seeded_sample([line for line in manifest if line.strip()], JUDGE_SAMPLE, SEED)[:n]
    (target / "manifest.jsonl").write_text("\n".join(chosen) + "\n", encoding="utf-8")
    questions = {json.loads(line)["question_id"] for line in chosen}
    all_questions = (ifeval_dir() / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    kept_questions = [
        q for q in all_questions if q.strip() and json.loads(q)["question_id"] in questions
    ]
    (target / "questions.jsonl").write_text("\n".join(kept_questions) + "\n", encoding="utf-8")
    ids = {json.loads(line)["output_id"] for line in chosen}
    labels = (ifeval_dir() / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    kept = [line for line in labels if line.strip() and json.loads(line)["output_id"] in ids]
    (target / "labels.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")


def prepare(_: argparse.Namespace) -> None:
    IMPORTED.mkdir(parents=True, exist_ok=True)
    for dataset in DATASETS:
        run([*ASSAY, "import", dataset.name, str(dataset.source), "--out", str(imported(dataset))])
        write_sample(imported(dataset), sampled(dataset), VERIFY_SAMPLE, SEED)
    ifeval = DATA / "ifeval"
    run(
        [
            *ASSAY, "import", "ifeval", str(ifeval / "input_data.jsonl"),
            "--responses", str(ifeval / "input_response_data_gpt4_20231107_145030.jsonl"),
            "--labels", str(ifeval / "eval_results_strict.jsonl"),
            "--loose-labels", str(ifeval / "eval_results_loose.jsonl"),
            "--out", str(ifeval_dir()),
        ]
    )  # fmt: skip
    write_ifeval_sample(JUDGE_N)


# ---------------------------------------------------------------- verifier tables

CHECKERS_MODEL_FREE = ("lexical", "learned")
# Records of each shuffled sample run with the embedded model (the first N lines of the sample
# file, which is in seeded random order). Set to what finished in the time we had on this
# machine; the model-free checkers are run on exactly the same records.
EMBEDDED_N = {"expertqa": 25, "wice": 25, "halueval": 50}
# Which (checker, dataset) numbers are held out from every fit (docs/verify-data.md,
# docs/learned-checker.md): lexical was fitted on WiCE dev + HaluEval, learned (every version
# since learned-2) on all three files (its held-out numbers come from
# scripts/train_learned_checker.py's LODO and grouped folds); the embedded model saw none of
# them in assay.
HELD_OUT = {
    ("lexical", "expertqa"): True, ("lexical", "wice"): False, ("lexical", "halueval"): False,
    ("learned", "expertqa"): False, ("learned", "wice"): False, ("learned", "halueval"): False,
}  # fmt: skip


def verify_dir(dataset: Dataset, scope: str, checker: str) -> Path:
    return OUT / "verify" / f"{dataset.name}-{scope}-{checker.split('/')[-1]}"


def bench(data: Path, checker: str, max_examples: int, out_dir: Path) -> None:
    run(
        [
            *ASSAY, "bench", "run", "--data", str(data), "--pattern", "entailment",
            "--verifier", checker, "--max_examples", str(max_examples), "--no-progress",
            "--out_dir", str(out_dir),
        ]
    )  # fmt: skip


def checker_ms_per_claim(checker: str, data: Path, limit: int | None) -> float:
    """Wall time of the model-free checker alone, per claim (claims as the runner splits them)."""
    import asyncio
    import time

    from assay.data.grounded import load_records
    from assay.verify.checkers.baseline import LexicalChecker
    from assay.verify.checkers.learned import LearnedChecker
    from assay.verify.claims import split_claims

    records = load_records(data).records[:limit]
    instance = LexicalChecker() if checker == "lexical" else LearnedChecker()
    pairs = [(c, r.evidence) for r in records for c in split_claims(r.answer or "")]
    started = time.perf_counter()
    for claim, evidence in pairs:
        asyncio.run(instance.check(claim, evidence))
    return 1000 * (time.perf_counter() - started) / max(1, len(pairs))


def fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def metric(summary: dict[str, Any], name: str, ci: bool = False, pct: bool = False) -> str:
    cell = summary["detection"]["metrics"][name]
    scale, digits = (100, 1) if pct else (1, 3)
    if cell["value"] is None:
        return "n/a"
    text = f"{scale * cell['value']:.{digits}f}"
    if ci and cell["low"] is not None:
        text += f" [{scale * cell['low']:.{digits}f}, {scale * cell['high']:.{digits}f}]"
    return text


VERIFY_HEADER = (
    "| data | checker | n (groups) | error rate | BAcc % [95% CI] | P | R | F1 | AUROC [95% CI] "
    "| AUPRC [95% CI] | ECE | Brier | uncertain | failures | calls / claim | tokens / claim "
    "| ms / claim |\n|" + "---|" * 17
)


def verify_row(dataset: Dataset, checker: str, run_dir: Path, ms: float | None) -> str:
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    detection, counts, cost = summary["detection"], summary["counts"], summary["cost"]
    claims = summary["grounding"]["counts"]["claims"]
    tokens = cost["prompt_tokens"] + cost["completion_tokens"]
    if ms is None:  # a model: latency as the model layer measures it, per claim
        ms = cost["latency_ms"] / max(1, claims)
    held = HELD_OUT.get((checker, dataset.name))
    name = f"`{checker}`" + ("" if held is None else (" (held out)" if held else " (in fit)"))
    positive = metric(summary, "positive_rate")
    return (
        f"| {dataset.label} | {name} | {detection['n']} ({detection['n_clusters']}) | {positive} "
        f"| {metric(summary, 'balanced_accuracy', True, True)} | {metric(summary, 'precision')} "
        f"| {metric(summary, 'recall')} | {metric(summary, 'f1')} "
        f"| {metric(summary, 'auroc', True)} | {metric(summary, 'auprc', True)} "
        f"| {metric(summary, 'ece_uniform')} | {metric(summary, 'brier')} "
        f"| {100 * summary['uncertain_rate']:.1f}% | {counts['verifier_failures']} "
        f"| {cost['calls'] / max(1, claims):.2f} | {tokens / max(1, claims):.0f} | {ms:.1f} |"
    )


def write_table(name: str, text: str) -> None:
    TABLES.mkdir(parents=True, exist_ok=True)
    (TABLES / f"{name}.md").write_text(text + "\n", encoding="utf-8")
    print(text)


def verify_full(_: argparse.Namespace) -> None:
    rows = []
    for dataset in DATASETS:
        for checker in CHECKERS_MODEL_FREE:
            out_dir = verify_dir(dataset, "full", checker)
            bench(imported(dataset), checker, 0, out_dir)
            ms = checker_ms_per_claim(checker, imported(dataset), None)
            rows.append(verify_row(dataset, checker, out_dir, ms))
    write_table("verify_full", "\n".join([VERIFY_HEADER, *rows]))


def verify_sample(_: argparse.Namespace) -> None:
    rows = []
    for dataset in DATASETS:
        n = EMBEDDED_N[dataset.name]
        for checker in (*CHECKERS_MODEL_FREE, EMBEDDED):
            # The embedded run's directory does not name n: --max_examples may grow on resume.
            scope = f"sample{VERIFY_SAMPLE}" + ("" if checker == EMBEDDED else f"-first{n}")
            out_dir = verify_dir(dataset, scope, checker)
            bench(sampled(dataset), checker, n, out_dir)
            ms = None if checker == EMBEDDED else checker_ms_per_claim(checker, sampled(dataset), n)
            rows.append(verify_row(dataset, checker, out_dir, ms))
    write_table("verify_sample", "\n".join([VERIFY_HEADER, *rows]))


# ---------------------------------------------------------------- judge tables


def judge_dir(mode: str) -> Path:
    """One run directory per decoding mode; the sample may grow (a rerun resumes)."""
    return OUT / "judge" / f"ifeval-seed{SEED}-smollm2-{mode}"


def judge(args: argparse.Namespace) -> None:
    """Table 3: the embedded judge on IFEval GPT-4 outputs, exact beside structure-only."""
    n = args.n or JUDGE_N
    write_ifeval_sample(n)  # deterministic: the same files every time
    sample = ifeval_sample_dir(n)
    modes = [args.mode] if args.mode else list(JUDGE_MODES)
    for mode in modes:
        run(
            [
                *ASSAY, "judge", "run", "--questions", str(sample / "questions.jsonl"),
                "--outputs", str(sample / "manifest.jsonl"), "--judge", EMBEDDED,
                "--constrained", mode, "--judge-max-tokens", str(JUDGE_MAX_TOKENS),
                "--timeout", "1800", "--max-attempts", "1", "--out", str(judge_dir(mode)),
            ]
        )  # fmt: skip
    from assay.data.importers.ifeval_labels import load_ifeval_labels

    labels = list(load_ifeval_labels(sample / "labels.jsonl"))
    lines = [judge_cost_header(), *(judge_cost_row(mode, labels) for mode in modes), ""]
    lines.append(AGREEMENT_HEADER)
    for mode in modes:
        lines += [
            agreement_row(f"`{EMBEDDED}` judge, {mode} (valid only)", d)
            for d in judge_agreement(mode, labels).dimensions
        ]
    write_table("judge", "\n".join(lines))


def judge_agreement(mode: str, labels: list[Any]) -> Any:
    from assay.judge import load_records
    from assay.judge.ground_truth import judge_label_agreement

    (result,) = judge_label_agreement(load_records(judge_dir(mode)), labels)
    return result


def judge_cost_header() -> str:
    return (
        "| decoding | outputs | valid | invalid | flags of the invalid | median s / reply "
        "| median tokens / reply |\n|---|---|---|---|---|---|---|"
    )


def judge_cost_row(mode: str, labels: list[Any]) -> str:
    from statistics import median

    from assay.judge import load_records

    result = judge_agreement(mode, labels)
    calls = [r.call for r in load_records(judge_dir(mode)) if r.call is not None]
    flags = ", ".join(f"{flag} {count}" for flag, count in result.invalid_flags.items()) or "none"
    latency = median(c.latency_s for c in calls) if calls else float("nan")
    tokens = median(c.completion_tokens for c in calls) if calls else float("nan")
    share = 100 * result.valid / max(1, result.samples)
    return (
        f"| {mode} | {result.samples} | {result.valid} ({share:.0f}%) | {result.invalid} "
        f"| {flags} | {latency:.1f} | {tokens:.0f} |"
    )


AGREEMENT_HEADER = (
    "| rater | dimension | n compared (no truth) | accuracy | linear-weighted kappa "
    "| confusion (rows truth 0/1/2, cols rater 0/1/2) |\n|---|---|---|---|---|---|"
)


def agreement_row(rater: str, agreement: Any) -> str:
    matrix = " / ".join(" ".join(str(cell) for cell in row) for row in agreement.confusion)
    kappa = fmt(agreement.kappa_linear) if agreement.kappa_linear is not None else "n/a"
    return (
        f"| {rater} | {agreement.dimension} | {agreement.n} ({agreement.no_truth}) "
        f"| {fmt(agreement.accuracy)} | {kappa} | {matrix} |"
    )


def instruction_scores(label: Any, prompt: str, response: str) -> Any:
    """The instruction checker's verdicts on one output, as an IFEvalLabel (strict mode)."""
    from assay.instructions import check_response

    items = label.instructions
    results = check_response(
        [i.instruction_id for i in items], [i.kwargs for i in items],
        prompt=prompt, response=response, mode="strict",
    )  # fmt: skip
    followed = [
        item.model_copy(update={"followed_strict": r.followed})
        for item, r in zip(items, results, strict=True)
    ]
    return label.model_copy(update={"instructions": tuple(followed)})


def instructions_agreement(directory: Path) -> list[Any]:
    from assay.data.importers.ifeval_labels import load_ifeval_labels
    from assay.judge.ground_truth import score_agreement

    prompts = {}
    for line in (directory / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        question = json.loads(line)
        prompts[question["question_id"]] = question["variants"][0]["prompt"]
    texts = {}
    for line in (directory / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        output = json.loads(line)
        texts[output["output_id"]] = output["text"]
    labels = list(load_ifeval_labels(directory / "labels.jsonl"))
    checked = [instruction_scores(x, prompts[x.question_id], texts[x.output_id]) for x in labels]
    rows = []
    for dimension in ("INSTRUCTION_COMPLIANCE", "FORMAT_COMPLIANCE"):
        pairs = [
            (t.truth(dimension), c.truth(dimension)) for t, c in zip(labels, checked, strict=True)
        ]
        kept = [(t.score, c.score) for t, c in pairs if t is not None and c is not None]
        rows.append(
            score_agreement(
                dimension, [t for t, _ in kept], [c for _, c in kept],
                no_truth=len(pairs) - len(kept),
            )
        )  # fmt: skip
    return rows


def instructions(_: argparse.Namespace) -> None:
    from assay.instructions import covered_instruction_ids

    write_ifeval_sample(JUDGE_N)
    per_id = TABLES / "instructions_per_id.md"
    TABLES.mkdir(parents=True, exist_ok=True)
    run(
        [
            *ASSAY,
            "instructions",
            "agreement",
            "--data-dir",
            str(DATA / "ifeval"),
            "--out",
            str(per_id),
        ]
    )
    lines = [
        AGREEMENT_HEADER,
        *(
            agreement_row("instruction checker, all 540", a)
            for a in instructions_agreement(ifeval_dir())
        ),
        *(
            agreement_row(f"instruction checker, judge sample ({JUDGE_N})", a)
            for a in instructions_agreement(ifeval_sample_dir(JUDGE_N))
        ),
        "",
        f"Covered ids ({len(covered_instruction_ids())}): "
        + ", ".join(f"`{i}`" for i in covered_instruction_ids()),
        "",
        "Per instruction id (`assay instructions agreement`):",
        "",
        per_id.read_text(encoding="utf-8").strip(),
    ]
    write_table("instructions", "\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    handlers = {
        "prepare": prepare,
        "verify-full": verify_full,
        "verify-sample": verify_sample,
        "judge": judge,
        "instructions": instructions,
    }
    for name, handler in handlers.items():
        sub = commands.add_parser(name, help=(handler.__doc__ or name).splitlines()[0])
        if name == "judge":
            sub.add_argument("--n", type=int, default=0, help="outputs to judge (default JUDGE_N)")
            sub.add_argument("--mode", choices=JUDGE_MODES, help="run one decoding mode only")
    args = parser.parse_args(argv)
    handlers[args.command](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
