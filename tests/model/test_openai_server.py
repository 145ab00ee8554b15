"""The openai provider against a real OpenAI-compatible server (llama-cpp-python's)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import pytest

from assay.model import (
    CallFailure,
    Completion,
    GenerateConfig,
    JsonSchema,
    Model,
    ModelOptions,
    ModelResult,
    get_model,
    user,
)

pytestmark = pytest.mark.slow

PERSON = JsonSchema(
    name="person",
    schema={
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        "required": ["name", "age"],
    },
)


def _model(base_url: str, **options: object) -> Model:
    return get_model(
        "openai/smollm2", ModelOptions.model_validate({"base_url": base_url, **options})
    )


def _run(model: Model, prompt: str, configs: Sequence[GenerateConfig]) -> list[ModelResult]:
    async def go() -> list[ModelResult]:
        try:
            return [await model.generate([user(prompt)], c) for c in configs]
        finally:
            await model.aclose()

    return asyncio.run(go())


def _ok(result: ModelResult) -> Completion:
    assert not isinstance(result, CallFailure), result
    return result


def test_plain_chat(llama_server: str) -> None:
    (result,) = _run(
        _model(llama_server, cache=False), "What is 2+2?", [GenerateConfig(max_tokens=16)]
    )
    reply = _ok(result)
    assert reply.text.strip()
    assert reply.prompt_tokens > 0 and reply.completion_tokens > 0
    assert reply.finish_reason in {"stop", "length"}


def test_seeded_sampling_is_deterministic(llama_server: str) -> None:
    config = GenerateConfig(temperature=0.9, seed=7, max_tokens=24)
    # The server reuses the longest cached prefix of the previous prompt, and a different split
    # between cached and evaluated tokens changes the logits in the last bits, enough to change
    # a sample at temperature 0.9. A first call puts this prompt in the cache, so the two
    # compared calls evaluate the same tokens the same way.
    _warm, a, b = _run(
        _model(llama_server, cache=False), "Tell me a story.", [config, config, config]
    )
    assert _ok(a).text == _ok(b).text


def test_logprobs(llama_server: str) -> None:
    config = GenerateConfig(max_tokens=4, logprobs=True, top_logprobs=3)
    (result,) = _run(_model(llama_server, cache=False), "Is water wet?", [config])
    logprobs = _ok(result).logprobs
    assert logprobs is not None and len(logprobs) >= 1
    first = logprobs[0]
    assert first.logprob <= 0.0
    assert 1 <= len(first.top) <= 3


def test_json_schema_constrained_output_parses_and_matches(llama_server: str) -> None:
    config = GenerateConfig(max_tokens=64, json_schema=PERSON)
    (result,) = _run(_model(llama_server, cache=False), "Describe a person as JSON.", [config])
    data = json.loads(_ok(result).text)
    assert isinstance(data["name"], str)
    assert isinstance(data["age"], int)


def test_cached_rerun_makes_no_request(llama_server: str, tmp_path: object) -> None:
    options = {"cache_path": f"{tmp_path}/cache.sqlite"}
    config = GenerateConfig(max_tokens=8)
    first = _model(llama_server, **options)
    _run(first, "Name a colour.", [config])
    second = _model(llama_server, **options)
    (again,) = _run(second, "Name a colour.", [config])
    assert _ok(again).cached
    assert second.usage.calls == 0 and second.usage.cache_hits == 1


def test_the_request_body_sent_to_a_real_server(llama_server: str) -> None:
    """What the provider sends, read at the wire. llama-cpp-python's server refuses OpenAI's
    json_schema format (HTTP 500, "type must be 'text' or 'json_object'"), so the provider's
    fallback to json_object-with-schema runs against the real server: learned once, kept."""
    from tests.helpers.recording_proxy import recording_proxy

    config = GenerateConfig(
        temperature=0.0, max_tokens=96, seed=11, logprobs=True, top_logprobs=3, json_schema=PERSON
    )
    with recording_proxy(llama_server) as proxy:
        model = _model(proxy.base_url, cache=False)  # structured_output "auto"
        first, second = _run(model, "Describe a person as JSON.", [config, config])
    formats = [body["response_format"] for body in proxy.bodies]
    assert formats == [
        {
            "type": "json_schema",
            "json_schema": {"name": "person", "schema": PERSON.schema_, "strict": PERSON.strict},
        },
        {"type": "json_object", "schema": PERSON.schema_},
        {"type": "json_object", "schema": PERSON.schema_},
    ]
    for body in proxy.bodies:
        assert body["model"] == "smollm2" and body["max_tokens"] == 96 and body["seed"] == 11
        assert body["temperature"] == 0.0 and body["top_p"] == 1.0
        assert body["logprobs"] is True and body["top_logprobs"] == 3
        assert body["messages"] == [{"role": "user", "content": "Describe a person as JSON."}]
    for result in (first, second):
        reply = _ok(result)
        # llama-cpp-python's server lists the sampled token beside the 3 asked for
        assert reply.logprobs and 3 <= len(reply.logprobs[0].top) <= 4
        data = json.loads(reply.text)  # the real server enforced the schema
        assert isinstance(data["name"], str) and isinstance(data["age"], int)


def test_json_schema_pinned_on_a_server_without_it_is_a_call_failure(llama_server: str) -> None:
    """No silent downgrade when the user pins the format: the server's refusal is the reason."""
    from tests.helpers.recording_proxy import recording_proxy

    config = GenerateConfig(max_tokens=8, json_schema=PERSON)
    with recording_proxy(llama_server) as proxy:
        model = _model(proxy.base_url, cache=False, structured_output="json_schema", max_attempts=1)
        (result,) = _run(model, "Describe a person as JSON.", [config])
    assert isinstance(result, CallFailure) and "json_object" in result.message
    assert [body["response_format"]["type"] for body in proxy.bodies] == ["json_schema"]


def test_structured_output_off_sends_no_response_format(llama_server: str) -> None:
    from tests.helpers.recording_proxy import recording_proxy

    with recording_proxy(llama_server) as proxy:
        model = _model(proxy.base_url, cache=False, structured_output="off")
        _run(model, "Say hi.", [GenerateConfig(max_tokens=8, json_schema=PERSON)])
    (body,) = proxy.bodies
    assert "response_format" not in body and "logprobs" not in body
