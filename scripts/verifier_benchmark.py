#!/usr/bin/env python3
"""The verifier benchmark's entry point, as the spec names it: ``assay bench run`` by another name.

    python scripts/verifier_benchmark.py --data examples/grounded_qa.jsonl \
        --pattern entailment --n 5 --seed 0 --max_examples 200 --out_dir runs/demo

Every option of ``assay bench run`` works here (``--help`` lists them); this file only hands
its arguments to the same code, so the two can never drift apart.
"""

from __future__ import annotations

import sys


def main() -> int:
    from assay.cli import main as assay_main

    args = sys.argv[1:]
    debug = ["--debug"] if "--debug" in args else []  # a top-level option of `assay`
    return assay_main([*debug, "bench", "run", *(a for a in args if a != "--debug")])


if __name__ == "__main__":
    sys.exit(main())
