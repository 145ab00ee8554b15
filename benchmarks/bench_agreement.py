"""`assay judge agreement` on a large judge run, this tree beside an earlier revision: the
intervals from per-question tables (one product of cluster weights and tables per batch of
resamples) against re-counting every row in every resample.

The run is written as `bench_archive.py` writes one (real judge prompts, the real validator,
`Archive.add`; no model call); the labels are random scores of three dimensions by one
annotator, or by three (which adds the annotators' alpha and mean kappas). Each command is a
child process with `PYTHONPATH` on the source it times, the versions alternating; the table
also says whether both wrote the same point values.

    python benchmarks/bench_agreement.py --before 9ff0344                   # 20,000 samples
    python benchmarks/bench_agreement.py --before 9ff0344 --n 100000 --repeat 1
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _git_source import REPO, env_on, source_at, write_judge_run

VARIANTS, TARGETS = 5, 20  # as bench_archive.py lays out its samples
DIMENSIONS = ("D1", "D2", "overall_score")


def write_labels(path: Path, count: int, annotators: int) -> int:
    rng = random.Random(1)
    lines = []
    for index in range(count):
        question, rest = divmod(index, VARIANTS * TARGETS)
        variant, target = divmod(rest, TARGETS)
        sample = {"question_id": f"Q{question}", "prompt_variant": f"V{variant}"}
        sample["target_model"] = f"stub/target-{target}"
        for dimension in DIMENSIONS:
            top = 8 if dimension == "overall_score" else 2
            for annotator in range(annotators):
                label = {**sample, "dimension": dimension, "score": rng.randint(0, top)}
                lines.append(json.dumps({**label, "annotator": f"a{annotator}"}) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return len(lines)


def agreement(run_dir: Path, labels: Path, out: Path, source: Path) -> float:
    command = [sys.executable, "-m", "assay", "judge", "agreement", str(run_dir)]
    command += ["--labels", str(labels), "--out", str(out)]
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env_on(source))
    return time.perf_counter() - started


def point_values(path: Path) -> list[Any]:
    """Every statistic's value (not its interval) of an agreement.json."""
    rows = json.loads(path.read_text())["dimensions"]
    return [
        [v["value"] if isinstance(v, dict) and "value" in v else v for v in r.values()]
        for r in rows
    ]


def _close(first: list[Any], second: list[Any]) -> bool:
    """The same values, floats to 1e-9 (a sum over tables adds in another order)."""
    if len(first) != len(second):
        return False
    for a, b in zip(first, second, strict=True):
        if isinstance(a, list) and isinstance(b, list):
            if not _close(a, b):
                return False
        elif isinstance(a, float) and isinstance(b, float):
            if not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12):
                return False
        elif a != b:
            return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True, help="the revision to time beside this tree")
    parser.add_argument("--n", type=int, default=20_000, help="judged samples (20,000)")
    parser.add_argument("--repeat", type=int, default=2, help="alternating runs of each (2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-agreement-") as scratch:
        work = Path(scratch)
        sources = {"before": source_at(args.before, work / "before"), "this tree": REPO / "src"}
        run_dir = work / "run"
        write_judge_run(run_dir, args.n)
        rows = []
        for annotators in (1, 3):
            labels = work / f"labels-{annotators}.jsonl"
            count = write_labels(labels, args.n, annotators)
            times: dict[str, list[float]] = {name: [] for name in sources}
            for _ in range(args.repeat):
                for name, source in sources.items():
                    out = work / f"{name.replace(' ', '-')}-{annotators}.json"
                    times[name].append(agreement(run_dir, labels, out, source))
                    print(f"{annotators} annotator(s), {name}: {times[name][-1]:.1f} s",
                          file=sys.stderr, flush=True)  # fmt: skip
            same = _close(
                point_values(work / f"before-{annotators}.json"),
                point_values(work / f"this-tree-{annotators}.json"),
            )
            rows.append((annotators, count, times, same))
    _print_table(args.n, args.before, rows)


def _print_table(n: int, before: str, rows: list[Any]) -> None:
    print(f"\n| {n:,} samples | labels | before ({before}) | this tree | speed-up | same values |")
    print("|---|---|---|---|---|---|")
    for annotators, count, times, same in rows:
        old, new = min(times["before"]), min(times["this tree"])
        print(f"| {annotators} annotator(s) | {count:,} | {old:.1f} s | {new:.1f} s | "
              f"{old / new:.1f}x | {'yes' if same else 'NO'} |")  # fmt: skip
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\nbest of the runs; load average {load}")


if __name__ == "__main__":
    main()
