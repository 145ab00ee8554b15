#!/usr/bin/env python3
"""The verifier benchmark's entry point, as the spec names it: ``assay bench run`` by another name.

    python scripts/verifier_benchmark.py --data examples/grounded_qa.jsonl \
        --pattern entailment --n 5 --seed 0 --max_examples 200 --out_dir runs/demo

Every option of ``assay bench run`` works here (``--help`` lists them); this file builds its
parser from the same option definitions and hands the arguments to the same code, so the two
can never drift apart. Its usage line and errors name this script, and a hint that says what
to run again repeats the command as it was typed here.
"""

from __future__ import annotations

import os
import sys


def main() -> int:
    from assay.cli import run_command_line
    from assay.cli._bench import script_parser

    parser = script_parser(prog=os.path.basename(sys.argv[0]))
    return run_command_line(parser, sys.argv[1:], program=("python", sys.argv[0]))


if __name__ == "__main__":
    sys.exit(main())
