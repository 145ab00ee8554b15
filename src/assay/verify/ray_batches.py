"""``assay bench run --executor ray``: records go to Ray workers in batches (runs/_ray.py).

Each worker rebuilds the run's models from the config (a ``llamacpp/`` model is loaded by the
worker itself) and runs exactly the in-process pattern code over its batch, so results are the
same as an in-process run's. Workers use the response cache on their own node: --cache-path
(a relative one taken from the driver's working directory), else the node's own default
(SQLite in WAL mode: the node's workers, and on the driver's node the driver, share it); a
cluster of several nodes keeps one cache per node. The driver alone appends the results
to ``results.jsonl``, batch by batch as they arrive; the run stays append-only and resumable.

Each worker also counts its batch for the summary (a :class:`~.summary.SummaryTally` of its
results, in the order of its lines), which the driver merges as it writes the batch: the driver
does no work per result, so it keeps up with many workers and leaves the cores to them.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ..data.grounded import parse_record_line
from ..data.records import GroundedQARecord
from ..json_safe import load_model, model_json
from ..model import ModelOptions
from ..runs import JsonlWriter, Progress, run_all
from ..runs._ray import add_usage, connect, ray_map, span
from .results import RESULTS_FILE, ResultRecord

if TYPE_CHECKING:
    from ..model import NodeContext
    from .summary import SummaryTally

Batch = tuple[str, list[str]]  # the config as JSON, the records' lines as in the data file
TAIL_SPLIT = 8  # the last batches shrink down to ray_batch_size / TAIL_SPLIT


def run_on_ray(
    config: Any,
    pending: Iterable[str],
    todo: int,
    on_result: Callable[[ResultRecord], None] | None,
    progress: bool | None,
    usage: dict[str, dict[str, Any]],
    tally: SummaryTally | None = None,
) -> dict[str, dict[str, Any]]:
    """Run ``pending`` (checked record lines, as the data file has them) on the cluster;
    returns each model's summed token counts, added batch by batch into ``usage`` so that a
    run that stops midway still knows what its written batches used and what served them.
    The workers' counts of their batches are merged into ``tally``, in the order the batches
    are written; ``on_result`` (when given) sees each result, read back from its line."""
    bar = Progress(todo, f"bench {config.pattern} (ray)", show=progress, unit="ex")
    with JsonlWriter(config.out_dir / RESULTS_FILE) as writer, bar:

        def keep(done: dict[str, Any]) -> None:
            # The worker's lines are written as they are (one flush per batch), not encoded
            # again, and its tally is merged: no result is parsed here unless on_result asks.
            writer.append_lines(done["results"])
            bar.update(len(done["results"]), failed=done["failed"])
            if tally is not None:
                tally.merge(done["tally"])
            if on_result is not None:
                for line in done["results"]:
                    on_result(load_model(ResultRecord, line))
            add_usage(usage, done["usage"])

        workers = max(1, int(connect().cluster_resources().get("CPU", 1)))
        batches = _batches(config, pending, todo, workers)
        ray_map(
            run_batch,
            batches,
            keep,
            context=(config.model_options or ModelOptions()).node_context(),
            describe=lambda b: _records_of(config.data, b),
            node_wait_s=config.ray_node_wait_s,
        )
    return usage


def _records_of(data: Any, batch: Batch) -> str:
    """A batch's records by their ids, as the error that ends a run on a lost batch names
    them (the lines were checked when read: each is an object with an id)."""
    ids = [str(json.loads(line).get("id")) for line in batch[1]]
    return f"{span('record', ids)} of {data}"


def _batches(config: Any, lines: Iterable[str], todo: int, workers: int) -> Iterator[Batch]:
    """Batches of ``ray_batch_size`` lines; with several workers, smaller towards the end (a
    share of what is left per worker, down to an eighth of the size), so that the workers
    finish at about the same time instead of one running a whole last batch while the others
    wait."""
    settings = config.model_dump_json()
    iterator = iter(lines)
    left = todo
    floor = config.ray_batch_size if workers <= 1 else -(-config.ray_batch_size // TAIL_SPLIT)
    while True:
        size = min(config.ray_batch_size, max(floor, -(-left // (2 * workers))))
        if not (chunk := list(itertools.islice(iterator, size))):
            return
        left -= len(chunk)
        yield settings, chunk


def run_batch(batch: Batch, context: NodeContext) -> dict[str, Any]:
    """One batch on a worker: the results as JSON lines, their tally for the summary, how many
    failed, and the models' usage."""
    from .benchmark import BenchmarkConfig

    config = BenchmarkConfig.model_validate_json(batch[0])
    options = config.model_options.on_worker(context)
    config = config.model_copy(update={"model_options": options})
    records = [parse_record_line(line) for line in batch[1]]  # as the driver read them
    return asyncio.run(_run_batch(config, records))


async def _run_batch(config: Any, records: list[GroundedQARecord]) -> dict[str, Any]:
    from .benchmark import _open_models, _pattern_worker
    from .summary import SummaryTally

    models = _open_models(config, {}, any(r.answer is None for r in records))
    results: list[ResultRecord] = []

    def keep(outcome: tuple[str, ResultRecord | None]) -> None:
        if outcome[1] is not None:  # None: waits on a batch file (never under Ray)
            results.append(outcome[1])

    try:
        worker = _pattern_worker(config, models)
        await run_all(records, worker, keep, concurrency=config.concurrency, progress=False)
    finally:
        for model in models.values():
            await model.aclose()
    tally = SummaryTally()
    for result in results:
        tally.add(result)
    return {
        "results": [model_json(r) for r in results],
        "tally": tally,
        "failed": sum(r.failure is not None or not r.complete for r in results),
        "usage": {name: model.usage.summary() for name, model in models.items()},
    }
