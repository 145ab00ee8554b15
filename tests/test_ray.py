"""The Ray executor (issue 12 #2) on a real local Ray cluster with 2 worker CPUs: results
identical to the in-process executor, a worker killed mid-run, and resume after an
interrupt. The cluster is started once for the module (`ray start --head`), and the runs are
real `assay` processes that join it through RAY_ADDRESS."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.ray_cluster import (
    assay_lines,
    busy_workers,
    cluster_temp_dir,
    stop_cluster,
)
from tests.helpers.servers import free_port
from tests.helpers.signals import default_sigint
from tests.helpers.timings import record_without_timings
from tests.verify.bench_fixtures import verify_only_records, write_jsonl

ray = pytest.importorskip("ray")
RAY = Path(sys.executable).with_name("ray")


@pytest.fixture(scope="module")
def cluster() -> Iterator[dict[str, str]]:
    """The environment that joins the cluster: its address, and its temp dir (where Ray keeps
    the cluster's session and auth token)."""
    port = free_port()
    with cluster_temp_dir() as temp:
        # a loopback test cluster without Ray's token auth (on by default for local clusters
        # since Ray 2.59; a client joining one must otherwise set RAY_AUTH_MODE=token)
        joined = {"RAY_TMPDIR": str(temp), "RAY_AUTH_MODE": "disabled"}
        env = {**os.environ, **joined}
        start = [str(RAY), "start", "--head", "--num-cpus", "2", "--port", str(port)]
        start += ["--include-dashboard", "false", "--disable-usage-stats"]
        # started in a directory of its own: the workers' working directory is not the driver's
        subprocess.run(start, check=True, capture_output=True, env=env, timeout=180, cwd=temp)
        yield {"RAY_ADDRESS": f"127.0.0.1:{port}", **joined}


def _bench(
    tmp_path: Path,
    data: Path,
    out: Path,
    *extra: str,
    address: dict[str, str] | None = None,
    verifier: str = "learned",
    cache: str = "cache",
    cwd: Path | None = None,
) -> subprocess.Popen[str]:
    env = {**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / cache), **(address or {})}
    command = [sys.executable, "-m", "assay", "bench", "run", "--data", str(data)]
    command += ["--pattern", "entailment", "--verifier", verifier, "--out_dir", str(out)]
    command += ["--no-report", "--no-progress", "--n-resamples", "20", *extra]
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=default_sigint,
        cwd=cwd,
    )


def _finish(process: subprocess.Popen[str]) -> str:
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    return out


def _results(run: Path) -> dict[str, dict[str, object]]:
    lines = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    return {line["id"]: record_without_timings(line) for line in lines}


def _assert_summary_is_the_files(run: Path) -> None:
    """The summary a Ray run fed as results arrived equals one rebuilt from results.jsonl."""
    from assay.verify.summary import build_summary

    written = json.loads((run / "summary.json").read_text())
    rebuilt = build_summary(run, plots=False).model_dump(mode="json")
    # the workers' tallies merged: every number as the file's results give it, to the last bit
    left_out = {"created_at", "plots", "plots_note", "run", "money"}
    assert {k: v for k, v in written.items() if k not in left_out} == {
        k: v for k, v in rebuilt.items() if k not in left_out
    }
    assert written["counts"]["results"] == len((run / "results.jsonl").read_text().splitlines())


def test_a_relative_cache_path_is_the_one_under_the_drivers_directory(
    tmp_path: Path, cluster: dict[str, str]
) -> None:
    """Workers run wherever Ray started them; --cache-path relcache/r.sqlite is still the file
    under the driver's working directory (tests/test_ray_multinode.py: on another node)."""
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(3))
    driver = tmp_path / "driver"
    driver.mkdir()
    run = _bench(
        tmp_path,
        data,
        tmp_path / "run",
        "--executor",
        "ray",
        "--cache-path",
        "relcache/r.sqlite",
        address=cluster,
        cwd=driver,
    )
    _finish(run)
    assert (driver / "relcache" / "r.sqlite").is_file()
    assert not (Path(cluster["RAY_TMPDIR"]) / "relcache").exists()  # where the workers stand


def test_results_equal_the_in_process_run(tmp_path: Path, cluster: dict[str, str]) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(60))
    _finish(_bench(tmp_path, data, tmp_path / "local"))
    ray_run = tmp_path / "ray"
    _finish(
        _bench(
            tmp_path, data, ray_run, "--executor", "ray", "--ray-batch-size", "7", address=cluster
        )
    )
    lines = (ray_run / "results.jsonl").read_text().splitlines()
    assert len(lines) == 60  # every record once
    assert _results(ray_run) == _results(tmp_path / "local")
    _assert_summary_is_the_files(ray_run)
    summary = json.loads((ray_run / "summary.json").read_text())
    local = json.loads((tmp_path / "local" / "summary.json").read_text())
    for name, metric in local["detection"]["metrics"].items():  # results arrive in another
        for key in ("value", "low", "high"):  # order: sums differ in the last bits only
            assert summary["detection"]["metrics"][name][key] == pytest.approx(metric[key]), name


@pytest.mark.slow
def test_the_embedded_model_on_ray_answers_as_in_process(
    tmp_path: Path, cluster: dict[str, str]
) -> None:
    """Each worker loads its own llama.cpp model and sees the records in another order and
    company than the in-process run; with separate caches every claim is asked afresh, and each
    probability must still be the same to the last bit."""
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(10))
    embedded = "llamacpp/smollm2"
    _finish(_bench(tmp_path, data, tmp_path / "local", verifier=embedded, cache="local"))
    ray_run = tmp_path / "ray"
    extra = ("--executor", "ray", "--ray-batch-size", "3")
    _finish(
        _bench(tmp_path, data, ray_run, *extra, address=cluster, verifier=embedded, cache="ray")
    )
    remote, local = _results(ray_run), _results(tmp_path / "local")
    assert len(remote) == 10
    # The records repeat claims, and both workers share one response cache: which of two
    # records asking the same claim calls the model and which reads the other's answer depends
    # on which worker gets there first. So calls and cache hits are compared as their sum.
    assert _without_usage(remote) == _without_usage(local)
    assert _lookups(remote) == _lookups(local)


def _without_usage(results: dict[str, dict[str, object]]) -> dict[str, dict[str, object]]:
    return {key: {k: v for k, v in r.items() if k != "usage"} for key, r in results.items()}


def _lookups(results: dict[str, dict[str, object]]) -> dict[str, tuple[int, ...]]:
    out: dict[str, tuple[int, ...]] = {}
    for key, result in results.items():
        usage = result["usage"]
        assert isinstance(usage, dict)
        out[key] = (
            usage["calls"] + usage["cache_hits"],
            usage["failures"],
            usage["prompt_tokens"],
            usage["completion_tokens"],
        )
    return out


def test_a_worker_killed_mid_run_loses_only_its_batch(
    tmp_path: Path, cluster: dict[str, str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(3000))
    run = tmp_path / "ray"
    process = _bench(
        tmp_path, data, run, "--executor", "ray", "--ray-batch-size", "100", address=cluster
    )
    killed = _kill_a_busy_worker(cluster["RAY_TMPDIR"])
    out = _finish(process)
    assert killed, "no worker was busy to kill"
    assert "3000 examples" in out
    lines = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    assert sorted(line["id"] for line in lines) == sorted(f"v{i}" for i in range(3000))


def _kill_a_busy_worker(temp_dir: str) -> bool:
    """SIGKILL a worker of this module's cluster running a batch (not another cluster's)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        pids = busy_workers(temp_dir, "run_batch")
        if pids:
            os.kill(pids[0], signal.SIGKILL)
            return True
        time.sleep(0.05)
    return False


def test_a_batch_whose_worker_keeps_dying_ends_the_run_with_one_line_and_resumes(
    tmp_path: Path, cluster: dict[str, str]
) -> None:
    """A worker killed on every attempt of a batch (as a crash or the kernel's OOM killer
    would): one error line naming why and the batch's records, exit 1, no traceback, and
    the batches written before are kept; the rerun resumes from them."""
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(1500))
    run = tmp_path / "ray"
    args = ("--executor", "ray", "--ray-batch-size", "100")
    process = _bench(tmp_path, data, run, *args, address=cluster, verifier="lexical")
    results = run / "results.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None and _line_count(results) < 100:
        time.sleep(0.05)
    while time.monotonic() < deadline and process.poll() is None:  # every attempt, every batch
        for pid in busy_workers(cluster["RAY_TMPDIR"], "run_batch"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 1, err
    lines = assay_lines(err)
    assert "Traceback" not in err and len(lines) == 2, err
    node = f"{socket.gethostname()})"  # the cluster's one node, by its address and name
    # killed at once, a worker may not yet have noted its node (tests/test_ray_multinode.py
    # kills each attempt a moment in and requires the node named)
    assert lines[0].startswith(
        ("error: Ray lost a batch after 3 retries on Ray node ", f"{LOST} on a node Ray did not")
    )
    died = ": the worker process running it died"
    assert f" ({node}{died}" in lines[0] or f" did not name{died}" in lines[0], lines[0]
    assert re.search(rf"; the batch held \d+ records, v\d+ to v\d+ of {data}$", lines[0])
    assert lines[1].startswith("  hint: what finished is kept: run the same command again")
    kept = results.read_text().splitlines()
    assert 100 <= len(kept) < 1500 and json.loads(kept[-1])["id"]  # whole lines
    assert json.loads((run / "run.json").read_text())["status"] == "error"
    out = _finish(_bench(tmp_path, data, run, *args, address=cluster, verifier="lexical"))
    assert f"{len(kept)} already done" in out
    ids = [json.loads(x)["id"] for x in results.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 1500


@pytest.mark.serial  # the memory monitor acts at a threshold set from the whole machine's use
def test_a_batch_too_big_for_its_nodes_memory_ends_the_run_naming_it(tmp_path: Path) -> None:
    """Ray's memory monitor kills a worker whose node runs short of memory, and by default
    reruns its task for ever: a batch too big for the node hung the run without end. Here
    the driver ends the run once the batch has started more often than its retries allow,
    with one line that says why and what to do (``RAY_task_oom_retries`` is not set).
    A cluster of its own, started by the driver, whose monitor acts 1 GB above the memory
    the machine uses now; each record's evidence is 40 MB of text, a few GB to index."""
    sentences = (f"Item {i} stands next to item {i + 1} in row {i % 997}." for i in range(850_000))
    page = " ".join(sentences)
    records = verify_only_records(2)
    for record in records:
        record["evidence"] = [{"evidence_id": "p1", "text": page}]
        record.pop("gold_citations")
    data = write_jsonl(tmp_path / "data.jsonl", records)
    info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    total, available = (int(info[key].split()[0]) * 1024 for key in ("MemTotal", "MemAvailable"))
    threshold = (total - available + 1_000_000_000) / total
    with cluster_temp_dir() as own:
        address = {"RAY_TMPDIR": str(own), "RAY_memory_usage_threshold": f"{threshold:.4f}"}
        address["RAY_memory_monitor_refresh_ms"] = "100"
        process = _bench(tmp_path, data, tmp_path / "ray", "--executor", "ray",
                         "--ray-batch-size", "1", address=address)  # fmt: skip
        try:
            out, err = process.communicate(timeout=300)
        finally:
            process.kill()  # (when it did not end)
    assert process.returncode == 1, err[-3000:]
    # Ray's own messages on the kills come on stderr, beside assay's, not in the output
    assert "(raylet)" in err and "failed due to oom" in err
    assert "(raylet)" not in out and "oom" not in out
    lines = [line for line in err.splitlines() if line.startswith(("error:", "  hint:"))]
    assert re.fullmatch(
        r"error: Ray lost a batch after 3 retries on Ray node \S+ \(.+\): Ray killed the "
        r"worker running it each time and would have run it again without end, which it does "
        r"for a worker its memory monitor killed: its node was running out of memory; the "
        rf"batch held 1 record, "
        rf"v[01] of {re.escape(str(data))}",
        lines[0],
    ), err[-3000:]
    assert lines[1] == (
        "  hint: give the workers more memory, or use a smaller --ray-batch-size; what "
        "finished is kept: run the same command again to resume"
    )
    assert "Traceback" not in err


def _line_count(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _start_2000_in_batches_of_50(
    tmp_path: Path, address: dict[str, str]
) -> tuple[Path, Path, tuple[str, ...], subprocess.Popen[str]]:
    """A bench run of 2,000 records on Ray in batches of 50, once its first results are in:
    its data, run directory, executor options and process."""
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(2000))
    run = tmp_path / "ray"
    args = ("--executor", "ray", "--ray-batch-size", "50")
    process = _bench(tmp_path, data, run, *args, address=address)
    results = run / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not results.exists() or results.stat().st_size == 0):
        time.sleep(0.05)
    return data, run, args, process


def test_an_interrupted_ray_run_resumes(tmp_path: Path, cluster: dict[str, str]) -> None:
    data, run, args, process = _start_2000_in_batches_of_50(tmp_path, cluster)
    results = run / "results.jsonl"
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=300)
    first = len(results.read_text().splitlines())
    assert 0 < first <= 2000
    out = _finish(_bench(tmp_path, data, run, *args, address=cluster))
    assert f"{first} already done" in out or first == 2000
    ids = [json.loads(x)["id"] for x in results.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 2000
    _assert_summary_is_the_files(run)  # earlier sessions' results and this one's


LOST = "error: Ray lost a batch after 3 retries"


@pytest.mark.parametrize("joins", [True, False], ids=["joined-cluster", "own-cluster"])
def test_sigterm_stops_a_ray_run_like_ctrl_c(
    tmp_path: Path, cluster: dict[str, str], joins: bool
) -> None:
    """ray.init makes SIGTERM exit the driver at once (exit 1 with Ray's stack dump, or an
    abort with a cluster the driver started); the command keeps its own handler: the batches
    in flight are stopped, the run log says "cancelled", exit 143, and the run resumes."""
    with cluster_temp_dir() as own:  # where a cluster the driver starts keeps its sockets
        _sigterm_stops_a_ray_run(tmp_path, cluster if joins else {"RAY_TMPDIR": str(own)})


def _sigterm_stops_a_ray_run(tmp_path: Path, address: dict[str, str]) -> None:
    """One run stopped by SIGTERM, and its resumption. The batches in flight are stopped by
    ending the driver's Ray job, not by cancelling them, which now and then made Ray abort
    the driver (exit 1 and its "Check failed" in place of exit 143; docs/scaling.md)."""
    data, run, args, process = _start_2000_in_batches_of_50(tmp_path, address)
    results = run / "results.jsonl"
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=300)
    first = len(results.read_text().splitlines())
    assert process.returncode == 143, err[-2000:]
    assert assay_lines(err)[-1] == (
        "terminated (SIGTERM): finished work is kept; run the same command again to resume"
    )
    assert "SIGTERM received" not in err and "Traceback" not in err
    assert json.loads((run / "run.json").read_text())["status"] == "cancelled"
    _finish(_bench(tmp_path, data, run, *args, address=address))
    ids = [json.loads(x)["id"] for x in results.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 2000 and first > 0


def _judge(tmp_path: Path, out: Path, *extra: str, address: dict[str, str] | None = None) -> str:
    from tests.judge.helpers import write_manifest, write_questions

    questions = write_questions(tmp_path / "questions.jsonl")
    manifest = write_manifest(tmp_path / "manifest.jsonl", [f"stub/t{i}" for i in range(6)])
    env = {**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / f"cache-{out.name}"), **(address or {})}
    command = [sys.executable, "-m", "assay", "judge", "run", "--questions", str(questions)]
    command += ["--outputs", str(manifest), "--judge", "stub/judge", "--judge", "stub/t0"]
    command += ["--mode", "both", "--judge-attempts", "2", "--out", str(out), *extra]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _archived(run: Path) -> list[dict[str, object]]:
    from assay.judge.archive import iter_archive

    rows = []
    for item in iter_archive(run):
        assert item.record is not None
        row = item.record.model_dump(mode="json", exclude={"created_at", "call"})
        rows.append({**row, "finish_reason": item.record.call and item.record.call.finish_reason})
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))


def test_a_judge_run_on_ray_archives_what_an_in_process_run_archives(
    tmp_path: Path, cluster: dict[str, str]
) -> None:
    _judge(tmp_path, tmp_path / "local")
    out = _judge(
        tmp_path, tmp_path / "ray", "--executor", "ray", "--ray-batch-size", "5", address=cluster
    )
    assert "judged" in out
    config = json.loads((tmp_path / "ray" / "run.json").read_text())["config"]
    assert (config["executor"], config["ray_batch_size"], config["ray_node_wait_s"]) == (
        "ray",
        5,
        30,
    )
    local, remote = _archived(tmp_path / "local"), _archived(tmp_path / "ray")
    assert len(remote) > 2 * 4 * 6  # every pair, and re-asks of the invalid ones
    assert any(r["attempt"] == 2 for r in remote)
    assert remote == local
    again = _judge(
        tmp_path,
        tmp_path / "ray",
        "--executor",
        "ray",
        "--ray-node-wait",
        "forever",
        address=cluster,
    )
    assert "0 attempts now, 0 model calls" in again
    config = json.loads((tmp_path / "ray" / "run.json").read_text())["config"]
    assert config["ray_node_wait_s"] is None  # wait for ever


def _generate(tmp_path: Path, out: Path, *extra: str, address: dict[str, str] | None = None) -> str:
    from tests.judge.helpers import write_questions

    questions = write_questions(tmp_path / "questions.jsonl")
    env = {**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / f"cache-{out.name}"), **(address or {})}
    command = [sys.executable, "-m", "assay", "generate", "--questions", str(questions)]
    command += ["--model", "stub/a", "--model", "stub/b", "--out", str(out), *extra]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _outputs(out: Path) -> dict[str, object]:
    entries = [json.loads(x) for x in (out / "manifest.jsonl").read_text().splitlines()]
    return {
        e["output_id"]: (
            {k: v for k, v in e.items() if k != "generated_at"},
            (out / e["path"]).read_text(),
        )
        for e in entries
    }


def test_generate_on_ray_writes_what_an_in_process_run_writes(
    tmp_path: Path, cluster: dict[str, str]
) -> None:
    _generate(tmp_path, tmp_path / "local")
    _generate(
        tmp_path, tmp_path / "ray", "--executor", "ray", "--ray-batch-size", "3", address=cluster
    )
    remote = _outputs(tmp_path / "ray")
    assert len(remote) == 2 * 4 and remote == _outputs(tmp_path / "local")
    # what served the replies is summed over the workers as an in-process run counts it
    served = _served(tmp_path / "ray")
    assert served["stub/a"]["model_names"] == {"stub/a": 4}
    assert served == _served(tmp_path / "local")
    again = _generate(tmp_path, tmp_path / "ray", "--executor", "ray", address=cluster)
    assert "generated 0 outputs (8 already there" in again
    assert _served(tmp_path / "ray") == served  # a rerun of finished work keeps the counts


def _served(run_dir: Path) -> dict[str, Any]:
    return dict(json.loads((run_dir / "run.json").read_text())["served"])


def test_a_ray_run_stopped_midway_keeps_what_served_its_written_batches(
    tmp_path: Path, cluster: dict[str, str]
) -> None:
    """One Ctrl-C stops a Ray run whose batches wait on model calls (asyncio's handler used to
    swallow the first until every batch was done), and the replies of the batches that came
    back are in run.json's ``served``, as an in-process run's are: one count per model call of
    the written results (the server answers 60 calls, then holds every other one)."""
    from tests.helpers.fault_server import HANG, OK, fault_server
    from tests.test_failed_calls import CLAIM_SUPPORTED

    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(200))
    run = tmp_path / "ray"
    script = [*[OK] * 60, HANG]
    options = fault_server(script, hang_s=20, reply_text=CLAIM_SUPPORTED, served=[("x-1", "fp")])
    with options as server:
        args = ["--executor", "ray", "--ray-batch-size", "10", "--no-cache"]
        args += ["--claim-check", "json", "--base-url", server.base_url, "--max-attempts", "1"]
        process = _bench(tmp_path, data, run, *args, address=cluster, verifier="openai/x")
        deadline = time.monotonic() + 300
        while (
            time.monotonic() < deadline
            and process.poll() is None
            and (len(server.requests) <= 60 or _line_count(run / "results.jsonl") == 0)
        ):
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)  # the first Ctrl-C stops it: it used not to
        try:
            _, err = process.communicate(timeout=120)
        finally:
            process.kill()  # (when it did not stop)
    log = json.loads((run / "run.json").read_text())
    assert log["status"] == "cancelled", err[-2000:]
    results = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    calls = sum(int(result["usage"]["calls"]) for result in results)
    assert 0 < calls <= 60
    assert log["served"]["openai/x"] == {
        "replies": calls,
        "model_names": {"x-1": calls},
        "system_fingerprints": {"fp": calls},
    }


def test_batches_shrink_towards_the_end_with_several_workers(tmp_path: Path) -> None:
    from assay.verify.benchmark import BenchmarkConfig
    from assay.verify.ray_batches import _batches

    config = BenchmarkConfig(
        data=tmp_path / "data.jsonl", pattern="entailment", out_dir=tmp_path, ray_batch_size=100
    )
    lines = [f"line {i}" for i in range(1000)]
    for workers in (1, 2, 4):
        batches = list(_batches(config, iter(lines), len(lines), workers))
        assert [line for _, chunk in batches for line in chunk] == lines  # in order, once
        sizes = [len(chunk) for _, chunk in batches]
        assert max(sizes) == 100 and sizes[0] == 100
        if workers == 1:
            assert sizes == [100] * 10  # one worker: nothing to even out
        else:  # the last ones shrink, not below an eighth of the size (but the remainder)
            assert sizes[-2] < 100 and min(sizes[:-1]) == 13
            assert sizes == sorted(sizes, reverse=True)


@pytest.fixture
def joined(cluster: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process joined to the test cluster (for ray_map itself), left after the test."""
    for key, value in cluster.items():
        monkeypatch.setenv(key, value)
    try:
        yield
    finally:
        ray.shutdown()


def test_an_assay_error_in_a_worker_comes_back_as_it_was_raised(joined: None) -> None:
    from assay.errors import InputError
    from assay.runs._ray import ray_map

    def refuse(batch: int, _: object) -> int:
        raise InputError("no such field", path="data.jsonl", line=batch, hint="fix the line")

    with pytest.raises(InputError) as caught:
        ray_map(refuse, [4], lambda _: None, context=None)
    # the message and hint of the error as raised in-process: no Ray frame, no traceback
    assert str(caught.value) == "data.jsonl:4: no such field\n  hint: fix the line"
    assert type(caught.value) is InputError


def test_an_unexpected_error_in_a_worker_is_its_type_and_message(joined: None) -> None:
    from assay.runs._ray import ray_map

    def crash(batch: int, _: object) -> int:
        raise ValueError(f"bad batch {batch}")

    with pytest.raises(ValueError) as caught:
        ray_map(crash, [7], lambda _: None, context=None)
    assert type(caught.value) is ValueError and str(caught.value) == "bad batch 7"
    # the worker's traceback stays in the chain that --debug prints
    assert "ray::" in str(caught.value.__cause__) and "\x1b[" not in str(caught.value)


def test_a_worker_that_dies_is_one_error_naming_the_batch(joined: None) -> None:
    from assay.errors import ExecutorError
    from assay.runs._ray import ray_map

    def die(batch: int, _: object) -> int:
        os._exit(3)  # a crash of the worker process: nothing comes back but its death

    with pytest.raises(ExecutorError) as caught:
        ray_map(
            die,
            [7],
            lambda _: None,
            context=None,
            describe=lambda b: f"records of batch {b}",
            max_retries=0,
        )
    # Ray's error names no node: the task noted its own as it started
    node = f"{ray.util.get_node_ip_address()} ({socket.gethostname()})"
    assert str(caught.value) == (
        f"Ray lost a batch (not retried) on Ray node {node}: the worker process running it "
        "died (it crashed, or was killed: by the system for lack of memory, or by a signal); "
        "the batch held records of batch 7\n  hint: what finished is kept: run the same "
        "command again to resume (if one record brings the worker down, a smaller "
        "--ray-batch-size narrows down which)"
    )
    assert caught.value.exit_code == 1  # the CLI's exit code: not bad input, work is kept


def test_a_run_ended_by_an_error_ends_the_ray_connection_assay_made_only(
    cluster: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batches still running when a run ends early are stopped by ending the Ray job of
    a connection assay made (Ray kills the job's workers); a connection the caller made is
    left to them, connected."""
    from assay.runs._ray import ray_map

    def crash(batch: int, _: object) -> int:
        if batch == 0:
            raise ValueError("bad batch")
        time.sleep(5)
        return batch

    for key, value in cluster.items():
        monkeypatch.setenv(key, value)
    try:
        with pytest.raises(ValueError):
            ray_map(crash, range(4), lambda _: None, context=None)
        assert not ray.is_initialized()
        ray.init(address=cluster["RAY_ADDRESS"], log_to_driver=False)
        with pytest.raises(ValueError):
            ray_map(crash, range(4), lambda _: None, context=None)
        assert ray.is_initialized()
    finally:
        ray.shutdown()


def test_a_batch_done_on_a_retry_counts_its_starts_and_leaves_no_note_behind(
    joined: None, tmp_path: Path
) -> None:
    """Each task notes its node and counts its start in the cluster's store (the driver
    reads them to name a lost batch and to stop a batch Ray would rerun for ever); a batch
    that finished, here on its second start, has its notes dropped with it."""
    from ray.experimental import internal_kv

    from assay.runs._ray import connect, ray_map

    starts = tmp_path / "starts"

    def die_the_first_time(batch: int, _: object) -> int:
        with starts.open("a") as noted:
            noted.write("x")
        if starts.read_text() == "x":
            os._exit(3)
        return batch * 2

    def notes() -> set[bytes]:  # the cluster's notes (a driver killed earlier leaves its own)
        return set(internal_kv._internal_kv_list("", namespace="assay-ray-where"))

    connect()
    before = notes()
    got: list[int] = []
    assert ray_map(die_the_first_time, [5], got.append, context=None) == 1
    assert got == [10] and starts.read_text() == "xx"
    assert notes() == before


def test_a_budget_the_user_set_for_ray_oom_retries_is_left_to_ray(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from assay.runs._ray import _StartWatch

    monkeypatch.delenv("RAY_task_oom_retries", raising=False)
    assert _StartWatch("run", 3).most == 4  # Ray's default, for ever: assay bounds it
    monkeypatch.setenv("RAY_task_oom_retries", "-1")
    assert _StartWatch("run", 3).most == 4
    monkeypatch.setenv("RAY_task_oom_retries", "5")
    assert _StartWatch("run", 3).most is None


def test_a_lost_batch_whose_node_ray_did_not_name_says_so() -> None:
    from assay.runs._ray import lost_batch

    error = lost_batch(ray.exceptions.WorkerCrashedError(), "records v0 to v9", 3, None)
    assert str(error).startswith(
        "Ray lost a batch after 3 retries on a node Ray did not name: the worker process"
    )


def test_a_lost_batch_of_judge_pairs_or_outputs_is_named_by_its_work() -> None:
    """What the error on a lost batch names for judge run and generate (bench: above), read
    from batches as the drivers build them."""
    from assay.json_safe import model_json
    from assay.judge.evalset import Sample
    from assay.judge.generate import _Job, _jobs_of
    from assay.judge.ray_batches import _pair_json, _pairs_of
    from assay.judge.run import _Work

    def sample(output_id: str) -> Sample:
        return Sample(
            question_id="Q1",
            prompt_variant="A",
            target_model="stub/t",
            output_id=output_id,
            output_text="text",
            prompt="Explain X.",
        )

    works = [_Work(sample(f"out-{i}"), 0, "cross_judge") for i in range(3)]
    pairs = [_pair_json(work, []) for work in works]
    assert _pairs_of(("{}", "{}", ["stub/j"], "2026-01-01", pairs)) == (
        "3 pairs, out-0 to out-2 (by output id)"
    )
    job = _Job.model_validate(
        {"question_id": "Q1", "variant": {"variant": "A", "prompt": "p"}, "model_index": 1}
    )
    assert _jobs_of(("{}", ["stub/a", "stub/b"], [model_json(job)])) == "1 output, Q1/A by stub/b"


def test_a_wrong_ray_address_is_refused_at_once_and_nothing_is_written(
    tmp_path: Path, cluster: dict[str, str]
) -> None:
    """Ray retries an address where no cluster answers for minutes; assay probes it first."""
    from tests.judge.helpers import write_questions

    questions = write_questions(tmp_path / "questions.jsonl")
    command = [sys.executable, "-m", "assay", "generate", "--questions", str(questions)]
    command += ["--model", "stub/a", "--out", str(tmp_path / "out"), "--executor", "ray"]
    command += ["--cache-path", str(tmp_path / "c.sqlite")]
    with socket.socket() as silent:  # takes connections (the kernel's backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        cases = {
            "127.0.0.1:1": "cannot connect (Connection refused)",
            f"127.0.0.1:{silent.getsockname()[1]}": "no answer within 5 s",
            "nonsense": "not HOST:PORT (or ray://HOST:PORT, auto, local)",
        }
        for address, problem in cases.items():
            env = {**os.environ, **cluster, "RAY_ADDRESS": address}
            started = time.monotonic()
            done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
            assert time.monotonic() - started < 60
            assert done.returncode == 2, done.stderr
            lines = done.stderr.splitlines()
            assert lines[0] == f"error: RAY_ADDRESS {address}: {problem}", done.stderr
            assert len(lines) == 2 and lines[1].startswith("  hint: set RAY_ADDRESS")
            assert not (tmp_path / "out").exists() and not (tmp_path / "c.sqlite").exists()


def test_a_temp_dir_too_deep_for_ray_sockets_is_one_clear_error(tmp_path: Path) -> None:
    """Before: "internal error: OSError: validate_socket_filename failed: ..."."""
    from tests.judge.helpers import write_questions

    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    questions = write_questions(tmp_path / "questions.jsonl")
    command = [sys.executable, "-m", "assay", "generate", "--questions", str(questions)]
    command += ["--model", "stub/a", "--out", str(tmp_path / "out"), "--executor", "ray"]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["RAY_TMPDIR"] = str(deep)
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    finally:
        stop_cluster(str(deep))
    # without Ray's own log lines
    lines = [line for line in done.stderr.splitlines() if "\tWARNING " not in line]
    assert done.returncode == 2, done.stderr
    assert lines[0].startswith(
        f"error: --executor ray: a local Ray cluster cannot keep its sockets under {deep}: "
    ), done.stderr
    assert "AF_UNIX path length" in lines[0] and "Traceback" not in done.stderr
    assert lines[1:] == ["  hint: set RAY_TMPDIR to a short directory (export RAY_TMPDIR=/tmp/ray)"]


def test_the_progress_line_on_ray_counts_failed_calls(
    tmp_path: Path, cluster: dict[str, str]
) -> None:
    from tests.helpers.fault_server import SERVER_ERROR, fault_server
    from tests.judge.helpers import write_manifest, write_questions
    from tests.test_progress_failures import failing_options, progress_lines

    questions = write_questions(tmp_path / "questions.jsonl")
    manifest = write_manifest(tmp_path / "manifest.jsonl", ["stub/t0"])
    env = {**os.environ, **cluster}
    assay = [sys.executable, "-m", "assay"]
    with fault_server([SERVER_ERROR]) as server:
        options = [*failing_options(server.base_url, tmp_path), "--executor", "ray"]
        generate = [*assay, "generate", "--questions", str(questions), "--out", str(tmp_path / "g")]
        generate += ["--model", "stub/a", "--model", "openai/m", *options]
        judge = [*assay, "judge", "run", "--questions", str(questions), "--outputs", str(manifest)]
        judge += ["--judge", "openai/m", "--out", str(tmp_path / "j"), *options]
        runs = [
            subprocess.run(c, capture_output=True, text=True, env=env, timeout=600)
            for c in (generate, judge)
        ]
    assert [run.returncode for run in runs] == [1, 1], runs[1].stderr
    assert progress_lines(runs[0].stderr, "generate (ray)")[-1] == (8, 8, 4)
    done, total, failed = progress_lines(runs[1].stderr, "judge (ray)")[-1]
    assert done == total == failed > 0
