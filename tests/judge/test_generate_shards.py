"""``generate --shard K/N`` and ``assay merge`` of the output directories."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.cli import main
from assay.runs.shards import shard_of

QUESTIONS = Path(__file__).resolve().parents[2] / "examples" / "judge" / "questions.jsonl"
MODELS = ["--model", "stub/a", "--model", "stub/b"]


def _generate(out: Path, *extra: str) -> int:
    return main(["generate", "--questions", str(QUESTIONS), *MODELS, "--out", str(out), *extra])


def _shards(root: Path, count: int = 2, *extra: str) -> list[Path]:
    dirs = []
    for index in range(1, count + 1):
        out = root / f"shard{index}"
        assert _generate(out, "--shard", f"{index}/{count}", *extra) == 0
        dirs.append(out)
    return dirs


def _merge(shards: list[Path], out: Path) -> int:
    return main(["merge", *map(str, shards), "--out", str(out)])


def _manifest(out: Path) -> list[dict[str, object]]:
    lines = [json.loads(x) for x in (out / "manifest.jsonl").read_text().splitlines()]
    return sorted(
        ({k: v for k, v in line.items() if k != "generated_at"} for line in lines),
        key=lambda line: str(line["path"]),
    )


def _merge_error(shards: list[Path], out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert _merge(shards, out) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert not (out / "manifest.jsonl").exists()
    return err


def test_merged_shards_are_the_unsharded_outputs_and_judge_as_they_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _generate(tmp_path / "whole") == 0
    shards = _shards(tmp_path)
    assert all(
        shard_of(str(line["question_id"]), 2) == index
        for index, shard in enumerate(shards, start=1)
        for line in _manifest(shard)
    )
    merged = tmp_path / "merged"
    capsys.readouterr()
    assert _merge(shards, merged) == 0
    assert "2 shards merged, 16 outputs" in capsys.readouterr().out
    assert _manifest(merged) == _manifest(tmp_path / "whole")
    for line in _manifest(merged):
        path = str(line["path"])
        assert (merged / path).read_text() == (tmp_path / "whole" / path).read_text()
    for folder in ("stub--a", "stub--b"):
        assert (merged / folder / "target_model.txt").read_text() == f"stub/{folder[-1]}\n"
    run = json.loads((merged / "run.json").read_text())
    assert (
        run["fingerprint"]
        == json.loads((tmp_path / "whole" / "run.json").read_text())["fingerprint"]
    )
    assert [origin["shard"] for origin in run["merged_from"]] == ["1/2", "2/2"]
    # the unsharded command finds every output there, and a judge reads the directory
    assert _generate(merged) == 0
    assert "generated 0 outputs (16 already there" in capsys.readouterr().out
    judged = ["judge", "run", "--questions", str(QUESTIONS), "--judge", "stub/j"]
    assert main([*judged, "--outputs", str(merged), "--out", str(tmp_path / "j1")]) == 0
    assert main([*judged, "--outputs", str(tmp_path / "whole"), "--out", str(tmp_path / "j2")]) == 0
    for run_dir in ("j1", "j2"):
        assert main(["judge", "analyze", str(tmp_path / run_dir), "--no-report"]) == 0
    first, second = (json.loads((tmp_path / d / "summary.json").read_text()) for d in ("j1", "j2"))
    assert first["counts"] == second["counts"]


def test_a_shard_directory_is_not_resumed_as_another_shard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _generate(tmp_path / "out", "--shard", "1/2") == 0
    capsys.readouterr()
    assert _generate(tmp_path / "out", "--shard", "2/2") == 2
    assert "--shard 1/2 (now 2/2)" in capsys.readouterr().err
    assert _generate(tmp_path / "out") == 2
    assert "--shard 1/2 (now none)" in capsys.readouterr().err


def test_a_missing_shard_output_or_cell_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shards = _shards(tmp_path)
    assert "shard(s) 2/2 missing: 1 of 2 given" in _merge_error(shards[:1], tmp_path / "m0", capsys)
    manifest = shards[0] / "manifest.jsonl"
    lines = manifest.read_text().splitlines(keepends=True)
    lost = shards[0] / json.loads(lines[1])["path"]
    text = lost.read_text()
    lost.unlink()
    err = _merge_error(shards, tmp_path / "m1", capsys)
    assert f"{manifest}:2: its output file {lost} is missing" in err
    lost.write_text(text)
    manifest.write_text("".join(lines[:-1]))
    err = _merge_error(shards, tmp_path / "m2", capsys)
    assert f"has outputs for {len(lines) - 1} and failed calls for 0 of its {len(lines)}" in err
    manifest.write_text("".join(lines))
    assert _merge(shards, tmp_path / "m3") == 0


def test_shards_of_other_models_or_settings_or_shards_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shards = _shards(tmp_path)
    other = tmp_path / "other"
    args = ["generate", "--questions", str(QUESTIONS), "--model", "stub/a", "--out", str(other)]
    assert main([*args, "--shard", "2/2"]) == 0
    err = _merge_error([shards[0], other], tmp_path / "m1", capsys)
    assert "generated by other target models (stub/a) than" in err
    hot = tmp_path / "hot"
    assert _generate(hot, "--shard", "2/2", "--temperature", "0.5") == 0
    assert "generated with other settings than" in _merge_error(
        [shards[0], hot], tmp_path / "m2", capsys
    )
    stray = shards[1] / "manifest.jsonl"
    copy = tmp_path / "copy"
    shutil.copytree(shards[1], copy)
    first_line = (shards[0] / "manifest.jsonl").read_text().splitlines()[0]
    with (copy / "manifest.jsonl").open("a") as handle:
        handle.write(first_line + "\n")
    count = len((copy / "manifest.jsonl").read_text().splitlines())
    err = _merge_error([shards[0], copy], tmp_path / "m3", capsys)
    question = json.loads(first_line)["question_id"]
    assert f"manifest.jsonl:{count}: question {question!r} belongs to shard 1/2" in err
    assert stray.is_file()


def test_merge_names_a_directory_that_is_no_shard_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    assert _merge([tmp_path / "empty"], tmp_path / "out") == 2
    assert "not the directory of a `bench run`, `generate` or `judge run` with --shard" in (
        capsys.readouterr().err
    )
    assert _generate(tmp_path / "whole") == 0
    capsys.readouterr()
    assert _merge([tmp_path / "whole"], tmp_path / "out") == 2
    assert "a generate run of every item, not a shard" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["bench", "generate", "judge"])
def test_a_shard_that_does_not_exist_stops_each_command_before_it_writes(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    data = QUESTIONS.parents[1] / "grounded_qa.jsonl"
    bench = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--verifier"]
    judge = ["judge", "run", "--questions", str(QUESTIONS), "--outputs", str(tmp_path)]
    given = {
        "bench": [*bench, "learned", "--out", str(out)],
        "generate": ["generate", "--questions", str(QUESTIONS), *MODELS, "--out", str(out)],
        "judge": [*judge, "--judge", "stub/j", "--out", str(out)],
    }[command]
    assert main([*given, "--shard", "3/2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --shard 3/2: the shard must be 1 to 2") and "Traceback" not in err
    assert not out.exists()
