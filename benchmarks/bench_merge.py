"""`assay bench merge` of N shards beside `assay bench summarize` of the same run unsharded.

A synthetic finished run (`_synthetic_runs.make_bench_run`) is split by shard into N shard
directories, each with the run.json `bench run --shard K/N` writes. Merging reads every
shard's results for its checks, writes them as one file and summarises it; the peer is
`bench summarize` of the unsharded run (the summary an unsharded run ends with), so the ratio
is what a merge costs beyond the summary itself. Each command is a child process; peak MB is
its maximum RSS. The two alternate, so that a noisy machine slows both alike.

    python benchmarks/bench_merge.py --n 50000 --shards 4
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO_SRC := Path(__file__).resolve().parents[1] / "src"))

from _git_source import print_timing_table, timed_assay
from _synthetic_runs import make_bench_run

from assay.runs import RunLog, fingerprint, write_atomic
from assay.runs.shards import Shard, shard_of
from assay.verify.benchmark import BenchmarkConfig

N_RESAMPLES = 200


def _config(out_dir: Path, shard: Shard | None) -> BenchmarkConfig:
    return BenchmarkConfig(
        data=Path("synthetic.jsonl"),
        pattern="entailment",
        out_dir=out_dir,
        verifier="learned",
        n_resamples=N_RESAMPLES,
        shard=shard,
    )


def write_shards(whole: Path, root: Path, count: int) -> list[Path]:
    """The run ``whole`` as ``count`` shard directories, as `bench run --shard` leaves them."""
    total = sum(1 for _ in (whole / "results.jsonl").open(encoding="utf-8"))
    dirs = [root / f"shard{index}" for index in range(1, count + 1)]
    handles = []
    for run_dir in dirs:
        run_dir.mkdir(parents=True)
        handles.append((run_dir / "results.jsonl").open("w", encoding="utf-8"))
    sizes = [0] * count
    with (whole / "results.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            index = shard_of(json.loads(line)["cluster"], count)
            handles[index - 1].write(line)
            sizes[index - 1] += 1
    for handle in handles:
        handle.close()
    for index, run_dir in enumerate(dirs, start=1):
        config = _config(run_dir, Shard(index=index, count=count))
        log = RunLog(
            kind="bench",
            status="success",
            fingerprint=fingerprint(config.protocol()),
            config=config.public_dump(),
            sample_count=sizes[index - 1],
            finished_count=sizes[index - 1],
            shard={"index": index, "count": count, "total_items": total},
        )
        write_atomic(run_dir / "run.json", log.model_dump_json(indent=2))
    return dirs


def _unsharded_log(whole: Path) -> None:
    """The synthetic run's run.json with the config an unsharded `bench run` records."""
    config = _config(whole, None)
    log = RunLog.model_validate_json((whole / "run.json").read_text(encoding="utf-8"))
    log = log.model_copy(
        update={"config": config.public_dump(), "fingerprint": fingerprint(config.protocol())}
    )
    write_atomic(whole / "run.json", log.model_dump_json(indent=2))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=50_000, help="examples in all shards (50,000)")
    parser.add_argument("--shards", type=int, default=4, help="shards (4)")
    parser.add_argument("--repeat", type=int, default=2, help="alternating runs of each (2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-merge-") as scratch:
        work = Path(scratch)
        whole = make_bench_run(work / "whole", args.n, n_resamples=N_RESAMPLES)
        _unsharded_log(whole)
        shards = write_shards(whole, work / "shards", args.shards)
        merged = work / "merged"
        cases = {
            "bench summarize (unsharded)": ["bench", "summarize", str(whole), "--no-report"],
            f"bench merge ({args.shards} shards)": [
                "bench", "merge", *map(str, shards), "--out", str(merged), "--no-report",
            ],
        }  # fmt: skip
        times: dict[str, list[float]] = {name: [] for name in cases}
        peaks: dict[str, float] = dict.fromkeys(times, 0.0)
        for _ in range(args.repeat):
            for name, arguments in cases.items():
                shutil.rmtree(merged, ignore_errors=True)
                seconds, peak = timed_assay(arguments, REPO_SRC)
                times[name].append(seconds)
                peaks[name] = max(peaks[name], peak)
                print(f"{name}: {seconds:.1f} s, {peak:.0f} MB", file=sys.stderr, flush=True)
    print_timing_table(f"{args.n:,} examples", times, peaks)


if __name__ == "__main__":
    main()
