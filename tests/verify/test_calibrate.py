"""``assay bench calibrate`` on a real labelled dev run (WiCE dev records checked by the
``learned`` checker), applied to another run by ``bench summarize`` and ``bench run``."""

from __future__ import annotations

import json
import re
import shutil
import sys
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assay.cli import main
from assay.data.importers.wice import import_wice
from assay.verify.calibration import Method, fit_calibration, read_calibration

from ..conftest import SHARED_DATA

RUN = ["--pattern", "entailment", "--generator", "stub/gen", "--verifier", "learned"]
QUIET = ["--no-cache", "--no-progress", "--n-resamples", "20", "--no-report", "--max-examples", "0"]


def _halves(tmp_path: Path) -> tuple[Path, Path]:
    """WiCE dev records split by article (dev: even groups, test: odd), 60 + 60."""
    records = import_wice(SHARED_DATA / "wice" / "claim_dev.jsonl").records
    dev = [r for r in records if zlib.crc32(r.cluster.encode()) % 2 == 0][:60]
    test = [r for r in records if zlib.crc32(r.cluster.encode()) % 2 == 1][:60]
    paths = []
    for name, part in (("dev", dev), ("test", test)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(r.model_dump_json() + "\n" for r in part), encoding="utf-8")
        paths.append(path)
    return paths[0], paths[1]


def _bench(*args: str) -> int:
    return main(["bench", *args])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    tmp_path = tmp_path_factory.mktemp("calibrate")
    dev_data, test_data = _halves(tmp_path)
    dev_run, test_run = tmp_path / "dev-run", tmp_path / "test-run"
    assert _bench("run", "--data", str(dev_data), "--out_dir", str(dev_run), *RUN, *QUIET) == 0
    assert _bench("run", "--data", str(test_data), "--out_dir", str(test_run), *RUN, *QUIET) == 0
    return dev_run, test_run, test_data


def test_calibrate_writes_a_map_and_threshold_fitted_on_the_dev_run(
    runs: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    dev_run, _, _ = runs
    out = dev_run.parent / "cal.json"
    assert _bench("calibrate", str(dev_run), "--out", str(out)) == 0
    assert "balanced_accuracy" in capsys.readouterr().out
    calibration = read_calibration(out)
    assert calibration.method == "isotonic" and calibration.dev_n == 60
    grid = calibration.apply(np.linspace(0, 1, 101))
    assert np.all(np.diff(grid) >= 0)  # a calibration map never reorders answers
    assert calibration.dev_value is not None and 0.5 <= calibration.dev_value <= 1.0


def test_summarize_applies_the_file_and_records_which(runs: tuple[Path, Path, Path]) -> None:
    dev_run, test_run, _ = runs
    out = dev_run.parent / "cal-p.json"
    assert _bench("calibrate", str(dev_run), "--target", "precision@0.8", "--out", str(out)) == 0
    before = json.loads((test_run / "summary.json").read_text())
    assert before["calibration"] is None and before["threshold"] == 0.5
    assert _bench("summarize", str(test_run), "--calibration", str(out), "--no-plots") == 0
    after = json.loads((test_run / "summary.json").read_text())
    calibration = read_calibration(out)
    assert after["calibration"]["fingerprint"] == calibration.fingerprint()
    assert after["calibration"]["target"] == "precision@0.8"
    assert after["threshold"] == calibration.threshold
    # a rebuild without the option keeps the calibration the run was given
    assert _bench("summarize", str(test_run), "--no-plots") == 0
    again = json.loads((test_run / "summary.json").read_text())
    assert again["calibration"] == after["calibration"]


def test_run_with_a_calibration_gates_with_its_raw_threshold(
    runs: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    dev_run, _, test_data = runs
    out = tmp_path / "cal.json"
    assert _bench("calibrate", str(dev_run), "--method", "platt", "--out", str(out)) == 0
    calibration = read_calibration(out)
    run = tmp_path / "run"
    args = ["run", "--data", str(test_data), "--out_dir", str(run), *RUN, *QUIET]
    assert _bench(*args, "--calibration", str(out)) == 0
    results = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    assert {r["threshold"] for r in results} == {calibration.raw_threshold}
    summary = json.loads((run / "summary.json").read_text())
    assert summary["calibration"]["method"] == "platt"
    other = tmp_path / "other.json"
    assert _bench("calibrate", str(dev_run), "--target", "f1", "--out", str(other)) == 0
    assert _bench(*args, "--calibration", str(other)) == 2  # its answers were gated by cal.json
    assert read_calibration(run / "calibration.json") == calibration
    uncalibrated = tmp_path / "plain"
    plain = ["run", "--data", str(test_data), "--out_dir", str(uncalibrated), *RUN, *QUIET]
    assert _bench(*plain) == 0
    assert _bench(*plain, "--calibration", str(out)) == 2
    assert not (uncalibrated / "calibration.json").exists()


def test_bad_calibration_input_is_one_clear_error(
    runs: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dev_run, test_run, _ = runs
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "assay.calibration", "method": "cubic"}', encoding="utf-8")
    assert _bench("summarize", str(test_run), "--calibration", str(bad)) == 2
    assert f"{bad}: field 'method'" in capsys.readouterr().err
    assert _bench("calibrate", str(dev_run), "--target", "precision@2") == 2
    assert "--target" in capsys.readouterr().err


def test_precision_target_reaches_its_precision_on_the_dev_data() -> None:
    rng = np.random.default_rng(0)
    truth = rng.random(400) < 0.4
    raw = np.clip(truth * 0.3 + rng.random(400) * 0.7, 0, 1)
    calibration = fit_calibration(
        truth, raw, target="precision@0.9", method="isotonic", dev_run="x"
    )
    flagged = calibration.apply(raw) >= calibration.threshold
    assert (truth & flagged).sum() / flagged.sum() >= 0.9
    assert np.array_equal(flagged, raw >= calibration.raw_threshold)


def test_shift_recovers_the_base_rate_the_scores_miss_and_keeps_their_slope() -> None:
    """Scores calibrated for a 50/50 prior, on data with 80% errors: the fitted shift is the
    log prior odds, logit(0.8) = 1.386, within the sample's noise; the slope stays 1."""
    rng = np.random.default_rng(2)
    truth = rng.random(4000) < 0.8
    # class means +-2, spread 2: the log likelihood ratio of x is x itself, so sigmoid(x) is
    # p_error exactly as a verifier calibrated for a 50/50 prior gives it
    balanced_logit = np.where(truth, 2.0, -2.0) + rng.normal(0, 2.0, 4000)
    raw = 1 / (1 + np.exp(-balanced_logit))
    fitted = fit_calibration(truth, raw, target="balanced_accuracy", method="shift", dev_run="x")
    assert fitted.platt_a == 1.0
    assert abs(fitted.platt_b - np.log(0.8 / 0.2)) < 0.15
    calibrated = fitted.apply(raw)
    assert abs(calibrated.mean() - truth.mean()) < 0.01  # the maximum-likelihood intercept
    assert np.array_equal(np.argsort(calibrated, kind="stable"), np.argsort(raw, kind="stable"))


def test_calibrate_writes_a_shift_and_summarize_applies_it(
    runs: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    dev_run, test_run, _ = runs
    out = tmp_path / "shift.json"
    assert _bench("calibrate", str(dev_run), "--method", "shift", "--out", str(out)) == 0
    calibration = read_calibration(out)
    assert calibration.method == "shift" and calibration.platt_a == 1.0
    truth = [
        json.loads(line)["gold_error"]
        for line in (dev_run / "results.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    # WiCE's answers are wrong more often than a 50/50 prior says: the shift raises p_error
    assert np.mean(truth) > 0.5 and calibration.platt_b > 0
    assert _bench("summarize", str(test_run), "--calibration", str(out), "--no-plots") == 0
    summary = json.loads((test_run / "summary.json").read_text())
    assert summary["calibration"]["method"] == "shift"


@pytest.mark.parametrize("method", ["platt", "isotonic", "shift"])
def test_a_map_from_scores_that_rank_backwards_comes_with_a_warning(method: Method) -> None:
    """Scores that rank errors below grounded answers fit a Platt slope held at 0 (a negative
    one would turn the verifier's order around) or a flat isotonic map; the note says so, a
    sound fit has none."""
    from assay.verify.calibration import backwards_note

    rng = np.random.default_rng(1)
    truth = rng.random(300) < 0.5
    good = np.clip(truth * 0.4 + rng.random(300) * 0.6, 0, 1)
    for raw, warned in ((good, False), (1 - good, True)):
        fitted = fit_calibration(truth, raw, target="balanced_accuracy", method=method, dev_run="x")
        note = backwards_note(truth, raw, fitted)
        assert (note is not None) == warned
        if warned:
            assert note is not None and "no better than chance (AUROC 0." in note
            if method == "platt":
                assert fitted.platt_a == 0 and "held at 0" in note
                assert len(set(fitted.apply(raw).tolist())) == 1
            elif method == "shift":
                assert fitted.platt_a == 1.0 and "keeps that order" in note
            else:
                assert "the isotonic map has 1 level(s)" in note


def test_calibrate_prints_the_warning_and_still_writes_the_file(
    runs: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dev_run, _, _ = runs
    flipped = tmp_path / "flipped"
    flipped.mkdir()
    for name in ("run.json", "summary.json"):
        (flipped / name).write_bytes((dev_run / name).read_bytes())
    lines = (dev_run / "results.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    for row in rows:  # the same answers, labelled the other way round
        row["gold_error"] = None if row["gold_error"] is None else not row["gold_error"]
    (flipped / "results.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8"
    )
    out = tmp_path / "cal.json"
    capsys.readouterr()
    assert _bench("calibrate", str(flipped), "--method", "platt", "--out", str(out)) == 0
    err = capsys.readouterr().err
    assert "warning: on 60 dev answers the verifier's p_error ranks errors no better" in err
    assert read_calibration(out).platt_a == 0


def test_a_map_applies_only_to_p_error_made_like_the_dev_runs(
    runs: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The file records what made the dev run's p_error; a run whose p_error comes from another
    verifier, or another version of the checker, refuses it with one error naming both, before
    any work. A model's second opinion does not change the scorer: ``learned+MODEL`` is decided
    by ``learned``. A file from before the scorer was recorded is taken as it is."""
    from assay.verify.checkers.learned import CHECKER_VERSION

    dev_run, shared_run, test_data = runs
    test_run = tmp_path / "test-run"  # a copy: summarize adopts files into the run
    shutil.copytree(shared_run, test_run)
    out = tmp_path / "cal.json"
    assert _bench("calibrate", str(dev_run), "--out", str(out)) == 0
    assert read_calibration(out).dev_scorer == {
        "pattern": "entailment", "verifier": "learned", "claim_splitter": "rules",
        "checker_version": CHECKER_VERSION,
    }  # fmt: skip
    lexical = tmp_path / "lexical"
    args = ["run", "--data", str(test_data), "--out_dir", str(lexical), *QUIET]
    capsys.readouterr()
    lexical_run = ["--pattern", "entailment", "--generator", "stub/gen", "--verifier", "lexical"]
    assert _bench(*args, *lexical_run, "--calibration", str(out)) == 2
    err = capsys.readouterr().err
    assert f"{out}: fitted on the p_error of {dev_run}" in err and "Traceback" not in err
    assert "verifier learned there, lexical here" in err and "checker_version" in err
    assert not lexical.exists()  # refused before anything was written
    combined = ["--pattern", "entailment", "--generator", "stub/gen", "--verifier"]
    second_opinion = tmp_path / "combined"
    assert _bench("run", "--data", str(test_data), "--out_dir", str(second_opinion), *QUIET,
                  *combined, "learned+stub/v", "--calibration", str(out)) == 0  # fmt: skip
    older = json.loads(out.read_text(encoding="utf-8"))
    older["dev_scorer"]["checker_version"] = "learned-8"
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps(older), encoding="utf-8")
    assert _bench("summarize", str(test_run), "--calibration", str(stale), "--no-plots") == 2
    assert f"checker_version learned-8 there, {CHECKER_VERSION} here" in capsys.readouterr().err
    del older["dev_scorer"]
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps(older), encoding="utf-8")
    assert _bench("summarize", str(test_run), "--calibration", str(unknown), "--no-plots") == 0
    summary = json.loads((test_run / "summary.json").read_text(encoding="utf-8"))
    assert summary["calibration"]["dev_scorer"] is None


def _budget_module() -> Any:
    """benchmarks/calibration_budget.py, which is a script, not part of the package."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "calibration_budget.py"
    spec = importlib.util.spec_from_file_location("calibration_budget", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


def test_the_label_budget_draws_whole_groups_and_scores_only_the_rest() -> None:
    budget = _budget_module()
    rng = np.random.default_rng(3)
    group = np.repeat(np.arange(60), 5)  # 60 groups of 5 answers
    truth = rng.random(300) < 0.3
    p_error = np.clip(truth * 0.3 + rng.random(300) * 0.7, 0, 1)
    scored = budget.Scored("synthetic", truth, p_error, group)
    dev = budget.draw_dev(scored, 23, np.random.default_rng(0))
    assert dev is not None and dev.sum() == 25  # whole groups, so the first multiple of 5
    for g in range(60):
        assert len(set(dev[group == g].tolist())) == 1  # no group on both sides
    cells = budget.measure(scored, 50, draws=20, seed=0)
    assert set(cells) == {"none", "shift", "platt", "isotonic"}
    assert all(len(cell.bacc) == 20 for cell in cells.values())
    # `none` is the checker's own 0.5 on the held-out answers, whatever the dev draw
    bacc, ece = budget.held_out(scored, dev, "none")
    from assay.metrics import balanced_accuracy_score, expected_calibration_error

    assert bacc == balanced_accuracy_score(truth[~dev], p_error[~dev] >= 0.5)
    assert ece == expected_calibration_error(truth[~dev], p_error[~dev])


def _dev(truth: np.ndarray, raw: np.ndarray, groups: list[str]) -> Any:
    from assay.verify.calibration import DevAnswers

    return DevAnswers(truth=truth, raw=raw, groups=tuple(groups), threshold=0.5)


def test_cross_validation_shows_a_misplaced_threshold_corrected_on_unseen_folds() -> None:
    """Errors scored around 0.3, grounded answers around 0.1 (a verifier whose 0.5 flags few
    errors): the threshold fitted on four folds and applied to the fifth beats the run's 0.5,
    and the map's ECE is lower than the raw scores'."""
    from assay.verify.calibration import cross_validate

    rng = np.random.default_rng(4)
    truth = rng.random(500) < 0.5
    raw = np.clip(np.where(truth, 0.3, 0.1) + rng.normal(0, 0.05, 500), 0.001, 0.999)
    dev = _dev(truth, raw, [f"q{i // 2}" for i in range(500)])
    checked = cross_validate(dev, target="balanced_accuracy", method="isotonic")
    assert checked is not None and checked.folds == 5 and checked.threshold_before == 0.5
    assert checked.target_before == 0.5  # nothing flagged at 0.5
    assert checked.target_after is not None and checked.target_after > 0.95
    assert checked.ece_after < checked.ece_before


def test_cross_validation_needs_both_classes_in_every_training_part() -> None:
    from assay.verify.calibration import cross_validate

    truth = np.array([True] + [False] * 39)
    raw = np.linspace(0.1, 0.9, 40)
    dev = _dev(truth, raw, ["only-error"] + [f"g{i}" for i in range(39)])
    assert cross_validate(dev, target="balanced_accuracy", method="shift") is None


def test_calibrate_reports_and_records_the_held_out_check(
    runs: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from assay.cli._calibrate import _held_out_lines
    from assay.verify.calibration import CrossValidation

    dev_run, _, _ = runs
    out = tmp_path / "cal.json"
    capsys.readouterr()
    assert _bench("calibrate", str(dev_run), "--method", "shift", "--out", str(out)) == 0
    printed = capsys.readouterr().out
    checked = read_calibration(out).dev_cross_validation
    assert checked is not None
    assert "held out on the dev run (5 folds by group): balanced_accuracy " in printed
    assert f"ECE {checked.ece_after:.3f} against {checked.ece_before:.3f}" in printed
    unreached = CrossValidation(
        folds=5, threshold_before=0.5, target_before=0.77, target_after=None,
        ece_before=0.12, ece_after=0.09,
    )  # fmt: skip
    assert (
        "precision@0.9 not reached calibrated against 0.770"
        in (_held_out_lines(unreached, "precision@0.9")[0])
    )
    assert "not measured" in _held_out_lines(None, "f1")[0]


def test_a_stated_error_rate_shifts_the_probabilities_and_keeps_every_decision() -> None:
    from assay.verify.calibration import stated_error_rate_map

    calibration = stated_error_rate_map(0.3)
    assert calibration.method == "shift" and calibration.stated_error_rate == 0.3
    assert abs(calibration.platt_b - np.log(0.3 / 0.7)) < 1e-8
    assert calibration.raw_threshold == 0.5 and abs(calibration.threshold - 0.3) < 1e-9
    raw = np.concatenate([np.linspace(0, 1, 1001), [0.5, 0.4999999, 0.5000001]])
    assert np.array_equal(calibration.apply(raw) >= calibration.threshold, raw >= 0.5)
    assert calibration.apply(np.array([0.5]))[0] == calibration.threshold


def test_calibrate_with_a_stated_error_rate_changes_ece_not_verdicts(
    runs: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, test_run, _ = runs
    run = tmp_path / "run"
    shutil.copytree(test_run, run)
    (run / "calibration.json").unlink(missing_ok=True)
    assert _bench("summarize", str(run), "--no-plots") == 0
    before = json.loads((run / "summary.json").read_text())
    out = tmp_path / "rate.json"
    assert _bench("calibrate", "--error-rate", "0.67", "--out", str(out)) == 0
    assert "decisions unchanged (raw threshold 0.5)" in capsys.readouterr().out
    assert _bench("summarize", str(run), "--calibration", str(out), "--no-plots") == 0
    after = json.loads((run / "summary.json").read_text())
    assert after["calibration"]["stated_error_rate"] == 0.67
    metrics = before["detection"]["metrics"], after["detection"]["metrics"]
    for name in ("balanced_accuracy", "precision", "recall"):
        assert metrics[0][name]["value"] == metrics[1][name]["value"]
    assert metrics[0]["ece_uniform"]["value"] != metrics[1]["ece_uniform"]["value"]
    # the report says which file scored the metrics, and where its map came from
    from assay.report._html_bench import calibration_note
    from assay.report.html import ReportOptions, build_report

    payload, _ = build_report([run], ReportOptions())
    note = next(n for n in payload.runs[0].notes if n.startswith("calibrated:"))
    assert f"by {run / 'calibration.json'} (shift map, a stated error rate of 0.67, no" in note
    assert "(raw 0.5000, target balanced_accuracy)" in note
    fitted = dict(after["calibration"], stated_error_rate=None, dev_run="runs/dev", dev_n=60)
    assert "fitted on runs/dev (60 labelled answers)" in str(
        calibration_note({"calibration": fitted})
    )
    assert calibration_note({"calibration": None}) is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give a DEV_RUN or --error-rate, one of the two"),
        (("DEV", "--error-rate", "0.3", "--out", "x.json"), "one of the two"),
        (("--error-rate", "0.3"), "give --out FILE (there is no DEV_RUN)"),
        (("--error-rate", "1.5", "--out", "x.json"), "--error-rate 1.5: expected a rate between"),
        (("--error-rate", "0.3", "--out", "x.json", "--target", "f1"), "need labelled answers"),
        (("--error-rate", "0.3", "--out", "x.json", "--method", "platt"), "need labelled answers"),
    ],
)
def test_stated_error_rate_mistakes_are_one_clear_error(
    args: tuple[str, ...], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = tuple(str(tmp_path / a) if a in ("DEV", "x.json") else a for a in args)
    assert _bench("calibrate", *args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "x.json").exists()


def _naive_best(truth: np.ndarray, p: np.ndarray, target: str) -> tuple[float, float] | None:
    """Every candidate threshold scored by a pass over all answers: the search's definition."""
    values = np.unique(p)
    candidates = [0.0, *((values[:-1] + values[1:]) / 2)] + ([1.0] if values[-1] < 1 else [])
    best = None
    for threshold in candidates:
        flagged = p >= threshold
        tp = float((flagged & truth).sum())
        precision = tp / flagged.sum() if flagged.any() else 1.0
        recall = tp / truth.sum()
        specificity = float((~flagged & ~truth).sum()) / (~truth).sum()
        name, _, level = target.partition("@")
        key: float | None = {
            "balanced_accuracy": (recall + specificity) / 2,
            "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
            "precision": recall if level and precision >= float(level) else None,
            "recall": precision if level and recall >= float(level) else None,
        }[name]
        if key is not None and (best is None or key > best[0]):
            best = (key, threshold)
    return None if best is None else (round(float(best[1]), 9), round(best[0], 6))


@pytest.mark.parametrize("target", ["balanced_accuracy", "f1", "precision@0.8", "recall@0.7"])
def test_the_threshold_search_finds_what_scoring_every_candidate_finds(target: str) -> None:
    """The search scores all candidates at once from sorted scores; on random dev sets, with
    ties and scores at 0 and 1, it picks the threshold a pass per candidate picks."""
    from assay.errors import ConfigError
    from assay.verify.calibration import _best_threshold

    rng = np.random.default_rng(5)
    for trial in range(300):
        n = int(rng.integers(2, 60))
        truth = rng.random(n) < rng.uniform(0.1, 0.9)
        if truth.all() or not truth.any():
            continue
        p = rng.random(n) if trial % 2 else np.round(rng.random(n) * 4) / 4
        expected = _naive_best(truth, p, target)
        if expected is None:
            with pytest.raises(ConfigError):
                _best_threshold(truth, p, target)
        else:
            assert _best_threshold(truth, p, target) == expected


@pytest.mark.parametrize("method", ["isotonic", "platt", "shift"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_gate_and_the_summary_agree_on_scores_the_dev_run_never_had(
    method: Method, seed: int
) -> None:
    """``bench run`` gates with raw >= raw_threshold, the summary counts calibrated >=
    threshold: the two must agree on every raw score, not only on the dev run's (a raw
    threshold set midway between two dev scores did not, between them)."""
    rng = np.random.default_rng(seed)
    truth = rng.random(60) < 0.4
    # the array's own round: numpy's stubs type np.round(array, 2) as float16
    raw = np.clip(truth * 0.3 + rng.random(60) * 0.7, 0, 1).round(2)  # ties too
    fitted = fit_calibration(truth, raw, target="balanced_accuracy", method=method, dev_run="x")
    new = np.concatenate([np.linspace(0, 1, 200_001), raw])
    assert np.array_equal(fitted.apply(new) >= fitted.threshold, new >= fitted.raw_threshold)


def test_isotonic_pools_tied_scores_so_row_order_does_not_matter() -> None:
    """Answers with one score are one block: the map at that score is their error rate, in
    whatever order the rows come (rows taken one by one left several knots at one score, the
    map there depending on the order)."""
    truth = np.array([0, 0, 0, 1, 1, 1, 1, 1], dtype=bool)
    raw = np.array([0.1, 0.1, 0.3, 0.3, 0.3, 0.3, 0.8, 0.8])
    for order in (np.arange(8), np.arange(8)[::-1], np.array([3, 2, 1, 0, 7, 6, 5, 4])):
        fitted = fit_calibration(
            truth[order], raw[order], target="balanced_accuracy", method="isotonic", dev_run="x"
        )
        assert (fitted.knots_x, fitted.knots_y) == ((0.1, 0.3, 0.8), (0.0, 0.75, 1.0))


def _written(tmp_path: Path, **changes: Any) -> Path:
    rng = np.random.default_rng(3)
    truth = rng.random(80) < 0.5
    raw = np.clip(truth * 0.3 + rng.random(80) * 0.7, 0, 1)
    fitted = fit_calibration(truth, raw, target="balanced_accuracy", method="platt", dev_run="x")
    data = json.loads(fitted.model_dump_json()) | changes
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"threshold": "0.5"}, "field 'threshold': Input should be a valid number"),
        ({"raw_threshold": 0.95}, "raw_threshold: 0.95 is not where the map reaches"),
        ({"platt_a": -2.0}, "field 'platt_a': Input should be greater than or equal to 0"),
        ({"method": "shift", "platt_a": 3.0}, "platt_a: a shift has slope 1, not 3.0"),
        ({"schema_version": 3}, "3 is not a version this assay reads (1, 2)"),
    ],
)
def test_a_calibration_file_that_contradicts_itself_is_refused(
    tmp_path: Path, changes: dict[str, Any], message: str
) -> None:
    from assay.errors import ConfigError

    assert read_calibration(_written(tmp_path)).schema_version == 2  # the file before changes
    with pytest.raises(ConfigError, match=re.escape(message)):
        read_calibration(_written(tmp_path, **changes))


def test_a_version_1_file_is_read_with_its_own_raw_threshold(tmp_path: Path) -> None:
    """Files written before raw_threshold was the map's preimage set it midway between two dev
    scores; they are read as written, so a run begun with one resumes with the same gate."""
    path = _written(tmp_path, schema_version=1, raw_threshold=0.4321)
    assert read_calibration(path).raw_threshold == 0.4321


@pytest.mark.parametrize("target", ["precision@0.0", "precision@0", "recall@.00", "f1@0.5"])
def test_a_target_level_of_zero_is_refused(target: str) -> None:
    from assay.errors import ConfigError

    truth = np.array([0, 1, 0, 1], dtype=bool)
    with pytest.raises(ConfigError, match="with R in"):
        fit_calibration(truth, np.array([0.1, 0.9, 0.2, 0.8]), target=target, method="platt",
                        dev_run="x")  # fmt: skip


@pytest.mark.parametrize("rate", [1e-320, 1e-7, 1 - 1e-9])
def test_a_stated_rate_beyond_what_the_log_odds_tell_apart_is_refused(rate: float) -> None:
    from assay.errors import ConfigError
    from assay.verify.calibration import stated_error_rate_map

    with pytest.raises(ConfigError, match=re.escape("expected a rate between 1e-06 and 0.999999")):
        stated_error_rate_map(rate)
