"""`assay bench compare A B` on two large runs of the same labelled answers, beside an earlier
version of the code.

Run A is a synthetic bench run (`_synthetic_runs.make_bench_run`); run B holds the same
answers and labels with every `p_error` moved by seeded noise (another verifier's scores), and
is summarised by assay itself. Each comparison is a child process with `PYTHONPATH` on the
source it times; peak MB is its maximum RSS. The versions alternate, so that a noisy machine
slows both alike. This tree's comparison also computes the paired metric differences, which
the earlier one lacks; the earlier one read each run twice for its paired sections, this one
once.

    python benchmarks/bench_compare.py --before 265f73a --n 50000
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO_SRC := Path(__file__).resolve().parents[1] / "src"))

from _git_source import print_timing_table, source_at, timed_assay
from _synthetic_runs import make_bench_run


def write_runs(work: Path, count: int) -> tuple[Path, Path]:
    """Run A, and run B: A's answers and labels under other scores, summarised."""
    from assay.verify.summary import write_summary

    first, second = work / "a", work / "b"
    make_bench_run(first, count)
    second.mkdir()
    for name in ("run.json", "run_log.jsonl"):
        if (first / name).is_file():
            (second / name).write_bytes((first / name).read_bytes())
    rng = random.Random(1)
    with (
        (first / "results.jsonl").open(encoding="utf-8") as lines,
        (second / "results.jsonl").open("w", encoding="utf-8") as out,
    ):
        for line in lines:
            record = json.loads(line)
            score = min(1.0, max(0.0, record["verifier_score"] + rng.gauss(0.0, 0.15)))
            record["verifier_score"] = score
            record["verifier_pass"] = score < record["threshold"]
            out.write(json.dumps(record) + "\n")
    write_summary(second, n_resamples=200, plots=False)
    return first, second


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True, help="the revision to time beside this tree")
    parser.add_argument("--n", type=int, default=50_000, help="examples per run (50,000)")
    parser.add_argument("--repeat", type=int, default=2, help="alternating runs of each (2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as scratch:
        work = Path(scratch)
        before = source_at(args.before, work / "before")
        first, second = write_runs(work, args.n)
        cases = [(f"before ({args.before})", before), ("this tree", REPO_SRC)]
        times: dict[str, list[float]] = {name: [] for name, _ in cases}
        peaks: dict[str, float] = dict.fromkeys(times, 0.0)
        for _ in range(args.repeat):
            for name, source in cases:
                seconds, peak = timed_assay(["bench", "compare", str(first), str(second)], source)
                times[name].append(seconds)
                peaks[name] = max(peaks[name], peak)
                print(f"{name}: {seconds:.1f} s, {peak:.0f} MB", file=sys.stderr, flush=True)
    print_timing_table(f"bench compare, 2 x {args.n:,}", times, peaks)


if __name__ == "__main__":
    main()
