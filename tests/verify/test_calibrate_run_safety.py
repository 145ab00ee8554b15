"""A run's finished work survives the commands that read it: outputs that would replace its
files, a summary while it is still written, unwritable paths, and a calibration swapped by
``bench summarize`` between two sessions of ``bench run``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.cli._common import RUN_OWNED_NAMES
from assay.runs import LOCK_FILE, RUN_FILE, RunDirLock
from assay.runs.prices import PRICES_FILE
from assay.verify.benchmark import SKIPPED_FILE
from assay.verify.calibration import CALIBRATION_FILE, read_calibration
from assay.verify.results import RESULTS_FILE
from assay.verify.slices import SLICES_DIR
from assay.verify.summary import PLOTS_DIR, SUMMARY_FILE

from .test_calibrate import QUIET, RUN, _bench, _halves


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("safety")
    data, _ = _halves(tmp_path)
    run = tmp_path / "run"
    assert _bench("run", "--data", str(data), "--out_dir", str(run), *RUN, *QUIET) == 0
    return run


@pytest.fixture
def run_copy(run_dir: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    return copy


def test_every_file_a_run_keeps_is_protected() -> None:
    from assay.judge.archive import INVALID_DIR, PROTOCOL_FILE, QUARANTINE_DIR, VALID_DIR
    from assay.judge.archive_shards import BLOBS_FILE
    from assay.judge.generate import FAILURES_NAME
    from assay.judge.run import COVERAGE_FILE

    kept = {RESULTS_FILE, SUMMARY_FILE, RUN_FILE, "run_log.jsonl", CALIBRATION_FILE}
    kept |= {PRICES_FILE, SKIPPED_FILE, LOCK_FILE, PLOTS_DIR, SLICES_DIR}
    kept |= {PROTOCOL_FILE, BLOBS_FILE, COVERAGE_FILE, VALID_DIR, INVALID_DIR, QUARANTINE_DIR}
    kept |= {FAILURES_NAME, "manifest.jsonl"}
    assert kept <= RUN_OWNED_NAMES


@pytest.mark.parametrize(
    "command",
    [
        ["calibrate", "{run}", "--out", "{run}/results.jsonl"],
        ["calibrate", "--error-rate", "0.3", "--out", "{run}/run.json"],
        ["calibrate", "{run}", "--out", "{run}/calibration.json"],
        ["compare", "{run}", "--out", "{run}/summary.json"],
    ],
)
def test_an_output_never_replaces_a_file_the_run_keeps(
    run_copy: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    before = {p.name: p.read_bytes() for p in run_copy.iterdir() if p.is_file()}
    assert _bench(*[part.format(run=run_copy) for part in command]) == 2
    err = capsys.readouterr().err
    assert "is a file the run" in err and "Traceback" not in err
    assert {p.name: p.read_bytes() for p in run_copy.iterdir() if p.is_file()} == before


def test_calibrate_into_a_directory_is_one_located_error(
    run_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (["calibrate", str(run_copy)], ["calibrate", "--error-rate", "0.3"]):
        assert _bench(*command, "--out", str(tmp_path)) == 2
        assert f"--out {tmp_path} is a directory, not a file" in capsys.readouterr().err


def test_summarize_waits_for_no_run_that_is_still_writing(
    run_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = (run_copy / SUMMARY_FILE).read_bytes()
    with RunDirLock(run_copy):  # as a bench run holds it while it appends results
        assert _bench("summarize", str(run_copy), "--no-plots", "--no-report") == 2
    assert "is being written by another assay process" in capsys.readouterr().err
    assert (run_copy / SUMMARY_FILE).read_bytes() == summary
    assert _bench("summarize", str(run_copy), "--no-plots", "--no-report") == 0


def test_summarize_checks_its_options_before_it_writes(
    run_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cal = tmp_path / "cal.json"
    assert _bench("calibrate", "--error-rate", "0.4", "--out", str(cal)) == 0
    args = ["summarize", str(run_copy), "--calibration", str(cal), "--n-resamples", "-1"]
    assert _bench(*args) == 2
    assert "--n-resamples: must be 0 or more, got -1" in capsys.readouterr().err
    assert not (run_copy / CALIBRATION_FILE).exists()


def test_a_path_the_command_cannot_write_is_one_located_error(
    run_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (run_copy / SUMMARY_FILE).unlink()
    (run_copy / SUMMARY_FILE).mkdir()
    assert _bench("summarize", str(run_copy), "--no-plots", "--no-report") == 2
    err = capsys.readouterr().err
    assert f"error: {run_copy / SUMMARY_FILE}" in err and "Is a directory" in err
    assert "internal error" not in err and "Traceback" not in err


def test_debug_is_accepted_after_the_command(
    run_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (run_copy / SUMMARY_FILE).unlink()
    (run_copy / SUMMARY_FILE).mkdir()
    assert _bench("summarize", str(run_copy), "--no-plots", "--debug") == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "Is a directory" in err


def test_a_threshold_beside_a_calibration_is_refused_even_at_its_default(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, _ = _halves(tmp_path)
    cal = tmp_path / "cal.json"
    assert _bench("calibrate", "--error-rate", "0.4", "--out", str(cal)) == 0
    args = ["run", "--data", str(data), "--out_dir", str(tmp_path / "new"), *RUN, *QUIET]
    assert _bench(*args, "--threshold", "0.5", "--calibration", str(cal)) == 2
    assert "--threshold and --calibration: give one" in capsys.readouterr().err


def test_compare_names_a_summary_it_cannot_read(
    run_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (run_copy / SUMMARY_FILE).write_text("[1, 2]", encoding="utf-8")
    assert _bench("compare", str(run_copy)) == 2
    err = capsys.readouterr().err
    assert f"{run_copy / SUMMARY_FILE}: not a bench summary" in err
    assert f"assay bench summarize {run_copy}" in err


def test_a_run_resumes_with_its_calibration_after_summarize_swapped_it(tmp_path: Path) -> None:
    """run --calibration A, summarize --calibration B, run --calibration A again: the results
    were gated with A's raw threshold, so A resumes the run (B's copy in the run said
    otherwise and blocked every command); B, which gates otherwise, is refused."""
    data, _ = _halves(tmp_path)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert _bench("calibrate", "--error-rate", "0.4", "--out", str(a)) == 0
    dev = tmp_path / "dev"
    assert _bench("run", "--data", str(data), "--out_dir", str(dev), *RUN, *QUIET) == 0
    assert _bench("calibrate", str(dev), "--method", "platt", "--out", str(b)) == 0
    assert read_calibration(a).raw_threshold != read_calibration(b).raw_threshold
    run = tmp_path / "run"
    args = ["run", "--data", str(data), "--out_dir", str(run), *RUN, *QUIET]
    assert _bench(*args[:-1], "30", "--calibration", str(a)) == 0  # the first 30 records
    assert _bench("summarize", str(run), "--calibration", str(b), "--no-plots") == 0
    assert _bench(*args, "--calibration", str(b)) == 2  # its gate is not the results'
    assert _bench(*args, "--calibration", str(a)) == 0
    results = [json.loads(line) for line in (run / RESULTS_FILE).read_text().splitlines()]
    assert len(results) == 60 and {r["threshold"] for r in results} == {0.5}
    assert read_calibration(run / CALIBRATION_FILE) == read_calibration(a)


def test_a_bad_finished_result_stops_a_resumed_run_before_it_writes(
    run_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A results line that is JSON but not a result (a score of 2) is found before the run
    writes run.json or its log, not by the summary at the end."""
    lines = (run_copy / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[4])
    row["verifier_score"] = 2.0
    lines[4] = json.dumps(row)
    (run_copy / RESULTS_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = {p.name: p.read_bytes() for p in run_copy.iterdir() if p.is_file()}
    data, _ = _halves(tmp_path)
    assert _bench("run", "--data", str(data), "--out_dir", str(run_copy), *RUN, *QUIET) == 2
    assert f"{run_copy / RESULTS_FILE}:5" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in run_copy.iterdir() if p.is_file()} == before
