"""The embedded verifier's two claim checks on the same records (docs/benchmarks.md).

    python benchmarks/verifier_modes.py [--n 100] [--json-n 100]

`single_pass` reads p(supported) from one next-token distribution over Yes/No; `json` generates
a grammar-constrained JSON verdict and reads its label token's logprobs (the earlier default).
Records: examples/grounded_qa_labelled.jsonl (all 71) and the first N records of the seeded
samples of benchmarks/real_data.py (WiCE dev, ExpertQA val, HaluEval QA; `prepare` runs when
they are missing). Both modes run the entailment pattern with `--verifier llamacpp/smollm2` on
exactly the same records, all single-pass runs first. Runs resume, and a run's directory does
not name N, so a larger `--json-n` later extends the JSON runs. The table goes to
runs/real_data/tables/verifier_modes.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import real_data  # the sibling script: datasets, samples and table rows

MODES = ("single_pass", "json")
LABELLED = real_data.Dataset(
    "labelled", "examples (labelled)", real_data.ROOT / "examples" / "grounded_qa_labelled.jsonl"
)


def run_dir(dataset: real_data.Dataset, mode: str) -> Path:
    return real_data.OUT / "modes" / f"{dataset.name}-{mode}"


def bench(data: Path, mode: str, n: int, out_dir: Path) -> None:
    real_data.run(
        [
            *real_data.ASSAY, "bench", "run", "--data", str(data), "--pattern", "entailment",
            "--verifier", real_data.EMBEDDED, "--claim-check", mode, "--max_examples", str(n),
            "--no-progress", "--no-report", "--out_dir", str(out_dir),
        ]
    )  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100, help="records per public dataset")
    parser.add_argument("--json-n", type=int, default=100, help="the same, JSON mode")
    args = parser.parse_args(argv)
    if not all(real_data.sampled(d).exists() for d in real_data.DATASETS):
        real_data.prepare(args)
    inputs = [(LABELLED, LABELLED.source, 71)]
    inputs += [(d, real_data.sampled(d), args.n) for d in real_data.DATASETS]
    for mode in MODES:
        for dataset, data, n in inputs:
            limit = n if mode == "single_pass" or dataset is LABELLED else args.json_n
            bench(data, mode, limit, run_dir(dataset, mode))
    rows = []
    for dataset, _, _ in inputs:
        for mode in MODES:
            row = real_data.verify_row(dataset, real_data.EMBEDDED, run_dir(dataset, mode), None)
            rows.append(row.replace(f"`{real_data.EMBEDDED}`", f"`smollm2` {mode}", 1))
    real_data.write_table("verifier_modes", "\n".join([real_data.VERIFY_HEADER, *rows]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
