"""The Ray executor: batches of work run on a Ray cluster, results stream back to the driver.

The driver alone writes the run directory (under its lock): each finished batch is handed to
``on_batch`` as it arrives, in completion order, which is where the caller appends results. A
worker that dies loses only the batch it was running, which Ray runs again (``max_retries``:
system failures only, a bug in the work is not retried). At most ``2 x cluster CPUs`` batches
are in flight, so memory stays bounded on inputs of any size.

The cluster is ``RAY_ADDRESS`` when set, else a local one started for this process with the
cores it may use.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from ..errors import ConfigError

T = TypeVar("T")
R = TypeVar("R")
EXTRA_HINT = "install the extra: pip install 'assay[ray]'"


def ray_module() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "--executor ray needs Ray, which is not installed", hint=EXTRA_HINT
        ) from None
    return ray


def connect() -> Any:
    """Ray, connected to ``RAY_ADDRESS`` or to a local cluster on this machine's cores."""
    ray = ray_module()
    if not ray.is_initialized():
        address = os.environ.get("RAY_ADDRESS") or None
        options: dict[str, Any] = {"ignore_reinit_error": True, "log_to_driver": False}
        if address is None:
            options |= {"num_cpus": len(os.sched_getaffinity(0)), "include_dashboard": False}
        ray.init(address=address, **options)
    return ray


def ray_map(
    function: Callable[[T], R],
    batches: Iterable[T],
    on_batch: Callable[[R], None],
    *,
    max_retries: int = 3,
) -> int:
    """Run ``function`` on every batch on the cluster; ``on_batch`` gets each result as it
    arrives. Returns the number of batches done."""
    ray = connect()
    remote = ray.remote(max_retries=max_retries, retry_exceptions=False)(function)
    limit = max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
    queue: Iterator[T] = iter(batches)
    in_flight: list[Any] = []
    done = 0
    try:
        while True:
            while len(in_flight) < limit and (batch := next(queue, None)) is not None:
                in_flight.append(remote.remote(batch))
            if not in_flight:
                return done
            ready, in_flight = ray.wait(in_flight, num_returns=1)
            on_batch(ray.get(ready[0]))
            done += 1
    finally:
        for ref in in_flight:  # an interrupt or error: stop what is still running
            ray.cancel(ref, force=True)


def add_usage(total: dict[str, dict[str, Any]], part: dict[str, dict[str, Any]]) -> None:
    """Sum one worker's per-model usage counts into ``total`` (latency percentiles do not
    add up and are left out)."""
    for name, usage in part.items():
        into = total.setdefault(name, {})
        for key, value in usage.items():
            if isinstance(value, int) and not isinstance(value, bool):
                into[key] = into.get(key, 0) + value
