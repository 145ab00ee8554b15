"""No command's output replaces a file a run keeps, or the command's own input; paths a
command cannot use are one located error (exit 2), never an internal error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.cli import main
from assay.runs import RunDirLock

from .conftest import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "examples" / "judge" / "questions.jsonl"
GROUNDED = ROOT / "examples" / "grounded_qa_labelled.jsonl"
WICE = SHARED_DATA / "wice" / "claim_dev.jsonl"
FAILURES = "generation_failures.jsonl"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A generate run, a judge run over it and a bench run, all on stub models."""
    tmp = tmp_path_factory.mktemp("runs")
    out, judged, bench = tmp / "out", tmp / "judged", tmp / "bench"
    assert main(["generate", "--questions", str(QUESTIONS), "--model", "stub/model-a",
                 "--out", str(out), "--no-cache"]) == 0  # fmt: skip
    assert main(["judge", "run", "--questions", str(QUESTIONS), "--outputs", str(out),
                 "--judge", "stub/model-b", "--out", str(judged), "--date", "2026-01-01",
                 "--no-cache"]) == 0  # fmt: skip
    assert main(["bench", "run", "--data", str(GROUNDED), "--pattern", "entailment",
                 "--verifier", "lexical", "--out_dir", str(bench), "--no-report",
                 "--no-progress", "--n-resamples", "20", "--no-cache"]) == 0  # fmt: skip
    return {"out": out, "judged": judged, "bench": bench}


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    "command",
    [
        ["export", "{judged}", "--format", "jsonl", "--out", "{judged}/archive_blobs.jsonl"],
        ["export", "{bench}", "--format", "csv", "--out", "{bench}/results.jsonl"],
        ["export", "{out}", "--format", "jsonl", "--out", "{out}/manifest.jsonl"],
        ["report", "{bench}", "--out", "{bench}/run.json"],
        ["report", "{judged}", "--out", "{judged}/protocol.json"],
        ["perturb", "--data", str(GROUNDED), "--out", "{bench}/results.jsonl"],
        ["import", "wice", str(WICE), "--out", "{bench}/results.jsonl"],
        ["ping", "stub/model-a", "--prompt", "hi", "--cache-path", "{out}/" + FAILURES],
        ["report", "{bench}", "--out", "{out}/stub--model-a/new.html"],  # a run's folder
    ],
)
def test_no_output_replaces_a_file_a_run_keeps(
    runs: dict[str, Path], tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    copies = {name: tmp_path / name for name in runs}
    for name, path in runs.items():
        shutil.copytree(path, copies[name])
    before = {name: _files(path) for name, path in copies.items()}
    argv = [part.format(**{k: str(v) for k, v in copies.items()}) for part in command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "is a file the run" in err and "keeps" in err and "Traceback" not in err
    assert {name: _files(path) for name, path in copies.items()} == before


def test_the_refusal_names_the_run_as_typed(
    runs: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """errors.md quotes the line for a relative --out: the run is named as the user typed it,
    not as an absolute path they never wrote."""
    shutil.copytree(runs["bench"], tmp_path / "runs" / "x")
    monkeypatch.chdir(tmp_path)
    assert main(["bench", "compare", "runs/x", "--out", "runs/x/results.jsonl"]) == 2
    assert capsys.readouterr().err.splitlines()[0] == (
        "error: --out runs/x/results.jsonl: is a file the run runs/x keeps; writing it would "
        "replace the run's own"
    )


def test_a_new_file_beside_a_runs_files_is_the_users(runs: dict[str, Path], tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    shutil.copytree(runs["bench"], bench)
    assert main(["export", str(bench), "--format", "csv", "--out", str(bench / "rows.csv")]) == 0
    assert (bench / "rows.csv").is_file()


def test_a_command_never_writes_over_its_own_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "ifeval"
    shutil.copytree(SHARED_DATA / "ifeval", data)
    for path in data.iterdir():
        path.chmod(0o644)
    before = _files(data)
    responses = data / "input_response_data_gpt4_20231107_145030.jsonl"
    inputs = str(data / "input_data.jsonl")
    for argv in (
        ["instructions", "agreement", "--data-dir", str(data), "--out", inputs],
        ["instructions", "agreement", "--data-dir", str(data), "--disagreements",
         str(data / "eval_results_strict.jsonl")],
        ["instructions", "check", "--data", str(responses), "--out", inputs],
        ["instructions", "check", "--data", str(responses), "--out", str(responses)],
    ):  # fmt: skip
        assert main(argv) == 2
        assert "is one of the command's inputs" in capsys.readouterr().err
    assert _files(data) == before


def test_agreement_refuses_to_write_over_its_labels(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = tmp_path / "labels.csv"
    text = "question_id,prompt_variant,target_model,dimension,score\n"
    labels.write_text(text, encoding="utf-8")
    judged = str(runs["judged"])
    assert main(["judge", "agreement", judged, "--labels", str(labels), "--out", str(labels)]) == 2
    assert "is one of the command's inputs" in capsys.readouterr().err
    assert labels.read_text(encoding="utf-8") == text
    for option, value in (("--seed", "-1"), ("--resamples", "0")):
        assert main(["judge", "agreement", judged, "--labels", str(labels), option, value]) == 2
        assert f"{option}: must be" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["directory", "text file"])
def test_a_cache_path_that_is_no_cache_is_one_located_error(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    if kind == "directory":
        cache.mkdir()
    else:
        cache.write_text("not a database, but long enough to be read as one\n" * 20)
    assert main(["ping", "stub/model-a", "--prompt", "hi", "--cache-path", str(cache)]) == 2
    err = capsys.readouterr().err
    assert str(cache) in err and "internal error" not in err


def test_an_infinite_price_is_refused_before_it_reaches_the_run(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    judged = tmp_path / "judged"
    shutil.copytree(runs["judged"], judged)
    for bad in (".inf", "'0.15'"):
        prices = tmp_path / "prices.yaml"
        prices.write_text(f'models:\n  "stub/*": {{input: {bad}, output: 1}}\n')
        assert main(["judge", "analyze", str(judged), "--prices", str(prices)]) == 2
        assert "prices.yaml" in capsys.readouterr().err
        assert not (judged / "prices.json").exists()
    assert main(["judge", "analyze", str(judged)]) == 0


def test_an_unwritable_output_names_the_file_not_its_temporary_twin(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Files are written to ``.NAME.PID.tmp`` and renamed; a failure names NAME."""
    assert main(["report", str(runs["bench"]), "--out", "/proc/x.html"]) == 2
    err = capsys.readouterr().err
    assert "error: /proc/x.html: " in err and ".tmp" not in err and "internal" not in err
    assert main(["report", str(runs["bench"]), "--max-mb", "nan"]) == 2
    assert "--max-mb must be a positive number" in capsys.readouterr().err


def test_export_refuses_a_run_that_is_still_being_written(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = tmp_path / "bench"
    shutil.copytree(runs["bench"], bench)
    with RunDirLock(bench):
        assert main(["export", str(bench), "--format", "csv"]) == 2
    assert "is being written by another assay process" in capsys.readouterr().err
    assert main(["export", str(bench), "--format", "csv", "--out", str(tmp_path / "r.csv")]) == 0
