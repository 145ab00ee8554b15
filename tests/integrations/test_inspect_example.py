"""The worked example of docs/importers.md: its commands, run as written on the repository's
example, print what the page quotes (the log names aside: they carry inspect's time stamp and
random run id)."""

from __future__ import annotations

import importlib.util
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.cli import main
from tests.test_doc_outputs import commands, fenced_blocks

pytest.importorskip("inspect_ai", reason="the inspect extra")  # in the dev extra

REPO_ROOT = Path(__file__).resolve().parents[2]
LOG_NAME = re.compile(r"\d{4}-\d\d-\d\dT[\d-]+_capitals_[A-Za-z0-9]+\.eval")


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    shutil.copytree(REPO_ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "inspect-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "inspect-cache"))
    yield tmp_path


def quoted_session(block: str) -> list[tuple[str, str]]:
    """(command, the lines it printed) for each ``$ `` line of a console block."""
    session: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            session.append((line[2:], []))
        else:
            session[-1][1].append(line)
    return [(command, "\n".join(printed)) for command, printed in session]


def run_command(command: str) -> None:
    (argv,) = commands(command)
    if argv[:2] == ["python", "examples/inspect/capitals.py"]:
        spec = importlib.util.spec_from_file_location("capitals", "examples/inspect/capitals.py")
        assert spec is not None and spec.loader is not None
        example = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(example)
        example.main(argv[2])
        return
    assert argv[0] == "assay"
    expanded = [p for arg in argv[1:] for p in (sorted(Path().glob(arg)) if "*" in arg else [arg])]
    assert main([str(arg) for arg in expanded]) == 0


def test_the_worked_example_prints_what_importers_md_quotes(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    block = fenced_blocks("importers.md", "### Worked example")[0]
    session = quoted_session(block)
    assert [c.split()[:3] for c, _ in session] == [
        ["python", "examples/inspect/capitals.py", "logs"],
        ["assay", "import", "inspect"],
        ["assay", "judge", "run"],
    ]
    for command, quoted in session:
        run_command(command)
        printed = capsys.readouterr().out.strip()
        assert LOG_NAME.sub("LOG", printed) == LOG_NAME.sub("LOG", quoted), command
    manifest_line = fenced_blocks("importers.md", "One line of `capitals/manifest.jsonl`")[0]
    # the logs' order (by name: time stamp, then random run id) decides which line is first
    written = (workdir / "capitals" / "manifest.jsonl").read_text(encoding="utf-8").splitlines()
    assert LOG_NAME.sub("LOG", manifest_line.strip()) in {LOG_NAME.sub("LOG", w) for w in written}
    explanation = fenced_blocks("importers.md", "The `hasty` model's answer about Australia")[0]
    assert hasty_australia_explanation(workdir / "logs") == explanation.strip()


def hasty_australia_explanation(log_dir: Path) -> str:
    from inspect_ai.log import read_eval_log

    for path in sorted(log_dir.glob("*.eval")):
        log = read_eval_log(str(path))
        if log.eval.model == "mockllm/hasty":
            sample = next(s for s in log.samples or () if (s.id, s.epoch) == ("australia", 1))
            assert sample.scores is not None
            return str(sample.scores["grounded_claims"].explanation)
    raise AssertionError(f"no log of mockllm/hasty in {log_dir}")
