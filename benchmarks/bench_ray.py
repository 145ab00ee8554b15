"""The Ray executor: model-free checking of many records on 1 and 2 Ray workers, beside the
in-process executor, in one run (benchmarks/README.md).

A synthetic file of verify-only records (benchmarks/bench_bench.py's generator) is checked by
`assay bench run --pattern entailment --verifier learned` three ways, each a fresh process and
run directory:

- in-process (one Python process, the default executor);
- Ray, a local cluster started with `ray start --head --num-cpus 1` (one worker);
- Ray, the same with `--num-cpus 2` (two workers).

Wall time includes the process start, reading the file, Ray's connection, and writing
results.jsonl and summary.json (bootstrap resamples set low: this measures checking). Targets:
2 workers >= 1.6x 1 worker; the overhead of Ray with one worker against in-process.

    python benchmarks/bench_ray.py [--records 100000] [--batch 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_bench import synthetic_record  # noqa: E402

from tests.helpers.ray_cluster import stop_cluster  # noqa: E402

RAY = Path(sys.executable).with_name("ray")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def write_records(path: Path, count: int) -> None:
    rng = random.Random(0)
    with path.open("w", encoding="utf-8") as handle:
        for index in range(count):
            handle.write(json.dumps(synthetic_record(index, rng)) + "\n")


def bench(data: Path, out: Path, env: dict[str, str], *extra: str) -> float:
    command = [sys.executable, "-m", "assay", "bench", "run", "--data", str(data), "--pattern"]
    command += ["entailment", "--verifier", "learned", "--out_dir", str(out), "--no-report"]
    command += ["--no-progress", "--n-resamples", "50", *extra]
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env)
    return time.perf_counter() - started


def with_cluster(
    cpus: int, scratch: Path, run: Callable[[dict[str, str]], float], base: dict[str, str]
) -> float:
    """A local cluster of ``cpus`` workers started with ``base``'s environment (its workers
    import the same code as the driver), then ``run`` with its address."""
    port = free_port()
    joined = {"RAY_TMPDIR": str(scratch / f"ray{cpus}"), "RAY_AUTH_MODE": "disabled"}
    Path(joined["RAY_TMPDIR"]).mkdir()
    env = {**base, **joined}
    start = [str(RAY), "start", "--head", "--num-cpus", str(cpus), "--port", str(port)]
    start += ["--include-dashboard", "false", "--disable-usage-stats"]
    subprocess.run(start, check=True, capture_output=True, env=env)
    try:
        return run({**env, "RAY_ADDRESS": f"127.0.0.1:{port}"})
    finally:
        stop_cluster(joined["RAY_TMPDIR"])  # this cluster only (`ray stop` would stop every one)


def measure_tree(data: Path, scratch: Path, env: dict[str, str], batch: int) -> list[float]:
    """In-process, Ray with 1 worker, Ray with 2 workers: wall seconds of each."""
    ray_args = ("--executor", "ray", "--ray-batch-size", str(batch))
    runs = scratch / f"runs{len(list(scratch.glob('runs*')))}"
    runs.mkdir()
    local = bench(data, runs / "local", env)
    one = with_cluster(1, runs, lambda e: bench(data, runs / "ray1", e, *ray_args), env)
    two = with_cluster(2, runs, lambda e: bench(data, runs / "ray2", e, *ray_args), env)
    return [local, one, two]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=2000, help="records per Ray task")
    parser.add_argument("--before", type=Path, help="also run this src/ (e.g. an earlier commit)")
    args = parser.parse_args(argv)
    trees = [("", None)] + ([(" (before)", args.before)] if args.before else [])
    rows: list[tuple[str, list[float]]] = []
    with tempfile.TemporaryDirectory() as temp:
        scratch = Path(temp)
        data = scratch / "records.jsonl"
        write_records(data, args.records)
        for label, source in trees:
            env = {**os.environ, "ASSAY_CACHE_DIR": str(scratch / f"cache{label.strip()}")}
            if source is not None:
                env["PYTHONPATH"] = str(source)
            rows.append((label, measure_tree(data, scratch, env, args.batch)))
    print(f"{args.records} records, learned checker, {args.batch} records per Ray task")
    print("| executor | wall s | records/s | vs in-process | vs Ray 1 worker |")
    print("|---|---|---|---|---|")
    names = ("in-process", "Ray, 1 worker", "Ray, 2 workers")
    for label, (local, one, two) in rows:
        for name, seconds in zip(names, (local, one, two), strict=True):
            print(
                f"| {name}{label} | {seconds:.1f} | {args.records / seconds:.0f} "
                f"| {local / seconds:.2f}x | {one / seconds:.2f}x |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
