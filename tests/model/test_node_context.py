"""What a Ray worker takes from the driver besides the run's settings (ModelOptions.node_context
and on_worker): the driver's working directory for relative paths, the server URL the driver
resolved, and the variable each node reads its own API key from. The key never travels."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.model import ModelOptions, get_model, open_cache
from tests.helpers.fault_server import ECHO_KEY_REPLY, fault_server


def test_the_context_carries_no_key_only_the_variable_it_came_from(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    options = ModelOptions(api_key="sk-of-the-driver", api_key_env="TEAM_KEY")
    context = options.node_context()
    assert "sk-of-the-driver" not in context.model_dump_json()
    assert context.api_key_env == "TEAM_KEY" and context.workdir == str(tmp_path)
    # the driver's OPENAI_BASE_URL: a worker's environment may name another server, or none
    assert context.base_url == "http://127.0.0.1:9/v1"
    # no key on the driver: none is asked of the nodes
    assert ModelOptions(api_key=None).node_context().api_key_env is None


def test_credentials_in_the_server_url_are_refused_not_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sent in its public form, the URL would reach the server without them."""
    with pytest.raises(ConfigError, match="--base-url carries credentials"):
        ModelOptions(base_url="http://me:pw@127.0.0.1:9/v1").node_context()
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1?api_key=sk-1")
    with pytest.raises(ConfigError, match="OPENAI_BASE_URL carries credentials"):
        ModelOptions().node_context()


def test_a_worker_reads_the_key_from_its_own_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with fault_server([ECHO_KEY_REPLY]) as server:
        driver = ModelOptions(base_url=server.base_url, api_key="sk-driver", api_key_env="K")
        context = driver.node_context()
        monkeypatch.setenv("K", "sk-node")
        worker = driver.on_worker(context)
        assert worker.api_key == "sk-node"
        monkeypatch.delenv("K")
        with pytest.raises(ConfigError) as refused:
            get_model("openai/m", driver.on_worker(context))
    assert str(refused.value).startswith(
        "the API key variable K is not set on this node (the driver had it)"
    )


def test_relative_paths_are_the_drivers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    driver_dir, worker_dir = tmp_path / "driver", tmp_path / "worker"
    driver_dir.mkdir()
    worker_dir.mkdir()
    monkeypatch.chdir(driver_dir)
    context = ModelOptions(cache_path=Path("rel/cache.sqlite")).node_context()
    monkeypatch.chdir(worker_dir)
    worker = ModelOptions(cache_path=Path("rel/cache.sqlite")).on_worker(context)
    cache = open_cache(worker)
    assert cache is not None and cache.path == driver_dir / "rel" / "cache.sqlite"
    assert not (worker_dir / "rel").exists()
    (driver_dir / "replies.jsonl").write_text('"from the driver\'s file"\n')
    assert get_model("stub/replies.jsonl", worker, cache=cache).backend is not None
    with pytest.raises(ConfigError, match=str(driver_dir / "models" / "x.gguf")):
        get_model("llamacpp/models/x.gguf", worker, cache=cache)
