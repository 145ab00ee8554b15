"""An executor's own option given with another executor is refused, not ignored: --batch-dir
under live would send every call now, at full price, where a batch file was meant."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.cli import main
from tests.judge.helpers import write_manifest, write_questions


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    questions = write_questions(tmp_path / "questions.jsonl")
    manifest = write_manifest(tmp_path / "manifest.jsonl", ["stub/t0"])
    out = str(tmp_path / "out")
    return {
        "generate": ["generate", "--questions", str(questions), "--model", "stub/a", "--out", out],
        "judge run": [
            *("judge", "run", "--questions", str(questions), "--outputs", str(manifest)),
            *("--judge", "stub/judge", "--out", out),
        ],
        "bench run": [
            *("bench", "run", "--data", "examples/grounded_qa.jsonl", "--pattern", "entailment"),
            *("--verifier", "lexical", "--out_dir", out, "--no-report", "--no-progress"),
        ],
    }


@pytest.mark.parametrize("command", ["generate", "judge run", "bench run"])
@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            ["--batch-dir", "BATCH"],
            "error: --batch-dir is read only with --executor batch, and this run's executor is "
            "live",
        ),
        (
            ["--batch-dir", "BATCH", "--executor", "ray"],
            "error: --batch-dir is read only with --executor batch, and this run's executor is ray",
        ),
        (
            ["--ray-batch-size", "5"],
            "error: --ray-batch-size is read only with --executor ray, and this run's executor "
            "is live",
        ),
        (
            ["--ray-batch-size", "5", "--executor", "batch", "--batch-dir", "BATCH"],
            "error: --ray-batch-size is read only with --executor ray, and this run's executor "
            "is batch",
        ),
        (
            ["--ray-node-wait", "60"],
            "error: --ray-node-wait is read only with --executor ray, and this run's executor "
            "is live",
        ),
    ],
)
def test_an_option_of_another_executor_is_refused_before_anything_is_written(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    given: list[str],
    message: str,
) -> None:
    given = [str(tmp_path / "b") if option == "BATCH" else option for option in given]
    argv = [*_commands(tmp_path)[command], "--cache-path", str(tmp_path / "c.sqlite"), *given]
    monkeypatch.chdir(Path(__file__).resolve().parents[1])  # examples/ is read from here
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == message
    assert err[1].startswith("  hint: add --executor ") and len(err) == 2
    assert not (tmp_path / "out").exists() and not (tmp_path / "c.sqlite").exists()
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("command", ["generate", "judge run", "bench run"])
def test_a_bad_ray_node_wait_is_one_error_before_any_cluster_is_asked(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    """Checked before RAY_ADDRESS is probed (no cluster answers at port 1: the value's
    error comes first) and before anything is written."""
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    base = [*_commands(tmp_path)[command], "--cache-path", str(tmp_path / "c.sqlite")]
    for value in ("0", "-5", "nan", "inf", "soon", ""):
        assert main([*base, "--executor", "ray", "--ray-node-wait", value]) == 2, value
        err = capsys.readouterr().err.splitlines()
        assert err == [
            "error: --ray-node-wait: must be a number of seconds above 0, or forever; got "
            f"{value!r}",
            "  hint: how long a run waits for a node with CPUs to join a cluster that has none "
            "left (default 30)",
        ]
        assert not (tmp_path / "out").exists() and not (tmp_path / "c.sqlite").exists()
