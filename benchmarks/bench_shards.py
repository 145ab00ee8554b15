"""A bench run on the embedded model in N shards at once, beside the same run unsharded.

The README's quick start (71 labelled answers, `learned+llamacpp/smollm2`: the learned
checker decides, the embedded model gives each claim a second opinion) runs once as one
process on every core, once as one process kept to one core (a one-core machine), and once as
N `bench run --shard K/N` processes started together, each kept to a core of its own (N
one-core machines), then `assay merge`. Every process has a response cache of its own (no
answer is shared between arms or shards). llama.cpp runs a thread per core the process may
use; two processes that may each use every core spin against each other's threads (2 shards
unpinned on 2 cores took 114 s where one process took 14 s), so shards on one machine are each
kept to their share of its cores (`taskset`). The table gives each arm's wall time (the
shards': from the first start to the merge's end) and checks that the merged run's results
and detection metrics equal the unsharded run's.

    python benchmarks/bench_shards.py --shards 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "examples" / "grounded_qa_labelled.jsonl"
CORES = sorted(os.sched_getaffinity(0))
RUN = ["bench", "run", "--data", str(DATA), "--pattern", "entailment", "--no-progress"]
# what differs with where a reply came from (a shard has its own cache): not the verdicts
VARYING = {"check_ms", "latency_ms", "usage"}


def _assay(
    arguments: list[str], cache: Path | None = None, cores: set[int] | None = None
) -> subprocess.Popen[str]:
    """``python -m assay ARGUMENTS`` on this tree's code; ``cores``: the CPUs it may use (its
    llama.cpp runs one thread per core it may use)."""
    cached = [] if cache is None else ["--cache-path", str(cache)]
    command = [sys.executable, "-m", "assay", *arguments, *cached]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    pin = None if cores is None else (lambda: os.sched_setaffinity(0, cores))
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=pin,  # sets the child's affinity: no lock, nothing to deadlock on
    )


def _finish(process: subprocess.Popen[str]) -> None:
    _, err = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"assay failed ({process.returncode}):\n{err[-2000:]}")


def _verdicts(value: object) -> object:
    if isinstance(value, dict):
        return {k: _verdicts(v) for k, v in value.items() if k not in VARYING}
    if isinstance(value, list):
        return [_verdicts(v) for v in value]
    return value


def _results(run: Path) -> dict[str, object]:
    lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return {json.loads(line)["id"]: _verdicts(json.loads(line)) for line in lines}


def _auroc(run: Path, opinion: str) -> float:
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    return float(summary[opinion]["metrics"]["auroc"]["value"])


def unsharded(work: Path, name: str, cores: set[int] | None) -> float:
    start = time.perf_counter()
    run = [*RUN, "--out", str(work / name), "--no-report"]
    _finish(_assay(run, work / f"cache-{name}.sqlite", cores))
    return time.perf_counter() - start


def sharded(work: Path, count: int) -> float:
    start = time.perf_counter()
    processes = [
        _assay(
            [*RUN, "--shard", f"{k}/{count}", "--out", str(work / f"shard{k}"), "--no-report"],
            work / f"cache-shard{k}.sqlite",
            {(k - 1) % len(CORES)},
        )
        for k in range(1, count + 1)
    ]
    for process in processes:
        _finish(process)
    shards = [str(work / f"shard{k}") for k in range(1, count + 1)]
    merge = ["merge", *shards, "--out", str(work / "merged"), "--no-report"]
    _finish(_assay(merge))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shards", type=int, default=2, help="shards run at once (2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-shards-") as scratch:
        work = Path(scratch)
        every_core = unsharded(work, "whole", None)
        print(f"unsharded, every core: {every_core:.1f} s", file=sys.stderr, flush=True)
        one_core = unsharded(work, "one-core", {CORES[0]})
        print(f"unsharded, one core: {one_core:.1f} s", file=sys.stderr, flush=True)
        parts = sharded(work, args.shards)
        print(f"{args.shards} shards + merge: {parts:.1f} s", file=sys.stderr, flush=True)
        same = _results(work / "merged") == _results(work / "whole")
        aurocs = [
            (_auroc(work / "whole", key), _auroc(work / "merged", key))
            for key in ("detection", "detection_second_opinion")
        ]
    rows = [
        (f"unsharded, one process on {len(CORES)} cores", every_core),
        ("unsharded, one process on one core", one_core),
        (f"{args.shards} shards at once, one core each, then merge", parts),
    ]
    print(f"\n| quick start, {len(CORES)} cores | wall time | against one core |")
    print("|---|---|---|")
    for label, seconds in rows:
        print(f"| {label} | {seconds:.1f} s | {one_core / seconds:.2f}x |")
    print(f"\nmerged results equal the unsharded run's (timings and call counts aside): {same}")
    for name, (first, second) in zip(("learned", "embedded model"), aurocs, strict=True):
        print(f"AUROC, {name}: unsharded {first:.6f}, merged {second:.6f}")
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
