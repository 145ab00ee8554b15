"""Real inspect_ai evaluations for tests: tiny tasks run by inspect's own ``eval()``.

The model is inspect's built-in ``mockllm`` provider (a real provider of inspect's, not a mock of
assay) given replies to write; each reply carries its token usage, because mockllm otherwise
counts tokens with tiktoken, which downloads its vocabulary on first use (no network here).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.scorer import includes
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

QA_SAMPLES = (
    Sample(
        id="capital",
        input="What is the capital of France?",
        target="Paris",
        metadata={"topic": "geography"},
    ),
    Sample(
        id="colour",
        input=[
            ChatMessageSystem(content="Answer in one word."),
            ChatMessageUser(content="Name a primary colour."),
        ],
        target=["red", "blue", "yellow"],
    ),
    Sample(id=3, input="Say hello.", target="hello"),
)


def mock_model(name: str, reply: Callable[[str], str] | None = None) -> Model:
    """inspect's ``mockllm`` provider answering each prompt (its last message's text) with
    ``reply(prompt)``; by default a sentence of its own per model and prompt."""
    write = reply or (lambda prompt: f"{name} answers: {prompt}")

    def output(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        result = ModelOutput.from_content(model=name, content=write(messages[-1].text))
        result.usage = ModelUsage(input_tokens=8, output_tokens=6, total_tokens=14)
        return result

    return get_model(f"mockllm/{name}", custom_outputs=output)


@solver
def fail_on(sample_id: str) -> Solver:
    """Generates, except for ``sample_id``, whose solver raises (a sample with an error)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.sample_id == sample_id:
            raise RuntimeError("the tool this sample needs crashed")
        return await generate(state)

    return solve


def run_eval(
    samples: Sequence[Sample],
    model: Model | str,
    log_dir: Path,
    *,
    epochs: int = 1,
    solver: Solver | None = None,
    name: str = "qa",
    **options: Any,
) -> Path:
    """Run one task through inspect's ``eval()`` and return the path of its log."""
    task = Task(
        dataset=list(samples),
        solver=solver or generate(),
        scorer=includes(),
        epochs=epochs,
        name=name,
    )
    (log,) = eval(task, model=model, log_dir=str(log_dir), display="none", **options)
    assert log.location, "inspect wrote no log"
    return Path(log.location)


@contextlib.contextmanager
def inspect_dirs_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """inspect keeps traces and sample buffers in the user's data and cache folders; the tests
    keep them in tmp."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("inspect-data")))
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("inspect-cache")))
        yield
