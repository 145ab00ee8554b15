"""`assay track --to wandb`: runs logged by the real W&B SDK in offline mode, read back from the
run files it wrote (what `wandb sync` would upload): the report's facts as config, its numbers
in the run's summary, the run's files as one artifact, one W&B run per summary."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.cli import main
from assay.report.html import load_run
from assay.report.tracking import DIGEST_TAG, metric_key, summary_digest
from assay.report.wandb_tracking import wandb_run_id
from tests.helpers.cli_output import one_error_line
from tests.helpers.wandb_store import offline_runs

wandb = pytest.importorskip("wandb")


@pytest.fixture
def wandb_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("WANDB_MODE", "offline")  # nothing leaves the machine
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("WANDB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("WANDB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    wandb.teardown()  # the SDK reads its settings (WANDB_DIR) once per process: read them anew
    yield tmp_path
    wandb.teardown()


def test_a_judge_run_is_logged_with_the_reports_numbers_and_files(
    judge_run: Path, wandb_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["track", str(judge_run), "--to", "wandb", "--experiment", "judges"]
    assert main(argv) == 0
    digest = summary_digest(judge_run)
    assert f"W&B run {wandb_run_id(digest)}" in capsys.readouterr().out
    (run,) = offline_runs(wandb_dir)
    assert (run.run_id, run.project, run.name) == (wandb_run_id(digest), "judges", judge_run.name)
    assert run.kinds[:2] == ["header", "run"] and run.kinds[-1] == "exit"
    assert (run.job_type, run.tags) == ("assay-judge", ["judge"])
    assert run.config[DIGEST_TAG] == digest and run.config["assay.kind"] == "judge"
    summary = json.loads((judge_run / "summary.json").read_text())
    section = load_run(judge_run).section
    fingerprint = next(f for f in section.reproducibility if f.value == summary["fingerprint"])
    assert run.config[metric_key(fingerprint.label)] == summary["fingerprint"]
    assert run.summary[metric_key("valid rate")] == pytest.approx(summary["counts"]["valid_rate"])
    for metric in section.headline:
        if isinstance(metric.value, float):
            assert run.summary[metric_key(metric.label)] == pytest.approx(metric.value)
    ((name, kind, files),) = run.artifacts
    assert name == f"assay-{judge_run.name}" and kind == "assay-run"
    assert {"run.json", "summary.json", "report.html", "results_analysis.md"} <= set(files)
    assert any(path.startswith("plots/") and path.endswith(".png") for path in files)


def test_the_same_summary_lands_in_the_same_w_and_b_run_unless_again(
    bench_run: Path, wandb_dir: Path
) -> None:
    argv = ["track", str(bench_run), "--to", "wandb"]
    assert main(argv) == 0
    assert main(argv) == 0
    assert main([*argv, "--again"]) == 0
    first, second, again = offline_runs(wandb_dir)
    assert first.run_id == second.run_id == wandb_run_id(summary_digest(bench_run))
    assert again.run_id != first.run_id
    with_interval = [m for m in load_run(bench_run).section.metrics if m.ci_low is not None]
    assert with_interval
    for metric in with_interval:
        key = metric_key(metric.label)
        assert (
            first.summary[f"{key} ci_low"] <= first.summary[key] <= first.summary[f"{key} ci_high"]
        )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ["--to", "wandb", "--tracking-uri", "sqlite:///x.db"],
            "error: --tracking-uri: an MLflow setting",
        ),
        (["--entity", "team"], "error: --entity: a W&B setting"),
    ],
)
def test_an_option_of_the_other_tracker_is_refused(
    options: list[str], message: str, bench_run: Path, wandb_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    assert main(["track", str(bench_run), *options]) == 2
    assert one_error_line(capsys).startswith(message)
    assert offline_runs(wandb_dir) == []
