"""The README's quick start, timed as a new user meets it (benchmarks/README.md).

Runs the quick-start command (`assay bench run --data examples/grounded_qa_labelled.jsonl
--pattern entailment`, default verifier) with a fresh response cache and run directory, for
this tree and, with `--base SRC`, for another checkout's `src` (e.g. the starting commit) in the
same run, one after the other, and prints wall time, model calls and the detection headline.

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


def run_once(src: Path | None) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "ASSAY_CACHE_DIR": f"{scratch}/cache"}
        if src is not None:
            env["PYTHONPATH"] = str(src)
        out = Path(scratch) / "run"
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "assay", *COMMAND, "--out_dir", str(out)],
            cwd=ROOT, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"quick start failed ({src or 'this tree'}):\n{done.stderr[-2000:]}")
        calls = re.search(r"(\d+) model calls", done.stdout)
        metrics = json.loads((out / "summary.json").read_text())["detection"]["metrics"]
    return {
        "seconds": seconds,
        "calls": int(calls.group(1)) if calls else None,
        "auroc": metrics["auroc"],
        "recall": metrics["recall"],
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
    print("| code | wall s | model calls | detection AUROC | recall |")
    print("|---|---|---|---|---|")
    for name, row in rows:
        print(
            f"| {name} | {row['seconds']:.0f} | {row['calls']} | {interval(row['auroc'])} "  # type: ignore[arg-type]
            f"| {interval(row['recall'])} |"  # type: ignore[arg-type]
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
