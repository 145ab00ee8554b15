from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.model import (
    BackendError,
    CallFailure,
    ChatMessage,
    Completion,
    ErrorKind,
    GenerateConfig,
    JsonSchema,
    ModelOptions,
    ModelResult,
    get_model,
    system,
    user,
)
from assay.model.providers.stub import StubBackend, schema_instance

NO_CACHE = ModelOptions(cache=False, max_attempts=1)


def _generate(
    backend: StubBackend, prompt: str, config: GenerateConfig | None = None
) -> ModelResult:
    model = get_model("stub/x", NO_CACHE, backend=backend)
    return asyncio.run(model.generate([user(prompt)], config))


def _text(result: ModelResult) -> str:
    assert isinstance(result, Completion), result
    return result.text


def test_scripted_list_is_used_in_turn_then_cycles() -> None:
    backend = StubBackend("x", replies=["one", "two"])
    assert [_text(_generate(backend, "q")) for _ in range(3)] == ["one", "two", "one"]


def test_callable_sees_messages_and_config() -> None:
    def reply(messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random) -> str:
        return f"{messages[-1].content}:{config.max_tokens}"

    assert (
        _text(_generate(StubBackend("x", replies=reply), "hi", GenerateConfig(max_tokens=9)))
        == "hi:9"
    )


def test_reply_file_with_errors(tmp_path: Path) -> None:
    path = tmp_path / "replies.jsonl"
    path.write_text(
        json.dumps("first")
        + "\n"
        + json.dumps({"error": "bad_request", "message": "scripted failure"})
        + "\n"
    )
    backend = StubBackend(str(path))
    assert _text(_generate(backend, "q")) == "first"
    failure = _generate(backend, "q")
    assert isinstance(failure, CallFailure)
    assert failure.kind is ErrorKind.BAD_REQUEST
    assert failure.message == "scripted failure"


def test_missing_reply_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        StubBackend(str(tmp_path / "nope.jsonl"))


def test_default_mode_is_seeded_and_deterministic() -> None:
    backend = StubBackend("default")
    a = _text(_generate(backend, "same prompt"))
    b = _text(_generate(backend, "same prompt"))
    c = _text(_generate(backend, "same prompt", GenerateConfig(seed=99)))
    assert a == b
    assert a != c or a == c  # different seeds may coincide; determinism is the claim
    assert a.startswith("Stub reply")


def test_default_mode_fills_a_json_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "label": {"enum": ["supported", "unsupported"]},
            "score": {"type": "integer", "minimum": 0, "maximum": 2},
            "ids": {"type": "array", "items": {"type": "string"}},
        },
    }
    config = GenerateConfig(json_schema=JsonSchema(name="s", schema=schema))
    data = json.loads(_text(_generate(StubBackend(), "q", config)))
    assert data["label"] in {"supported", "unsupported"}
    assert data["score"] in {0, 1, 2}
    assert all(isinstance(i, str) for i in data["ids"])


def test_schema_instance_respects_bounds_over_many_seeds() -> None:
    schema = {"type": "integer", "minimum": 3, "maximum": 5}
    values = {schema_instance(schema, random.Random(seed)) for seed in range(50)}
    assert values == {3, 4, 5}


def test_task_tag_dispatches_to_a_responder_given_in_the_options() -> None:
    options = NO_CACHE.with_stub_responders({"unit_test": _tagged})
    model = get_model("stub/x", options)
    result = asyncio.run(model.generate([system("[assay:unit_test] be nice"), user("q")]))
    assert _text(result) == "tagged reply"
    untagged = asyncio.run(get_model("stub/x", NO_CACHE).generate([system("[assay:unit_test]")]))
    assert _text(untagged) != "tagged reply"


def _tagged(messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random) -> str:
    return "tagged reply"


def test_stop_sequences_and_logprobs() -> None:
    backend = StubBackend("x", replies=["alpha beta STOP gamma"])
    config = GenerateConfig(stop=("STOP",), logprobs=True, top_logprobs=2)
    result = _generate(backend, "q", config)
    assert isinstance(result, Completion)
    assert result.text == "alpha beta "
    assert result.logprobs is not None and len(result.logprobs) == 2
    assert len(result.logprobs[0].top) == 2


def test_backend_error_from_a_callable_becomes_a_failure_not_text() -> None:
    def fail(messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random) -> str:
        raise BackendError(ErrorKind.CONTEXT_LENGTH, "prompt too long")

    result = _generate(StubBackend("x", replies=fail), "q")
    assert isinstance(result, CallFailure)
    assert result.kind is ErrorKind.CONTEXT_LENGTH
