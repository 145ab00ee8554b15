"""`assay judge agreement` of a directory of draws: each draw's agreement, the draws pooled,
and the judge's median over draws of the judge; labels per draw from a folder."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from assay.cli import main
from assay.judge.agreement import Label, lower_median
from assay.judge.draws import LoadedDraws
from assay.judge.draws_agreement import (
    DrawLabels,
    _median_match,
    draws_agreement,
    refuse_shared_labels_of_other_outputs,
)
from assay.report.html import ReportOptions, build_report
from tests.helpers.cli_output import one_error_line

from .helpers import write_questions
from .test_draws import DRAWS, _generate_draws, _judge, judge_target_draws

D1 = "FORMAT_COMPLIANCE"  # the first dimension
# the labels of DRAWS' first dimension; the draws' own scores (- invalid):
# Q1A 2,1,2  Q1B 1,1,-  Q2A 1,1,1  Q2B 2,1,1  Q3A 2,-,-  Q3B -,0,1
TRUTH = {("Q1", "A"): 2, ("Q1", "B"): 1, ("Q2", "A"): 1, ("Q2", "B"): 1}
TRUTH |= {("Q3", "A"): 2, ("Q3", "B"): 0}


def _labels() -> list[Label]:
    return [
        Label(question_id=q, prompt_variant=v, target_model="t", dimension=D1, score=score)
        for (q, v), score in TRUTH.items()
    ]


def _loaded(same_output: bool = True) -> LoadedDraws:
    outputs = [
        {(r.question_id, r.prompt_variant, r.target_model): "same" if same_output else str(k)}
        for k, draw in enumerate(DRAWS)
        for r in draw[:1]
    ]
    return LoadedDraws(
        names=["draw-1", "draw-2", "draw-3"],
        runs=[],
        evaluations=DRAWS,
        fingerprints=["f"] * 3,
        judge_seeds=[1, 2, 3],
        judge_temperature=0.7,
        unreadable=[[], [], []],
        outputs=outputs,
    )


def test_each_draw_the_draws_pooled_and_the_judges_median_against_the_labels() -> None:
    labels = DrawLabels([[(Path("labels.jsonl"), _labels())]] * 3, [])
    report, per_draw = draws_agreement(
        Path("run"), _loaded(), labels, same_outputs=True, n_resamples=200
    )
    (row,) = [d for d in report.dimensions if d.dimension == D1]
    assert row.draw_n == (5, 5, 4)
    assert row.draw_accuracy == pytest.approx((4 / 5, 4 / 5, 3 / 4))
    assert row.accuracy_sd == pytest.approx(float(np.std([0.8, 0.8, 0.75], ddof=1)))
    # each draw's figure is the one its own agreement gives
    assert [r.dimensions[0].accuracy.value for r in per_draw] == list(row.draw_accuracy)
    assert (row.pooled.n, row.pooled.invalid_left_out) == (14, 4)
    assert row.pooled.accuracy.value == pytest.approx(11 / 14)
    median = row.judge_median
    assert median is not None
    # lower medians 2, 1, 1, 1, 2, 0: every one matches its label
    assert (median.agreement.n, median.agreement.accuracy.value) == (6, 1.0)
    one_draw = np.mean([2 / 3, 1, 1, 2 / 3, 1, 1 / 2])
    assert median.one_draw_accuracy.value == pytest.approx(one_draw)
    assert median.gain.value == pytest.approx(1 - one_draw)
    assert median.draws_per_sample == pytest.approx(14 / 6)
    low, value, high = median.gain.low, median.gain.value, median.gain.high
    assert low is not None and value is not None and high is not None and low <= value <= high
    # the median of k draws, over every choice of k of a sample's valid draws: k = 1 is one
    # draw; k = 2 on the five samples with two, Q1A's pairs (2,1) (2,2) (1,2) matching once
    k1, k2, k3 = median.by_draws
    assert (k1.draws, k1.samples, k2.draws, k2.samples) == (1, 6, 2, 5)
    assert k1.accuracy.value == pytest.approx(one_draw)
    assert k2.accuracy.value == pytest.approx((1 / 3 + 4) / 5)
    assert (k3.samples, k3.accuracy.value) == (3, 1.0)  # Q1A 1,2,2; Q2A 1,1,1; Q2B 1,1,2


def test_the_median_of_many_draws_is_estimated_from_a_seeded_sample_of_subsets() -> None:
    draws = [0, 1, 1, 2, 1, 0, 2, 1, 1, 2, 0, 1, 1, 2]  # 3,432 ways of choosing 7
    exact = np.mean([lower_median(c) == 1 for c in itertools.combinations(draws, 7)])
    rng = np.random.default_rng(0)
    assert _median_match(draws, 1, 7, rng) == pytest.approx(exact, abs=0.06)
    assert _median_match(draws[:6], 1, 3, rng) == pytest.approx(
        np.mean([lower_median(c) == 1 for c in itertools.combinations(draws[:6], 3)])
    )


def test_draws_of_the_targets_get_no_judge_median_and_say_why() -> None:
    labels = DrawLabels([[(Path("labels.jsonl"), _labels())]] * 3, [])
    report, _ = draws_agreement(
        Path("run"), _loaded(same_output=False), labels, same_outputs=False, n_resamples=50
    )
    assert all(d.judge_median is None for d in report.dimensions)
    assert any("judged different outputs" in note for note in report.notes)


def write_labels(path: Path, score: int = 2, targets: tuple[str, ...] = ("stub/a",)) -> Path:
    rows = [
        {"question_id": q, "prompt_variant": v, "target_model": t, "dimension": D1, "score": score}
        for q in ("Q1", "Q2")
        for v in ("A", "B")
        for t in targets
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_judge_draws_against_one_labels_file_each_draw_pooled_and_the_median(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    outputs = _generate_draws(tmp_path, questions, draws=2) / "draw-1"
    run = tmp_path / "run"
    argv = _judge(questions, outputs, run, "--judge-draws", "3", "--temperature", "0.9")
    assert main(argv) == 0
    labels = write_labels(tmp_path / "labels.jsonl", targets=("stub/a", "stub/b"))
    capsys.readouterr()
    agreement = ["judge", "agreement", str(run), "--labels", str(labels), "--resamples", "100"]
    assert main(agreement) == 0
    printed = capsys.readouterr().out
    assert "judge median accuracy" in printed and "wrote " in printed
    report = json.loads((run / "agreement.json").read_text())
    assert report["kind"] == "judge-draws-agreement" and report["same_outputs"] is True
    assert report["draws"] == ["draw-1", "draw-2", "draw-3"]
    rows = [d for d in report["dimensions"] if d["method"] == "cross_judge"]
    assert rows and all(d["judge_median"] is not None for d in rows)
    for k in (1, 2, 3):
        own = tmp_path / f"own-{k}.json"
        single = ["judge", "agreement", str(run / f"draw-{k}"), "--labels", str(labels)]
        assert main([*single, "--resamples", "100", "--out", str(own)]) == 0
        expected = json.loads(own.read_text())
        assert json.loads((run / f"draw-{k}" / "agreement.json").read_text()) == expected
        by_role = {(d["judge_model"], d["method"]): d for d in expected["dimensions"]}
        for row in report["dimensions"]:
            mine = by_role[(row["judge_model"], row["method"])]
            assert row["draw_accuracy"][k - 1] == mine["accuracy"]["value"]
    for row in rows:
        median = row["judge_median"]
        gain = median["agreement"]["accuracy"]["value"] - median["one_draw_accuracy"]["value"]
        assert median["gain"]["value"] == pytest.approx(gain)
        assert row["pooled"]["n"] == sum(row["draw_n"])
        assert [p["draws"] for p in median["by_draws"]] == [1, 2, 3]
        first = median["by_draws"][0]["accuracy"]["value"]
        assert first == pytest.approx(median["one_draw_accuracy"]["value"])
    # the report shows both tables once the draws are analysed
    assert main(["judge", "analyze", str(run), "--resamples", "50", "--no-plots"]) == 0
    payload, _ = build_report([run], ReportOptions())
    titles = [t.title for t in payload.runs[0].tables]
    assert "Agreement with labels over the draws" in titles
    (curve,) = [t for t in payload.runs[0].tables if t.title.startswith("Accuracy of the judge's")]
    assert len(curve.rows) == 3 * len(report["dimensions"])


def test_draws_of_the_targets_take_a_labels_folder_and_refuse_one_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = judge_target_draws(tmp_path)
    capsys.readouterr()
    file = write_labels(tmp_path / "labels.jsonl")
    agreement = ["judge", "agreement", str(run), "--resamples", "50"]
    assert main([*agreement, "--labels", str(file)]) == 2
    err = capsys.readouterr().err
    assert "a labels file serves every draw, but draw-1 and draw-2 judged different" in err
    assert "hint: give a labels folder with labels-draw-K.jsonl" in err and "Traceback" not in err
    assert (
        not (run / "agreement.json").exists() and not (run / "draw-1" / "agreement.json").exists()
    )

    folder = tmp_path / "labels"
    write_labels(folder / "labels-draw-1.jsonl", score=2)
    assert main([*agreement, "--labels", str(folder)]) == 2
    assert "no labels-draw-2.jsonl" in one_error_line(capsys)
    write_labels(folder / "labels-draw-2.jsonl", score=1)
    write_labels(folder / "labels-draw-3.jsonl", score=1)  # a draw generated, not judged
    assert main([*agreement, "--labels", str(folder)]) == 0
    report = json.loads((run / "agreement.json").read_text())
    unused = f"labels of draws the run does not hold, not used: {folder / 'labels-draw-3.jsonl'}"
    assert unused in report["notes"] and f"note: {unused}" in capsys.readouterr().out
    assert report["same_outputs"] is False and report["labels"] == [4, 4]
    assert all(d["judge_median"] is None for d in report["dimensions"])
    assert report["labels_files"] == [
        [str(folder / "labels-draw-1.jsonl")],
        [str(folder / "labels-draw-2.jsonl")],
    ]
    assert main(["judge", "agreement", str(run / "draw-1"), "--labels", str(folder)]) == 2
    assert "the folder holds no labels.jsonl; a folder of labels-draw-K.jsonl is for a " in (
        one_error_line(capsys)
    )


def test_by_slices_one_draw_not_a_directory_of_draws(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = judge_target_draws(tmp_path)
    capsys.readouterr()
    labels = write_labels(tmp_path / "labels.jsonl")
    argv = ["judge", "agreement", str(run), "--labels", str(labels), "--by", "meta.x"]
    assert main(argv) == 2
    assert one_error_line(capsys).startswith(
        f"error: --by with a directory of draws ({run}): slice one draw's agreement"
    )


def test_whether_the_draws_judged_the_same_outputs_is_told_from_each_records_fingerprint(
    tmp_path: Path,
) -> None:
    def loaded(fingerprints: list[str | None]) -> LoadedDraws:
        outputs = [
            {}
            if f is None
            else {(r.question_id, r.prompt_variant, r.target_model): f for r in draw}
            for f, draw in zip(fingerprints, DRAWS, strict=True)
        ]
        return LoadedDraws(
            names=["draw-1", "draw-2", "draw-3"], runs=[], evaluations=DRAWS,
            fingerprints=["f"] * 3, judge_seeds=[1, 2, 3], judge_temperature=0.7,
            unreadable=[[], [], []], outputs=outputs,
        )  # fmt: skip

    folder = tmp_path / "labels"
    folder.mkdir()
    assert refuse_shared_labels_of_other_outputs([folder], loaded(["a", "a", "a"])) is True
    assert refuse_shared_labels_of_other_outputs([folder], loaded(["a", "b", "a"])) is False
    # records archived before the fingerprint was kept: unknown, and no judge median
    unknown = loaded(["a", None, "a"])
    assert refuse_shared_labels_of_other_outputs([tmp_path / "l.jsonl"], unknown) is None
    labels = DrawLabels([[(Path("labels.jsonl"), _labels())]] * 3, [])
    report, _ = draws_agreement(Path("run"), unknown, labels, same_outputs=None, n_resamples=50)
    assert all(d.judge_median is None for d in report.dimensions)
    assert any("whether the draws judged the same outputs is unknown" in n for n in report.notes)
