"""Batch files: the writer, deferral in the model layer, and the import of output files.

The openai backend is real; its server is never reached because a batch run sends nothing.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.model import (
    IN_PROCESS_PROVIDERS,
    PROVIDERS,
    BatchWriter,
    CallFailure,
    Completion,
    ErrorKind,
    GenerateConfig,
    Model,
    ModelOptions,
    ModelResult,
    ResponseCache,
    batch_scope,
    create_backend,
    get_model,
    import_batch_output,
    input_files,
    is_deferred,
    requested_ids,
    runs_in_process,
    user,
)

UNREACHABLE = "http://127.0.0.1:9/v1"  # the discard port: nothing answers there


def _model(tmp_path: Path, name: str = "openai/m") -> Model:
    options = ModelOptions(
        base_url=UNREACHABLE, cache_path=tmp_path / "cache.sqlite", batch_dir=tmp_path / "b"
    )
    return get_model(name, options, cache=ResponseCache(tmp_path / "cache.sqlite"))


def _ask(model: Model, prompts: list[str]) -> tuple[list[ModelResult], int]:
    async def go() -> tuple[list[ModelResult], int]:
        with batch_scope() as scope:
            results = [
                await model.generate([user(p)], GenerateConfig(max_tokens=8)) for p in prompts
            ]
        return results, scope.deferred

    return asyncio.run(go())


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_cache_miss_is_written_not_sent_and_its_id_is_the_cache_key(tmp_path: Path) -> None:
    model = _model(tmp_path)
    assert model.batch is not None
    results, deferred = _ask(model, ["one", "two", "one"])
    assert deferred == 3 and all(is_deferred(r) for r in results)
    assert model.usage.calls == 0  # nothing was sent
    (path,) = model.batch.close().files
    lines = _lines(path)
    assert len(lines) == 2  # the repeated call is written once
    config = GenerateConfig(max_tokens=8).for_sample(0)
    key = model._key([user("one")], config, 0)
    assert lines[0]["custom_id"] == key
    assert lines[0]["method"] == "POST" and lines[0]["url"] == "/v1/chat/completions"
    assert lines[0]["body"]["messages"] == [{"role": "user", "content": "one"}]
    assert lines[0]["body"]["model"] == "m" and lines[0]["body"]["seed"] == 0


def test_in_process_models_run_live_in_a_batch_session(tmp_path: Path) -> None:
    model = _model(tmp_path, "stub/demo")
    results, deferred = _ask(model, ["hello"])
    assert deferred == 0 and isinstance(results[0], Completion)
    assert model.batch is not None and model.batch.close().requests == 0


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_provider_has_a_batch_form_exactly_when_it_does_not_run_in_process(
    provider: str,
) -> None:
    """IN_PROCESS_PROVIDERS (what prices count at zero) and the backends' batch form agree."""
    name = "llamacpp/smollm2" if provider == "llamacpp" else f"{provider}/m"
    backend = create_backend(name, ModelOptions(base_url=UNREACHABLE, api_key="sk-test"))
    request = backend.batch_request([user("hi")], GenerateConfig(max_tokens=8).for_sample(0))
    assert (request is None) == runs_in_process(name) == (provider in IN_PROCESS_PROVIDERS)


@pytest.mark.parametrize(("limit", "expected_files"), [({"max_requests": 2}, 3), ({}, 1)])
def test_files_are_split_at_the_request_limit(
    tmp_path: Path, limit: dict[str, int], expected_files: int
) -> None:
    writer = BatchWriter(tmp_path, **limit)
    for index in range(5):
        writer.add(f"id-{index}", {"messages": [], "n": index})
    written = writer.close()
    assert written.requests == 5 and len(written.files) == expected_files
    assert sorted(requested_ids(written.files)) == [f"id-{i}" for i in range(5)]
    assert input_files(tmp_path) == written.files


def test_files_are_split_before_the_byte_limit(tmp_path: Path) -> None:
    writer = BatchWriter(tmp_path, max_bytes=400)
    for index in range(6):
        writer.add(f"id-{index}", {"text": "x" * 100})
    written = writer.close()
    assert len(written.files) == 3  # two ~172-byte lines fit under 400 bytes, three do not
    assert all(path.stat().st_size <= 400 for path in written.files)


def _reply(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
    }


def _ok(custom_id: str, text: str) -> str:
    response = {"status_code": 200, "request_id": "r", "body": _reply(text)}
    return json.dumps({"id": "b", "custom_id": custom_id, "response": response, "error": None})


def test_import_stores_answers_types_errors_and_reports_bad_lines(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    output = tmp_path / "output.jsonl"
    errors = tmp_path / "errors.jsonl"
    bad_body = {"status_code": 200, "request_id": "r", "body": {"choices": []}}
    output.write_text(
        "\n".join(
            [
                _ok("a", "answer a"),
                _ok("ghost", "nobody asked"),  # 2: unknown id
                _ok("a", "again"),  # 3: duplicate
                "{not json",  # 4
                json.dumps({"custom_id": "b", "response": bad_body, "error": None}),  # 5
                _ok("c", "answer c"),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    http_400 = {"status_code": 400, "request_id": "r", "body": {"error": {"message": "bad"}}}
    errors.write_text(
        json.dumps({"custom_id": "d", "response": http_400, "error": None})
        + "\n"
        + json.dumps(
            {
                "custom_id": "e",
                "response": None,
                "error": {"code": "batch_expired", "message": "late"},
            }
        )
        + "\n",
        encoding="utf-8",
    )
    report = import_batch_output(cache, [output, errors], {"a", "b", "c", "d", "e"})
    assert (report.answers, report.failures) == (2, 2)
    assert [p.split(": ", 1)[0] for p in report.problems] == [f"{output}:{n}" for n in (2, 3, 4, 5)]
    assert "unknown custom_id 'ghost'" in report.problems[0]
    assert f"already answered at {output}:1" in report.problems[1]
    assert "does not parse" in report.problems[3]
    answer = cache.get("a")
    assert answer is not None and answer.text == "answer a" and answer.prompt_tokens == 5
    assert cache.get("b") is None  # skipped: the next run asks again
    failure = cache.take_failure("d")
    assert failure is not None and failure.kind is ErrorKind.BAD_REQUEST
    assert "HTTP 400: bad" in failure.message
    expired = cache.take_failure("e")
    assert expired is not None and expired.kind is ErrorKind.TIMEOUT
    assert cache.take_failure("d") is None  # delivered once


def test_an_imported_answer_ends_the_deferral_and_an_error_is_delivered_once(
    tmp_path: Path,
) -> None:
    model = _model(tmp_path)
    _ask(model, ["one", "two"])
    assert model.batch is not None and model.cache is not None
    (path,) = model.batch.close().files
    first, second = (line["custom_id"] for line in _lines(path))
    output = tmp_path / "out.jsonl"
    error = {"code": "server_error", "message": "overloaded"}
    output.write_text(
        _ok(first, "the answer")
        + "\n"
        + json.dumps({"custom_id": second, "response": None, "error": error})
        + "\n"
    )
    import_batch_output(model.cache, [output], requested_ids([path]))
    again = _model(tmp_path)
    results, deferred = _ask(again, ["one", "two"])
    assert isinstance(results[0], Completion) and results[0].text == "the answer"
    assert isinstance(results[1], CallFailure) and results[1].kind is ErrorKind.SERVER_ERROR
    assert deferred == 0
    _, deferred = _ask(_model(tmp_path), ["one", "two"])
    assert deferred == 1  # the failed call is written again: the batch form of a retry


def test_cli_refuses_batch_without_a_directory_or_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["generate", "--questions", "examples/judge/questions.jsonl", "--model", "openai/m"]
    base += ["--out", str(tmp_path / "out"), "--executor", "batch"]
    assert main(base) == 2
    assert "--executor batch needs --batch-dir" in capsys.readouterr().err
    assert main([*base, "--batch-dir", str(tmp_path / "b"), "--no-cache"]) == 2
    assert "needs the response cache" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_cli_import_names_each_skipped_line_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    writer = BatchWriter(tmp_path / "b")
    writer.add("known", {"messages": []})
    writer.close()
    output = tmp_path / "b" / "out.jsonl"
    output.write_text(_ok("known", "yes") + "\n" + _ok("other", "no") + "\n")
    cache = ["--cache-path", str(tmp_path / "c.sqlite")]
    assert main(["batch", "import", str(output), *cache]) == 1
    captured = capsys.readouterr()
    assert "imported 1 answer(s) and 0 error(s)" in captured.out
    assert f"{output}:2: unknown custom_id 'other'" in captured.err


def test_each_batch_session_writes_a_new_file_set_and_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = ["generate", "--questions", "examples/judge/questions.jsonl", "--model", "openai/m"]
    command += ["--base-url", UNREACHABLE, "--out", str(tmp_path / "out")]
    command += ["--cache-path", str(tmp_path / "c.sqlite"), "--executor", "batch"]
    command += ["--batch-dir", str(tmp_path / "b")]
    assert main(command) == 3
    assert "8 output(s) wait on batch answers; wrote 8 request(s)" in capsys.readouterr().out
    assert main(command) == 3  # nothing imported: the same requests, in a new file
    first, second = input_files(tmp_path / "b")
    assert requested_ids([first]) == requested_ids([second]) and len(requested_ids([first])) == 8
    manifest = tmp_path / "out" / "manifest.jsonl"
    assert not manifest.exists() or manifest.read_text() == ""  # nothing written for them
    assert not (tmp_path / "out" / "generation_failures.jsonl").read_text()
