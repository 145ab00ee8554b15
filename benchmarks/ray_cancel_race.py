"""How often SIGTERM ends a Ray run the way assay means it to (exit 143) and how often Ray's
driver aborts itself instead (exit 1, Ray's "Check failed" from its task manager), this tree
beside an earlier revision, in one run (docs/scaling.md, "A driver that is killed").

A local cluster of 2 workers is started once, with Ray's defaults. Each trial starts `assay
bench run --executor ray` over short records (the tests' France answers, checked in
microseconds each) in batches of 50, sends SIGTERM as soon as the first results are written
(batches are then finishing and starting all the time) and records how the process ended.
Trials of the two trees alternate, so both meet the same machine. The driver of the earlier
revision runs its own code; the cluster's workers run this tree's (the race is the driver's).

    python benchmarks/ray_cancel_race.py [--trials 40] [--before REV]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _git_source import source_at  # noqa: E402
from bench_ray import RAY, free_port  # noqa: E402

sys.path.insert(0, str(HERE.parent))
from tests.helpers.ray_cluster import stop_cluster  # noqa: E402
from tests.verify.bench_fixtures import verify_only_records, write_jsonl  # noqa: E402

RAY_ABORT = "Check failed"  # Ray's own assertion, printed before it aborts the driver


@contextlib.contextmanager
def local_cluster(scratch: Path) -> Iterator[dict[str, str]]:
    """A cluster of 2 workers as `ray start --head` makes one (Ray's own defaults, token
    authentication included), and the environment that joins it."""
    env = {**os.environ, "RAY_TMPDIR": str(scratch / "ray")}
    Path(env["RAY_TMPDIR"]).mkdir()
    start = [str(RAY), "start", "--head", "--num-cpus", "2", "--port", str(free_port())]
    start += ["--include-dashboard", "false", "--disable-usage-stats"]
    subprocess.run(start, check=True, capture_output=True, env=env)
    try:
        yield {**env, "RAY_ADDRESS": "auto"}
    finally:
        stop_cluster(env["RAY_TMPDIR"])  # this cluster only


def trial(data: Path, out: Path, env: dict[str, str]) -> str:
    """One run stopped by SIGTERM once its first results are in: how it ended."""
    command = [sys.executable, "-m", "assay", "bench", "run", "--data", str(data), "--pattern"]
    command += ["entailment", "--verifier", "learned", "--out_dir", str(out), "--no-report"]
    command += ["--no-progress", "--n-resamples", "20", "--executor", "ray"]
    command += ["--ray-batch-size", "50"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not results.exists() or results.stat().st_size == 0):
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=300)
    if process.returncode == 143:
        return "exit 143"
    if RAY_ABORT in err.decode(errors="replace"):
        return "Ray aborted"
    return f"exit {process.returncode}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40, help="runs of each tree")
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--before", help="also run src/ at this revision (e.g. HEAD~1)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as temp:
        scratch = Path(temp)
        data = scratch / "records.jsonl"
        write_jsonl(data, verify_only_records(args.records))
        trees: list[tuple[str, Path | None]] = [("this tree", None)]
        if args.before:
            trees.append((f"{args.before} (before)", source_at(args.before, scratch)))
        outcomes = {name: collections.Counter[str]() for name, _ in trees}

        with local_cluster(scratch) as cluster:
            for number in range(args.trials):
                for name, source in trees:
                    env = {**cluster, "ASSAY_CACHE_DIR": str(scratch / f"cache{number}{name}")}
                    if source is not None:
                        env["PYTHONPATH"] = str(source)
                    out = scratch / "runs" / f"{number}-{name.split()[0]}"
                    outcomes[name][trial(data, out, env)] += 1
    print(f"{args.trials} runs of each, SIGTERM once the first of {args.records} records are in")
    print("| tree | exit 143 (stopped as meant) | Ray aborted (exit 1) | other |")
    print("|---|---|---|---|")
    for name, counts in outcomes.items():
        other = counts.total() - counts["exit 143"] - counts["Ray aborted"]
        print(f"| {name} | {counts['exit 143']} | {counts['Ray aborted']} | {other} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
