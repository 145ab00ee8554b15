"""The three verifier patterns side by side on the same labelled records, by failure bucket.

    python benchmarks/failure_modes.py              # prepare the data, run, print the table
    python benchmarks/failure_modes.py --embedded   # also best_of_n with the embedded model

Records (all verify-only, labelled): ``assay perturb`` of examples/grounded_qa_labelled.jsonl
(one answer per failure bucket, labels by construction), and the first SAMPLE lines of a seeded
shuffle (benchmarks/real_data.py's ``seeded_sample``, its seed) of WiCE dev, ExpertQA val and
HaluEval QA as ``assay import`` writes them.

Patterns: ``best_of_n`` (n=1: the answer-level verdict of the given answer) and
``entailment`` (claim checks, rules splitter) with the learned checker; ``self_consistency``
with K=3 samples from the stub generator and the stub critic (``stub/demo``): SmolLM2 writes a
critique in 4-110 s here, too slow for hundreds of records on this shared machine, so its row
measures the mechanism with a lexical stand-in critic, not a model. ``--embedded`` adds
best_of_n with the embedded model as the answer-level verifier (one next-token question per
answer).

Each cell: flag rate (share of scored answers with p_error >= 0.5) with a 95% percentile
bootstrap interval over record clusters (1000 resamples, seeded), and the count. For an error
bucket the flag rate is recall on that kind of error; for ``grounded`` it is the false-alarm
rate. Runs live under runs/failure_modes/ (gitignored) and resume: a rerun calls no model.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_data import DATASETS, SEED, seeded_sample

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "runs" / "failure_modes"
SAMPLE = 120
ASSAY = [sys.executable, "-m", "assay"]
RESAMPLES = 1000
PATTERNS: dict[str, list[str]] = {
    "best_of_n (learned)": ["--pattern", "best_of_n", "--n", "1", "--verifier", "learned"],
    "entailment (learned)": ["--pattern", "entailment", "--verifier", "learned"],
    "self_consistency (stub, K=3)": [
        "--pattern", "self_consistency", "--n", "3", "--verifier", "learned",
        "--generator", "stub/demo", "--critic", "stub/demo",
    ],
}  # fmt: skip
EMBEDDED = {
    "best_of_n (smollm2)": [
        "--pattern", "best_of_n", "--n", "1", "--verifier", "llamacpp/smollm2",
    ],
}  # fmt: skip


# How each file's rows stand to the learned checker's fit, printed beside the file's name: the
# checker was trained on the three public files and never saw the perturbed examples (the stub
# and the embedded model were fitted on none of them).
FIT = {
    "perturbed examples": "held out",
    "ExpertQA val": "learned in fit",
    "WiCE dev": "learned in fit",
    "HaluEval QA": "learned in fit",
}

# records the embedded model verifies per file (0 = all): WiCE prompts are ~1,700 tokens,
# about 19 s each on this shared machine, so only the first 20 of its sample
EMBEDDED_LIMIT = {"WiCE dev": 20}


def run(command: list[str]) -> None:
    print("+", " ".join(command), file=sys.stderr, flush=True)
    subprocess.run(command, check=True, cwd=ROOT)


def prepare() -> dict[str, Path]:
    """The labelled files: perturbed examples and one seeded sample per public dataset."""
    data = OUT / "data"
    data.mkdir(parents=True, exist_ok=True)
    files = {"perturbed examples": data / "perturbed.jsonl"}
    if not files["perturbed examples"].exists():
        run([*ASSAY, "perturb", "--data", "examples/grounded_qa_labelled.jsonl",
             "--out", str(files["perturbed examples"]), "--seed", "0"])  # fmt: skip
    for dataset in DATASETS:
        full, sample = data / f"{dataset.name}.jsonl", data / f"{dataset.name}_{SAMPLE}.jsonl"
        if not sample.exists():
            run([*ASSAY, "import", dataset.name, str(dataset.source), "--out", str(full)])
            lines = [x for x in full.read_text(encoding="utf-8").splitlines() if x.strip()]
            sample.write_text("\n".join(seeded_sample(lines, SAMPLE, SEED)) + "\n", "utf-8")
        files[dataset.label] = sample
    return files


def run_dir(data: str, pattern: str) -> Path:
    slug = "".join(ch if ch.isalnum() else "-" for ch in f"{data}-{pattern}").strip("-")
    return OUT / "runs" / slug


def bench(data: Path, out: Path, args: list[str], limit: int = 0) -> None:
    run([*ASSAY, "bench", "run", "--data", str(data), "--max_examples", str(limit),
         "--no-progress", "--n-resamples", "1000", "--out_dir", str(out), *args])  # fmt: skip


def bucket_of(result: dict[str, Any]) -> str:
    """The spec's bucket for perturbed answers; the dataset's own error type otherwise."""
    if result["gold_error"] is False:
        return "grounded"
    if result["label_source"] == "injected":
        return str(result["failure_bucket"])
    return str(result.get("error_type") or "error")


def flag_rates(results: list[dict[str, Any]]) -> dict[str, tuple[float, float, float, int]]:
    """bucket -> (flag rate, low, high, scored), bootstrap over clusters."""
    by_bucket: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        if r["verifier_score"] is not None and r["gold_error"] is not None:
            by_bucket[bucket_of(r)][r["cluster"]].append(r["verifier_pass"] is False)
    rng = np.random.default_rng(SEED)
    out = {}
    for bucket, clusters in sorted(by_bucket.items()):
        groups = list(clusters.values())
        sums = np.array([sum(g) for g in groups], dtype=float)
        sizes = np.array([len(g) for g in groups], dtype=float)
        picks = rng.integers(0, len(groups), size=(RESAMPLES, len(groups)))
        rates = sums[picks].sum(axis=1) / sizes[picks].sum(axis=1)
        low, high = np.percentile(rates, [2.5, 97.5])
        out[bucket] = (sums.sum() / sizes.sum(), float(low), float(high), int(sizes.sum()))
    return out


def metric(summary: dict[str, Any], name: str) -> str:
    cell = (summary.get("detection") or {}).get("metrics", {}).get(name) or {}
    if cell.get("value") is None:
        return "n/a"
    return f"{cell['value']:.3f} [{cell['low']:.3f}, {cell['high']:.3f}]"


def labelled(data: str) -> str:
    return f"{data} ({FIT[data]})" if data in FIT else data


def table(files: dict[str, Path], patterns: dict[str, list[str]]) -> str:
    lines = [
        "| data | bucket | " + " | ".join(patterns) + " |",
        "|---|---|" + "---|" * len(patterns),
    ]
    summaries: dict[tuple[str, str], dict[str, Any]] = {}
    for data in files:
        rates = {}
        for pattern in patterns:
            directory = run_dir(data, pattern)
            summaries[data, pattern] = json.loads((directory / "summary.json").read_text())
            results = [json.loads(x) for x in (directory / "results.jsonl").open()]
            rates[pattern] = flag_rates(results)
        buckets = sorted({b for r in rates.values() for b in r}, key=lambda b: (b != "grounded", b))
        for bucket in buckets:
            cells = []
            for pattern in patterns:
                value = rates[pattern].get(bucket)
                cells.append(
                    "—"
                    if value is None
                    else f"{value[0]:.2f} [{value[1]:.2f}, {value[2]:.2f}] (n={value[3]})"
                )
            lines.append(f"| {labelled(data)} | {bucket} | " + " | ".join(cells) + " |")
    lines += ["", "| data | pattern | scored / results | balanced accuracy | AUROC "
              "| model requests / ex | uncached calls / ex | tokens / ex | ms / ex |",
              "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for (data, pattern), s in summaries.items():
        per, counts = s["cost"]["per_example"], s["counts"]
        lines.append(
            f"| {labelled(data)} | {pattern} | {counts.get('scored', 0)} / {counts['results']} "
            f"| {metric(s, 'balanced_accuracy')} | {metric(s, 'auroc')} "
            f"| {per['model_requests']:.2f} | {per['calls']:.2f} | {per['tokens']:.0f} "
            f"| {per['latency_ms']:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedded", action="store_true", help="also best_of_n with SmolLM2")
    parser.add_argument("--table-only", action="store_true", help="print from finished runs")
    args = parser.parse_args()
    files = prepare()
    patterns = PATTERNS | (EMBEDDED if args.embedded else {})
    if not args.table_only:
        for data, path in files.items():
            for pattern, options in patterns.items():
                limit = EMBEDDED_LIMIT.get(data, 0) if pattern in EMBEDDED else 0
                bench(path, run_dir(data, pattern), options, limit)
    print(table(files, patterns))


if __name__ == "__main__":
    main()
