"""A bench run on the embedded model in N shards at once, beside the same run unsharded.

The README's quick start (71 labelled answers, `learned+llamacpp/smollm2`: the learned
checker decides, the embedded model gives each claim a second opinion) runs once as one
process and once as N `bench run --shard K/N` processes started together, each with a
response cache of its own (no answer is shared between the two arms or between shards), as N
machines would run them; then `assay merge` joins the shards. Each process's llama.cpp works on
one thread, so on a machine with N cores the shards stand for N one-core machines. The table
gives each arm's wall time (the shards': from the first start to the merge's end) and checks
that the merged run's results and detection metrics equal the unsharded run's.

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
RUN = ["bench", "run", "--data", str(DATA), "--pattern", "entailment", "--no-progress"]
# what differs with where a reply came from (a shard has its own cache): not the verdicts
VARYING = {"check_ms", "latency_ms", "usage"}


def _assay(arguments: list[str], cache: Path) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "assay", *arguments, "--cache-path", str(cache)]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
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


def unsharded(work: Path) -> float:
    start = time.perf_counter()
    _finish(
        _assay([*RUN, "--out", str(work / "whole"), "--no-report"], work / "cache-whole.sqlite")
    )
    return time.perf_counter() - start


def sharded(work: Path, count: int) -> float:
    start = time.perf_counter()
    processes = [
        _assay(
            [*RUN, "--shard", f"{k}/{count}", "--out", str(work / f"shard{k}"), "--no-report"],
            work / f"cache-shard{k}.sqlite",
        )
        for k in range(1, count + 1)
    ]
    for process in processes:
        _finish(process)
    shards = [str(work / f"shard{k}") for k in range(1, count + 1)]
    merge = ["merge", *shards, "--out", str(work / "merged"), "--no-report"]
    _finish(_assay(merge, work / "unused.sqlite"))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shards", type=int, default=2, help="shards run at once (2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-shards-") as scratch:
        work = Path(scratch)
        whole = unsharded(work)
        print(f"unsharded: {whole:.1f} s", file=sys.stderr, flush=True)
        parts = sharded(work, args.shards)
        print(f"{args.shards} shards + merge: {parts:.1f} s", file=sys.stderr, flush=True)
        same = _results(work / "merged") == _results(work / "whole")
        aurocs = [
            (_auroc(work / "whole", key), _auroc(work / "merged", key))
            for key in ("detection", "detection_second_opinion")
        ]
    print(f"\n| quick start, {os.cpu_count()} cores | wall time | speed-up |")
    print("|---|---|---|")
    print(f"| unsharded, one process | {whole:.1f} s | 1.00x |")
    print(f"| {args.shards} shards at once, then merge | {parts:.1f} s | {whole / parts:.2f}x |")
    print(f"\nmerged results equal the unsharded run's (timings and call counts aside): {same}")
    for name, (first, second) in zip(("learned", "embedded model"), aurocs, strict=True):
        print(f"AUROC, {name}: unsharded {first:.6f}, merged {second:.6f}")
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
