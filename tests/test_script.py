"""``scripts/verifier_benchmark.py``: the spec's entry point, run as a user would run it."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from tests.helpers.fault_server import SERVER_ERROR, fault_server
from tests.test_progress_failures import failing_options
from tests.verify.bench_fixtures import (
    generate_records,
    mixed_file,
    verify_only_records,
    write_jsonl,
)

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "verifier_benchmark.py"
STUB = ["--generator", "stub/gen", "--verifier", "lexical", "--no-cache", "--n-resamples", "50"]


def _script(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_spec_command_line_runs_a_benchmark(tmp_path: Path) -> None:
    mixed_file(tmp_path / "data.jsonl", generated=2, verified=4)
    spec_args = ["--data", "data.jsonl", "--pattern", "best_of_n", "--n", "3", "--seed", "0"]
    spec_args += ["--max_examples", "5", "--out_dir", "runs/demo"]
    done = _script(*spec_args, *STUB, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run = tmp_path / "runs" / "demo"
    assert len((run / "results.jsonl").read_text().splitlines()) == 5
    summary = json.loads((run / "summary.json").read_text())
    assert summary["kind"] == "bench" and summary["config"]["n"] == 3
    assert {p.name for p in (run / "plots").iterdir()} == {
        "calibration.png", "pr_curve.png", "roc_curve.png", "coverage_accuracy.png"
    }  # fmt: skip


def test_bad_input_exits_2_with_the_location(tmp_path: Path) -> None:
    records = verify_only_records(2)
    records[1]["evidence"] = [{"title": "no id, no text"}]
    write_jsonl(tmp_path / "data.jsonl", records)
    done = _script("--data", "data.jsonl", "--pattern", "entailment", *STUB, cwd=tmp_path)
    assert done.returncode == 2
    assert "data.jsonl:2" in done.stderr and "evidence" in done.stderr
    assert "Traceback" not in done.stderr


def test_help_lists_the_spec_options(tmp_path: Path) -> None:
    done = _script("--help", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout.startswith("usage: verifier_benchmark.py [-h]")  # was assay bench run
    for option in ("--data", "--pattern", "--n", "--seed", "--max_examples", "--out_dir"):
        assert option in done.stdout
    assert "best_of_n" in done.stdout and "self_consistency" in done.stdout


def test_errors_and_the_retry_hint_name_the_script(tmp_path: Path) -> None:
    """A usage error names the script, and a run with failed calls says to run again the
    command that was typed, not `assay bench run`."""
    done = _script("--pattern", "entailment", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "verifier_benchmark.py: error: the following arguments are required: --data"
    )
    write_jsonl(tmp_path / "data.jsonl", verify_only_records(2))
    args = ["--data", "data.jsonl", "--pattern", "entailment", "--verifier", "openai/m"]
    args += ["--n-resamples", "20", "--no-report", "--out_dir", "run"]
    with fault_server([SERVER_ERROR]) as server:
        args += failing_options(server.base_url, tmp_path)
        done = _script(*args, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    retry = done.stderr.splitlines()[-1]
    assert retry == "  " + shlex.join(["python", str(SCRIPT), *args])


def test_the_spec_command_line_on_an_openai_compatible_server(
    llama_server: str, tmp_path: Path
) -> None:
    """Each pattern, generating and verifying through a real llama.cpp server's /v1 API."""
    write_jsonl(tmp_path / "data.jsonl", generate_records(1))
    served = ["--generator", "openai/smollm2", "--verifier", "openai/smollm2"]
    served += ["--base-url", llama_server, "--max-tokens", "24", "--critique-max-tokens", "96"]
    for pattern in ("best_of_n", "entailment", "self_consistency"):
        out = f"runs/{pattern}"
        spec_args = ["--data", "data.jsonl", "--pattern", pattern, "--n", "2", "--seed", "0"]
        done = _script(*spec_args, "--out_dir", out, *served, "--no-report", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        (result,) = [json.loads(line) for line in (tmp_path / out / "results.jsonl").open()]
        assert result["mode"] == "generate" and result["usage"]["failures"] == 0
        assert all(c["text"] for c in result["candidates"])
        run = json.loads((tmp_path / out / "run.json").read_text())
        assert run["models"]["generator"]["name"] == "openai/smollm2"
        if pattern == "best_of_n":
            assert [c["index"] for c in result["candidates"]] == [0, 1]
        if pattern == "entailment":
            checkers = {c["checker"] for c in result["candidates"][0]["score"]["claim_checks"]}
            assert checkers == {"model:openai/smollm2"}
        if pattern == "self_consistency":
            assert result["critique"] is not None
