"""A llama.cpp reply depends only on its request, never on the calls made before it.

llama.cpp's CPU kernels round differently for different batch shapes, so a prompt evaluated in
one batch and the same prompt evaluated as a reused prefix plus the rest give different logits
(here up to a few tenths of a nat on the label tokens). The backend therefore evaluates every
prompt in the same fixed-size blocks, whatever it reuses; these tests send one request cold,
after another prompt that shares its system prompt, and after itself, and require the same
reply to the last bit, on both paths (one-token label questions and longer generations)."""

from __future__ import annotations

import asyncio
import multiprocessing
from typing import Any

import pytest

from assay.model import ChatMessage, Completion, GenerateConfig, system, user
from assay.model.providers.llamacpp import LlamaCppBackend, llama_thread

SYSTEM = (
    "You check whether evidence supports a claim. Answer Yes only if the evidence states the "
    "claim or directly implies it, including every number, name and date; otherwise answer No. "
    "Answer with one word: Yes or No. The evidence is a list of snippets from web pages, each "
    "with an identifier in brackets; read all of them before you answer."
)
EVIDENCE = (
    "Evidence:\n[pc1] The Panama Canal opened to shipping in 1914, after ten years of "
    "construction by the United States.\n[pc2] Most ships crossing the canal are raised and "
    "lowered by three sets of locks; each crossing uses about 200 million litres of fresh water."
)


def _ask(claim: str) -> list[ChatMessage]:
    return [system(SYSTEM), user(f"{EVIDENCE}\n\nClaim: {claim}\n\nIs the claim supported?")]


TARGET = _ask("The Panama Canal opened in 1914.")
OTHER = _ask("Most ships are raised and lowered by locks, using about 200 million litres.")
UNRELATED = [user("Name three rivers of Europe.")]

LABEL_QUESTION = GenerateConfig(
    max_tokens=1, temperature=0.0, logprobs=True, top_logprobs=20, logprob_tokens=("Yes", "No")
)
GENERATION = GenerateConfig(max_tokens=6, temperature=0.0, logprobs=True, top_logprobs=5)


def _reply(completion: Completion) -> dict[str, object]:
    """What the model answered, without timings and reuse counts."""
    return completion.model_dump(exclude={"latency_s", "prompt_tokens_reused"})


def _replies(config: GenerateConfig) -> list[tuple[dict[str, object], int]]:
    backend = LlamaCppBackend("smollm2")

    async def run() -> list[tuple[dict[str, object], int]]:
        out = []
        for before in (None, OTHER, TARGET, UNRELATED):
            if before is not None:
                await backend.generate(before, config)
            completion = await backend.generate(TARGET, config)
            out.append((_reply(completion), completion.prompt_tokens_reused))
        await backend.aclose()
        return out

    return asyncio.run(run())


@pytest.mark.slow
@pytest.mark.parametrize("config", [LABEL_QUESTION, GENERATION], ids=["label", "generation"])
def test_a_reply_does_not_depend_on_the_calls_before_it(config: GenerateConfig) -> None:
    replies = _replies(config)
    cold, after_other, after_itself, after_unrelated = (reply for reply, _ in replies)
    assert after_other == cold
    assert after_itself == cold
    assert after_unrelated == cold


@pytest.mark.slow
def test_a_shared_prefix_is_still_reused_in_whole_blocks() -> None:
    reused = [count for _, count in _replies(LABEL_QUESTION)]
    cold, after_other, after_itself, after_unrelated = reused
    assert cold == 0 and after_unrelated == 0
    assert after_other > 0 and after_other % 64 == 0  # the system prompt and evidence, in blocks
    assert after_itself >= after_other


def _answer_on_the_llama_thread(queue: Any) -> None:
    queue.put(llama_thread().submit(lambda: "ran").result(timeout=10))


def test_a_forked_child_gets_a_llama_thread_of_its_own() -> None:
    assert llama_thread().submit(lambda: "ran").result(timeout=10) == "ran"  # the parent's
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_answer_on_the_llama_thread, args=(queue,))
    child.start()
    child.join(timeout=30)
    assert child.exitcode == 0
    assert queue.get(timeout=5) == "ran"
