"""benchmarks/bench_report.py says whether a report cut its long texts, read from the report
itself: a small run's report keeps them whole, one held to a tiny budget cuts them."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.report.html import ReportOptions, write_report

from ..helpers.benchmark_scripts import load_benchmark


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    synthetic = load_benchmark("_synthetic_runs")
    return Path(synthetic.make_bench_run(tmp_path_factory.mktemp("run") / "run", 40))


def test_a_report_that_keeps_its_texts_whole_is_not_called_cut(
    run_dir: Path, tmp_path: Path
) -> None:
    bench_report = load_benchmark("bench_report")
    html = write_report(run_dir, out=tmp_path / "report.html").read_text(encoding="utf-8")
    assert bench_report.text_cut(html) == "long texts not cut"


def test_a_report_over_its_budget_says_where_it_cut(run_dir: Path, tmp_path: Path) -> None:
    bench_report = load_benchmark("bench_report")
    options = ReportOptions(max_bytes=60_000)
    html = write_report(run_dir, out=tmp_path / "report.html", options=options).read_text(
        encoding="utf-8"
    )
    described = bench_report.text_cut(html)
    assert described.startswith("long texts cut at ") and described.endswith(" characters")
