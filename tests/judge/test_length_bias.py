"""A judge's within-question preference for longer outputs (`judge analyze`)."""

from __future__ import annotations

import itertools
import json
import random
from collections import defaultdict
from pathlib import Path

import pytest

from assay.cli import main
from assay.judge.archive import iter_archive
from assay.judge.evaluations import final_evaluations
from assay.judge.length_bias import length_preference, pair_counts

from .helpers import write_questions


def _brute(items: list[tuple[int, int]]) -> tuple[int, int]:
    won = lost = 0
    for (len_a, score_a), (len_b, score_b) in itertools.combinations(items, 2):
        if len_a == len_b or score_a == score_b:
            continue
        longer_score, shorter_score = (score_a, score_b) if len_a > len_b else (score_b, score_a)
        won += longer_score > shorter_score
        lost += longer_score < shorter_score
    return won, lost


@pytest.mark.parametrize("seed", range(8))
def test_pair_counts_are_every_pairs_verdict(seed: int) -> None:
    rng = random.Random(seed)
    items = [(rng.randint(0, 12), rng.randint(0, 8)) for _ in range(rng.randint(0, 40))]
    assert pair_counts(items, 9) == _brute(items)


def test_the_share_resamples_questions_and_reads_no_preference_as_none() -> None:
    rng = random.Random(1)
    # the longer output scores higher four times in five
    groups = []
    for _ in range(30):
        lengths = rng.sample(range(100, 2000), 4)
        groups.append([(n, n // 250 if rng.random() < 0.8 else rng.randint(0, 8)) for n in lengths])
    questions, pairs, share, low, high = length_preference(groups, 9, n_resamples=300, seed=0)
    won, lost = map(sum, zip(*(pair_counts(g, 9) for g in groups), strict=True))
    assert pairs == won + lost and share == pytest.approx(won / (won + lost))
    assert low is not None and high is not None and share is not None
    assert 0.5 < low <= share <= high
    assert questions <= 30
    same_length = [[(100, 1), (100, 5)], [(7, 0), (7, 8)]]
    assert length_preference(same_length, 9, n_resamples=50, seed=0) == (0, 0, None, None, None)


def test_analyze_reports_it_from_the_lengths_a_summary_read_keeps(tmp_path: Path) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    manifest = tmp_path / "manifest.jsonl"
    lines = [
        {"question_id": q, "prompt_variant": v, "target_model": f"stub/t{k}",
         "output_id": f"t{k}/{q}/{v}", "text": f"Answer to {q} {v}. " + "More detail. " * k}
        for k in range(6) for q in ("Q1", "Q2") for v in ("A", "B")
    ]  # fmt: skip
    manifest.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    run = tmp_path / "run"
    command = ["judge", "run", "--questions", str(questions), "--outputs", str(manifest)]
    command += ["--judge", "stub/j", "--date", "2026-11-23", "--out", str(run)]
    assert main(command) == 0
    assert main(["judge", "analyze", str(run), "--no-plots", "--no-report"]) == 0
    records = [item.record for item in iter_archive(run) if item.record is not None]
    by_question: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for record in final_evaluations(records):
        if record.valid:
            score = record.classification.overall_score
            assert score is not None
            by_question[record.question_id].append((len(record.evaluated_output), score))
    won, lost = map(sum, zip(*(_brute(g) for g in by_question.values()), strict=True))
    summary = json.loads((run / "summary.json").read_text())
    rows = summary["length_preference"]
    assert won + lost >= 10  # the stub's scores vary, the outputs' lengths too
    (row,) = rows
    assert (row["judge_model"], row["pairs"]) == ("stub/j", won + lost)
    assert row["longer_higher"] == pytest.approx(won / (won + lost))
    assert row["ci_low"] <= row["longer_higher"] <= row["ci_high"]
    assert "## Length preference" in (run / "results_analysis.md").read_text()
    from assay.report.html import ReportOptions, build_report

    payload, _ = build_report([run], ReportOptions())
    (table,) = [t for t in payload.runs[0].tables if t.title == "Length preference"]
    assert table.rows[0][:4] == ["cross_judge", "stub/j", row["questions"], row["pairs"]]


def test_agreement_gives_the_preference_among_outputs_the_labels_score_alike() -> None:
    from assay.judge.agreement import Label, label_agreement
    from assay.judge.evaluations import Evaluation

    rng = random.Random(4)
    evaluations, labels = [], []
    expected: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)
    for q in range(12):
        for t in range(5):
            chars, truth = rng.randint(20, 400), rng.choice([0, 1, 2])
            # the judge leans to length: a long output gets one point more than its label
            judged = min(2, truth + (chars > 250))
            key = (f"Q{q}", "A", f"t{t}")
            evaluations.append(
                Evaluation(
                    question_id=key[0], prompt_variant="A", target_model=key[2],
                    output_id=f"o{q}-{t}", judge_model="j", method="cross_judge", attempt=1,
                    valid=True, flags=(), scores=(judged, judged, judged, judged),
                    overall_score=4 * judged, verdict="PASS", blind=False, sample_meta=None,
                    output_chars=chars,
                )
            )  # fmt: skip
            labels.append(
                Label(question_id=key[0], prompt_variant="A", target_model=key[2],
                      dimension="FORMAT_COMPLIANCE", score=truth)
            )  # fmt: skip
            expected[key[0], truth].append((chars, judged))
    report = label_agreement(evaluations, labels, n_resamples=200)
    (row,) = report.length_preference
    won, lost = map(sum, zip(*(_brute(items) for items in expected.values()), strict=True))
    assert (row.judge_model, row.dimension, row.pairs) == ("j", "FORMAT_COMPLIANCE", won + lost)
    assert row.longer_higher.value == pytest.approx(won / (won + lost)) == 1.0
    assert row.longer_higher.low is not None and row.longer_higher.low == 1.0
