"""Shared fixtures. Tests never touch the user's cache: ASSAY_CACHE_DIR points into tmp."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


# the test files that start Ray clusters: one worker runs them all, so that two clusters, each
# counting the machine's CPUs as its own, never run at once
RAY_TEST_FILES = frozenset({"test_ray.py", "test_ray_multinode.py"})


def pytest_configure() -> None:
    """Under pytest-xdist, each worker keeps to its own share of the cores, and so do the
    processes it starts. llama.cpp runs as many threads as the process may use cores, and its
    threads wait for each other by spinning: two workers' models each on every core ran a
    6-second test in 140 s."""
    worker, count = (
        os.environ.get("PYTEST_XDIST_WORKER"),
        os.environ.get("PYTEST_XDIST_WORKER_COUNT"),
    )
    if worker is None or count is None or not hasattr(os, "sched_setaffinity"):
        return
    cores = sorted(os.sched_getaffinity(0))
    share = len(cores) // int(count)
    if share >= 1:
        index = int(worker.removeprefix("gw"))
        os.sched_setaffinity(0, cores[index * share : (index + 1) * share])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group the tests for pytest-xdist's ``--dist loadgroup`` (scripts/test.sh): a test file
    runs whole on one worker, so its module fixtures (a model, a cluster) start once, and the
    Ray files share one worker. Without xdist (``-p no:xdist``) there is nothing to group."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            group = "ray" if item.path.name in RAY_TEST_FILES else str(item.path)
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    mp = pytest.MonkeyPatch()
    mp.setenv("ASSAY_CACHE_DIR", str(tmp_path_factory.mktemp("assay-cache")))
    yield
    mp.undo()


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"the shared datasets are expected at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    """A real OpenAI-compatible server (llama-cpp-python's) on a free loopback port.

    Yields the base URL (``http://127.0.0.1:<port>/v1``); stops the server afterwards.
    """
    from tests.helpers.servers import start_llama_server

    with start_llama_server() as base_url:
        yield base_url
