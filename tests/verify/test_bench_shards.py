"""``bench run --shard K/N`` and ``bench merge``: one run split over machines, joined again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.errors import ConfigError
from assay.runs.shards import Shard, parse_shard, shard_of
from tests.helpers.timings import record_without_timings

from .bench_fixtures import mixed_file

# generated answers call the stub generator: the shards' usage and money are real counts
STUB = ["--generator", "stub/gen", "--verifier", "lexical", "--no-cache", "--no-progress"]
COUNT = 3


def _run(data: Path, out: Path, *extra: str) -> int:
    args = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out", str(out)]
    return main([*args, "--n", "2", "--n-resamples", "200", "--no-report", *STUB, *extra])


def _shards(data: Path, root: Path, count: int = COUNT, *extra: str) -> list[Path]:
    dirs = []
    for index in range(1, count + 1):
        out = root / f"shard{index}"
        assert _run(data, out, "--shard", f"{index}/{count}", *extra) == 0
        dirs.append(out)
    return dirs


def _merge(shards: list[Path], out: Path) -> int:
    return main(["bench", "merge", *map(str, shards), "--out", str(out), "--no-report"])


def _results(run: Path) -> dict[str, dict[str, object]]:
    lines = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    return {line["id"]: record_without_timings(line) for line in lines}


def _json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return mixed_file(tmp_path / "data.jsonl", generated=8, verified=18)


def test_every_record_is_in_exactly_one_shard_whatever_the_count() -> None:
    ids = [f"record-{i}" for i in range(2000)]
    for count in (1, 2, 3, 7):
        shards = [Shard(index=k, count=count) for k in range(1, count + 1)]
        holders = [[s.index for s in shards if s.holds(key)] for key in ids]
        assert all(len(held) == 1 for held in holders)
        sizes = [sum(held == [k] for held in holders) for k in range(1, count + 1)]
        assert min(sizes) > len(ids) / count * 0.85  # a hash spreads them evenly
    assert shard_of("record-1", 4) == shard_of("record-1", 4)  # not salted per process


@pytest.mark.parametrize("text", ["0/2", "3/2", "2", "a/b", "1/0", "-1/2", "1/100001"])
def test_a_shard_that_does_not_exist_is_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="--shard"):
        parse_shard(text)
    assert parse_shard(" 2 / 4 ") == Shard(index=2, count=4)


def test_merged_shards_are_the_unsharded_run(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(data, tmp_path / "whole") == 0
    shards = _shards(data, tmp_path)
    out = capsys.readouterr().out
    assert "record(s) belong to the other shards of --shard" in out
    assert sum(len(_results(shard)) for shard in shards) == 26
    assert all(_results(shard) for shard in shards)  # 26 records: no shard is empty
    assert _merge(shards, tmp_path / "merged") == 0
    assert "3 shards merged, 26 examples" in capsys.readouterr().out
    merged, whole = tmp_path / "merged", tmp_path / "whole"
    assert _results(merged) == _results(whole)
    summary, expected = _json(merged / "summary.json"), _json(whole / "summary.json")
    for name, metric in expected["detection"]["metrics"].items():
        got = summary["detection"]["metrics"][name]
        for key in ("value", "low", "high"):  # clusters are drawn in sorted order: same draws
            assert got[key] == pytest.approx(metric[key], abs=1e-12), (name, key)
    assert summary["counts"] == expected["counts"]
    per_example = summary["cost"]["per_example"]
    assert {k: v for k, v in per_example.items() if k != "latency_ms"} == {
        k: v for k, v in expected["cost"]["per_example"].items() if k != "latency_ms"
    }
    run = _json(merged / "run.json")
    assert run["fingerprint"] == _json(whole / "run.json")["fingerprint"]
    assert run["config"]["shard"] is None and run["sample_count"] == 26
    assert [origin["shard"] for origin in run["merged_from"]] == ["1/3", "2/3", "3/3"]
    assert (merged / "plots" / "calibration.png").is_file()


def test_the_report_says_which_shard_a_run_holds_and_what_a_merge_was_made_of(
    data: Path, tmp_path: Path
) -> None:
    from assay.report.html import write_report

    shards = _shards(data, tmp_path)
    assert _merge(shards, tmp_path / "merged") == 0
    assert "1/3 of 26 records" in write_report(shards[0]).read_text(encoding="utf-8")
    page = write_report(tmp_path / "merged").read_text(encoding="utf-8")
    for index in range(1, COUNT + 1):
        assert f"merged: shard {index}/3" in page
    count = len(_results(shards[1]))
    assert f"{shards[1]}: {count} of {count} finished" in page


def test_the_merged_run_resumes_as_the_unsharded_run_and_calls_no_model(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _merge(_shards(data, tmp_path), tmp_path / "merged") == 0
    capsys.readouterr()
    assert _run(data, tmp_path / "merged") == 0
    assert "26 examples (0 run now, 26 already done), 0 model calls" in capsys.readouterr().out
    resumed = _json(tmp_path / "merged" / "run.json")  # a later session keeps where it came from
    assert [origin["shard"] for origin in resumed["merged_from"]] == ["1/3", "2/3", "3/3"]
    # the shards' sessions made the calls: the merge adds none, the report counts them once
    log = [json.loads(x) for x in (tmp_path / "merged" / "run_log.jsonl").read_text().splitlines()]
    ends = [line for line in log if line["event"] == "end"]
    shard_calls = sum(
        _json(tmp_path / f"shard{k}" / "run.json")["usage"].get("stub/gen", {}).get("calls", 0)
        for k in range(1, COUNT + 1)
    )
    assert shard_calls > 0
    assert sum(line["usage"].get("stub/gen", {}).get("calls", 0) for line in ends) == shard_calls


def test_a_shard_resumes_only_its_own_records(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "shard2"
    assert _run(data, out, "--shard", "2/3") == 0
    before = _results(out)
    assert _run(data, out, "--shard", "2/3") == 0
    assert _results(out) == before
    assert all(shard_of(str(result["cluster"]), 3) == 2 for result in before.values())


def test_a_shard_directory_is_not_resumed_as_another_shard(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "shard"
    assert _run(data, out, "--shard", "1/3") == 0
    assert _run(data, out, "--shard", "2/3") == 2
    assert "was run with other settings" in capsys.readouterr().err


def _merge_error(shards: list[Path], out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert _merge(shards, out) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert not (out / "results.jsonl").exists()  # nothing written
    return err


def test_a_missing_or_repeated_shard_is_refused(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shards = _shards(data, tmp_path)
    out = tmp_path / "merged"
    assert "shard(s) 2/3 missing: 2 of 3 given" in _merge_error([shards[0], shards[2]], out, capsys)
    copy = tmp_path / "copy"
    shutil.copytree(shards[0], copy)
    assert "are both shard 1/3" in _merge_error([*shards, copy], out, capsys)
    assert _merge(shards, out) == 0  # the refusals left the directory usable


def test_shards_of_other_settings_or_counts_are_refused(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shards = _shards(data, tmp_path)
    other = tmp_path / "other"
    assert _run(data, other, "--shard", "2/3", "--threshold", "0.3") == 0
    err = _merge_error([shards[0], other, shards[2]], tmp_path / "m1", capsys)
    assert f"{other}: made with other settings than {shards[0]}" in err
    halves = _shards(data, tmp_path / "halves", 2)
    err = _merge_error([shards[0], halves[1]], tmp_path / "m2", capsys)
    assert "shard 2/2, but" in err and "the shards of one run have one count" in err


def test_shards_of_other_data_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    small = mixed_file(tmp_path / "small.jsonl", generated=4, verified=10)
    large = mixed_file(tmp_path / "large.jsonl", generated=8, verified=18)
    first = _shards(small, tmp_path / "small", 2)[0]
    second = _shards(large, tmp_path / "large", 2)[1]
    err = _merge_error([first, second], tmp_path / "merged", capsys)
    assert "the shards were run on different data" in err


def test_an_unfinished_or_unsharded_run_is_refused(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shards = _shards(data, tmp_path)
    results = shards[1] / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    results.write_text("".join(lines[:-1]))
    err = _merge_error(shards, tmp_path / "m1", capsys)
    assert f"{shards[1]}: shard 2/3 has results for {len(lines) - 1} of its {len(lines)}" in err
    results.write_text("".join(lines))
    run = json.loads((shards[2] / "run.json").read_text())
    (shards[2] / "run.json").write_text(json.dumps({**run, "status": "cancelled"}))
    err = _merge_error(shards, tmp_path / "m2", capsys)
    assert "shard 3/3 ended 'cancelled', not 'success'" in err
    (shards[2] / "run.json").write_text(json.dumps(run))
    assert _run(data, tmp_path / "whole") == 0
    err = _merge_error([*shards[:2], tmp_path / "whole"], tmp_path / "m3", capsys)
    assert "a bench run of every item, not a shard" in err


def test_a_result_of_another_shard_is_named_by_its_line(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shards = _shards(data, tmp_path)
    stray = (shards[0] / "results.jsonl").read_text().splitlines()[0]
    with (shards[1] / "results.jsonl").open("a") as handle:
        handle.write(stray + "\n")
    count = len((shards[1] / "results.jsonl").read_text().splitlines())
    err = _merge_error(shards, tmp_path / "merged", capsys)
    key, cluster = json.loads(stray)["id"], json.loads(stray)["cluster"]
    expected = f"results.jsonl:{count}: record {key!r} of question {cluster!r} belongs to shard 1/3"
    assert expected in err


def test_the_merged_directory_must_be_new(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shards = _shards(data, tmp_path)
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    assert "already exists and is not an empty directory" in _merge_error(shards, taken, capsys)
    assert (taken / "notes.txt").read_text() == "mine"
    capsys.readouterr()
    assert _merge(shards, shards[0]) != 0
    assert "is one of the shards" in capsys.readouterr().err


def test_a_calibration_given_to_every_shard_is_kept_and_different_ones_refused(
    data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dev = tmp_path / "dev"
    assert _run(data, dev) == 0
    calibration = tmp_path / "calibration.json"
    assert main(["bench", "calibrate", str(dev), "--out", str(calibration)]) == 0
    shards = _shards(data, tmp_path / "calibrated", COUNT, "--calibration", str(calibration))
    assert _merge(shards, tmp_path / "merged") == 0
    kept = tmp_path / "merged" / "calibration.json"
    assert kept.read_bytes() == calibration.read_bytes()
    assert _json(tmp_path / "merged" / "summary.json")["calibration"] is not None
    (shards[1] / "calibration.json").unlink()
    err = _merge_error(shards, tmp_path / "m2", capsys)
    assert "the shards keep different calibration files" in err


def test_the_merge_benchmark_writes_shards_that_merge_into_the_unsharded_summary(
    tmp_path: Path,
) -> None:
    from assay.verify.shard_merge import merge_bench
    from tests.helpers.benchmark_scripts import load_benchmark

    bench = load_benchmark("bench_merge")
    whole = bench.make_bench_run(tmp_path / "whole", 300, n_resamples=bench.N_RESAMPLES)
    bench._unsharded_log(whole)
    shards = bench.write_shards(whole, tmp_path / "shards", 4)
    assert merge_bench(shards, tmp_path / "merged").results == 300
    merged = _json(tmp_path / "merged" / "summary.json")["detection"]["metrics"]
    assert main(["bench", "summarize", str(whole), "--no-report", "--no-plots"]) == 0
    expected = _json(whole / "summary.json")["detection"]["metrics"]
    assert merged["auroc"] == pytest.approx(expected["auroc"], abs=1e-12)
