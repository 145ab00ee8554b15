"""Time `summarize_binary_detection` on 1,000,000 synthetic scored examples.

Each case runs in a fresh child process, so its peak memory is its own: the child reports
`resource.getrusage(RUSAGE_SELF).ru_maxrss` (peak resident set size of the whole process,
including the Python interpreter, numpy and the synthetic data), and wall and CPU time of the
one `summarize_binary_detection` call (data generation excluded).

    .venv/bin/python benchmarks/bench_metrics.py            # default: 1M examples, 200k clusters
    .venv/bin/python benchmarks/bench_metrics.py --unclustered --n 200000

Targets: <= 10 s wall and <= 2 GB peak RSS for the clustered case. Exit status 1 if missed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import asdict, dataclass

import numpy as np

TARGET_SECONDS = 10.0
TARGET_PEAK_MB = 2048.0


@dataclass(frozen=True)
class Case:
    n: int
    n_clusters: int | None  # None: every example is its own cluster
    n_resamples: int
    seed: int = 0


@dataclass(frozen=True)
class Measurement:
    case: Case
    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    rss_before_call_mb: float
    auroc: tuple[float, float, float]


def synthetic_detector(case: Case) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Labels, p(error) and cluster ids with a shared per-cluster difficulty."""
    rng = np.random.default_rng(case.seed)
    groups = case.n_clusters or case.n
    clusters = rng.integers(0, groups, case.n)
    difficulty = rng.normal(size=groups)[clusters]
    y = (rng.random(case.n) < 1 / (1 + np.exp(-(difficulty - 1.0)))).astype(np.int8)
    logit = (2 * y - 1) + 0.8 * difficulty + rng.normal(size=case.n) - 1.0
    p_error = 1 / (1 + np.exp(-logit))
    return y, p_error, clusters if case.n_clusters else None


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def run_child(case: Case) -> Measurement:
    """Inside the child process: build the data, time one summary."""
    from assay.metrics import summarize_binary_detection

    y, p_error, clusters = synthetic_detector(case)
    before = _peak_rss_mb()
    wall, cpu = time.perf_counter(), time.process_time()
    summary = summarize_binary_detection(
        y, p_error, clusters=clusters, n_resamples=case.n_resamples, seed=case.seed
    )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    auroc = summary["metrics"]["auroc"]
    return Measurement(
        case, wall, cpu, _peak_rss_mb(), before, (auroc["value"], auroc["low"], auroc["high"])
    )


def measure(case: Case) -> Measurement:
    """Run one case in a fresh interpreter and read its JSON report."""
    output = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(asdict(case))],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    raw = json.loads(output.strip().splitlines()[-1])
    return Measurement(**{**raw, "case": Case(**raw["case"]), "auroc": tuple(raw["auroc"])})


def print_table(results: list[Measurement]) -> None:
    header = (
        f"{'n':>9} {'clusters':>9} {'resamples':>9} {'wall s':>7} {'cpu s':>7} "
        f"{'peak RSS MB':>11} {'RSS pre MB':>10}  AUROC [95% CI]"
    )
    print(header)
    for m in results:
        clusters = m.case.n_clusters or "none"
        value, low, high = m.auroc
        print(
            f"{m.case.n:>9} {clusters!s:>9} {m.case.n_resamples:>9} {m.wall_s:>7.2f} "
            f"{m.cpu_s:>7.2f} {m.peak_rss_mb:>11.0f} {m.rss_before_call_mb:>10.0f}  "
            f"{value:.4f} [{low:.4f}, {high:.4f}]"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--clusters", type=int, default=200_000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=1, help="runs per case (fresh process)")
    parser.add_argument("--unclustered", action="store_true", help="also run without clusters")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(asdict(run_child(Case(**json.loads(args.child))))))
        return 0
    cases = [Case(args.n, args.clusters, args.resamples)]
    if args.unclustered:
        cases.append(Case(args.n, None, args.resamples))
    results = [measure(case) for case in cases for _ in range(args.repeats)]
    print(f"cpus={os.cpu_count()} load_avg_1m={os.getloadavg()[0]:.1f}")
    print_table(results)
    clustered = [m for m in results if m.case.n_clusters]
    met = all(m.wall_s <= TARGET_SECONDS and m.peak_rss_mb <= TARGET_PEAK_MB for m in clustered)
    print(
        f"targets (clustered): <= {TARGET_SECONDS:.0f} s, <= {TARGET_PEAK_MB:.0f} MB peak RSS:",
        "met" if met else "MISSED",
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
