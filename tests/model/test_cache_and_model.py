"""The response cache and the model layer: keys, reruns, errors, concurrency, retries."""

from __future__ import annotations

import asyncio
import multiprocessing
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from assay.model import (
    BackendError,
    CallFailure,
    ChatMessage,
    Completion,
    ErrorKind,
    GenerateConfig,
    JsonSchema,
    Model,
    ModelOptions,
    ResponseCache,
    RetryPolicy,
    Usage,
    cache_key,
    get_model,
    user,
)
from assay.model.providers.stub import StubBackend

MESSAGES = [user("question")]


def _key(**changes: object) -> str:
    config = GenerateConfig().model_copy(update=changes)
    return cache_key(
        backend_name="stub/x", identity={}, messages=MESSAGES, config=config, sample_index=0
    )


def test_cache_key_changes_with_every_generation_parameter() -> None:
    base = _key()
    variants: list[dict[str, object]] = [
        {"temperature": 0.5},
        {"top_p": 0.9},
        {"max_tokens": 7},
        {"seed": 3},
        {"stop": ("x",)},
        {"logprobs": True},
        {"top_logprobs": 2},
        {"json_schema": JsonSchema(name="s", schema={"type": "object"})},
    ]
    keys = {_key(**v) for v in variants}
    assert base not in keys and len(keys) == len(variants)


def test_cache_key_changes_with_model_identity_messages_and_sample() -> None:
    config = GenerateConfig()
    keys = {
        cache_key(backend_name=b, identity=i, messages=m, config=config, sample_index=s)
        for b, i, m, s in [
            ("stub/x", {}, MESSAGES, 0),
            ("stub/y", {}, MESSAGES, 0),
            ("stub/x", {"base_url": "http://a"}, MESSAGES, 0),
            ("stub/x", {}, [user("other")], 0),
            ("stub/x", {}, MESSAGES, 1),
        ]
    }
    assert len(keys) == 5


def _counting_model(
    cache: ResponseCache | None, replies: object = None
) -> tuple[Model, StubBackend]:
    backend = StubBackend("x", replies=replies)  # type: ignore[arg-type]
    options = ModelOptions(max_attempts=1, cache=cache is not None)
    return get_model("stub/x", options, cache=cache, backend=backend), backend


def test_rerun_of_finished_work_makes_zero_backend_calls(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    configs = [GenerateConfig(seed=s) for s in range(20)]

    async def work(model: Model) -> list[str]:
        results = [await model.generate(MESSAGES, c) for c in configs]
        await model.aclose()
        return [r.text for r in results if isinstance(r, Completion)]

    first, first_backend = _counting_model(ResponseCache(path))
    texts = asyncio.run(work(first))
    assert first_backend.calls == 20
    second, second_backend = _counting_model(ResponseCache(path))
    assert asyncio.run(work(second)) == texts
    assert second_backend.calls == 0
    assert second.usage.cache_hits == 20 and second.usage.calls == 0


def test_errors_are_not_cached(tmp_path: Path) -> None:
    attempts = {"n": 0}

    def flaky(messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random) -> str:
        attempts["n"] += 1
        if attempts["n"] == 1:
            raise BackendError(ErrorKind.BAD_REQUEST, "first call fails")
        return "fine"

    cache = ResponseCache(tmp_path / "c.sqlite")
    model, backend = _counting_model(cache, flaky)
    assert isinstance(asyncio.run(model.generate(MESSAGES)), CallFailure)
    assert len(cache) == 0
    result = asyncio.run(model.generate(MESSAGES))
    assert isinstance(result, Completion) and not result.cached
    assert backend.calls == 2


class _GatedBackend(StubBackend):
    """Holds every call until the test opens the gate, so identical requests overlap."""

    def __init__(self, fail_first: bool = False) -> None:
        super().__init__("x")
        self.gate = asyncio.Event()
        self.fail_first = fail_first

    async def generate(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> Completion:
        await self.gate.wait()
        if self.fail_first and self.calls == 0:
            self.calls += 1
            raise BackendError(ErrorKind.BAD_REQUEST, "the first call fails")
        return await super().generate(messages, config)


def _overlapping(tmp_path: Path, backend: _GatedBackend) -> tuple[list[Any], Model]:
    cache = ResponseCache(tmp_path / "c.sqlite")
    model = get_model("stub/x", ModelOptions(max_attempts=1), cache=cache, backend=backend)

    async def run() -> list[Any]:
        calls = [asyncio.create_task(model.generate(MESSAGES)) for _ in range(3)]
        other = asyncio.create_task(model.generate([user("another question")]))
        await asyncio.sleep(0.01)  # every request is under way before any is answered
        backend.gate.set()
        results = await asyncio.gather(*calls, other)
        await model.aclose()
        return results

    return asyncio.run(run()), model


def test_identical_requests_under_way_together_make_one_call(tmp_path: Path) -> None:
    backend = _GatedBackend()
    (first, second, third, other), model = _overlapping(tmp_path, backend)
    assert backend.calls == 2  # one per distinct request
    assert isinstance(first, Completion) and not first.cached
    for shared in (second, third):
        assert isinstance(shared, Completion) and shared.cached
        assert shared.text == first.text
    assert isinstance(other, Completion) and not other.cached
    assert model.usage.calls == 2 and model.usage.cache_hits == 2


def test_a_request_waiting_on_a_failed_call_makes_its_own(tmp_path: Path) -> None:
    backend = _GatedBackend(fail_first=True)
    (first, second, third, _), _ = _overlapping(tmp_path, backend)
    assert isinstance(first, CallFailure)
    assert isinstance(second, Completion) and not second.cached  # its own call, after the failure
    assert isinstance(third, Completion) and third.text == second.text
    assert backend.calls == 3  # the failure, the retry by a waiter, the other question


def test_cache_can_be_disabled(tmp_path: Path) -> None:
    model, backend = _counting_model(None)
    asyncio.run(model.generate(MESSAGES))
    asyncio.run(model.generate(MESSAGES))
    assert backend.calls == 2


def test_cache_path_option_moves_the_cache(tmp_path: Path) -> None:
    path = tmp_path / "elsewhere" / "cache.sqlite"
    model = get_model("stub/x", ModelOptions(cache_path=path))
    asyncio.run(model.generate(MESSAGES))
    asyncio.run(model.aclose())
    assert path.is_file() and len(ResponseCache(path)) == 1


def test_samples_are_seeded_apart_and_cached_each() -> None:
    model, backend = _counting_model(None)
    results = asyncio.run(model.sample(MESSAGES, GenerateConfig(n=4, seed=10, temperature=1.0)))
    assert [r.sample_index for r in results] == [0, 1, 2, 3]
    assert backend.calls == 4


def test_concurrency_is_bounded() -> None:
    state = {"now": 0, "peak": 0}

    class SlowBackend(StubBackend):
        async def generate(
            self, messages: Sequence[ChatMessage], config: GenerateConfig
        ) -> Completion:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
            await asyncio.sleep(0.01)
            state["now"] -= 1
            return await super().generate(messages, config)

    model = get_model(
        "stub/x", ModelOptions(cache=False, max_concurrency=3), backend=SlowBackend("x")
    )

    async def many() -> None:
        await asyncio.gather(*(model.generate(MESSAGES, GenerateConfig(seed=i)) for i in range(20)))

    asyncio.run(many())
    assert state["peak"] == 3


def test_retryable_errors_are_retried_then_reported_with_attempts() -> None:
    def always_busy(
        messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random
    ) -> str:
        raise BackendError(ErrorKind.RATE_LIMIT, "busy", retry_after_s=0.0)

    backend = StubBackend("x", replies=always_busy)
    model = Model(backend, retry=RetryPolicy(max_attempts=3, initial_delay_s=0.001))
    result = asyncio.run(model.generate(MESSAGES))
    assert isinstance(result, CallFailure)
    assert result.attempts == 3 and backend.calls == 3
    assert model.usage.summary()["errors_by_kind"] == {"rate_limit": 1}
    assert model.usage.retries == 2


def test_retry_delay_honours_retry_after_and_bounds() -> None:
    policy = RetryPolicy(initial_delay_s=0.5, max_delay_s=4.0)
    rng = random.Random(0)
    assert policy.delay(1, 3.0, rng) >= 3.0
    assert all(0 <= policy.delay(a, None, rng) <= 4.0 for a in range(1, 10))


def test_usage_summary_has_latency_percentiles() -> None:
    model, _ = _counting_model(None)
    for seed in range(5):
        asyncio.run(model.generate(MESSAGES, GenerateConfig(seed=seed)))
    summary = model.usage.summary()
    assert summary["calls"] == 5
    assert set(summary["latency_ms"]) == {"p50", "p90", "p99"}


def test_latency_percentiles_are_linear_interpolations_in_ms() -> None:
    usage = Usage()
    usage.latencies_s.extend([0.004, 0.001, 0.003, 0.002, 0.005])
    summary = usage.summary()["latency_ms"]
    assert summary["p50"] == pytest.approx(3.0)
    assert summary["p90"] == pytest.approx(4.6)  # between 4 and 5 ms, 60% of the way
    assert summary["p99"] == pytest.approx(4.96)
    assert Usage().summary()["latency_ms"] == {}


def test_two_caches_on_one_file_do_not_lock_each_other_out(tmp_path: Path) -> None:
    """Two connections (as from two processes) interleave writes without 'database is locked'."""
    path = tmp_path / "shared.sqlite"
    first, second = ResponseCache(path), ResponseCache(path)
    reply = Completion(text="t", finish_reason="stop")
    for i in range(200):
        (first if i % 2 else second).put(f"k{i}", reply)
    first.flush()
    second.flush()
    assert len(ResponseCache(path)) == 200


def test_models_opened_on_one_path_share_one_cache(tmp_path: Path) -> None:
    options = ModelOptions(cache_path=tmp_path / "c.sqlite")
    a, b = get_model("stub/a", options), get_model("stub/b", options)
    assert a.cache is b.cache
    asyncio.run(a.generate(MESSAGES))
    asyncio.run(b.generate(MESSAGES))
    assert a.cache is not None and len(a.cache) == 2


def test_a_reply_a_backend_cannot_type_is_a_retried_failure_not_a_crash() -> None:
    """Issue 14 #5, for every backend: a reply that does not validate as a Completion (a
    backend handing a number on as the text) is a malformed_response call failure, retried,
    never cached, never an "invalid setting" that stops the run."""

    from assay.model import Backend

    class NumberBackend(Backend):
        provider = "numbers"

        async def generate(
            self, messages: Sequence[ChatMessage], config: GenerateConfig
        ) -> Completion:
            content: Any = 42  # what a server put where the text belongs
            return Completion(text=content, finish_reason="stop")

    model = Model(NumberBackend("n"), retry=RetryPolicy(max_attempts=3, initial_delay_s=0.0))
    result = asyncio.run(model.generate([user("hi")]))
    assert isinstance(result, CallFailure)
    assert result.kind is ErrorKind.MALFORMED_RESPONSE and result.attempts == 3
    assert "text" in result.message


def _open_cache_after(barrier: Any, path: str, outcomes: Any) -> None:
    barrier.wait()  # every process opens the new file at the same moment
    try:
        ResponseCache(Path(path))
        outcomes.put("ok")
    except Exception as error:  # the outcome is what the test asserts on
        outcomes.put(repr(error))


def test_processes_opening_one_new_cache_together_all_open_it(tmp_path: Path) -> None:
    # Ray workers starting together open the same new cache file: switching it to WAL used to
    # fail at once with "database is locked" in about a third of such starts.
    context = multiprocessing.get_context("fork")
    for trial in range(15):
        path = str(tmp_path / f"cache-{trial}.sqlite")
        barrier, outcomes = context.Barrier(8), context.Queue()
        processes = [
            context.Process(target=_open_cache_after, args=(barrier, path, outcomes))
            for _ in range(8)
        ]
        for process in processes:
            process.start()
        for process in processes:
            process.join(timeout=60)
        assert [outcomes.get(timeout=5) for _ in processes] == ["ok"] * 8


def test_the_default_cache_follows_assay_cache_dir_then_xdg_cache_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.model._cache import default_cache_path

    monkeypatch.delenv("ASSAY_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_path() == tmp_path / "xdg" / "assay" / "responses.sqlite"
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "own"))
    assert default_cache_path() == tmp_path / "own" / "responses.sqlite"
    monkeypatch.delenv("ASSAY_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")  # ignored, as the spec says
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_path() == tmp_path / "home" / ".cache" / "assay" / "responses.sqlite"
