"""A real bench run for the report tests: verify-only records checked by a model-free checker
through the CLI, with the report left to the test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.cli import main
from tests.verify.bench_fixtures import write_jsonl


def bench_run(root: Path, records: list[dict[str, Any]], verifier: str = "lexical") -> Path:
    """``records`` run as ``root/run`` (entailment pattern, no cache, 20 resamples)."""
    data = write_jsonl(root / "data.jsonl", records)
    run = root / "run"
    args = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(run)]
    flags = ["--verifier", verifier, "--no-cache", "--no-progress", "--n-resamples", "20"]
    assert main([*args, *flags, "--no-report"]) == 0
    return run
