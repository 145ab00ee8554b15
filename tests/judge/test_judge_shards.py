"""``judge run --shard K/N`` and ``assay merge`` of the judge runs: each machine generates and
judges its own shard of the questions; the merged run is the unsharded one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main

QUESTIONS = Path(__file__).resolve().parents[2] / "examples" / "judge" / "questions.jsonl"
TARGETS = ["--model", "stub/a", "--model", "stub/b"]
JUDGES = ["--judge", "stub/j1", "--judge", "stub/a", "--mode", "both"]


def _generate(out: Path, *extra: str) -> None:
    args = ["generate", "--questions", str(QUESTIONS), *TARGETS, "--out", str(out), *extra]
    assert main(args) == 0


def _judge(outputs: Path, out: Path, *extra: str) -> int:
    args = ["judge", "run", "--questions", str(QUESTIONS), "--outputs", str(outputs), *JUDGES]
    return main([*args, "--out", str(out), "--date", "2026-11-26", *extra])


def _sharded(root: Path, count: int = 2, *extra: str) -> list[Path]:
    """Each shard generated and judged on its own, as one machine of N would."""
    runs = []
    for index in range(1, count + 1):
        shard = ["--shard", f"{index}/{count}"]
        _generate(root / f"outputs{index}", *shard)
        assert _judge(root / f"outputs{index}", root / f"judged{index}", *shard, *extra) == 0
        runs.append(root / f"judged{index}")
    return runs


def _merge(shards: list[Path], out: Path) -> int:
    return main(["merge", *map(str, shards), "--out", str(out)])


def _summary(run: Path) -> dict[str, Any]:
    assert main(["judge", "analyze", str(run), "--no-report"]) == 0
    data: dict[str, Any] = json.loads((run / "summary.json").read_text())
    data.pop("plots", None)  # paths under the run's own directory
    data.pop("run_dir", None)
    return data


def _merge_error(shards: list[Path], out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert _merge(shards, out) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert not (out / "protocol.json").exists()
    return err


@pytest.mark.parametrize("layout", ["shards", "files"])
def test_merged_judge_shards_are_the_unsharded_run(
    layout: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _generate(tmp_path / "outputs")
    layout_option = ["--archive-layout", layout]
    assert _judge(tmp_path / "outputs", tmp_path / "whole", *layout_option) == 0
    shards = _sharded(tmp_path, 2, *layout_option)
    merged = tmp_path / "merged"
    capsys.readouterr()
    assert _merge(shards, merged) == 0
    assert "2 shards merged, 32 sample x judge pairs" in capsys.readouterr().out
    assert main(["judge", "validate", str(merged)]) == 0
    whole = _summary(tmp_path / "whole")
    assert _summary(merged) == whole
    assert json.loads((merged / "coverage.json").read_text()) == json.loads(
        (tmp_path / "whole" / "coverage.json").read_text()
    )
    run = json.loads((merged / "run.json").read_text())
    assert (
        run["fingerprint"]
        == json.loads((tmp_path / "whole" / "run.json").read_text())["fingerprint"]
    )
    assert "shard" not in run["config"] and run["shard"] is None
    # the unsharded command resumes the merged run and finds every pair finished
    capsys.readouterr()
    assert _judge(tmp_path / "outputs", merged, *layout_option) == 0
    assert "32 already finished, 0 attempts now, 0 model calls" in capsys.readouterr().out
    assert main(["report", str(merged)]) == 0
    assert "merged: shard 2/2" in (merged / "report.html").read_text(encoding="utf-8")


def test_a_judge_shard_is_resumed_as_that_shard_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _generate(tmp_path / "outputs")
    run = tmp_path / "judged"
    assert _judge(tmp_path / "outputs", run, "--shard", "1/2") == 0
    capsys.readouterr()
    assert _judge(tmp_path / "outputs", run, "--shard", "1/2") == 0  # every output, filtered
    assert "0 attempts now" in capsys.readouterr().out
    assert _judge(tmp_path / "outputs", run, "--shard", "2/2") == 2
    assert "holds shard 1/2 of a judge run; this run is shard 2/2" in capsys.readouterr().err
    assert _judge(tmp_path / "outputs", run) == 2
    assert "this run is every question" in capsys.readouterr().err


def test_shards_of_other_judges_or_protocols_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shards = _sharded(tmp_path)
    other = tmp_path / "other"
    args = ["judge", "run", "--questions", str(QUESTIONS), "--outputs", str(tmp_path / "outputs2")]
    args += ["--judge", "stub/j2", "--mode", "both", "--shard", "2/2", "--date", "2026-11-26"]
    assert main([*args, "--out", str(other)]) == 0
    assert "judged by stub/j2" in _merge_error([shards[0], other], tmp_path / "m1", capsys)
    longer = tmp_path / "longer"
    assert _judge(tmp_path / "outputs2", longer, "--shard", "2/2", "--judge-max-tokens", "900") == 0
    err = _merge_error([shards[0], longer], tmp_path / "m2", capsys)
    assert "judged under protocol fingerprint" in err
    cross = tmp_path / "cross"
    assert _judge(tmp_path / "outputs2", cross, "--shard", "2/2", "--mode", "cross") == 0
    assert "with other settings than" in _merge_error([shards[0], cross], tmp_path / "m3", capsys)


def test_an_unfinished_shard_or_an_unreadable_or_stray_record_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shards = _sharded(tmp_path)
    run_json = shards[1] / "run.json"
    log = json.loads(run_json.read_text())
    run_json.write_text(json.dumps({**log, "finished_count": log["sample_count"] - 1}))
    err = _merge_error(shards, tmp_path / "m1", capsys)
    assert f"shard 2/2 finished {log['sample_count'] - 1} of its {log['sample_count']}" in err
    run_json.write_text(json.dumps(log))
    part = next((shards[1] / "valid_evaluations").rglob("part-*.jsonl"))
    lines = part.read_text().splitlines(keepends=True)
    part.write_text("".join(lines) + '{"not": "a record"}\n')
    err = _merge_error(shards, tmp_path / "m2", capsys)
    assert f"{part}:{len(lines) + 1}: an unreadable record" in err
    part.write_text("".join(lines))
    assert _merge(shards, tmp_path / "m3") == 0


def test_a_record_of_another_shard_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shards = _sharded(tmp_path, 2, "--archive-layout", "files")  # a record is a file of its own
    stray = next((shards[0] / "valid_evaluations").rglob("*.json"))
    moved = shards[1] / stray.relative_to(shards[0])
    moved.parent.mkdir(parents=True, exist_ok=True)
    moved.write_bytes(stray.read_bytes())
    err = _merge_error(shards, tmp_path / "merged", capsys)
    assert f"{moved}: question" in err and "belongs to shard 1/2, not to this run's 2/2" in err


def test_shards_of_draws_merge_draw_by_draw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sampled = ["--draws", "2", "--temperature", "0.7"]
    _generate(tmp_path / "outputs", *sampled)
    assert _judge(tmp_path / "outputs", tmp_path / "whole", "--draws") == 0
    outputs, judged = [], []
    for index in (1, 2):
        shard = ["--shard", f"{index}/2"]
        _generate(tmp_path / f"outputs{index}", *sampled, *shard)
        assert (
            _judge(tmp_path / f"outputs{index}", tmp_path / f"judged{index}", "--draws", *shard)
            == 0
        )
        outputs.append(tmp_path / f"outputs{index}")
        judged.append(tmp_path / f"judged{index}")
    capsys.readouterr()
    assert _merge(outputs, tmp_path / "merged-outputs") == 0
    assert _merge(judged, tmp_path / "merged") == 0
    printed = capsys.readouterr().out
    assert printed.count("\ndraw-2:\n") == 2 and printed.startswith("draw-1:\n")
    for draw in ("draw-1", "draw-2"):
        assert _summary(tmp_path / "merged" / draw) == _summary(tmp_path / "whole" / draw)
        lines = (tmp_path / "merged-outputs" / draw / "manifest.jsonl").read_text().splitlines()
        assert len(lines) == 16
    assert main(["judge", "analyze", str(tmp_path / "merged"), "--no-report"]) == 0  # the draws
    err = _merge_error([judged[0], tmp_path / "whole" / "draw-1"], tmp_path / "m", capsys)
    assert "the shards of one run hold the same draws" in err


def test_the_judge_merge_benchmark_makes_shards_that_merge(tmp_path: Path) -> None:
    from tests.helpers.benchmark_scripts import load_benchmark

    bench = load_benchmark("bench_judge_merge")
    questions = bench.write_questions(tmp_path / "questions.jsonl", 6)
    shards = bench.judge_shards(tmp_path, questions, 2)
    assert _merge(shards, tmp_path / "merged") == 0
    assert _summary(tmp_path / "merged")["counts"]["records"] == 6 * 2 * 2
