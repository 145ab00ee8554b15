"""A llama.cpp call whose caller is gone (Ctrl-C, a timeout) stops at its next token.

The call runs on a native thread that cannot be killed; before, an abandoned generation ran to
its last token, so an interrupted run waited for it to exit and a retry after a timeout queued
behind it. These tests run the embedded model for real and compare times measured side by
side: how long the llama.cpp thread stays busy after a caller gives up, against how long the
whole generation takes."""

from __future__ import annotations

import asyncio
import time

import pytest

from assay.model import GenerateConfig, user
from assay.model.providers.llamacpp import LlamaCppBackend, on_llama_thread

COUNTING = [user("Count from 1 to 300, one number per line.")]
LONG = GenerateConfig(max_tokens=100, temperature=0.0)
ASK = [user("Name three rivers of Europe.")]
SHORT = GenerateConfig(max_tokens=8, temperature=0.0)


async def _busy_for_after_cancel(backend: LlamaCppBackend, after_s: float) -> float:
    """Start the long generation, give up on it after ``after_s``, and return how long the
    llama.cpp thread then stays busy."""
    call = asyncio.create_task(backend.generate(COUNTING, LONG))
    await asyncio.sleep(after_s)
    call.cancel()
    given_up = time.perf_counter()
    await on_llama_thread(lambda: None)  # runs once the thread is free
    busy_s = time.perf_counter() - given_up
    with pytest.raises(asyncio.CancelledError):
        await call
    return busy_s


@pytest.mark.slow
def test_an_abandoned_generation_frees_the_thread_and_leaves_no_trace() -> None:
    backend = LlamaCppBackend("smollm2")

    async def run() -> None:
        cold = await backend.generate(ASK, SHORT)
        started = time.perf_counter()
        whole = await backend.generate(COUNTING, LONG)
        whole_s = time.perf_counter() - started
        assert whole.completion_tokens == LONG.max_tokens  # a long generation, to the limit
        busy_s = await _busy_for_after_cancel(backend, whole_s / 4)
        # the rest of the generation (three quarters of it) is not computed
        assert busy_s < whole_s / 4, f"busy {busy_s:.2f} s after cancel; whole {whole_s:.2f} s"
        # the abandoned call's partial state changes no later reply
        after = await backend.generate(ASK, SHORT)
        assert after.text == cold.text and after.completion_tokens == cold.completion_tokens
        await backend.aclose()

    asyncio.run(run())


@pytest.mark.slow
def test_a_call_queued_behind_an_abandoned_one_is_not_held_up() -> None:
    """A timeout cancels the waiter the same way: the retry starts at once."""
    backend = LlamaCppBackend("smollm2")

    async def run() -> None:
        await backend.generate(ASK, SHORT)  # the model is loaded
        started = time.perf_counter()
        await backend.generate(COUNTING, LONG)
        whole_s = time.perf_counter() - started
        try:
            async with asyncio.timeout(whole_s / 4):
                await backend.generate(COUNTING, LONG)
        except TimeoutError:
            pass
        else:
            pytest.fail("the long generation ended within a quarter of its own time")
        retried = time.perf_counter()
        reply = await backend.generate(ASK, SHORT)
        assert reply.text
        assert time.perf_counter() - retried < whole_s / 2
        await backend.aclose()

    asyncio.run(run())
