"""The real ragas for tests: installed once by ``scripts/install_ragas.sh`` into an environment
of its own (outside the repository; ragas cannot share the dev environment), run as a script
that imports this checkout's assay (``PYTHONPATH=src``).

Every run has ragas' telemetry off (``RAGAS_DO_NOT_TRACK``), no OpenAI key (nothing may call a
model) and Hugging Face offline, in a working directory of the test's own.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL = REPO_ROOT / "scripts" / "install_ragas.sh"
RESULT_NAME = "ragas_result.json"


def ragas_python() -> Path:
    """The pinned ragas environment's python, installed on first use."""
    done = subprocess.run(["sh", str(INSTALL)], capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        pytest.fail(f"installing ragas failed: {done.stderr.strip()}")
    return Path(done.stdout.strip().splitlines()[-1])


def ragas_env() -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"OPENAI_API_KEY", "PYTHONPATH"}
    }
    env.update(
        {
            "PYTHONPATH": str(REPO_ROOT / "src"),
            "RAGAS_DO_NOT_TRACK": "true",
            "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
        }
    )
    return env


def run_in_ragas(args: list[str], workdir: Path) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in the ragas environment, in ``workdir``; fails the test on a non-zero
    exit, with ragas' stderr."""
    done = subprocess.run(
        [str(ragas_python()), *args],
        cwd=workdir,
        env=ragas_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise AssertionError(f"the ragas script failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done


def run_ragas(script: str, workdir: Path) -> Any:
    """Run ``script`` (Python using ragas) in ``workdir``; it leaves what the test reads as
    JSON in ``RESULT_NAME``, which is returned."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "ragas_script.py"
    path.write_text(textwrap.dedent(script), encoding="utf-8")
    run_in_ragas([str(path)], workdir)
    return json.loads((workdir / RESULT_NAME).read_text(encoding="utf-8"))
