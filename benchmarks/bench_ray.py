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

from bench_bench import synthetic_record  # noqa: E402

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


def with_cluster(cpus: int, scratch: Path, run: Callable[[dict[str, str]], float]) -> float:
    port = free_port()
    joined = {"RAY_TMPDIR": str(scratch / f"ray{cpus}"), "RAY_AUTH_MODE": "disabled"}
    Path(joined["RAY_TMPDIR"]).mkdir()
    env = {**os.environ, **joined}
    start = [str(RAY), "start", "--head", "--num-cpus", str(cpus), "--port", str(port)]
    start += ["--include-dashboard", "false", "--disable-usage-stats"]
    subprocess.run(start, check=True, capture_output=True, env=env)
    try:
        return run({**env, "RAY_ADDRESS": f"127.0.0.1:{port}"})
    finally:
        subprocess.run([str(RAY), "stop", "--force"], capture_output=True, env=env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=2000, help="records per Ray task")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as temp:
        scratch = Path(temp)
        data = scratch / "records.jsonl"
        write_records(data, args.records)
        env = {**os.environ, "ASSAY_CACHE_DIR": str(scratch / "cache")}
        ray_args = ("--executor", "ray", "--ray-batch-size", str(args.batch))
        local = bench(data, scratch / "local", env)
        one = with_cluster(1, scratch, lambda e: bench(data, scratch / "ray1", e, *ray_args))
        two = with_cluster(2, scratch, lambda e: bench(data, scratch / "ray2", e, *ray_args))
    print(f"{args.records} records, learned checker, {args.batch} records per Ray task")
    print("| executor | wall s | records/s | vs in-process | vs Ray 1 worker |")
    print("|---|---|---|---|---|")
    for name, seconds in (("in-process", local), ("Ray, 1 worker", one), ("Ray, 2 workers", two)):
        print(
            f"| {name} | {seconds:.1f} | {args.records / seconds:.0f} | {local / seconds:.2f}x "
            f"| {one / seconds:.2f}x |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
