"""The one door every model call goes through: cache, concurrency bound, retries, accounting."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ._backend import Backend
from ._batch import BatchWriter, deferred_failure
from ._cache import ResponseCache, cache_key
from ._types import (
    BackendError,
    CallFailure,
    ChatMessage,
    Completion,
    ErrorKind,
    GenerateConfig,
    ModelResult,
)
from ._usage import Usage


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter, bounded; a server's Retry-After wins when longer.

    A Retry-After longer than ``max_retry_after_s`` is cut to it: a server asking for an hour
    must not stall a run silently (the call is retried after the cap, and fails as usual when
    the server still refuses).
    """

    max_attempts: int = 4
    initial_delay_s: float = 0.5
    max_delay_s: float = 20.0
    multiplier: float = 2.0
    max_retry_after_s: float = 120.0

    def delay(self, attempt: int, retry_after_s: float | None, rng: random.Random) -> float:
        ceiling = min(self.max_delay_s, self.initial_delay_s * self.multiplier ** (attempt - 1))
        jittered = rng.uniform(0.0, ceiling)
        if retry_after_s is not None:
            return max(jittered, min(retry_after_s, self.max_retry_after_s))
        return jittered


class Model:
    """A backend behind the cache, a concurrency bound and a retry policy.

    ``generate`` never raises for a failed call: it returns a :class:`CallFailure`. With a
    ``batch`` writer, a call that misses the cache is written to a batch input file instead of
    being sent (when the backend has a batch form) and comes back as a ``deferred`` failure.
    """

    def __init__(
        self,
        backend: Backend,
        *,
        cache: ResponseCache | None = None,
        max_concurrency: int = 8,
        retry: RetryPolicy | None = None,
        request_timeout_s: float = 120.0,
        batch: BatchWriter | None = None,
    ) -> None:
        if batch is not None and cache is None:
            raise ValueError("batch files need the response cache: their answers land there")
        self.backend = backend
        self.cache = cache
        self.batch = batch
        self.retry = retry or RetryPolicy()
        self.request_timeout_s = request_timeout_s
        self.usage = Usage()
        backend_limit = backend.max_parallel_calls
        if backend_limit is not None:
            max_concurrency = min(max_concurrency, backend_limit)
        self._semaphore = asyncio.Semaphore(max_concurrency)
        self._jitter = random.Random(0x5EED)
        # Cache key -> the answer of a call under way: an identical request made meanwhile (two
        # examples sharing a claim and its evidence) waits for it instead of calling again.
        self._in_flight: dict[str, asyncio.Future[ModelResult | None]] = {}

    @property
    def name(self) -> str:
        return self.backend.name

    async def generate(
        self,
        messages: Sequence[ChatMessage],
        config: GenerateConfig | None = None,
        *,
        sample_index: int = 0,
    ) -> ModelResult:
        """One sample (``config.n`` is ignored; see :meth:`sample`)."""
        single = (config or GenerateConfig()).for_sample(sample_index)
        key = self._key(messages, single, sample_index) if self.cache is not None else ""
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            return self._replay(hit, sample_index)
        if self.batch is not None and (body := self.backend.batch_request(messages, single)):
            return self._from_batch(key, body, sample_index)
        if self.cache is None:
            return await self._call(messages, single, sample_index)
        return await self._call_once(self.cache, key, messages, single, sample_index)

    async def _call_once(
        self,
        cache: ResponseCache,
        key: str,
        messages: Sequence[ChatMessage],
        config: GenerateConfig,
        sample_index: int,
    ) -> ModelResult:
        """Call, unless the same request is under way: then wait for its answer."""
        while (under_way := self._in_flight.get(key)) is not None:
            shared = await asyncio.shield(under_way)
            if isinstance(shared, Completion):
                return self._replay(shared, sample_index)
            # That call failed or was cancelled; another waiter may have answered since.
            if (hit := cache.get(key)) is not None:
                return self._replay(hit, sample_index)
        answer: asyncio.Future[ModelResult | None] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = answer
        result: ModelResult | None = None
        try:
            result = await self._call(messages, config, sample_index)
            if isinstance(result, Completion):
                cache.put(key, result)
            return result
        finally:
            del self._in_flight[key]
            answer.set_result(result)

    async def _call(
        self, messages: Sequence[ChatMessage], config: GenerateConfig, sample_index: int
    ) -> ModelResult:
        result, retries = await self._call_with_retries(messages, config, sample_index)
        self.usage.record(result, from_cache=False, retries=retries)
        return result

    def _replay(self, completion: Completion, sample_index: int) -> Completion:
        replay = completion.model_copy(update={"cached": True, "sample_index": sample_index})
        self.usage.record(replay, from_cache=True, retries=0)
        return replay

    def _from_batch(self, key: str, body: dict[str, Any], sample_index: int) -> ModelResult:
        """An imported batch error (once), else the call written to the batch file."""
        assert self.cache is not None and self.batch is not None
        failure = self.cache.take_failure(key)
        if failure is not None:
            failure = failure.model_copy(update={"sample_index": sample_index})
            self.usage.record(failure, from_cache=True, retries=0)
            return failure
        self.batch.add(key, dict(body))
        return deferred_failure(sample_index)

    async def sample(
        self, messages: Sequence[ChatMessage], config: GenerateConfig
    ) -> list[ModelResult]:
        """``config.n`` samples, sample ``i`` seeded ``seed + i``, run concurrently."""
        return list(
            await asyncio.gather(
                *(self.generate(messages, config, sample_index=i) for i in range(config.n))
            )
        )

    def _key(
        self, messages: Sequence[ChatMessage], config: GenerateConfig, sample_index: int
    ) -> str:
        return cache_key(
            backend_name=self.backend.name,
            identity=self.backend.cache_identity,
            messages=messages,
            config=config,
            sample_index=sample_index,
        )

    async def _call_with_retries(
        self, messages: Sequence[ChatMessage], config: GenerateConfig, sample_index: int
    ) -> tuple[ModelResult, int]:
        started = time.perf_counter()
        attempt = 0
        while True:
            attempt += 1
            try:
                return await self._one_call(messages, config, sample_index), attempt - 1
            except BackendError as error:
                if not error.kind.retryable or attempt >= self.retry.max_attempts:
                    failure = CallFailure(
                        kind=error.kind,
                        # Every failure says why, even when the backend gave no words for it.
                        message=error.message.strip() or f"{error.kind.value} (no detail given)",
                        attempts=attempt,
                        latency_s=time.perf_counter() - started,
                        sample_index=sample_index,
                    )
                    return failure, attempt - 1
                await asyncio.sleep(self.retry.delay(attempt, error.retry_after_s, self._jitter))

    async def _one_call(
        self, messages: Sequence[ChatMessage], config: GenerateConfig, sample_index: int
    ) -> Completion:
        async with self._semaphore:
            started = time.perf_counter()
            try:
                # asyncio.timeout, unlike wait_for, needs no extra task per call.
                async with asyncio.timeout(self.request_timeout_s):
                    completion = await self.backend.generate(messages, config)
            except TimeoutError as error:
                raise BackendError(
                    ErrorKind.TIMEOUT, f"no reply within {self.request_timeout_s:g} s"
                ) from error
            except ValidationError as error:
                # A reply a backend could not turn into a Completion: the server's fault (a
                # retried call failure), never a bad setting of the user's.
                raise BackendError(
                    ErrorKind.MALFORMED_RESPONSE, f"reply of the wrong shape: {_first(error)}"
                ) from error
            # A backend that queues calls internally times them itself (llamacpp does).
            latency_s = completion.latency_s or (time.perf_counter() - started)
            return completion.model_copy(
                update={"latency_s": latency_s, "sample_index": sample_index}
            )

    async def aclose(self) -> None:
        if self.cache is not None:
            self.cache.flush()
        await self.backend.aclose()


def _first(error: ValidationError) -> str:
    item = error.errors()[0]
    where = ".".join(str(part) for part in item["loc"]) or "reply"
    return f"{where}: {item['msg']}"
