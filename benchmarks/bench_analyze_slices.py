"""`--by meta.KEY` on a large run: the summary and its slices from one read, beside an earlier
version of the code that read the run once more for the check of the keys and once more per
`--by` option. `--kind judge` (default) times `assay judge analyze`, `--kind bench` times
`assay bench summarize`.

A judge run is written as `bench_archive.py` writes one (real judge prompts, real validator,
`Archive.add`; no model call), a bench run as `_synthetic_runs.make_bench_run` makes one, each
question's or example's meta holding `domain` (4 values). Each command is a child process
with `PYTHONPATH` set to the source it times; peak MB is its maximum RSS. The versions
alternate, so that a noisy machine slows both alike.

    python benchmarks/bench_analyze_slices.py --before 2fd09ab            # 100,000 evaluations
    python benchmarks/bench_analyze_slices.py --before 2fd09ab --n 20000 --repeat 3
    python benchmarks/bench_analyze_slices.py --kind bench --before c080d75 --n 50000
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _git_source import REPO, print_timing_table, source_at, timed_assay, write_judge_run

COMMANDS = {
    "judge": ["judge", "analyze", "--no-plots", "--no-report", "--resamples", "200"],
    "bench": ["bench", "summarize", "--no-plots", "--no-report", "--n-resamples", "200"],
}


def analyze_seconds(
    run_dir: Path, source: Path, by: list[str], kind: str = "judge"
) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one analysis of ``run_dir`` with ``source``."""
    options = [part for option in by for part in ("--by", option)]
    return timed_assay([*COMMANDS[kind], str(run_dir), *options], source)


def write_run(run_dir: Path, count: int, kind: str = "judge") -> float:
    started = time.perf_counter()
    if kind == "bench":
        _write_bench_run(run_dir, count)
        return time.perf_counter() - started
    write_judge_run(run_dir, count, domains=4)
    return time.perf_counter() - started


def _write_bench_run(run_dir: Path, count: int) -> None:
    """A synthetic bench run whose examples carry meta.domain (one of 4)."""
    from _synthetic_runs import make_bench_run

    make_bench_run(run_dir, count)
    results = run_dir / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines()
    with_meta = []
    for index, line in enumerate(lines):
        record = json.loads(line)
        record["meta"] = {"domain": f"d{index % 4}"}
        with_meta.append(json.dumps(record) + "\n")
    results.write_text("".join(with_meta), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True, help="the revision to time beside this tree")
    parser.add_argument("--kind", choices=sorted(COMMANDS), default="judge", help="(judge)")
    parser.add_argument("--n", type=int, default=100_000, help="evaluations or examples")
    parser.add_argument("--repeat", type=int, default=2, help="alternating runs of each (2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-slices-") as scratch:
        work = Path(scratch)
        before = source_at(args.before, work / "before")
        run_dir = work / "run"
        seconds = write_run(run_dir, args.n, args.kind)
        print(f"wrote a {args.kind} run of {args.n:,} in {seconds:.1f} s", flush=True)
        cases = [
            (f"before ({args.before}), --by meta.domain", before, ["meta.domain"]),
            ("this tree, --by meta.domain", REPO / "src", ["meta.domain"]),
            (f"before ({args.before}), no --by", before, []),
            ("this tree, no --by", REPO / "src", []),
        ]
        times: dict[str, list[float]] = {name: [] for name, _, _ in cases}
        peaks: dict[str, float] = {name: 0.0 for name, _, _ in cases}
        for _ in range(args.repeat):
            for name, source, by in cases:
                seconds, peak = analyze_seconds(run_dir, source, by, args.kind)
                times[name].append(seconds)
                peaks[name] = max(peaks[name], peak)
                print(f"{name}: {seconds:.1f} s, {peak:.0f} MB", file=sys.stderr, flush=True)
        shutil.rmtree(run_dir, ignore_errors=True)
    print_timing_table(f"{' '.join(COMMANDS[args.kind][:2])}, {args.n:,}", times, peaks)
    print(f"peak RSS of this process {_own_peak():.0f} MB")


def _own_peak() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main()
