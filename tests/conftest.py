"""Shared fixtures. Tests never touch the user's cache: ASSAY_CACHE_DIR points into tmp."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


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
