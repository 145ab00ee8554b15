"""The README's quick start, timed as a new user meets it (benchmarks/README.md).

Runs the quick-start command (`assay bench run --data examples/grounded_qa_labelled.jsonl
--pattern entailment`, default verifier) with a fresh response cache and run directory, for
this tree and, with `--base SRC`, for another checkout's `src` (e.g. the starting commit) in the
same run, one after the other, and prints wall time, model calls and the detection headline.
Each code then runs the command once more on the same response cache (a new run directory):
the rerun must make no model call, and its second opinion (the embedded model's per-claim
probabilities) must equal the first run's; the table says how many claims' probabilities the
rerun changed.

    python benchmarks/bench_quickstart.py [--base /work/base/src]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMAND = [
    "bench",
    "run",
    "--data",
    "examples/grounded_qa_labelled.jsonl",
    "--pattern",
    "entailment",
]


def assay(src: Path | None, cache: str, out: Path) -> tuple[float, str]:
    env = {**os.environ, "ASSAY_CACHE_DIR": cache}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "assay", *COMMAND, "--out_dir", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"quick start failed ({src or 'this tree'}):\n{done.stderr[-2000:]}")
    return seconds, done.stdout


def second_opinions(out: Path) -> dict[tuple[str, int], float | None]:
    """The embedded model's p(supported) of every claim, by answer id and claim number (lines
    are written as answers finish, so their order varies)."""
    values: dict[tuple[str, int], float | None] = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        result = json.loads(line)
        for number, check in enumerate(result.get("claim_checks") or []):
            opinion = check.get("second_opinion") or {}
            values[(result["id"], number)] = opinion.get("p_supported")
    return values


def run_once(src: Path | None) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as scratch:
        cache = f"{scratch}/cache"
        seconds, stdout = assay(src, cache, Path(scratch) / "run")
        calls = re.search(r"(\d+) model calls", stdout)
        summary = json.loads((Path(scratch) / "run" / "summary.json").read_text())
        _, rerun_stdout = assay(src, cache, Path(scratch) / "rerun")
        rerun_calls = re.search(r"(\d+) model calls", rerun_stdout)
        first = second_opinions(Path(scratch) / "run")
        again = second_opinions(Path(scratch) / "rerun")
    return {
        "seconds": seconds,
        "calls": int(calls.group(1)) if calls else None,
        "auroc": summary["detection"]["metrics"]["auroc"],
        "recall": summary["detection"]["metrics"]["recall"],
        "second": summary["detection_second_opinion"]["metrics"]["auroc"],
        "rerun_calls": int(rerun_calls.group(1)) if rerun_calls else None,
        "changed": f"{sum(first[k] != again.get(k) for k in first)} of {len(first)}",
    }


def interval(metric: dict[str, object]) -> str:
    low, high = metric.get("low"), metric.get("high")
    value = metric.get("value")
    if value is None:
        return "n/a"
    return f"{value:.3f} [{low:.3f}, {high:.3f}]" if low is not None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="another checkout's src/, run first")
    args = parser.parse_args(argv)
    rows = []
    if args.base is not None:
        rows.append(
            ("starting commit" if "base" in str(args.base) else str(args.base), run_once(args.base))
        )
    rows.append(("this tree", run_once(None)))
    print(
        "| code | wall s | model calls | detection AUROC | recall | second opinion AUROC "
        "| rerun: model calls | rerun: second opinions changed |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, row in rows:
        print(
            f"| {name} | {row['seconds']:.0f} | {row['calls']} | {interval(row['auroc'])} "  # type: ignore[arg-type]
            f"| {interval(row['recall'])} | {interval(row['second'])} "  # type: ignore[arg-type]
            f"| {row['rerun_calls']} | {row['changed']} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
