"""benchmarks/bench_report.py says whether a report cut its long texts, read from the report
itself: a small run's report keeps them whole, one held to a tiny budget cuts them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from assay.report.html import ReportOptions, write_report

from ..conftest import REPO_ROOT


def _load(name: str) -> ModuleType:
    """A benchmark script as a module (its helpers import each other by bare name)."""
    benchmarks = str(REPO_ROOT / "benchmarks")
    if benchmarks not in sys.path:
        sys.path.insert(0, benchmarks)
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    synthetic = _load("_synthetic_runs")
    return Path(synthetic.make_bench_run(tmp_path_factory.mktemp("run") / "run", 40))


def test_a_report_that_keeps_its_texts_whole_is_not_called_cut(
    run_dir: Path, tmp_path: Path
) -> None:
    bench_report = _load("bench_report")
    html = write_report(run_dir, out=tmp_path / "report.html").read_text(encoding="utf-8")
    assert bench_report.text_cut(html) == "long texts not cut"


def test_a_report_over_its_budget_says_where_it_cut(run_dir: Path, tmp_path: Path) -> None:
    bench_report = _load("bench_report")
    options = ReportOptions(max_bytes=60_000)
    html = write_report(run_dir, out=tmp_path / "report.html", options=options).read_text(
        encoding="utf-8"
    )
    described = bench_report.text_cut(html)
    assert described.startswith("long texts cut at ") and described.endswith(" characters")
