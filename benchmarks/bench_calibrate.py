"""``bench calibrate`` on large dev runs: this tree beside an earlier revision, in one run.

The fit is timed on synthetic labelled scores (30% errors, scores that rank them like a useful
verifier) of each size, once per method, each measurement in a fresh child process that
imports the ``src`` of the revision it measures. The threshold search of the earlier revision
scored each candidate threshold with a pass over all answers (quadratic in the number of
distinct scores); this tree scores them all from sorted scores.

    python benchmarks/bench_calibrate.py --before 6e93360 --sizes 2000 20000 100000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _git_source import source_at

REPO = Path(__file__).resolve().parents[1]
METHODS = ("isotonic", "platt")
CHILD = """
import json, sys, time
import numpy as np
from assay.verify.calibration import fit_calibration
n, method = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(0)
truth = rng.random(n) < 0.3
raw = np.clip(truth * 0.3 + rng.random(n) * 0.7, 0.0, 1.0)
start = time.perf_counter()
fitted = fit_calibration(truth, raw, target="balanced_accuracy", method=method, dev_run="-")
print(json.dumps({"seconds": time.perf_counter() - start, "threshold": fitted.threshold}))
"""


def measure(src: Path, n: int, method: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(n), method],
        check=True,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"},
    )
    result: dict[str, float] = json.loads(done.stdout)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="6e93360", help="the revision to compare with")
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000, 100000])
    parser.add_argument("--after-only", type=int, nargs="*", default=[1000000])
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        before = source_at(args.before, Path(work))
        after = REPO / "src"
        print(f"| dev answers | method | before ({args.before}) s | this tree s | ratio |")
        print("|---:|---|---:|---:|---:|")
        for n in args.sizes:
            for method in METHODS:
                old, new = measure(before, n, method), measure(after, n, method)
                same = "" if old["threshold"] == new["threshold"] else " (threshold differs!)"
                ratio = old["seconds"] / new["seconds"]
                print(
                    f"| {n:,} | {method} | {old['seconds']:.2f} | {new['seconds']:.3f} "
                    f"| {ratio:.0f}x{same} |"
                )
        for n in args.after_only:
            for method in METHODS:
                new = measure(after, n, method)
                print(f"| {n:,} | {method} | (not run) | {new['seconds']:.3f} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
