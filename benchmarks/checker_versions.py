"""Every version of the model-free ``learned`` checker on the same grounded-QA files, each with
its own code from this repository's history, in one table: how the rounds fared on data none of
them was fitted or chosen on.

    .venv/bin/python benchmarks/checker_versions.py --data data/wice_test.jsonl data/lfqa.jsonl
    .venv/bin/python benchmarks/checker_versions.py --data X.jsonl --versions learned-1 learned-10

A version's code is the commit that made it (``git archive REV src`` into a temporary
directory); each runs ``assay bench run --pattern entailment --verifier learned`` in a child
process with ``PYTHONPATH`` on that code, on every record of every file (without the records'
``meta`` fields, which older versions do not read; the checker never uses them). The table
scores each run the same way, with this tree's metrics: balanced accuracy at the fixed
threshold 0.5, AUROC and ECE (15 equal-width bins) of ``p_error``, error = positive. With
``--by-dataset``, also a column per value of ``meta.dataset`` (files from ``assay import
aggrefact``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from _git_source import source_at

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from assay.metrics import (  # noqa: E402  (this tree's metrics score every version)
    balanced_accuracy_score,
    expected_calibration_error,
    roc_auc_score,
)

VERSIONS = {  # the commit that made each version (learned-1: the last commit before learned-2)
    "learned-1": "02bdbc6^",
    "learned-2": "d18b9ff",
    "learned-3": "c3f0491",
    "learned-4": "cdd88c0",
    "learned-5": "f045247",
    "learned-6": "b97e47b",
    "learned-7": "138bcb7",
    "learned-8": "f31ef5a",
    "learned-9": "ac89cb3",
    "learned-10": "cb70189",
}


def without_meta(path: Path, target: Path) -> Path:
    with path.open(encoding="utf-8") as source, target.open("w", encoding="utf-8") as out:
        for line in source:
            if line.strip():
                record = json.loads(line)
                record.pop("meta", None)
                out.write(json.dumps(record) + "\n")
    return target


def run_version(src: Path, data: Path, out_dir: Path) -> list[tuple[bool, float, str]]:
    """(gold_error, p_error, record id) of every scored, labelled result."""
    command = [sys.executable, "-m", "assay", "bench", "run", "--data", str(data)]
    command += ["--pattern", "entailment", "--verifier", "learned", "--out_dir", str(out_dir)]
    command += ["--no-progress", "--max_examples", "1000000", "--n-resamples", "10"]
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{src}: bench run failed on {data}:\n{done.stderr[-2000:]}")
    rows = []
    for line in (out_dir / "results.jsonl").read_text(encoding="utf-8").splitlines():
        result = json.loads(line)
        if result.get("verifier_score") is not None and result.get("gold_error") is not None:
            rows.append((bool(result["gold_error"]), float(result["verifier_score"]), result["id"]))
    return rows


def scores(rows: Sequence[tuple[bool, float, str]]) -> str:
    truth = [error for error, _, _ in rows]
    p_error = [p for _, p, _ in rows]
    bacc = balanced_accuracy_score(truth, [p >= 0.5 for p in p_error])
    auroc = roc_auc_score(truth, p_error)
    ece = expected_calibration_error(truth, p_error, n_bins=15)
    return f"{100 * bacc:.1f} / {auroc:.3f} / {ece:.3f}"


def dataset_of(data: Path) -> dict[str, str]:
    """Record id -> meta.dataset, for ``--by-dataset``."""
    out = {}
    for line in data.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            out[record["id"]] = str((record.get("meta") or {}).get("dataset", "(none)"))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, nargs="+", required=True)
    parser.add_argument("--versions", nargs="+", choices=list(VERSIONS), default=list(VERSIONS))
    parser.add_argument("--by-dataset", action="store_true", help="rows per meta.dataset too")
    args = parser.parse_args(argv)
    names = {path: dataset_of(path) for path in args.data}  # read once, for every version
    groups = {path: sorted(set(names[path].values()) - {"(none)"}) for path in args.data}
    columns = [path.name for path in args.data]
    if args.by_dataset:
        columns += [f"{p.name}: {g}" for p in args.data for g in groups[p]]
    print("| version | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    with tempfile.TemporaryDirectory() as shared:
        # the inputs without meta, written once for every version
        inputs = [without_meta(p, Path(shared) / f"data{i}.jsonl") for i, p in enumerate(args.data)]
        for version in args.versions:
            with tempfile.TemporaryDirectory() as tmp:
                src = source_at(VERSIONS[version], Path(tmp))
                cells, by_group = [], []
                for number, (path, data) in enumerate(zip(args.data, inputs, strict=True)):
                    rows = run_version(src, data, Path(tmp) / f"run{number}")
                    cells.append(scores(rows))
                    if args.by_dataset:
                        by_group += [
                            scores([r for r in rows if names[path].get(r[2]) == group])
                            for group in groups[path]
                        ]
                print(f"| `{version}` | " + " | ".join(cells + by_group) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
