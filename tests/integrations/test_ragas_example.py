"""The ragas worked example of docs/importers.md: the example script run with the real ragas
(its own environment, as the page says: a Python with ragas and assay), then the page's assay
commands, which print and write what it quotes; then bench run and export as the page
describes them."""

from __future__ import annotations

import csv
import io
import json
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.cli import main
from tests.helpers.ragas_env import run_in_ragas
from tests.integrations.test_inspect_example import quoted_session
from tests.test_doc_outputs import fenced_blocks

REPO_ROOT = Path(__file__).resolve().parents[2]
SECTION = "### Worked example: ragas"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    shutil.copytree(REPO_ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    yield tmp_path


def test_the_worked_example_prints_and_writes_what_importers_md_quotes(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    console, record_line = fenced_blocks("importers.md", SECTION)[:2]
    (script, script_output), (command, import_output) = quoted_session(console)
    argv = shlex.split(script)
    assert argv[0] == "python"
    assert run_in_ragas(argv[1:], workdir).stdout.strip() == script_output
    assert (workdir / "capitals_dataset.jsonl").is_file()
    assert command.split()[:3] == ["assay", "import", "ragas"]
    assert main(shlex.split(command)[1:]) == 0
    assert capsys.readouterr().out.strip() == import_output
    written = (workdir / "capitals_ragas.jsonl").read_text(encoding="utf-8").splitlines()
    assert record_line.strip() == written[0]


def test_bench_run_and_export_set_p_error_beside_the_ragas_score(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_in_ragas(["examples/ragas/capitals.py"], workdir)
    assert main(["import", "ragas", "capitals_scores.csv", "--out", "capitals_ragas.jsonl"]) == 0
    argv = [
        "bench", "run", "--data", "capitals_ragas.jsonl", "--pattern", "entailment",
        "--verifier", "learned", "--out_dir", "capitals_ragas_run",
    ]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["export", "capitals_ragas_run"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    p_errors = [float(row["p_error"]) for row in rows]
    assert p_errors == [0.914367, 0.128698, 0.128698]  # as the page says
    for row, p_error in zip(rows, p_errors, strict=True):
        ragas_score = float(row["meta.ragas.assay_grounded_claims"])
        assert ragas_score == pytest.approx(1 - p_error, abs=1e-12)
    page = (REPO_ROOT / "docs" / "importers.md").read_text(encoding="utf-8")
    assert "sets each `p_error` (0.914367 for Australia, 0.128698 for the other two)" in page
    assert rows[0]["id"] == json.loads(written_first_record())["id"]


def written_first_record() -> str:
    return Path("capitals_ragas.jsonl").read_text(encoding="utf-8").splitlines()[0]
