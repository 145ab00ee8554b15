"""The real promptfoo CLI for tests: installed once by ``scripts/install_promptfoo.sh`` (into
the user's cache, outside the repository), run on configs written into tmp.

Every run gets its own promptfoo home (``PROMPTFOO_CONFIG_DIR``: its database and logs), no
telemetry, no update check, no cache; its Python assertions and providers run in the test's
own interpreter (``PROMPTFOO_PYTHON``), where assay is installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL = REPO_ROOT / "scripts" / "install_promptfoo.sh"
NO_NODE = 3  # the install script's exit status without node or npm


def promptfoo_command() -> Path:
    """The pinned promptfoo's command, installed on first use; skips the test only where node
    or npm is missing."""
    done = subprocess.run(["sh", str(INSTALL)], capture_output=True, text=True, timeout=900)
    if done.returncode == NO_NODE:
        pytest.skip(f"promptfoo needs node and npm: {done.stderr.strip()}")
    if done.returncode != 0:
        pytest.fail(f"installing promptfoo failed: {done.stderr.strip()}")
    return Path(done.stdout.strip().splitlines()[-1])


def promptfoo_env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PROMPTFOO_CONFIG_DIR": str(home),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_PYTHON": sys.executable,
    }


def run_promptfoo(
    command: Path,
    config: dict[str, Any] | Path,
    workdir: Path,
    *,
    args: Sequence[str] = (),
    out_name: str = "results.json",
) -> Path:
    """``promptfoo eval -c CONFIG -o WORKDIR/OUT --no-cache`` with ``config`` (a dict is
    written as WORKDIR/promptfooconfig.yaml); returns the results file. promptfoo exits 100
    when an assertion fails: that is a finished eval, not a failure to run."""
    workdir.mkdir(parents=True, exist_ok=True)
    if isinstance(config, dict):
        path = workdir / "promptfooconfig.yaml"
        path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    else:
        path = config
    out = workdir / out_name
    done = subprocess.run(
        [str(command), "eval", "-c", str(path), "-o", str(out), "--no-cache", *args],
        cwd=workdir,
        env=promptfoo_env(workdir / "promptfoo-home"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode not in (0, 100) or not out.is_file():
        raise AssertionError(f"promptfoo eval failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return out


def rows(results: Path) -> list[dict[str, Any]]:
    document = json.loads(results.read_text(encoding="utf-8"))
    return list(document["results"]["results"])
