"""Run many async jobs with a bound, a progress bar, and results handed over as they finish."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from tqdm import tqdm

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
) -> int:
    """Run ``worker`` over ``items``, at most ``concurrency`` at once.

    ``on_result`` is called in completion order as soon as each job ends, which is where
    callers append to their results file: a Ctrl-C then loses only jobs still in flight.
    Returns the number of finished jobs.
    """
    if not items:
        return 0
    show = sys.stderr.isatty() if progress is None else progress
    bar = tqdm(total=len(items), desc=description, unit="item", disable=not show, smoothing=0.1)
    semaphore = asyncio.Semaphore(concurrency)

    async def bounded(item: T) -> R:
        async with semaphore:
            return await worker(item)

    tasks = [asyncio.ensure_future(bounded(item)) for item in items]
    finished = 0
    try:
        for next_done in asyncio.as_completed(tasks):
            on_result(await next_done)
            finished += 1
            bar.update(1)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        bar.close()
    return finished
