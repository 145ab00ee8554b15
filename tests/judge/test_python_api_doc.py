"""The Python API block of docs/judge.md, run as written on the quick start's outputs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from assay.cli import main

REPO_ROOT = Path(__file__).resolve().parents[2]


def python_api_block() -> str:
    text = (REPO_ROOT / "docs" / "judge.md").read_text(encoding="utf-8")
    section = text.split("## Python API", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found, "docs/judge.md has no Python block under '## Python API'"
    return found.group(1)


def test_the_python_api_block_judges_the_quick_start_outputs(tmp_path: Path) -> None:
    questions = tmp_path / "examples" / "judge" / "questions.jsonl"
    questions.parent.mkdir(parents=True)
    shutil.copy(REPO_ROOT / "examples" / "judge" / "questions.jsonl", questions)
    models = ["--model", "stub/model-a", "--model", "stub/model-b"]
    outputs = ["--out", str(tmp_path / "outputs"), "--no-cache"]
    assert main(["generate", "--questions", str(questions), *models, *outputs]) == 0
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src"), "ASSAY_CACHE_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", python_api_block()],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "5 3 True"  # as the text after the block says
