"""The deepeval worked example of docs/importers.md: the example script run as the page says
(with the real deepeval, in a process of its own, telemetry off), then the page's assay
commands, which print what it quotes (the time per claim check aside: it is the machine's); and
the metric's reason for the hasty model's Australia answer, as the page quotes it."""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# deepeval runs in processes of its own (tests/helpers/deepeval_runs.py): imported here it would
# write its .deepeval folder into the repository
if importlib.util.find_spec("deepeval") is None:  # the deepeval extra, in the dev extra
    pytest.skip("needs the deepeval extra", allow_module_level=True)

from assay.cli import main
from tests.helpers.deepeval_runs import deepeval_env, run_deepeval
from tests.integrations.test_inspect_example import quoted_session
from tests.test_doc_outputs import commands, fenced_blocks

REPO_ROOT = Path(__file__).resolve().parents[2]
SECTION = "### Worked example: deepeval"
TIMED = re.compile(r"[0-9.]+ ms per claim check")


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    shutil.copytree(REPO_ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    yield tmp_path


def run_example_as_documented(command: str, workdir: Path) -> str:
    """The page's ``python examples/deepeval/capitals.py DIR``, with the test's Python."""
    (argv,) = commands(command)
    assert argv[:3] == ["DEEPEVAL_TELEMETRY_OPT_OUT=1", "python", "examples/deepeval/capitals.py"]
    done = subprocess.run(
        [sys.executable, *argv[2:]],
        cwd=workdir,
        env=deepeval_env(workdir),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip()


def test_the_worked_example_prints_what_importers_md_quotes(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (console,) = fenced_blocks("importers.md", SECTION)[:1]
    session = quoted_session(console)
    assert [c.split()[1:4] for c, _ in session] == [
        ["python", "examples/deepeval/capitals.py", "capitals_deepeval"],
        ["import", "deepeval", "capitals_deepeval/capitals.json"],
        ["bench", "run", "--data"],
    ]
    (example, quoted), *assay_commands = session
    assert run_example_as_documented(example, workdir) == quoted
    for command, quoted in assay_commands:
        assert main(shlex.split(command)[1:]) == 0
        printed = capsys.readouterr().out.strip()
        assert TIMED.sub("T", printed) == TIMED.sub("T", quoted), command


def test_the_metrics_reason_is_what_importers_md_quotes(tmp_path: Path) -> None:
    quoted = fenced_blocks(
        "importers.md", "The `hasty` model's answer\nabout Australia in the worked"
    )
    case = {
        "name": "hasty-australia",
        "input": "What is the capital of Australia?",
        "actual_output": "The capital of Australia is Sydney.",
        "retrieval_context": ["Canberra is the capital city of Australia."],
    }
    result = run_deepeval(
        "evaluate", {"cases": [case], "metrics": [{}], "run_async": True}, tmp_path
    )
    (metric,) = result["hasty-australia"]
    assert metric["reason"] == quoted[0].strip()
