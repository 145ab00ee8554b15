"""Retries, timeouts and failures of the openai provider against a fault-injecting server."""

from __future__ import annotations

import asyncio
import json
import random
import time

import pytest

from assay.cli import main
from assay.model import (
    CallFailure,
    Completion,
    ErrorKind,
    GenerateConfig,
    ModelOptions,
    RetryPolicy,
    get_model,
    user,
)
from assay.model.providers.openai import OpenAIBackend
from assay.redact import REDACTED
from tests.helpers.fault_server import (
    BAD_REQUEST,
    ECHO_KEY_ERROR,
    ECHO_KEY_REPLY,
    ERROR_OBJECT,
    HANG,
    JSON_ARRAY,
    MALFORMED,
    MALFORMED_200,
    NUMBER_CONTENT,
    OK,
    RATE_LIMITED,
    RESET,
    SERVER_ERROR,
    UNAUTHORIZED,
    FaultServer,
    fault_server,
)


def _ask(server: FaultServer, **options: object) -> Completion | CallFailure:
    settings = {"cache": False, "base_url": server.base_url, "max_attempts": 4, **options}
    model = get_model("openai/test", ModelOptions.model_validate(settings))
    model.retry = RetryPolicy(
        max_attempts=model.retry.max_attempts,
        initial_delay_s=0.01,
        max_retry_after_s=model.retry.max_retry_after_s,
    )

    async def run() -> Completion | CallFailure:
        try:
            return await model.generate([user("hi")], GenerateConfig(max_tokens=5))
        finally:
            await model.aclose()

    return asyncio.run(run())


def test_429_is_retried_after_the_servers_retry_after() -> None:
    with fault_server([RATE_LIMITED, OK], retry_after_s=1) as server:
        result = _ask(server)
        assert isinstance(result, Completion)
        assert result.text == "fixed reply"
        (first, _), (second, _) = server.requests
        assert second - first >= 0.95  # Retry-After: 1 was honoured, not the 10 ms backoff


def test_500_then_success() -> None:
    with fault_server([SERVER_ERROR, SERVER_ERROR, OK]) as server:
        result = _ask(server)
        assert isinstance(result, Completion)
        assert len(server.requests) == 3


def test_persistent_500_is_a_typed_failure_after_bounded_attempts() -> None:
    with fault_server([SERVER_ERROR]) as server:
        result = _ask(server, max_attempts=3)
        assert isinstance(result, CallFailure)
        assert result.kind is ErrorKind.SERVER_ERROR
        assert result.attempts == 3
        assert len(server.requests) == 3


def test_hang_times_out_then_recovers() -> None:
    with fault_server([HANG, OK], hang_s=3.0) as server:
        result = _ask(server, request_timeout_s=0.5)
        assert isinstance(result, Completion)
        assert len(server.requests) == 2


def test_hang_every_time_is_a_timeout_failure() -> None:
    with fault_server([HANG], hang_s=2.0) as server:
        result = _ask(server, request_timeout_s=0.3, max_attempts=2)
        assert isinstance(result, CallFailure)
        assert result.kind is ErrorKind.TIMEOUT


def test_malformed_body_is_retried_and_reported() -> None:
    with fault_server([MALFORMED]) as server:
        result = _ask(server, max_attempts=2)
        assert isinstance(result, CallFailure)
        assert result.kind is ErrorKind.MALFORMED_RESPONSE
        assert len(server.requests) == 2
    with fault_server([MALFORMED, OK]) as server:
        assert isinstance(_ask(server), Completion)


def test_connection_reset_is_retried() -> None:
    with fault_server([RESET, OK]) as server:
        result = _ask(server)
        assert isinstance(result, Completion)
    with fault_server([RESET]) as server:
        result = _ask(server, max_attempts=2)
        assert isinstance(result, CallFailure)
        assert result.kind is ErrorKind.CONNECTION


def test_bad_request_is_not_retried() -> None:
    with fault_server([BAD_REQUEST, OK]) as server:
        result = _ask(server)
        assert isinstance(result, CallFailure)
        assert result.kind is ErrorKind.BAD_REQUEST
        assert len(server.requests) == 1


def test_unreachable_server_is_a_connection_failure() -> None:
    from tests.helpers.servers import free_port

    settings = ModelOptions(
        cache=False, base_url=f"http://127.0.0.1:{free_port()}/v1", max_attempts=2
    )
    model = get_model("openai/test", settings)
    model.retry = type(model.retry)(max_attempts=2, initial_delay_s=0.01)
    result = asyncio.run(model.generate([user("hi")]))
    assert isinstance(result, CallFailure)
    assert result.kind is ErrorKind.CONNECTION
    assert "cannot reach" in result.message


def test_api_key_never_appears_in_failures_or_settings() -> None:
    secret = "sk-test-SECRET-0123456789"
    with fault_server([SERVER_ERROR]) as server:
        result = _ask(server, max_attempts=1, api_key=secret)
        assert isinstance(result, CallFailure)
        assert secret not in result.model_dump_json()
    options = ModelOptions(api_key=secret)
    assert secret not in repr(options)
    assert secret not in options.model_dump_json()


@pytest.mark.parametrize("shape", [*MALFORMED_200, JSON_ARRAY])
def test_malformed_200_reply_is_a_retried_failure_with_a_cause(shape: str) -> None:
    with fault_server([shape]) as server:
        result = _ask(server, max_attempts=2)
        assert isinstance(result, CallFailure)
        assert result.kind is ErrorKind.MALFORMED_RESPONSE
        assert result.message.strip()
        assert len(server.requests) == 2  # retried
    with fault_server([shape, OK]) as server:
        assert isinstance(_ask(server), Completion)


def test_non_string_content_names_the_type() -> None:
    with fault_server([NUMBER_CONTENT]) as server:
        result = _ask(server, max_attempts=1)
        assert isinstance(result, CallFailure)
        assert "not a string but int" in result.message
    with fault_server([ERROR_OBJECT]) as server:
        result = _ask(server, max_attempts=1)
        assert isinstance(result, CallFailure)
        assert "model overloaded" in result.message


def test_retry_after_is_capped() -> None:
    with fault_server([RATE_LIMITED, OK], retry_after_s=3600) as server:
        started = time.monotonic()
        result = _ask(server, max_retry_after_s=0.3)
        assert isinstance(result, Completion)
        assert time.monotonic() - started < 30
        (first, _), (second, _) = server.requests
        assert 0.25 <= second - first < 30


def test_default_retry_after_cap_is_120_seconds() -> None:
    policy = RetryPolicy()
    assert policy.delay(1, 3600.0, random.Random(0)) == 120.0
    assert policy.delay(1, 7.0, random.Random(0)) == 7.0
    assert RetryPolicy(max_retry_after_s=5.0).delay(1, 3600.0, random.Random(0)) == 5.0


def test_connection_reset_has_a_cause() -> None:
    with fault_server([RESET]) as server:
        result = _ask(server, max_attempts=1)
        assert isinstance(result, CallFailure)
        cause = result.message.split(": ", 1)[1]
        assert cause.strip()
        assert "reset" in cause.lower()


@pytest.mark.parametrize("variable", ["OPENAI_API_KEY", "TEAM_KEY", None])
def test_a_refused_key_names_the_variable_it_was_read_from(
    variable: str | None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = "sk-test-REFUSED-0123456789"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    extra = []
    if variable is not None:
        monkeypatch.setenv(variable, secret)
        extra = ["--api-key-env", variable] if variable != "OPENAI_API_KEY" else []
    with fault_server([UNAUTHORIZED]) as server:
        argv = ["ping", "openai/test", "--base-url", server.base_url, "--no-cache", *extra]
        assert main(argv) == 2
    err = capsys.readouterr().err
    assert "HTTP 401: the server refused the API key" in err and secret not in err
    if variable is None:
        assert "no key was sent: OPENAI_API_KEY is not set" in err
    else:
        assert f"read from the environment variable {variable})" in err


@pytest.mark.parametrize("echo", [ECHO_KEY_ERROR, ECHO_KEY_REPLY])
def test_a_key_the_server_echoes_is_redacted(echo: str) -> None:
    secret = "sk-test-ECHOED-0123456789"
    with fault_server([echo]) as server:
        result = _ask(server, max_attempts=1, api_key=secret)
        assert secret not in result.model_dump_json()
        assert REDACTED in result.model_dump_json()


def test_credentials_in_the_base_url_are_never_stored_or_printed() -> None:
    with fault_server([ECHO_KEY_ERROR]) as server:
        port = server.server_address[1]
        url = f"http://alice:hunter2-secret@127.0.0.1:{port}/v1"
        model = get_model("openai/test", ModelOptions(cache=False, base_url=url, max_attempts=1))
        backend = model.backend
        assert isinstance(backend, OpenAIBackend)
        assert backend.base_url == f"http://127.0.0.1:{port}/v1"
        assert "hunter2" not in json.dumps(backend.cache_identity)
        result = asyncio.run(model.generate([user("hi")]))
        assert isinstance(result, CallFailure)
        assert "hunter2" not in result.message
    stored = ModelOptions(base_url="https://u:hunter2-secret@h.example/v1?api_key=sk-abcdef")
    assert stored.model_dump()["base_url"] == "https://h.example/v1"
    assert "hunter2" not in stored.model_dump_json()
    assert "sk-abcdef" not in stored.model_dump_json()


def test_a_base_url_without_v1_says_to_add_it() -> None:
    with fault_server([OK]) as server:
        root = server.base_url.removesuffix("/v1")
        result = _ask(server, base_url=root)
        assert isinstance(result, CallFailure) and result.kind is ErrorKind.NOT_FOUND
        assert f"try --base-url {root}/v1" in result.message
        assert len(server.requests) == 0  # refused by path: never reached the model
        assert isinstance(_ask(server), Completion)  # under /v1 it answers
