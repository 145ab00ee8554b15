"""A llama.cpp call whose caller is gone (Ctrl-C, a timeout: both cancel the waiting task)
stops at its next token.

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
from assay.model.providers.llamacpp import LlamaCppBackend, llama_thread, on_llama_thread

COUNTING = [user("Count from 1 to 300, one number per line.")]
LONG = GenerateConfig(max_tokens=100, temperature=0.0)
ASK = [user("Name three rivers of Europe.")]
SHORT = GenerateConfig(max_tokens=8, temperature=0.0)


# Soon after the call starts: well inside a generation that takes a second or more, however
# loaded the machine.
GIVE_UP_AFTER_S = 0.05


async def _busy_for_after_cancel(backend: LlamaCppBackend, after_s: float) -> float:
    """Start the long generation, give up on it after ``after_s``, and return how long the
    llama.cpp thread then stays busy."""
    call = asyncio.create_task(backend.generate(COUNTING, LONG))
    await asyncio.sleep(0)  # the task hands the call to the thread's queue
    # the call is under way on the thread (a call given up while queued simply never runs)
    while not call.done() and llama_thread()._work_queue.qsize() > 0:
        await asyncio.sleep(0.001)
    await asyncio.sleep(after_s)
    assert not call.done()
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
        busy_s = await _busy_for_after_cancel(backend, GIVE_UP_AFTER_S)
        # the rest of the generation is not computed
        assert busy_s < whole_s / 4, f"busy {busy_s:.2f} s after cancel; whole {whole_s:.2f} s"
        # the abandoned call's partial state changes no later reply
        after = await backend.generate(ASK, SHORT)
        assert after.text == cold.text and after.completion_tokens == cold.completion_tokens
        await backend.aclose()

    asyncio.run(run())
