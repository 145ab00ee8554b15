"""The batch round trip against a real server: write requests, execute them as a batch, import,
rerun; the results must equal a live run against the same server (temperature 0, fixed seeds).

The batch is executed by tests/helpers/batch_runner.py against the llama_cpp.server the tests
start, writing the OpenAI batch output and error files that `assay batch import` reads. Both
runs reach the server through tests/helpers/reset_proxy.py, which makes its answers independent
of request order (a batch sends its requests in another order than a live run).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.judge.archive import load_records
from tests.conftest import REPO_ROOT
from tests.helpers.batch_runner import run_batch_file
from tests.helpers.reset_proxy import reset_proxy

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

QUESTIONS = REPO_ROOT / "examples" / "judge" / "questions.jsonl"
GROUNDED = REPO_ROOT / "examples" / "grounded_qa.jsonl"
BATCH_PENDING = 3


@pytest.fixture
def server(llama_server: str) -> Iterator[str]:
    with reset_proxy(llama_server) as base_url:
        yield base_url


def _server_root(base_url: str) -> str:
    return base_url.removesuffix("/v1")


def _common(base_url: str, cache: Path) -> list[str]:
    # json_object: the form llama-cpp-python's server takes a schema in (a batch file cannot
    # fall back the way a live call does)
    return [
        "--base-url",
        base_url,
        "--cache-path",
        str(cache),
        "--structured-output",
        "json_object",
        "--concurrency",
        "1",
    ]


def _rounds(argv: list[str], batch_dir: Path, base_url: str, *, most: int) -> int:
    """Run ``argv`` with --executor batch until it completes; each stop's files are executed
    against the server and imported. Returns how many batch rounds it took."""
    batch_argv = [*argv, "--executor", "batch", "--batch-dir", str(batch_dir)]
    done: set[Path] = set()
    for round_number in range(most + 1):
        code = main(batch_argv)
        if code == 0:
            return round_number
        assert code == BATCH_PENDING
        new = sorted(set(batch_dir.glob("input-*.jsonl")) - done)
        assert new, "exit 3 without a new batch input file"
        outputs = []
        for index, path in enumerate(new):
            output = batch_dir / f"output-{round_number}-{index}.jsonl"
            errors = batch_dir / f"errors-{round_number}-{index}.jsonl"
            run_batch_file(path, _server_root(base_url), output, errors)
            outputs += [output, errors]
        cache = argv[argv.index("--cache-path") + 1]
        imported = ["batch", "import", "--batch-dir", str(batch_dir), "--cache-path", cache]
        assert main([*imported, *map(str, outputs)]) == 0
        done.update(new)
    raise AssertionError(f"not complete after {most} rounds")


def _outputs(out_dir: Path) -> dict[tuple[str, str, str], str]:
    entries = [json.loads(line) for line in (out_dir / "manifest.jsonl").read_text().splitlines()]
    return {
        (e["question_id"], e["prompt_variant"], e["target_model"]): (
            out_dir / e["path"]
        ).read_text()
        for e in entries
    }


def test_generate_and_judge_round_trip_equal_a_live_run(server: str, tmp_path: Path) -> None:
    questions = tmp_path / "questions.jsonl"  # the first question: two variants, quick
    questions.write_text(QUESTIONS.read_text(encoding="utf-8").splitlines()[0] + "\n")
    gen = ["generate", "--questions", str(questions), "--model", "openai/smollm2"]
    gen += ["--max-tokens", "24"]
    live_common = _common(server, tmp_path / "live.sqlite")
    batch_common = _common(server, tmp_path / "batch.sqlite")
    assert main([*gen, "--out", str(tmp_path / "live-out"), *live_common]) == 0
    rounds = _rounds(
        [*gen, "--out", str(tmp_path / "batch-out"), *batch_common],
        tmp_path / "gen-batches",
        server,
        most=1,
    )
    assert rounds == 1  # generate needs one round
    assert _outputs(tmp_path / "batch-out") == _outputs(tmp_path / "live-out")

    # self-judging: the one judge judges its own outputs (2 calls)
    judge = ["judge", "run", "--questions", str(questions), "--judge", "openai/smollm2"]
    # the structure-only schema: llama.cpp compiles a grammar per request, and the exact
    # per-sample schema makes that slow on a 2-core machine
    judge += ["--mode", "self", "--judge-max-tokens", "96", "--constrained", "schema"]
    live_judge = [*judge, "--outputs", str(tmp_path / "live-out")]
    assert main([*live_judge, "--out", str(tmp_path / "live-judge"), *live_common]) in (0, 1)
    batch_judge = [*judge, "--outputs", str(tmp_path / "batch-out")]
    rounds = _rounds(
        [*batch_judge, "--out", str(tmp_path / "batch-judge"), *batch_common],
        tmp_path / "judge-batches",
        server,
        most=1,
    )
    assert rounds == 1  # one ask per pair: one round
    assert _judgments(tmp_path / "batch-judge") == _judgments(tmp_path / "live-judge")


def _judgments(run_dir: Path) -> dict[tuple[str, ...], tuple[Any, ...]]:
    records = load_records(run_dir)
    assert records
    return {
        (*r.work_key, str(r.attempt)): (r.raw_reply, r.valid, r.flags, r.call_failure)
        for r in records
    }


def test_bench_round_trip_equals_a_live_run(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = ["bench", "run", "--data", str(GROUNDED), "--pattern", "entailment"]
    bench += ["--generator", "openai/smollm2", "--verifier", "openai/smollm2"]
    bench += ["--max_examples", "3", "--temperature", "0", "--max-tokens", "48"]
    bench += ["--no-progress", "--no-report", "--n-resamples", "50"]
    live = [*bench, "--out_dir", str(tmp_path / "live"), *_common(server, tmp_path / "l")]
    assert main(live) in (0, 1)
    batch = [*bench, "--out_dir", str(tmp_path / "batch"), *_common(server, tmp_path / "b")]
    rounds = _rounds(batch, tmp_path / "batches", server, most=6)
    # answer, claim checks, [checks against cited snippets], [revision, its checks, ...]
    assert 2 <= rounds <= 6
    assert _results(tmp_path / "batch") == _results(tmp_path / "live")
    printed = capsys.readouterr().out
    # the first session only wrote requests: nothing ran yet; the last one ran all three
    assert "3 examples (0 run now, 0 already done, 3 waiting on batch answers)" in printed
    assert "3 examples (3 run now, 0 already done)" in printed


def _results(run_dir: Path) -> dict[str, dict[str, Any]]:
    lines = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert len({line["id"] for line in lines}) == len(lines) == 3  # no duplicate, none missing
    return {line["id"]: _without_timings(line) for line in lines}


def _without_timings(value: Any) -> Any:
    """``value`` without what differs by construction: usage (calls, cache hits) and times."""
    if isinstance(value, dict):
        return {
            key: _without_timings(item)
            for key, item in value.items()
            if key != "usage" and not key.endswith(("_ms", "_s"))
        }
    if isinstance(value, list):
        return [_without_timings(item) for item in value]
    return value
