"""The lm-eval worked example of docs/importers.md: the page's lm_eval command run on the
repository's example tasks against a loopback llama.cpp server serving SmolLM2 (the page's
address replaced by the server's), then the page's assay commands, which print what it quotes
(lm-eval's time-stamped file names aside, and the agreement's counts of followed instructions,
which depend on SmolLM2's longer answers and so on the llama.cpp build)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.cli import main
from tests.helpers.lm_eval_cli import lm_eval_workdir, run_lm_eval, skip_without_lm_eval
from tests.integrations.test_inspect_example import quoted_session
from tests.test_doc_outputs import commands, fenced_blocks

skip_without_lm_eval()

SECTION = "### Worked example: lm-eval"
PAGE_SERVER = "http://127.0.0.1:8000/v1"
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d+")
# the agreement's kappas and confusion counts: what SmolLM2's IFEval answers followed
FOLLOWED = re.compile(
    r"(?<=\| )(?:n/a|\d\.\d{3}|\d+/\d+/\d+/\d+)(?= \|)"
    r"|(?<=kappa )(?:n/a|\d\.\d{3})|(?<=confusion )\d+/\d+/\d+/\d+"
)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    workdir = lm_eval_workdir(tmp_path)
    monkeypatch.chdir(workdir)
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    yield workdir


def run_lm_eval_as_documented(block: str, llama_server: str, workdir: Path) -> str:
    """The page's lm_eval command (its server line aside: the test has its own server)."""
    server, command = commands(block)
    assert server[:3] == ["python", "-m", "llama_cpp.server"]
    assert command[:2] == ["HF_DATASETS_OFFLINE=1", "lm_eval"]  # the helper runs offline
    args = [arg.replace(PAGE_SERVER, llama_server) for arg in command[2:]]
    assert args != command[2:], "the page's lm_eval command names no server"
    return run_lm_eval(args, workdir)


def run_assay(command: str) -> None:
    argv = shlex.split(command)
    assert argv[0] == "assay"
    expanded = [p for arg in argv[1:] for p in (sorted(Path().glob(arg)) if "*" in arg else [arg])]
    assert main([str(arg) for arg in expanded]) == 0


@pytest.mark.slow
def test_the_worked_example_prints_what_importers_md_quotes(
    llama_server: str, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lm_eval_block, console, manifest_line, agreement = fenced_blocks("importers.md", SECTION)[:4]
    table = run_lm_eval_as_documented(lm_eval_block, llama_server, workdir)
    assert re.search(r"\|capitals +\| +1\|none +\| +0\|exact_match +\|↑ +\|0\.0000\|", table)
    session = quoted_session(console)
    assert [c.split()[:3] for c, _ in session] == [
        ["assay", "import", "lm-eval"],
        ["assay", "judge", "run"],
    ]
    for command, quoted in session:
        run_assay(command)
        printed = capsys.readouterr().out.strip()
        assert STAMP.sub("STAMP", printed) == STAMP.sub("STAMP", quoted), command
    written = (workdir / "capitals_lm" / "manifest.jsonl").read_text(encoding="utf-8")
    lines = {STAMP.sub("STAMP", line) for line in written.splitlines()}
    assert STAMP.sub("STAMP", manifest_line.strip()) in lines
    ((command, quoted),) = quoted_session(agreement)
    run_assay(command)
    printed = capsys.readouterr().out.strip()
    assert FOLLOWED.sub("X", printed) == FOLLOWED.sub("X", quoted)
