"""The promptfoo worked example of docs/importers.md: the real promptfoo CLI run as the page
says on the repository's example, then the page's assay commands, which print what it quotes
(promptfoo's eval id aside: it carries a time stamp)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.cli import main
from tests.helpers.promptfoo_cli import promptfoo_command, promptfoo_env
from tests.integrations.test_inspect_example import quoted_session
from tests.test_doc_outputs import commands, fenced_blocks

REPO_ROOT = Path(__file__).resolve().parents[2]
EVAL_ID = re.compile(r'"eval_id":"eval-[^"]+"')
SECTION = "### Worked example: promptfoo"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    shutil.copytree(REPO_ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    yield tmp_path


def run_promptfoo_as_documented(block: str, workdir: Path) -> None:
    """The page's promptfoo command, with the installed promptfoo for ``npx promptfoo@...``
    and the test's Python for ``PROMPTFOO_PYTHON``."""
    (argv,) = commands(block)
    assert argv[0] == "PROMPTFOO_PYTHON=.venv/bin/python" and argv[1:3] == [
        "npx",
        "promptfoo@0.120.27",
    ]
    done = subprocess.run(
        [str(promptfoo_command()), *argv[3:]],
        cwd=workdir,
        env=promptfoo_env(workdir / "promptfoo-home"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "✓ 10 passed, ✗ 2 failed" in done.stdout, done.stdout + done.stderr


def test_the_worked_example_prints_what_importers_md_quotes(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    promptfoo_block, console = fenced_blocks("importers.md", SECTION)[:2]
    run_promptfoo_as_documented(promptfoo_block, workdir)
    session = quoted_session(console)
    assert [c.split()[:3] for c, _ in session] == [
        ["assay", "import", "promptfoo"],
        ["assay", "judge", "run"],
    ]
    for command, quoted in session:
        assert main(shlex.split(command)[1:]) == 0
        assert capsys.readouterr().out.strip() == quoted, command
    quoted_line = fenced_blocks("importers.md", "both assertions' results:")[0].strip()
    written = (workdir / "capitals_pf" / "manifest.jsonl").read_text(encoding="utf-8")
    lines = {EVAL_ID.sub("EVAL", line) for line in written.splitlines()}
    assert EVAL_ID.sub("EVAL", quoted_line) in lines
    assert json.loads(quoted_line)["meta"]["promptfoo"]["assertions"][0]["type"] == "python"
