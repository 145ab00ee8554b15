"""scripts/test.sh runs the suite on two pytest-xdist workers; tests/conftest.py keeps the test
files that start Ray clusters on one worker, and each worker on its own share of the cores."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from assay.model.providers.llamacpp import usable_cores
from tests.conftest import RAY_TEST_FILES

TESTS = Path(__file__).resolve().parent
# what a test file that starts or joins a Ray cluster contains
STARTS_RAY = re.compile(r'ray_cluster|ray_nodes|importorskip\("ray"\)|ray\.init\(|"ray", "start"')


def test_every_file_that_starts_ray_runs_on_the_ray_worker() -> None:
    starting = {
        path.name
        for path in TESTS.rglob("test_*.py")
        if path != Path(__file__).resolve() and STARTS_RAY.search(path.read_text())
    }
    assert starting, "no test file starts Ray: the pattern above no longer finds them"
    assert starting <= RAY_TEST_FILES, sorted(starting - RAY_TEST_FILES)


def test_the_ray_files_named_exist() -> None:
    names = {path.name for path in TESTS.rglob("test_*.py")}
    assert names >= RAY_TEST_FILES, sorted(RAY_TEST_FILES - names)


def test_a_worker_and_what_it_starts_keep_to_its_share_of_the_cores() -> None:
    worker, count = (
        os.environ.get("PYTEST_XDIST_WORKER"),
        os.environ.get("PYTEST_XDIST_WORKER_COUNT"),
    )
    if worker is None or count is None:
        pytest.skip("checks the pytest-xdist workers of scripts/test.sh")
    # the cores pytest's main process may use (the worker's parent, left as it was)
    available = len(os.sched_getaffinity(os.getppid()))
    if available < int(count):
        pytest.skip(f"{count} workers on {available} cores share them")
    share = available // int(count)
    assert usable_cores() == share  # the embedded model's thread count
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(len(os.sched_getaffinity(0)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert int(child.stdout) == share
