"""Reports of huge runs show every failed or invalid item and a seeded sample of the rest,
with exact counts and metrics for all, and say so; small runs show everything."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from assay.cli import main
from assay.report._html_common import ItemSample, SampleSettings
from assay.report.html import ReportOptions, build_report
from tests.verify.bench_fixtures import verify_only_records, write_jsonl


def _sample(seed: int, size: int = 10, failed_cap: int = 100) -> ItemSample[int]:
    sample: ItemSample[int] = ItemSample(SampleSettings(size, failed_cap, seed))
    for item in range(200):
        sample.add(item, failed=item % 25 == 0)
    return sample


def test_every_failed_item_and_a_seeded_sample_of_the_rest_in_reading_order() -> None:
    kept = _sample(3).kept()
    assert [i for i in kept if i % 25 == 0] == list(range(0, 200, 25))
    assert len(kept) == 8 + 10 and kept == sorted(kept)
    assert kept == _sample(3).kept() and kept != _sample(4).kept()
    note = _sample(3).note("evaluations", "invalid evaluations")
    assert note == (
        "18 of 200 evaluations shown: all 8 invalid evaluations, and a seeded sample (seed 3) "
        "of 10 of the other 192. Counts and metrics cover all 200."
    )
    capped = _sample(3, failed_cap=3).note("evaluations", "invalid evaluations")
    assert capped is not None and "the first 3 of 8 invalid evaluations" in capped


def test_the_sample_is_uniform_over_the_rest() -> None:
    chosen: Counter[int] = Counter()
    for seed in range(1500):
        chosen.update(i for i in _sample(seed).kept() if i % 25)
    rest = [i for i in range(200) if i % 25]
    expected = 1500 * 10 / len(rest)
    assert all(abs(chosen[i] - expected) < 0.4 * expected for i in rest)


def test_a_small_run_shows_everything_without_a_note() -> None:
    sample: ItemSample[int] = ItemSample(SampleSettings(size=10))
    for item in range(10):
        sample.add(item, failed=item == 3)
    assert sample.kept() == list(range(10)) and sample.note("examples", "failed") is None


def test_a_bench_report_of_a_large_run_samples_rows_but_not_metrics(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(60))
    run = tmp_path / "run"
    args = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(run)]
    flags = ["--verifier", "lexical", "--no-cache", "--no-progress", "--n-resamples", "20"]
    assert main([*args, *flags, "--no-report"]) == 0
    results = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    failed = [r for r in results if r.get("failure") or r.get("verifier_pass") is None]
    whole, _ = build_report([run], ReportOptions())
    sampled, _ = build_report([run], ReportOptions(sampling=SampleSettings(size=15, seed=1)))
    assert whole.runs[0].example_sets[0].row_count == 60
    assert not any("shown" in note for note in whole.runs[0].notes)
    shown = sampled.runs[0].example_sets[0].row_count
    assert shown == len(failed) + 15
    assert sampled.runs[0].notes[0].startswith(f"{shown} of 60 examples shown")
    assert sampled.runs[0].metrics == whole.runs[0].metrics  # from summary.json: every example


def test_a_judge_report_keeps_every_invalid_evaluation(judge_run: Path) -> None:
    whole, _ = build_report([judge_run], ReportOptions())
    valid_all, invalid_all = whole.runs[0].example_sets
    sampled, _ = build_report([judge_run], ReportOptions(sampling=SampleSettings(size=4)))
    valid, invalid = sampled.runs[0].example_sets
    assert invalid.row_count == invalid_all.row_count > 0
    assert valid.row_count == 4 < valid_all.row_count
    total = valid_all.row_count + invalid_all.row_count
    assert sampled.runs[0].notes[0].startswith(f"{4 + invalid.row_count} of {total} evaluations")
    assert sampled.runs[0].metrics == whole.runs[0].metrics


def test_packed_records_give_back_each_record_by_key_and_position() -> None:
    from assay.json_safe import model_json
    from assay.report._html_common import PackedRecords
    from assay.verify.types import Evidence

    items = [Evidence(evidence_id=f"e{i}", text="caf\u00e9 \U0001f600 " * i) for i in range(5)]
    packed: PackedRecords[Evidence] = PackedRecords(Evidence)
    for item in items:
        packed.add(item.evidence_id, model_json(item))
    assert len(packed) == 5 and list(packed) == [f"e{i}" for i in range(5)]
    assert packed["e3"] == items[3] and packed.at(4) == items[4]
    assert packed.get("missing") is None
