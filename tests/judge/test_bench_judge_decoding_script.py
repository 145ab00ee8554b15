"""benchmarks/bench_judge_decoding.py judges one imported IFEval output with the starting
commit's `assay judge run` too: the per-output files it writes must be ones that commit reads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from assay.cli import main

from ..conftest import REPO_ROOT
from ..helpers.benchmark_scripts import load_benchmark

STARTING_COMMIT = "8504690"  # benchmarks/README.md: the tree before the first issue's work


def test_the_inputs_of_one_output_are_read_by_the_starting_commit(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ifeval = shared_data / "ifeval"
    imported = tmp_path / "ifeval_gpt4"
    code = main(
        [
            "import", "ifeval", str(ifeval / "input_data.jsonl"),
            "--responses", str(ifeval / "input_response_data_gpt4_20231107_145030.jsonl"),
            "--labels", str(ifeval / "eval_results_strict.jsonl"),
            "--out", str(imported),
        ]
    )  # fmt: skip
    capsys.readouterr()
    assert code == 0
    bench = load_benchmark("bench_judge_decoding")
    questions, manifest = bench.one_output_inputs(imported, 0, tmp_path / "inputs")

    archive = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "archive", STARTING_COMMIT, "src"],
        check=True,
        capture_output=True,
    ).stdout
    base = tmp_path / "base"
    base.mkdir()
    subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
    read = (
        "import sys; from assay.judge.questions import ManifestEntry, Question; "
        "ManifestEntry.model_validate_json(open(sys.argv[1]).readline()); "
        "Question.model_validate_json(open(sys.argv[2]).readline())"
    )
    done = subprocess.run(
        [sys.executable, "-c", read, str(manifest), str(questions)],
        env={"PYTHONPATH": str(base / "src"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
