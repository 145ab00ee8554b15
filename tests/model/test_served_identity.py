"""What served each reply: the ``model`` and ``system_fingerprint`` an OpenAI-compatible server
reports, kept per completion (live, cached, and imported from a batch output file) and counted
per model. The servers are real: a fault-injecting loopback server that changes what it says
served its replies, and llama-cpp-python's, which sends no fingerprint."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from assay.model import (
    Completion,
    GenerateConfig,
    Model,
    ModelOptions,
    ModelResult,
    ResponseCache,
    batch_scope,
    get_model,
    import_batch_output,
    requested_ids,
    user,
)
from assay.redact import REDACTED
from tests.helpers.fault_server import NUMBER_FINGERPRINT, OK, chat_reply, fault_server

SERVED = [("gpt-test-0613", "fp_first"), ("gpt-test-1106", "fp_second")]


def _model(base_url: str, cache: Path | None, **options: object) -> Model:
    settings: dict[str, object] = {"base_url": base_url, "max_attempts": 1, **options}
    if cache is None:
        settings["cache"] = False
    else:
        settings["cache_path"] = cache
    return get_model("openai/gpt-test", ModelOptions.model_validate(settings))


def _ask(model: Model, prompts: list[str]) -> list[ModelResult]:
    async def go() -> list[ModelResult]:
        try:
            return [await model.generate([user(p)], GenerateConfig(max_tokens=8)) for p in prompts]
        finally:
            await model.aclose()

    return asyncio.run(go())


def _completions(results: list[ModelResult]) -> list[Completion]:
    assert all(isinstance(r, Completion) for r in results), results
    return [r for r in results if isinstance(r, Completion)]


def test_each_reply_keeps_its_fingerprint_and_the_usage_counts_them(tmp_path: Path) -> None:
    with fault_server([OK], served=SERVED, served_changes_after=3) as server:
        model = _model(server.base_url, tmp_path / "cache.sqlite")
        replies = _completions(_ask(model, [f"prompt {i}" for i in range(5)]))
    assert [r.system_fingerprint for r in replies] == ["fp_first"] * 3 + ["fp_second"] * 2
    assert [r.model for r in replies] == ["gpt-test-0613"] * 3 + ["gpt-test-1106"] * 2
    usage = model.usage.summary()
    assert usage["served_replies"] == 5
    assert usage["served_model_names"] == {"gpt-test-0613": 3, "gpt-test-1106": 2}
    assert usage["system_fingerprints"] == {"fp_first": 3, "fp_second": 2}


def test_a_cached_reply_counts_as_what_first_served_it(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    with fault_server([OK], served=SERVED, served_changes_after=2) as server:
        _ask(_model(server.base_url, cache), ["one", "two", "three"])
        later = _model(server.base_url, cache)
        replayed = _completions(_ask(later, ["one", "two", "three"]))
        assert server.replies_served == 3  # the second model asked nothing
    assert all(r.cached for r in replayed)
    assert later.usage.summary()["system_fingerprints"] == {"fp_first": 2, "fp_second": 1}


def test_a_reply_without_a_fingerprint_is_counted_as_a_reply_only(tmp_path: Path) -> None:
    with fault_server([OK], served=[("gpt-test", "")]) as server:
        model = _model(server.base_url, None)
        (reply,) = _completions(_ask(model, ["hi"]))
    assert reply.system_fingerprint == ""
    usage = model.usage.summary()
    assert (usage["served_replies"], usage["system_fingerprints"]) == (1, {})


def test_a_fingerprint_that_is_not_a_string_is_a_malformed_reply(tmp_path: Path) -> None:
    # a reply of the wrong shape is retried, as for any other field assay keeps
    with fault_server([NUMBER_FINGERPRINT]) as server:
        (failure,) = _ask(_model(server.base_url, None), ["hi"])
    assert not isinstance(failure, Completion)
    assert "system_fingerprint" in failure.message


def test_a_key_the_server_echoes_in_what_served_the_reply_is_masked() -> None:
    # what a server names itself by goes into run logs: a secret in it must not
    secret = "sk-test-ECHOED-0123456789abcdef"
    with fault_server([OK], served=[(f"model {secret}", f"fp-{secret}")]) as server:
        (reply,) = _completions(_ask(_model(server.base_url, None, api_key=secret), ["hi"]))
    assert secret not in reply.model + reply.system_fingerprint
    assert reply.system_fingerprint == f"fp-{REDACTED}"


def test_a_cache_entry_written_before_fingerprints_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    ResponseCache(path).close()  # the table as the cache makes it
    old_entry = {
        "text": "an old reply",
        "finish_reason": "stop",
        "prompt_tokens": 3,
        "completion_tokens": 2,
        "latency_s": 0.1,
        "logprobs": None,
        "model": "gpt-test-0613",
        "cached": False,
        "sample_index": 0,
    }
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO responses VALUES (?, ?)", ("old-key", json.dumps(old_entry)))
    loaded = ResponseCache(path).get("old-key")
    assert loaded is not None and loaded.text == "an old reply"
    assert (loaded.model, loaded.system_fingerprint) == ("gpt-test-0613", "")


def test_a_batch_output_line_keeps_its_fingerprint_through_import_and_replay(
    tmp_path: Path,
) -> None:
    cache_path = tmp_path / "cache.sqlite"
    options = ModelOptions(
        base_url="http://127.0.0.1:9/v1", cache_path=cache_path, batch_dir=tmp_path / "batch"
    )

    def batch_model() -> Model:
        return get_model("openai/gpt-test", options, cache=ResponseCache(cache_path))

    async def ask(model: Model) -> list[ModelResult]:
        with batch_scope():
            return [await model.generate([user(p)], GenerateConfig()) for p in ("one", "two")]

    writer = batch_model()
    asyncio.run(ask(writer))
    assert writer.batch is not None and writer.cache is not None
    (requests,) = writer.batch.close().files
    ids = [json.loads(line)["custom_id"] for line in requests.read_text().splitlines()]
    output = tmp_path / "output.jsonl"
    lines = []
    for custom_id, fingerprint in zip(ids, ["fp_batch_a", "fp_batch_b"], strict=True):
        body = {**chat_reply("from the batch"), "model": "gpt-test-0613"}
        body["system_fingerprint"] = fingerprint
        response = {"status_code": 200, "request_id": "r", "body": body}
        lines.append(json.dumps({"id": "b", "custom_id": custom_id, "response": response}))
    output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = import_batch_output(writer.cache, [output], requested_ids([requests]))
    assert report.answers == 2 and not report.problems

    reader = batch_model()
    replies = _completions(asyncio.run(ask(reader)))
    assert [r.system_fingerprint for r in replies] == ["fp_batch_a", "fp_batch_b"]
    assert reader.usage.summary()["system_fingerprints"] == {"fp_batch_a": 1, "fp_batch_b": 1}


@pytest.mark.slow
def test_llama_cpp_server_reports_a_model_name_and_no_fingerprint(llama_server: str) -> None:
    model = _model(llama_server, None)
    (reply,) = _completions(_ask(model, ["Say hi."]))
    assert reply.model  # llama-cpp-python names the model it served
    assert reply.system_fingerprint == ""
    usage = model.usage.summary()
    assert usage["served_replies"] == 1 and usage["system_fingerprints"] == {}
