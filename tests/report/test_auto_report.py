"""Runs write their HTML report at the end unless told not to."""

from __future__ import annotations

from pathlib import Path

from assay.cli import main
from tests.conftest import REPO_ROOT

DATA = REPO_ROOT / "examples" / "grounded_qa_labelled.jsonl"


BENCH = ["bench", "run", "--data", str(DATA), "--pattern", "entailment", "--verifier", "lexical"]


def _bench(out_dir: Path, *extra: str) -> int:
    return main(
        [*BENCH, "--max_examples", "12", "--no-progress", "--out_dir", str(out_dir), *extra]
    )


def test_bench_run_writes_report_html(tmp_path: Path) -> None:
    assert _bench(tmp_path / "run") == 0
    page = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") or page.lower().startswith("<!doctype html>")
    assert "http://" not in page.split("<body", 1)[0].replace("http://www.w3.org", "")


def test_no_report_skips_it(tmp_path: Path) -> None:
    assert _bench(tmp_path / "run", "--no-report") == 0
    assert not (tmp_path / "run" / "report.html").exists()
    assert (tmp_path / "run" / "summary.json").is_file()


def test_judge_analyze_writes_report_html(tmp_path: Path) -> None:
    questions = str(REPO_ROOT / "examples" / "judge" / "questions.jsonl")
    outputs, run = str(tmp_path / "outputs"), str(tmp_path / "judge")
    assert main(["generate", "--questions", questions, "--model", "stub/a", "--out", outputs]) == 0
    judge_run = ["judge", "run", "--questions", questions, "--outputs", outputs]
    assert main([*judge_run, "--judge", "stub/b", "--mode", "cross", "--out", run]) == 0
    assert main(["judge", "analyze", run]) == 0
    assert (tmp_path / "judge" / "report.html").stat().st_size > 10_000
