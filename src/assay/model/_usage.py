"""Per-run accounting of model calls."""

from __future__ import annotations

import threading
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..arrays import percentile, sorted_array
from ._types import CallFailure, Completion, ModelResult


@dataclass
class Usage:
    """Counts for one model over one run. Latencies are of backend calls, not cache hits."""

    calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # what the calls sent now were billed for (cache hits cost nothing), for prices
    billed_prompt_tokens: int = 0
    billed_cached_prompt_tokens: int = 0
    billed_completion_tokens: int = 0
    errors_by_kind: Counter[str] = field(default_factory=Counter)
    # 8 bytes per call (a list of floats takes 32): a run of a million calls keeps 8 MB
    latencies_s: array[float] = field(default_factory=lambda: array("d"))
    # what served each reply, cache hits included (a cached reply keeps what first served
    # it): the model names and system fingerprints the backend reported, counted per value;
    # replies that reported none are served_replies minus the counts
    served_replies: int = 0
    served_model_names: Counter[str] = field(default_factory=Counter)
    system_fingerprints: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def record(self, result: ModelResult, *, from_cache: bool, retries: int) -> None:
        with self._lock:
            self.retries += retries
            if from_cache:
                self.cache_hits += 1
            else:
                self.calls += 1
                self.latencies_s.append(result.latency_s)
            if isinstance(result, Completion):
                self.prompt_tokens += result.prompt_tokens
                self.completion_tokens += result.completion_tokens
                if not from_cache:
                    self.billed_prompt_tokens += result.prompt_tokens
                    self.billed_cached_prompt_tokens += result.cached_prompt_tokens
                    self.billed_completion_tokens += result.completion_tokens
                self._count_served(result)
            elif isinstance(result, CallFailure):
                self.failures += 1
                self.errors_by_kind[result.kind.value] += 1

    def _count_served(self, completion: Completion) -> None:
        self.served_replies += 1
        if completion.model:
            self.served_model_names[completion.model] += 1
        if completion.system_fingerprint:
            self.system_fingerprints[completion.system_fingerprint] += 1

    def summary(self) -> dict[str, Any]:
        """A JSON-ready summary with latency percentiles (milliseconds)."""
        with self._lock:
            percentiles = _latency_percentiles_ms(self.latencies_s)
            return {
                "calls": self.calls,
                "cache_hits": self.cache_hits,
                "failures": self.failures,
                "retries": self.retries,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "billed_prompt_tokens": self.billed_prompt_tokens,
                "billed_cached_prompt_tokens": self.billed_cached_prompt_tokens,
                "billed_completion_tokens": self.billed_completion_tokens,
                "errors_by_kind": dict(self.errors_by_kind),
                # the model ids the backend reported in its replies (a server's own name)
                "reported_models": sorted(self.served_model_names),
                "served_replies": self.served_replies,
                "served_model_names": dict(sorted(self.served_model_names.items())),
                "system_fingerprints": dict(sorted(self.system_fingerprints.items())),
                "latency_ms": percentiles,
            }


_QUANTILES = (50, 90, 99)


def _latency_percentiles_ms(latencies_s: array[float]) -> dict[str, float]:
    """p50/p90/p99 (numpy's default, linear) of the latencies, in milliseconds.

    Sorted as an array of doubles (:func:`assay.arrays.sorted_array`): sorting a million
    latencies as Python floats would take 32 MB at the end of a run, its largest allocation."""
    if not latencies_s:
        return {}
    ordered = sorted_array(latencies_s)
    return {f"p{q}": 1000.0 * percentile(ordered, q) for q in _QUANTILES}
