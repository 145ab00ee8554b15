"""The real lm-evaluation-harness CLI for tests (the ``lm-eval`` extra, in ``dev``), run on the
repository's example tasks (``examples/lm_eval``) and on tasks written into tmp.

lm-eval runs from a work directory that looks like the repository root: a copy of
``examples/`` beside a ``../shared`` that leads to the shared datasets, so the example tasks'
relative ``data_files`` resolve as they do from the repository. Nothing is downloaded: the
Hugging Face libraries run offline, with a cache of the run's own.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED = REPO_ROOT.parent / "shared"


def skip_without_lm_eval() -> None:
    if importlib.util.find_spec("lm_eval") is None:
        pytest.skip(
            "lm_eval is not installed (the lm-eval extra: pip install 'assay[lm-eval]')",
            allow_module_level=True,
        )


def lm_eval_workdir(root: Path) -> Path:
    """``root/repo`` holding a copy of the examples, with ``root/shared`` leading to the
    shared datasets (as ``../shared`` does from the repository)."""
    workdir = root / "repo"
    shutil.copytree(REPO_ROOT / "examples", workdir / "examples")
    (root / "shared").symlink_to(SHARED, target_is_directory=True)
    return workdir


def lm_eval_env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HF_HOME": str(home / "hf"),
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "NLTK_DATA": str(home / "nltk_data"),  # lm-eval's IFEval tries to fetch punkt_tab here
        "TQDM_DISABLE": "1",
    }


def run_lm_eval(args: Sequence[str], workdir: Path) -> str:
    """``lm_eval ARGS`` in ``workdir``; returns what it printed (its results table)."""
    done = subprocess.run(
        [sys.executable, "-m", "lm_eval", *args],
        cwd=workdir,
        env=lm_eval_env(workdir.parent / "lm-eval-home"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    return done.stdout


def samples_files(output_path: Path) -> dict[str, Path]:
    """Task name -> the samples file lm-eval wrote for it under ``output_path``."""
    found = {}
    for path in sorted(output_path.glob("*/samples_*.jsonl")):
        task = path.name.removeprefix("samples_").rsplit("_", 1)[0]
        found[task] = path
    return found
