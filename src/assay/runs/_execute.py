"""Run many async jobs with a bound, progress, and results handed over as they finish."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from ._progress import Progress

T = TypeVar("T")
R = TypeVar("R")


async def run_all(
    items: Sequence[T],
    worker: Callable[[T], Awaitable[R]],
    on_result: Callable[[R], None],
    *,
    concurrency: int = 8,
    description: str = "working",
    progress: bool | None = None,
    is_failure: Callable[[R], bool] | None = None,
) -> int:
    """Run ``worker`` over ``items``, at most ``concurrency`` at once.

    ``on_result`` is called in completion order as soon as each job ends, which is where
    callers append to their results file: a Ctrl-C then loses only jobs still in flight.
    ``is_failure`` tells which results count as failed in the progress display.
    Returns the number of finished jobs.
    """
    if not items:
        return 0
    bar = Progress(len(items), description, show=progress)
    semaphore = asyncio.Semaphore(concurrency)

    async def bounded(item: T) -> R:
        async with semaphore:
            return await worker(item)

    tasks = [asyncio.ensure_future(bounded(item)) for item in items]
    finished = 0
    try:
        for next_done in asyncio.as_completed(tasks):
            result = await next_done
            on_result(result)
            finished += 1
            bar.update(1, failed=int(is_failure is not None and is_failure(result)))
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        bar.close()
    return finished
