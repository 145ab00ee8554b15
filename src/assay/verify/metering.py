"""Per-example cost: every model call made while one example runs is added to its meter.

Examples run concurrently and share their models, so the model's own running totals cannot
say which example spent what. :class:`MeteredModel` adds each call's result to the meter of
the asyncio task that made it (a context variable: tasks and ``gather`` children inherit it),
which covers the generator, the critic, the oracle and a model-based claim checker alike.
Open one with ``get_model(name, options, model_type=MeteredModel)``.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ..model import (
    CallFailure,
    ChatMessage,
    Completion,
    GenerateConfig,
    Model,
    ModelResult,
)
from .types import ExampleCost

_METER: contextvars.ContextVar[ExampleCost | None] = contextvars.ContextVar(
    "assay_meter", default=None
)


class MeteredModel(Model):
    """A :class:`Model` that also adds each result to the current example's meter."""

    async def generate(
        self,
        messages: Sequence[ChatMessage],
        config: GenerateConfig | None = None,
        *,
        sample_index: int = 0,
    ) -> ModelResult:
        result = await super().generate(messages, config, sample_index=sample_index)
        meter = _METER.get()
        if meter is not None:
            add_result(meter, result)
        return result


def add_result(meter: ExampleCost, result: ModelResult) -> None:
    """Count one call (a cache hit is counted as such, not as a call)."""
    if isinstance(result, CallFailure):
        meter.calls += 1
        meter.failures += 1
        meter.latency_ms += result.latency_s * 1000.0
        return
    assert isinstance(result, Completion)
    if result.cached:
        meter.cache_hits += 1
    else:
        meter.calls += 1
        meter.latency_ms += result.latency_s * 1000.0
    meter.prompt_tokens += result.prompt_tokens
    meter.completion_tokens += result.completion_tokens


@contextmanager
def metering() -> Iterator[ExampleCost]:
    """A fresh meter for the calls made inside the block (by this task and its children)."""
    meter = ExampleCost()
    token = _METER.set(meter)
    try:
        yield meter
    finally:
        _METER.reset(token)
