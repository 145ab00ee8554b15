"""`assay track`: runs logged into a real MLflow tracking store (SQLite in the test's folder),
read back with MLflow's own client: the report's numbers as metrics, its facts as params, the
run's files as artifacts, and a second call that finds the run already logged."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.report.html import load_run
from assay.report.tracking import DIGEST_TAG, metric_key
from tests.helpers.cli_output import one_error_line

mlflow = pytest.importorskip("mlflow")


@pytest.fixture
def tracking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    # a database store keeps artifacts under ./mlruns by MLflow's default: the test's folder
    monkeypatch.chdir(tmp_path)
    previous = mlflow.get_tracking_uri()
    yield f"sqlite:///{tmp_path / 'mlflow.db'}"
    mlflow.set_tracking_uri(previous)


def _runs(uri: str, experiment: str) -> list[Any]:
    client = mlflow.tracking.MlflowClient(uri)
    found = client.get_experiment_by_name(experiment)
    return list(client.search_runs([found.experiment_id])) if found else []


def test_a_judge_run_is_logged_once_with_the_reports_numbers(
    judge_run: Path, tracking: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["track", str(judge_run), "--tracking-uri", tracking, "--experiment", "judges"]
    assert main(argv) == 0
    assert "MLflow run " in capsys.readouterr().out
    (run,) = _runs(tracking, "judges")
    tags, metrics, params = run.data.tags, run.data.metrics, run.data.params
    assert tags["assay.kind"] == "judge" and tags["assay.run_dir"] == str(judge_run.resolve())
    summary = json.loads((judge_run / "summary.json").read_text())
    assert metrics[metric_key("valid rate")] == pytest.approx(summary["counts"]["valid_rate"])
    section = load_run(judge_run).section
    for metric in section.headline:
        if isinstance(metric.value, float):
            assert metrics[metric_key(metric.label)] == pytest.approx(metric.value)
    fingerprint = next(f for f in section.reproducibility if f.value == summary["fingerprint"])
    assert params[metric_key(fingerprint.label)] == summary["fingerprint"]
    client = mlflow.tracking.MlflowClient(tracking)
    files = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"run.json", "summary.json", "report.html", "results_analysis.md"} <= files
    plots = {a.path for a in client.list_artifacts(run.info.run_id, "plots")}
    assert plots and all(p.startswith("plots/") and p.endswith(".png") for p in plots)
    assert (Path.cwd() / "mlruns").is_dir()  # MLflow's default artifact root, not the repo's

    assert main(argv) == 0  # the same summary: named, not logged again
    assert f"already logged as MLflow run {run.info.run_id}" in capsys.readouterr().out
    assert len(_runs(tracking, "judges")) == 1
    assert main([*argv, "--again"]) == 0
    assert len(_runs(tracking, "judges")) == 2


def test_a_bench_run_gets_its_detection_metrics_with_their_intervals(
    bench_run: Path, tracking: str
) -> None:
    assert main(["track", str(bench_run), "--tracking-uri", tracking]) == 0
    (run,) = _runs(tracking, "assay")
    metrics = run.data.metrics
    assert run.data.tags["assay.kind"] == "bench"
    with_interval = [m for m in load_run(bench_run).section.metrics if m.ci_low is not None]
    assert with_interval
    for metric in with_interval:
        name = metric_key(metric.label)
        assert metrics[f"{name} ci_low"] <= metrics[name] <= metrics[f"{name} ci_high"]
    assert len(run.data.tags[DIGEST_TAG]) == 64


def test_a_run_without_a_summary_is_refused_before_anything_is_logged(
    judge_run: Path, bench_run: Path, tracking: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    unsummarised = shutil.copytree(judge_run, tmp_path / "judge")
    (unsummarised / "summary.json").unlink()
    assert main(["track", str(bench_run), str(unsummarised), "--tracking-uri", tracking]) == 2
    assert one_error_line(capsys) == (
        f"error: {unsummarised}: no summary.json: the run has not been summarised"
    )
    assert _runs(tracking, "assay") == []


def test_names_mlflow_refuses_become_names_it_takes() -> None:
    assert metric_key("overall, stub/a x A (judge stub/b)") == "overall stub/a x A judge stub/b"
    assert metric_key("overall, \u2068llamacpp/smollm2\u2069 x A") == "overall llamacpp/smollm2 x A"
    assert metric_key("()") == "value"
    assert len(metric_key("x" * 400)) == 250
