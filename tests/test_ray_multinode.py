"""The Ray executor on a cluster of two nodes, the second one as another machine would be:
another user (nobody), working directory, HOME, TMPDIR and Ray temp dir, its own IP address,
unable to read or write the driver's run directory, data or cache (tests/helpers/ray_nodes.py).
The head runs no work, so every batch runs on the second node.

Part of the default suite as root on Linux (about 2 minutes); skipped, saying why, where a second
node cannot be made (not root, no mount namespace). Alone: ``pytest -m multinode``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.fault_server import ECHO_KEY_REPLY, fault_server
from tests.helpers.ray_cluster import assay_lines, busy_workers
from tests.helpers.ray_nodes import TwoNodes, can_start, two_nodes
from tests.helpers.timings import without_timings
from tests.verify.bench_fixtures import verify_only_records, write_jsonl

pytestmark = pytest.mark.multinode
ray = pytest.importorskip("ray")
NODE_KEY_ENV = "ASSAY_MULTINODE_KEY"  # set on the second node, to its own value
QUESTIONS = Path(__file__).resolve().parents[1] / "examples" / "judge" / "questions.jsonl"


@pytest.fixture(scope="module")
def nodes() -> Iterator[TwoNodes]:
    if (why := can_start()) is not None:
        pytest.skip(why)
    with two_nodes({NODE_KEY_ENV: "key-of-the-node"}) as started:
        yield started


@pytest.fixture
def driver_dir(tmp_path: Path) -> Path:
    """The driver's working directory: the second node's user cannot enter it."""
    tmp_path.chmod(0o700)
    return tmp_path


def _assay(
    nodes: TwoNodes | None, cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    joined = nodes.driver_env if nodes is not None else {}
    full_env = {**os.environ, "ASSAY_CACHE_DIR": str(cwd / "cache"), **joined, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full_env,
        timeout=600,
    )


def _bench(nodes: TwoNodes | None, cwd: Path, out: str, *extra: str) -> list[str]:
    command = ["bench", "run", "--data", "data.jsonl", "--pattern", "entailment"]
    command += ["--verifier", "learned", "--out_dir", out, "--no-report", "--no-progress"]
    command += ["--n-resamples", "20", *extra]
    if nodes is not None:
        command += ["--executor", "ray", "--ray-batch-size", "7"]
    return command


def _results(run: Path) -> dict[str, object]:
    lines = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    return {line["id"]: without_timings(line) for line in lines}


def _files_under(root: Path) -> set[Path]:
    return {path for path in root.rglob("*") if path.is_file()}


def test_a_bench_run_on_the_other_node_equals_the_in_process_run(
    nodes: TwoNodes, driver_dir: Path
) -> None:
    write_jsonl(driver_dir / "data.jsonl", verify_only_records(60))
    local = _assay(None, driver_dir, *_bench(None, driver_dir, "local"))
    assert local.returncode == 0, local.stderr
    before = _files_under(nodes.node_root / "cwd")
    done = _assay(nodes, driver_dir, *_bench(nodes, driver_dir, "ray"))
    assert done.returncode == 0, done.stderr
    assert _results(driver_dir / "ray") == _results(driver_dir / "local")
    # the worker wrote nothing where it stood: the driver alone writes the run directory
    assert _files_under(nodes.node_root / "cwd") == before


def test_a_relative_cache_path_is_the_drivers_and_a_node_that_cannot_open_it_is_named(
    nodes: TwoNodes, driver_dir: Path
) -> None:
    """--cache-path relcache/r.sqlite is the file under the driver's working directory on
    every node, not one under wherever a worker happens to run; the second node cannot write
    there, and the error says which node and which path."""
    write_jsonl(driver_dir / "data.jsonl", verify_only_records(5))
    command = _bench(nodes, driver_dir, "ray", "--cache-path", "relcache/r.sqlite")
    done = _assay(nodes, driver_dir, *command)
    assert done.returncode == 2, done.stderr
    error = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    node = f"on Ray node 127.0.0.2 ({os.uname().nodename})"
    assert error == [f"error: {node}: {driver_dir}/relcache: Permission denied"]
    assert "Traceback" not in done.stderr
    assert not (nodes.node_root / "cwd" / "relcache").exists()


def test_a_relative_model_path_is_the_drivers_and_a_node_without_it_is_named(
    nodes: TwoNodes, driver_dir: Path
) -> None:
    """llamacpp/models/verifier.gguf is the file under the driver's working directory on every
    node (here on the driver's side only, where the second node cannot read it)."""
    from assay.model.providers.llamacpp import smollm2_path

    write_jsonl(driver_dir / "data.jsonl", verify_only_records(2))
    (driver_dir / "models").mkdir()
    (driver_dir / "models" / "verifier.gguf").symlink_to(smollm2_path())
    command = _bench(nodes, driver_dir, "ray")
    command[command.index("learned")] = "llamacpp/models/verifier.gguf"
    done = _assay(nodes, driver_dir, *command)
    assert done.returncode == 2, done.stderr
    error = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    node = f"on Ray node 127.0.0.2 ({os.uname().nodename})"
    assert error == [f"error: {node}: {driver_dir}/models/verifier.gguf: Permission denied"]


def _generate(nodes: TwoNodes, cwd: Path, base_url: str, key_env: str) -> list[str]:
    command = ["generate", "--questions", str(QUESTIONS), "--model", "openai/m"]
    command += ["--base-url", base_url, "--api-key-env", key_env, "--out", "outputs"]
    return [*command, "--executor", "ray"]


def test_each_node_sends_its_own_api_key_and_the_drivers_goes_nowhere(
    nodes: TwoNodes, driver_dir: Path
) -> None:
    with fault_server([ECHO_KEY_REPLY]) as server:
        command = _generate(nodes, driver_dir, server.base_url, NODE_KEY_ENV)
        done = _assay(nodes, driver_dir, *command, env={NODE_KEY_ENV: "key-of-the-driver"})
        assert done.returncode == 0, done.stderr
        assert server.requests  # made by the second node, with the key of its environment
    from assay.redact import REDACTED

    outputs = "".join(p.read_text() for p in (driver_dir / "outputs").rglob("*") if p.is_file())
    # the server echoed the node's key, which the node masked as its own secret (a key it
    # did not hold, none or another variable's, would be echoed as it is)
    assert f"your key is {REDACTED}" in outputs and "key-of-the-node" not in outputs
    # the driver's key was never sent: not in Ray's files of either node
    for ray_files in (nodes.head_temp, nodes.node_root / "ray"):
        for path in _files_under(ray_files):
            with open(path, "rb") as handle:
                assert b"key-of-the-driver" not in handle.read(), path


def test_a_key_variable_the_node_does_not_have_is_an_error_naming_the_node(
    nodes: TwoNodes, driver_dir: Path
) -> None:
    with fault_server([ECHO_KEY_REPLY]) as server:
        command = _generate(nodes, driver_dir, server.base_url, "ASSAY_KEY_ON_THE_DRIVER_ONLY")
        env = {"ASSAY_KEY_ON_THE_DRIVER_ONLY": "secret-of-the-driver"}
        done = _assay(nodes, driver_dir, *command, env=env)
        assert not server.requests  # no call without the key (or with another one)
    assert done.returncode == 2, done.stderr
    assert (
        f"error: on Ray node 127.0.0.2 ({os.uname().nodename}): the API key variable "
        "ASSAY_KEY_ON_THE_DRIVER_ONLY is not set on this node (the driver had it)"
    ) in done.stderr


def test_a_judge_run_on_the_other_node_equals_the_in_process_run(
    nodes: TwoNodes, driver_dir: Path
) -> None:
    models = ["--model", "stub/model-a", "--model", "stub/model-b"]
    made = _assay(
        None, driver_dir, "generate", "--questions", str(QUESTIONS), *models, "--out", "outputs"
    )
    assert made.returncode == 0, made.stderr
    judges = ["--judge", "stub/model-a", "--judge", "stub/model-b", "--mode", "both"]
    common = ["judge", "run", "--questions", str(QUESTIONS), "--outputs", "outputs", *judges]
    common += ["--date", "2026-11-24"]
    local = _assay(None, driver_dir, *common, "--out", "local")
    assert local.returncode == 0, local.stderr
    done = _assay(nodes, driver_dir, *common, "--out", "ray", "--executor", "ray")
    assert done.returncode == 0, done.stderr
    assert _archive(driver_dir / "ray") == _archive(driver_dir / "local")


def _archive(run: Path) -> list[str]:
    lines = []
    for part in sorted(run.rglob("part-*.jsonl")):
        for line in part.read_text().splitlines():
            record = json.loads(line)
            lines.append(json.dumps(_without_times(record), sort_keys=True))
    return sorted(lines)


def _without_times(value: object) -> object:
    if isinstance(value, dict):
        return {
            k: _without_times(v)
            for k, v in value.items()
            if not k.endswith(("_at", "_ms", "_s")) and k not in ("latency", "timestamp")
        }
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


# how long a worker has been busy with its batch when the test kills it: long enough for it
# to have noted its node in the cluster's store (an RPC; at 0.1 s a loaded machine lost the
# race once in a full clean-clone run), well before its batch of 1,500 ends
MID_BATCH_S = 0.3


def _start_bench(
    nodes: TwoNodes, cwd: Path, *extra: str, verifier: str = "lexical", batch: int = 100
) -> subprocess.Popen[str]:
    """A bench run on the cluster, in batches of ``batch`` (lexical: quick), started in the
    background; its results go to ``cwd/ray``."""
    command = [sys.executable, "-m", "assay", *_bench(nodes, cwd, "ray", *extra)]
    command[command.index("7")] = str(batch)
    command[command.index("learned")] = verifier
    env = {**os.environ, "ASSAY_CACHE_DIR": str(cwd / "cache"), **nodes.driver_env}
    return subprocess.Popen(command, cwd=cwd, env=env, text=True, stderr=subprocess.PIPE)


def _wait_for_results(run: subprocess.Popen[str], results: Path, lines: int) -> None:
    deadline = time.monotonic() + 300
    while run.poll() is None and time.monotonic() < deadline:
        if results.exists() and results.read_bytes().count(b"\n") >= lines:
            return
        time.sleep(0.05)


def _resumes(
    nodes: TwoNodes,
    cwd: Path,
    kept: int,
    total: int,
    *extra: str,
    verifier: str = "lexical",
    batch: int = 100,
) -> None:
    """The same command again finishes the run: the kept results, then every other record
    once."""
    rerun = _start_bench(nodes, cwd, *extra, verifier=verifier, batch=batch)
    _, err = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, err
    ids = [json.loads(line)["id"] for line in (cwd / "ray" / "results.jsonl").open()]
    assert len(ids) == len(set(ids)) == total and kept < total


def test_an_error_not_assays_on_the_other_node_names_it_and_the_run_resumes(
    nodes: TwoNodes, driver_dir: Path
) -> None:
    """Mid-run, the directory of the cache the workers of the second node use becomes one
    they cannot write, and the workers are killed: the new ones Ray starts to retry their
    batches cannot create the cache file, and SQLite's error (not an assay error) ends the
    run, naming the node; finished batches are kept, and the same command resumes."""
    write_jsonl(driver_dir / "data.jsonl", verify_only_records(RECORDS_PAST_THE_KILL))
    cache_dir = nodes.node_root / "cache-of-the-node"
    cache_dir.mkdir()
    shutil.chown(cache_dir, "nobody", "nogroup")
    cache = ("--cache-path", str(cache_dir / "r.sqlite"))
    run = _start_bench(nodes, driver_dir, *cache)
    results = driver_dir / "ray" / "results.jsonl"
    _wait_for_results(run, results, 100)
    cache_dir.rename(cache_dir.with_name("cache-before"))
    cache_dir.mkdir(mode=0o755)  # root's: the node's user cannot create a file in it
    assert _kill_the_workers(str(nodes.node_root / "ray"), run), "the run ended first"
    _, err = run.communicate(timeout=300)
    assert run.returncode == 1, err
    assert "Traceback" not in err
    node = f"127.0.0.2 ({os.uname().nodename})"
    assert assay_lines(err) == [
        f"error: on Ray node {node}: a worker failed: OperationalError: unable to open "
        "database file",
        "  hint: what finished is kept: run the same command again to resume (rerun with "
        "--debug for the worker's traceback)",
    ], err
    kept = len(results.read_text().splitlines())
    assert kept >= 100
    shutil.chown(cache_dir, "nobody", "nogroup")  # the node's directory is usable again
    _resumes(nodes, driver_dir, kept, RECORDS_PAST_THE_KILL, *cache)


# enough lexical checks to outlast the kill by seconds: with 1,500 (about a second of work)
# the run once finished between its 100th result and the kill, in a full clean-clone run
RECORDS_PAST_THE_KILL = 6000


def _kill_the_workers(node_ray: str, run: subprocess.Popen[str]) -> bool:
    """Kills the node's workers, busy or idle, once some are found (a scan of the processes
    can fall between a worker's titles); False if the run ended before any was."""
    deadline = time.monotonic() + 60
    while run.poll() is None and time.monotonic() < deadline:
        killed = False
        for pid in busy_workers(node_ray, "run_batch") + busy_workers(node_ray, "IDLE"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
                killed = True
        if killed:
            return True
        time.sleep(0.02)
    return False


def test_a_worker_killed_on_every_attempt_on_the_other_node_is_named_and_the_run_resumes(
    nodes: TwoNodes, driver_dir: Path
) -> None:
    """Ray's error for a worker that died names no node; the one that ends the run does.

    Each worker is killed once it has been busy for a moment, as a crash or the kernel's
    memory killer would take it in the middle of its batch (batches of 1,500 records: about
    0.75 s of the learned checker on a quiet machine); one killed in its first
    milliseconds may not yet have said where it runs, and its error says that Ray did not
    name the node."""
    write_jsonl(driver_dir / "data.jsonl", verify_only_records(4500))
    run = _start_bench(nodes, driver_dir, verifier="learned", batch=1500)
    results = driver_dir / "ray" / "results.jsonl"
    _wait_for_results(run, results, 100)
    deadline = time.monotonic() + 300
    busy_since: dict[int, float] = {}
    while time.monotonic() < deadline and run.poll() is None:  # every attempt, every batch
        now = time.monotonic()
        busy = busy_workers(str(nodes.node_root / "ray"), "run_batch")
        busy_since = {pid: busy_since.get(pid, now) for pid in busy}
        for pid, since in busy_since.items():
            if now - since >= MID_BATCH_S:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 1, err
    lines = assay_lines(err)
    node = f"127.0.0.2 ({os.uname().nodename})"
    assert lines[0].startswith(
        f"error: Ray lost a batch after 3 retries on Ray node {node}: the worker process "
        "running it died"
    ), err
    assert len(lines) == 2 and "Traceback" not in err
    kept = len(results.read_text().splitlines())
    assert kept >= 100
    _resumes(nodes, driver_dir, kept, 4500, verifier="learned", batch=1500)


def test_a_node_that_goes_away_mid_run_is_reported_and_the_run_resumes(
    driver_dir: Path,
) -> None:
    """Its own cluster: the node is stopped for good. The run waits --ray-node-wait for
    another (5 s here, 30 by default), then ends naming the node that went away."""
    if (why := can_start()) is not None:
        pytest.skip(why)
    write_jsonl(driver_dir / "data.jsonl", verify_only_records(3000))
    with two_nodes() as cluster:
        command = [sys.executable, "-m", "assay", *_bench(cluster, driver_dir, "ray")]
        command[command.index("7")] = "50"
        command += ["--ray-node-wait", "5"]
        env = {**os.environ, "ASSAY_CACHE_DIR": str(driver_dir / "cache"), **cluster.driver_env}
        run = subprocess.Popen(command, cwd=driver_dir, env=env, text=True, stderr=subprocess.PIPE)
        results = driver_dir / "ray" / "results.jsonl"
        deadline = time.monotonic() + 300
        while not (results.exists() and results.stat().st_size) and time.monotonic() < deadline:
            time.sleep(0.2)
        cluster.stop_node()
        stopped = time.monotonic()
        _, err = run.communicate(timeout=300)
        waited = time.monotonic() - stopped
    assert run.returncode == 1, err
    # Ray would keep the batches waiting for a node for ever: the run ends, saying why
    assert (
        "error: Ray has no node with a CPU left to run the batches on (the worker nodes, "
        f"127.0.0.2 ({os.uname().nodename}), went away 5 s ago or more and none came back)"
    ) in err
    assert "Traceback" not in err
    assert 5 <= waited < 30  # the option's wait, not the default's
    config = json.loads((driver_dir / "ray" / "run.json").read_text())["config"]
    assert config["ray_node_wait_s"] == 5
    kept = len(results.read_text().splitlines())
    assert 0 < kept < 3000
    # the same command in process finishes the run: every record exactly once
    rerun = _assay(None, driver_dir, *_bench(None, driver_dir, "ray"))
    assert rerun.returncode == 0, rerun.stderr
    ids = [json.loads(line)["id"] for line in results.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 3000
