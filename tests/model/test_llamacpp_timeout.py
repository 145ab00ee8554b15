"""A timed-out call of the embedded model is not retried.

llama.cpp computes on one thread of this process and cannot be interrupted: a call the model
layer stops waiting for goes on computing. A retry would queue behind it with its own timer
running, and time out the same way, as every later attempt would; each attempt would also
queue one more full computation. The real embedded model, no stand-ins."""

from __future__ import annotations

import asyncio

import pytest

from assay.model import CallFailure, ErrorKind, GenerateConfig, ModelOptions, get_model, user


@pytest.mark.slow
def test_a_timed_out_llamacpp_call_fails_after_one_attempt() -> None:
    options = ModelOptions(request_timeout_s=0.01, max_attempts=4, cache=False)

    async def ask() -> object:
        model = get_model("llamacpp/smollm2", options)
        try:
            return await model.generate([user("Name a river.")], GenerateConfig(max_tokens=4))
        finally:
            await model.aclose()

    result = asyncio.run(ask())
    assert isinstance(result, CallFailure), result
    assert result.kind is ErrorKind.TIMEOUT
    assert result.attempts == 1
