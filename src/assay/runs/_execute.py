"""Run many async jobs with a bound, progress, and results handed over as they finish."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sized
from typing import TypeVar

from ._progress import Progress

T = TypeVar("T")
R = TypeVar("R")


async def run_all(
    items: Iterable[T],
    worker: Callable[[T], Awaitable[R]],
    on_result: Callable[[R], None],
    *,
    concurrency: int = 8,
    description: str = "working",
    unit: str = "item",
    progress: bool | None = None,
    is_failure: Callable[[R], bool] | None = None,
    is_waiting: Callable[[R], bool] | None = None,
    total: int | None = None,
) -> int:
    """Run ``worker`` over ``items``, at most ``concurrency`` at once.

    ``concurrency`` pullers take the next item from one shared iterator, so memory does not
    grow with the number of items (no task per item) and ``items`` may be a generator
    (``total`` then sizes the progress display). ``on_result`` is called in completion order
    as soon as each job ends, which is where callers append to their results file: a Ctrl-C
    then loses only jobs still in flight. ``is_failure`` tells which results count as failed
    in the progress display, ``is_waiting`` which wait on answers written to a batch file
    (taken up, not finished: counted apart, so 100% does not read as all done). The first
    exception stops every puller and propagates.
    Returns the number of finished jobs.
    """
    size = len(items) if isinstance(items, Sized) else total
    if size == 0:
        return 0
    bar = Progress(size or 0, description, show=progress, unit=unit)
    pending = iter(items)
    finished = 0

    async def pull() -> None:
        nonlocal finished
        for item in pending:  # one step of one puller takes one item: no item twice
            result = await worker(item)
            on_result(result)
            finished += 1
            bar.update(
                1,
                failed=int(is_failure is not None and is_failure(result)),
                waiting=int(is_waiting is not None and is_waiting(result)),
            )

    pullers = [asyncio.ensure_future(pull()) for _ in range(max(1, concurrency))]
    try:
        await asyncio.gather(*pullers)
    finally:
        for puller in pullers:
            puller.cancel()
        await asyncio.gather(*pullers, return_exceptions=True)
        bar.close()
    return finished
