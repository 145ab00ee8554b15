"""Verifier benchmark: loading and scoring stream (peak memory does not grow with the file).

For each size (default 10,000 and 100,000 records) a synthetic grounded-QA file of
verify-only records is written, then two child processes are measured, each on its own so
that one's memory does not hide in the other's:

- ``run``: ``assay.verify.benchmark.run_benchmark`` with the ``entailment`` pattern and the
  model-free ``lexical`` checker (no model): validate the file, score every answer, append
  results.jsonl, write summary.json (1,000 bootstrap resamples) and the four plots;
- ``summarize``: ``assay.verify.summary.build_summary`` rebuilding the summary and plots from
  that run's results.jsonl alone.

Each child reports its wall time and peak resident memory (``ru_maxrss``). The target: the
peak for 100,000 records is at most 1.5x the peak for 10,000. Run::

    .venv/bin/python benchmarks/bench_bench.py            # 10k and 100k
    .venv/bin/python benchmarks/bench_bench.py --sizes 2000 20000

Exit status 1 when a ratio misses the target.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_RATIO = 1.5
SUBJECTS = ["river", "bridge", "museum", "canal", "tower", "library", "festival", "railway"]
PLACES = ["Lyon", "Porto", "Ghent", "Turku", "Split", "Graz", "Basel", "Bergen"]


def synthetic_record(index: int, rng: random.Random) -> dict[str, Any]:
    """A verify-only record: an evidence pair and an answer that is grounded or not."""
    subject, place = rng.choice(SUBJECTS), rng.choice(PLACES)
    year, length = rng.randint(1700, 2000), rng.randint(2, 900)
    facts = [
        f"The {subject} of {place} was opened in {year} after years of planning.",
        f"It is {length} metres long and is visited by many people every year.",
    ]
    grounded = rng.random() < 0.5
    claim_year = year if grounded else year + rng.randint(1, 30)
    answer = f"The {subject} of {place} opened in {claim_year} [cite:e{index}a]."
    if rng.random() < 0.5:
        answer += f" It is {length} metres long [cite:e{index}b]."
    return {
        "id": f"r{index}",
        "question": f"When did the {subject} of {place} open?",
        "gold_answer": f"In {year}.",
        "evidence": [
            {"evidence_id": f"e{index}a", "title": f"{place} {subject}", "text": facts[0]},
            {"evidence_id": f"e{index}b", "text": facts[1]},
        ],
        "gold_citations": [{"evidence_id": f"e{index}a"}],
        "answer": answer,
        "gold_error": not grounded,
        "error_type": None if grounded else "contradiction",
        "group": f"q{index // 4}",
    }


def write_data(path: Path, size: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as handle:
        for index in range(size):
            handle.write(json.dumps(synthetic_record(index, rng)) + "\n")


def peak_rss_mb() -> float:
    """This process's peak resident memory. VmHWM belongs to the address space made by exec;
    ru_maxrss can carry over the parent's peak across fork+exec, so it is only a fallback."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # kB on Linux


def child_run(data: Path, out: Path) -> dict[str, Any]:
    from assay.model import ModelOptions
    from assay.verify.benchmark import BenchmarkConfig, run_benchmark

    config = BenchmarkConfig(
        data=data,
        pattern="entailment",
        out_dir=out,
        max_examples=None,
        verifier="lexical",
        generator="stub/unused",
        concurrency=64,
        model_options=ModelOptions(cache=False),
    )
    started = time.perf_counter()
    report = run_benchmark(config, progress=False)
    return {"seconds": time.perf_counter() - started, "records": report.ran}


def child_summarize(out: Path) -> dict[str, Any]:
    from assay.verify.summary import write_summary

    started = time.perf_counter()
    summary = write_summary(out)
    return {"seconds": time.perf_counter() - started, "records": summary.counts["results"]}


def run_child(stage: str, data: Path, out: Path) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", stage, str(data), str(out)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"child {stage} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure(sizes: list[int], workdir: Path) -> list[dict[str, Any]]:
    rows = []
    for size in sizes:
        data = workdir / f"data-{size}.jsonl"
        write_data(data, size)
        out = workdir / f"run-{size}"
        for stage in ("run", "summarize"):
            rows.append({"size": size, "stage": stage, **run_child(stage, data, out)})
    return rows


def print_table(rows: list[dict[str, Any]]) -> bool:
    header = ("stage", "records", "seconds", "records/s", "peak MB", "x smallest")
    print(f"{header[0]:<10} " + " ".join(f"{h:>10}" for h in header[1:]))
    ok = True
    for stage in ("run", "summarize"):
        mine = [r for r in rows if r["stage"] == stage]
        base = mine[0]["peak_mb"]
        for row in mine:
            ratio = row["peak_mb"] / base
            ok &= ratio <= TARGET_RATIO
            rate = row["records"] / row["seconds"]
            print(
                f"{stage:<10} {row['records']:>10,} {row['seconds']:>10.1f} {rate:>10,.0f} "
                f"{row['peak_mb']:>10.1f} {ratio:>10.2f}"
            )
    print(
        f"target: peak memory of the largest size <= {TARGET_RATIO}x the smallest: "
        f"{'met' if ok else 'MISSED'}"
    )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument(
        "--child", nargs=3, metavar=("STAGE", "DATA", "OUT"), help=argparse.SUPPRESS
    )
    parser.add_argument("--keep", type=Path, help="keep the data and runs in this directory")
    args = parser.parse_args()
    if args.child:
        stage, data, out = args.child
        result = child_run(Path(data), Path(out)) if stage == "run" else child_summarize(Path(out))
        print(json.dumps({**result, "peak_mb": peak_rss_mb()}))
        return 0
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        rows = measure(sorted(args.sizes), args.keep)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            rows = measure(sorted(args.sizes), Path(tmp))
    return 0 if print_table(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
