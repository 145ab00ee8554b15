"""`assay judge agreement RUN --labels FILE` (issue 10 #3): ground truth of any kind, several
annotators, valid evaluations only; checked against scikit-learn's kappa and a direct
computation of Krippendorff's alpha."""

from __future__ import annotations

import csv
import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from assay.cli import main
from assay.judge.archive import EvaluationRecord
from assay.judge.evaluations import final_evaluations

from .helpers import write_manifest, write_questions

DIMENSION = "INSTRUCTION_COMPLIANCE"


def _run(tmp_path: Path) -> Path:
    questions = write_questions(tmp_path / "q.jsonl")
    manifest = write_manifest(tmp_path / "manifest.jsonl", ["stub/a", "stub/b", "stub/c"])
    run = tmp_path / "run"
    command = ["judge", "run", "--questions", str(questions), "--outputs", str(manifest)]
    # The stub's replies follow from the request, which carries the date: a pinned date keeps
    # the same valid and invalid evaluations whatever day the suite runs on.
    command += ["--judge", "stub/j", "--mode", "cross", "--date", "2026-11-23"]
    assert main([*command, "--out", str(run)]) == 0
    return run


def _judge_scores(run: Path) -> dict[tuple[str, str, str], int]:
    from assay.judge.archive import iter_archive

    records = [item.record for item in iter_archive(run) if item.record is not None]
    return {
        (r.question_id, r.prompt_variant, r.target_model): _stored_score(r)
        for r in final_evaluations(records)
        if r.valid
    }


def _stored_score(record: EvaluationRecord) -> int:
    assert record.classification.scores is not None
    return record.classification.scores[DIMENSION]


def _ordinal_alpha(table: list[list[float]]) -> float:
    """Krippendorff's ordinal alpha from its definition (Krippendorff 2011): coincidences within
    units, delta^2(c, k) = (sum of n_g for g from c to k - (n_c + n_k) / 2)^2."""
    values = sorted({v for row in table for v in row if not np.isnan(v)})
    index = {v: i for i, v in enumerate(values)}
    o = np.zeros((len(values), len(values)))
    for unit in zip(*table, strict=True):
        present = [v for v in unit if not np.isnan(v)]
        if len(present) < 2:
            continue
        for a, b in itertools.permutations(range(len(present)), 2):
            o[index[present[a]], index[present[b]]] += 1 / (len(present) - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()

    def delta(c: int, k: int) -> float:
        low, high = min(c, k), max(c, k)
        return float((n_c[low : high + 1].sum() - (n_c[c] + n_c[k]) / 2) ** 2)

    observed = sum(o[c, k] * delta(c, k) for c in range(len(values)) for k in range(len(values)))
    expected = sum(
        n_c[c] * n_c[k] * delta(c, k) for c in range(len(values)) for k in range(len(values))
    )
    return float(1 - (n - 1) * observed / expected)


def test_two_annotators_against_sklearn_and_a_direct_alpha(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run(tmp_path)
    judged = _judge_scores(run)
    assert len(judged) >= 8
    rng = random.Random(3)
    keys = sorted(judged)
    first = {k: rng.choice([0, 1, 2]) for k in keys}
    second = {k: first[k] if rng.random() < 0.6 else rng.choice([0, 1, 2]) for k in keys}
    labels = tmp_path / "labels.csv"
    with labels.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["question_id", "prompt_variant", "target_model", "dimension", "score", "annotator"]
        )
        for k in keys:
            writer.writerow([*k, "D2", first[k], "ann1"])  # D2 is INSTRUCTION_COMPLIANCE
            writer.writerow([*k, DIMENSION, second[k], "ann2"])
        writer.writerow(["Q9", "A", "stub/a", DIMENSION, 2, "ann1"])  # names no evaluated sample
    code = main(["judge", "agreement", str(run), "--labels", str(labels), "--resamples", "200"])
    assert code == 0
    out = capsys.readouterr().out
    assert "1 name a sample no judge evaluated" in out
    report = json.loads((run / "agreement.json").read_text())
    (dimension,) = [d for d in report["dimensions"] if d["dimension"] == DIMENSION]
    consensus = [min(first[k], second[k]) for k in keys]  # lower median of two
    judge = [judged[k] for k in keys]
    assert dimension["n"] == len(keys) and dimension["annotators"] == ["ann1", "ann2"]
    assert dimension["accuracy"]["value"] == pytest.approx(np.mean(np.equal(consensus, judge)))
    expected_kappa = cohen_kappa_score(consensus, judge, weights="quadratic", labels=[0, 1, 2])
    assert dimension["kappa_quadratic"]["value"] == pytest.approx(expected_kappa)
    table = [
        [float(first[k]) for k in keys],
        [float(second[k]) for k in keys],
        [float(j) for j in judge],
    ]
    assert dimension["alpha_ordinal"]["value"] == pytest.approx(_ordinal_alpha(table))
    humans = cohen_kappa_score(
        [first[k] for k in keys], [second[k] for k in keys], weights="quadratic", labels=[0, 1, 2]
    )
    assert dimension["annotators_mean_kappa"]["value"] == pytest.approx(humans)
    assert dimension["annotators_alpha"]["value"] == pytest.approx(_ordinal_alpha(table[:2]))
    low, high = dimension["kappa_quadratic"]["low"], dimension["kappa_quadratic"]["high"]
    assert low <= dimension["kappa_quadratic"]["value"] <= high
    matrix = np.array(dimension["confusion"]["confusion"])
    assert matrix.sum() == len(keys) and np.trace(matrix) == sum(np.equal(consensus, judge))


def test_invalid_evaluations_are_left_out_and_counted(tmp_path: Path) -> None:
    run = _run(tmp_path)
    from assay.judge.agreement import Label, label_agreement
    from assay.judge.archive import iter_archive

    records = [item.record for item in iter_archive(run) if item.record is not None]
    finals = final_evaluations(records)
    first_valid = next(r for r in finals if r.valid)
    broken = first_valid.model_copy(
        update={
            "valid": False,
            "flags": ("UNPARSABLE_OUTPUT",),
            "classification": first_valid.classification.model_copy(
                update={"valid": False, "flags": ("UNPARSABLE_OUTPUT",)}
            ),
        }
    )
    others = [r for r in finals if r is not first_valid]
    labels = [  # the verdict's name as a labels file gives it, read as its score
        Label.model_validate(
            {"question_id": r.question_id, "prompt_variant": r.prompt_variant,
             "target_model": r.target_model, "dimension": "verdict", "score": "PASS"}
        )
        for r in finals
    ]  # fmt: skip
    report = label_agreement([broken, *others], labels, n_resamples=50)
    (verdict,) = report.dimensions
    invalid = 1 + sum(not r.valid for r in others)
    assert verdict.invalid_left_out == invalid and verdict.n == len(finals) - invalid


def test_a_bad_labels_line_is_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path)
    labels = tmp_path / "labels.jsonl"
    row = {"question_id": "Q1", "prompt_variant": "A", "target_model": "stub/a", "score": 1}
    labels.write_text(
        json.dumps({**row, "dimension": "D1"})
        + "\n"
        + json.dumps({**row, "dimension": "D7"})
        + "\n"
    )
    assert main(["judge", "agreement", str(run), "--labels", str(labels)]) == 2
    err = capsys.readouterr().err
    assert f"{labels}:2" in err and "dimension" in err and "D7" in err


_ROW = {"question_id": "Q1", "prompt_variant": "A", "target_model": "stub/a", "dimension": "D1"}
_HEADER = "question_id,prompt_variant,target_model,dimension,score\n"


@pytest.mark.parametrize("score", ["2", True, 1.0])
def test_a_json_score_must_be_an_integer(tmp_path: Path, score: object) -> None:
    """JSON has types: "2", true and 1.0 are not the label 2 (docs/errors.md)."""
    from assay.errors import InputError
    from assay.judge.agreement import load_labels

    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        json.dumps({**_ROW, "score": 1})
        + "\n"
        + json.dumps({**_ROW, "annotator": "b", "score": score})
        + "\n"
    )
    with pytest.raises(InputError) as error:
        load_labels(labels)
    assert f"{labels}:2" in str(error.value) and "score" in str(error.value)


def test_csv_cells_and_json_verdicts_stay_readable(tmp_path: Path) -> None:
    from assay.judge.agreement import load_labels

    table = tmp_path / "labels.csv"
    table.write_text(_HEADER + "Q1,A,stub/a,D1,2\nQ1,A,stub/a,verdict,PASS\n")
    assert [label.score for label in load_labels(table)] == [2, 2]
    lines = tmp_path / "labels.jsonl"
    lines.write_text(json.dumps({**_ROW, "dimension": "verdict", "score": "PARTIAL"}) + "\n")
    assert [label.score for label in load_labels(lines)] == [1]


def test_a_csv_saved_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    """Excel's "CSV UTF-8" starts with a BOM; it was kept in the first column's name, and the
    file refused with "question_id: Field required"."""
    from assay.judge.agreement import load_labels

    table = tmp_path / "labels.csv"
    table.write_bytes(b"\xef\xbb\xbf" + (_HEADER + "Q1,A,stub/a,D1,2\n").encode())
    [label] = load_labels(table)
    assert (label.question_id, label.score) == ("Q1", 2)


@pytest.mark.parametrize("second", ["2", "1"])
def test_a_sample_labelled_twice_names_both_lines(tmp_path: Path, second: str) -> None:
    from assay.errors import InputError
    from assay.judge.agreement import load_labels

    table = tmp_path / "labels.csv"
    table.write_text(
        _HEADER + "Q1,A,stub/a,D1,1\nQ2,A,stub/a,D1,1\n" + f"Q1,A,stub/a,D1,{second}\n"
    )
    with pytest.raises(InputError) as error:
        load_labels(table)
    message = str(error.value)
    assert f"{table}:4" in message and "line 2" in message


def test_a_second_annotator_is_not_a_repeat(tmp_path: Path) -> None:
    from assay.judge.agreement import load_labels

    table = tmp_path / "labels.csv"
    table.write_text(
        "question_id,prompt_variant,target_model,dimension,score,annotator\n"
        "Q1,A,stub/a,D1,1,ann1\nQ1,A,stub/a,D1,2,ann2\n"
    )
    assert len(load_labels(table)) == 2


def test_a_csv_row_longer_than_the_header_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "labels.csv"
    table.write_text(_HEADER + "Q1,A,stub/a,D1,1\nQ1,A,stub/a,D2,1,extra\n")
    out = tmp_path / "agreement.json"
    assert (
        main(["judge", "agreement", str(_run(tmp_path)), "--labels", str(table), "--out", str(out)])
        == 2
    )
    err = capsys.readouterr().err
    assert f"{table}:3" in err and "6 fields" in err and "Traceback" not in err
    assert not out.exists()


def test_self_judgments_are_a_row_apart_from_cross_judgments(tmp_path: Path) -> None:
    """A judge that also judged its own outputs (--mode both) gets one row per method: its
    self-judgments are diagnostic and never pooled into its agreement with the labels."""
    questions = write_questions(tmp_path / "q.jsonl")
    manifest = write_manifest(tmp_path / "manifest.jsonl", ["stub/a", "stub/b"])
    run = tmp_path / "run"
    command = ["judge", "run", "--questions", str(questions), "--outputs", str(manifest)]
    command += ["--judge", "stub/a", "--mode", "both", "--date", "2026-11-23", "--out", str(run)]
    assert main(command) == 0
    labels = tmp_path / "labels.csv"
    rows = [
        {"question_id": q, "prompt_variant": v, "target_model": t, "dimension": "verdict",
         "score": "PASS"}
        for q in ("Q1", "Q2") for v in ("A", "B") for t in ("stub/a", "stub/b")
    ]  # fmt: skip
    with labels.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    out = tmp_path / "agreement.json"
    assert main(["judge", "agreement", str(run), "--labels", str(labels), "--out", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    counted = {row["method"]: row["n"] + row["invalid_left_out"] for row in report["dimensions"]}
    assert counted == {"cross_judge": 4, "self_judge": 4}  # stub/b's outputs, stub/a's own
    assert {row["judge_model"] for row in report["dimensions"]} == {"stub/a"}


def test_two_judges_on_the_same_samples_get_a_paired_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    manifest = write_manifest(tmp_path / "manifest.jsonl", ["stub/a", "stub/b", "stub/c"])
    run = tmp_path / "run"
    command = ["judge", "run", "--questions", str(questions), "--outputs", str(manifest)]
    command += ["--judge", "stub/j", "--judge", "stub/k", "--mode", "cross"]
    assert main([*command, "--date", "2026-11-23", "--out", str(run)]) == 0
    from assay.judge.archive import iter_archive

    records = [item.record for item in iter_archive(run) if item.record is not None]
    scores: dict[str, dict[tuple[str, str, str], int]] = {"stub/j": {}, "stub/k": {}}
    for r in final_evaluations(records):
        if r.valid:
            scores[r.judge_model][r.question_id, r.prompt_variant, r.target_model] = _stored_score(
                r
            )
    shared = sorted(scores["stub/j"].keys() & scores["stub/k"].keys())
    assert len(shared) >= 6
    rng = random.Random(5)
    truth = {k: rng.choice([0, 1, 2]) for k in shared}
    labels = tmp_path / "labels.jsonl"
    lines = [
        {"question_id": k[0], "prompt_variant": k[1], "target_model": k[2],
         "dimension": DIMENSION, "score": truth[k]}
        for k in shared
    ]  # fmt: skip
    labels.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    capsys.readouterr()
    command = ["judge", "agreement", str(run), "--labels", str(labels), "--resamples", "300"]
    assert main(command) == 0
    assert "Judges compared on the same samples" in capsys.readouterr().out
    report = json.loads((run / "agreement.json").read_text())
    (pair,) = report["judge_differences"]
    assert (pair["judge_a"], pair["judge_b"], pair["n"]) == ("stub/j", "stub/k", len(shared))
    consensus = [truth[k] for k in shared]
    j, k = ([scores[name][key] for key in shared] for name in ("stub/j", "stub/k"))
    accuracy = np.mean(np.equal(consensus, k)) - np.mean(np.equal(consensus, j))
    assert pair["accuracy"]["value"] == pytest.approx(accuracy)
    kappas = [
        cohen_kappa_score(consensus, s, weights="quadratic", labels=[0, 1, 2]) for s in (j, k)
    ]
    assert pair["kappa_quadratic"]["value"] == pytest.approx(kappas[1] - kappas[0])
    assert pair["accuracy"]["low"] <= pair["accuracy"]["value"] <= pair["accuracy"]["high"]
    from assay.report.html import ReportOptions, build_report

    payload, _ = build_report([run], ReportOptions())
    titles = [t.title for t in payload.runs[0].tables]
    (table,) = [
        t for t in payload.runs[0].tables if t.title == "Judges compared on the same samples"
    ]
    assert table.rows[0][1:4] == [DIMENSION, "stub/j", "stub/k"]
    assert titles.index(table.title) == titles.index("Agreement with labels") + 1


def test_a_judge_against_an_identical_one_differs_by_exactly_nothing() -> None:
    from assay.judge.agreement import JudgeRole
    from assay.judge.agreement_pairs import judge_differences

    rng = random.Random(2)
    units: dict[tuple[str, ...], dict[str, int]] = {
        (f"q{i // 2}", "A", f"t{i % 2}"): {"ann": rng.choice([0, 1, 2])} for i in range(30)
    }
    judged: dict[tuple[str, ...], int] = {key: rng.choice([0, 1, 2]) for key in units}
    first, second = JudgeRole("x", "cross_judge"), JudgeRole("y", "cross_judge")
    mine = JudgeRole("x", "self_judge")
    scores = {
        (first, DIMENSION): judged,
        (second, DIMENSION): dict(judged),
        (mine, DIMENSION): judged,
    }
    (pair,) = judge_differences(scores, {DIMENSION: units}, n_resamples=200, seed=0)
    assert (pair.judge_a, pair.judge_b, pair.n, pair.questions) == ("x", "y", 30, 15)
    for interval in (pair.accuracy, pair.kappa_quadratic):
        assert (interval.value, interval.low, interval.high) == (0.0, 0.0, 0.0)
