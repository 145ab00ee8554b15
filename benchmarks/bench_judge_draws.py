"""Time `judge analyze` of repeated draws against the analysis of one draw, side by side.

Synthetic valid evaluations in memory (one judge, one target, six prompt variants, four
0-2 scores drawn around a per-question level that each variant shifts a little), for each
size: the tables of one draw (`summarize`, what `judge analyze` of a single run computes) and
the joint tables of all draws (`summarize_draws`: scores, variant effects with their
permutation tests, the noise table). Files and plots are left out: they cost the same for
both.

    .venv/bin/python benchmarks/bench_judge_draws.py                    # 500 and 2000 questions
    .venv/bin/python benchmarks/bench_judge_draws.py --questions 100 --draws 3

Prints one table: per size, the evaluations, wall seconds of each analysis, their ratio per
evaluation, then the peak resident set size of the process. No target: the numbers are in
benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
VARIANTS = ("original", "typos", "lowercase", "line-per-sentence", "preamble", "reminder")


def evaluations(questions: int, draws: int, seed: int = 0) -> list[list[Any]]:
    """``draws`` lists of valid evaluations of every question x variant."""
    from assay.judge.evaluations import Evaluation

    rng = random.Random(seed)
    levels = [rng.uniform(0.2, 0.8) for _ in range(questions)]
    shifts = {v: rng.uniform(-0.1, 0.1) for v in VARIANTS}
    made = []
    for _ in range(draws):
        draw = []
        for q, level in enumerate(levels):
            for variant in VARIANTS:
                chance = min(1.0, max(0.0, level + shifts[variant]))
                dims = tuple(sum(rng.random() < chance for _ in range(2)) for _ in range(4))
                draw.append(
                    Evaluation(
                        f"q{q}", variant, "target", f"q{q}/{variant}", "judge", "cross_judge",
                        1, True, (), dims, sum(dims), "PASS", True, None,
                    )
                )  # fmt: skip
        made.append(draw)
    return made


def measure(questions: int, draws: int, resamples: int) -> dict[str, float]:
    from assay.judge.analysis_types import AnalysisSettings
    from assay.judge.analyze import summarize
    from assay.judge.draws import summarize_draws

    made = evaluations(questions, draws)
    settings = AnalysisSettings(n_resamples=resamples, plots=False, baseline_variant="original")
    started = time.perf_counter()
    summarize(made[0], settings)
    one = time.perf_counter() - started
    started = time.perf_counter()
    summarize_draws(made, settings)
    joint = time.perf_counter() - started
    per_draw = len(made[0])
    return {"evaluations": per_draw * draws, "one": one, "joint": joint, "per_draw": per_draw}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--draws", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "src"))
    print(f"draws {args.draws}, {args.resamples} resamples, variants {len(VARIANTS)}")
    print("| questions | evaluations | one draw | all draws | ms per evaluation (one / all) |")
    print("|---:|---:|---:|---:|---:|")
    for questions in args.questions:
        m = measure(questions, args.draws, args.resamples)
        per_one = 1000 * m["one"] / m["per_draw"]
        per_all = 1000 * m["joint"] / m["evaluations"]
        print(
            f"| {questions:,} | {int(m['evaluations']):,} | {m['one']:.2f} s | "
            f"{m['joint']:.2f} s | {per_one:.3f} / {per_all:.3f} |"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
