"""Models are opened only for the roles a run uses, before anything is written (issue 9 §4).

Model-free verification of verify-only records needs no model installed: a generator that
cannot be opened is not even looked at. A verifier model that cannot be opened stops the run
before any file is written, so a retry is not refused as "other settings"."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LABELLED = ROOT / "examples" / "grounded_qa_labelled.jsonl"


def _bench(tmp_path: Path, data: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "bench",
            "run",
            "--data",
            str(data),
            "--pattern",
            "entailment",
            "--out_dir",
            str(out),
            "--no-report",
            "--no-progress",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache")},
    )


def test_model_free_verification_opens_no_model(tmp_path: Path) -> None:
    missing = tmp_path / "not-installed.gguf"
    done = _bench(
        tmp_path,
        LABELLED,
        tmp_path / "run",
        "--verifier",
        "learned",
        "--generator",
        f"llamacpp/{missing}",
    )
    assert done.returncode == 0, done.stderr
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["models"]["generator"]["requests_this_session"] == "0"


def test_a_verifier_that_cannot_be_opened_writes_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "not-installed.gguf"
    out = tmp_path / "run"
    failed = _bench(tmp_path, LABELLED, out, "--verifier", f"llamacpp/{missing}")
    assert failed.returncode == 2 and "model file not found" in failed.stderr
    assert not out.exists()
    again = _bench(tmp_path, LABELLED, out, "--verifier", "learned")
    assert again.returncode == 0, again.stderr  # not refused as "other settings"


def readme_quick_start() -> list[str]:
    """The arguments of the README's first quick-start command after ``assay``."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (line,) = [x for x in readme.splitlines() if "assay bench run" in x and "pip install" in x]
    return shlex.split(line.split(".venv/bin/assay", 1)[1])


def test_the_readme_quick_start_is_the_default_verifier_on_the_labelled_examples() -> None:
    args = readme_quick_start()
    assert args[:2] == ["bench", "run"] and "--verifier" not in args
    assert args[args.index("--data") + 1] == "examples/grounded_qa_labelled.jsonl"


@pytest.mark.slow
def test_the_quick_start_command_on_a_subset(tmp_path: Path) -> None:
    """The README's first command, as written there, on 12 of its answers (learned verdicts,
    the embedded model's second opinion)."""
    subset = tmp_path / "subset.jsonl"
    lines = LABELLED.read_text(encoding="utf-8").splitlines()
    subset.write_text("\n".join(lines[:12]) + "\n", encoding="utf-8")
    out = tmp_path / "quickstart"
    args = readme_quick_start()
    args[args.index("--data") + 1] = str(subset)
    args[args.index("--out_dir") + 1] = str(out)
    env = {**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "assay", *args, "--no-report", "--no-progress"]

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)

    done = run()
    assert done.returncode == 0, done.stderr
    assert "second opinion, same answers" in done.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["detection"]["metrics"]["auroc"]["value"] is not None
    assert summary["detection_second_opinion"] is not None
    checks = [
        c for line in (out / "results.jsonl").open() for c in json.loads(line)["claim_checks"]
    ]
    sources = {c["second_opinion"]["probability_source"] for c in checks}
    assert sources <= {"next_token", "next_token_bounded", None}
    assert any(c["second_opinion"]["p_supported"] is not None for c in checks)
    run_log = json.loads((out / "run.json").read_text())
    assert run_log["models"]["verifier"]["llama_cpp_python"] == "0.3.16"
    assert run_log["models"]["verifier"]["prompt_eval"] == "blocks-64"
    assert run_log["models"]["verifier"]["json_grammar"] == "assay/2"
    rerun = run()
    assert rerun.returncode == 0 and "0 model calls" in rerun.stdout
    # the rerun opened no model, and its run.json still says what the results were made with
    rerun_log = json.loads((out / "run.json").read_text())["models"]["verifier"]
    assert rerun_log["llama_cpp_python"] == "0.3.16" and rerun_log["prompt_eval"] == "blocks-64"
    assert rerun_log["requests_this_session"] == "0"
    # The same command into a new directory reads every answer from the cache, and the cache
    # holds what the live run reported: each claim's second opinion, to the last bit.
    command[command.index(str(out))] = str(tmp_path / "again")
    again = run()
    assert again.returncode == 0 and "0 model calls" in again.stdout
    assert _second_opinions(tmp_path / "again") == _second_opinions(out)


def _second_opinions(run_dir: Path) -> dict[tuple[str, int], object]:
    """Each claim's second opinion by answer and claim number (lines come in finishing order)."""
    out: dict[tuple[str, int], object] = {}
    for line in (run_dir / "results.jsonl").open():
        result = json.loads(line)
        for number, check in enumerate(result["claim_checks"]):
            out[(result["id"], number)] = check["second_opinion"]
    return out


def test_roles_that_share_a_model_say_so_beside_its_request_count(tmp_path: Path) -> None:
    """One model serving several roles has one meter: each role's requests_this_session is
    the model's count over all of them, which run.json names, so that a role that made no
    call (the generator of verify-only records) is not read as having made them."""
    model = "stub/shared"
    done = _bench(tmp_path, LABELLED, tmp_path / "run", "--verifier", model, "--generator", model)
    assert done.returncode == 0, done.stderr
    models = json.loads((tmp_path / "run" / "run.json").read_text())["models"]
    shared = {role for role, entry in models.items() if entry["name"] == model}
    assert shared >= {"generator", "verifier"}
    for role in shared:
        assert models[role]["requests_shared_by"] == ", ".join(r for r in models if r in shared)
        assert int(models[role]["requests_this_session"]) > 0
    assert all("requests_shared_by" not in models[r] for r in models if r not in shared)
