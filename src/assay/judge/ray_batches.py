"""``assay judge run --executor ray``: sample x judge pairs go to Ray workers in batches.

Each worker rebuilds the judges from the run's model options (a ``llamacpp/`` judge is loaded
by the worker itself) and runs exactly the in-process session over its batch: the same
prompts, re-asks, decoding plans and validation, so the records are the ones an in-process
run makes. A pair's earlier attempts travel with it, so a re-ask on a worker sees the
rejected reply as it would in-process. Workers send their records back; the driver alone
archives them, under its lock, batch by batch as they arrive, so the run stays append-only
and resumable. Workers use the response cache on their own node: --cache-path (a relative
one taken from the driver's working directory), else the node's own default (SQLite in WAL
mode, shared by the node's workers and, on the driver's node, the driver).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterable, Iterator
from typing import Any

from ..json_safe import load_model, model_json
from ..model import ModelOptions, NodeContext, get_model, open_cache
from ..runs import Progress, run_all
from ..runs._ray import add_usage, ray_map, span
from .archive import EvaluationRecord, ProtocolState
from .evalset import Sample

# the run config, the protocol state, the judge names, the date, and the pairs as JSON
Batch = tuple[str, str, list[str], str, list[str]]


def judge_on_ray(session: Any, pending: Iterable[Any], count: int) -> None:
    """Judge ``pending`` (a run session's ``count`` unfinished pairs) on the cluster."""
    bar = Progress(count, "judge (ray)", unit="pairs")
    with bar:

        def keep(done: dict[str, Any]) -> None:
            for line in done["records"]:
                session.keep(load_model(EvaluationRecord, line))
            for name, models in done["reported"].items():
                session.reported_models[name].update(models)
            session.exact_refused.update(done["exact_refused"])
            add_usage(session.remote_usage, done["usage"])
            bar.update(done["pairs"], failed=done["failed"])

        options = session.config.model_options or ModelOptions()
        batches = _batches(session, pending)
        ray_map(
            run_batch,
            batches,
            keep,
            context=options.node_context(),
            describe=_pairs_of,
            node_wait_s=session.config.ray_node_wait_s,
        )


def _batches(session: Any, pending: Iterable[Any]) -> Iterator[Batch]:
    head = (
        session.config.model_dump_json(),
        session.state.model_dump_json(),
        [judge.name for judge in session.judges],
        session.today,
    )
    iterator = iter(pending)
    while chunk := list(itertools.islice(iterator, session.config.ray_batch_size)):
        pairs = [_pair_json(work, session.attempts_of(work)) for work in chunk]
        yield (*head, pairs)


def _pairs_of(batch: Batch) -> str:
    """A batch's pairs by the outputs they judge, as the error on a lost batch names them."""
    outputs = [str(json.loads(line)["sample"]["output_id"]) for line in batch[4]]
    return span("pair", outputs) + " (by output id)"


def _pair_json(work: Any, attempts: list[Any]) -> str:
    return json.dumps(
        {
            "sample": json.loads(model_json(work.sample)),
            "judge_index": work.judge_index,
            "method": work.method,
            "attempts": [list(attempt) for attempt in attempts],
        }
    )


def run_batch(batch: Batch, context: NodeContext) -> dict[str, Any]:
    """One batch on a worker: its records as JSON lines, usage, and what the driver notes."""
    return asyncio.run(_run_batch(batch, context))


async def _run_batch(batch: Batch, context: NodeContext) -> dict[str, Any]:
    from .run import JudgeRunConfig, PairOutcome, _Attempt, _JudgeSession, _Work
    from .stub_replies import RESPONDERS

    config = JudgeRunConfig.model_validate_json(batch[0])
    state = ProtocolState.model_validate_json(batch[1])
    options = (config.model_options or ModelOptions()).on_worker(context)
    options = options.with_stub_responders(RESPONDERS)
    cache = open_cache(options)
    judges = [get_model(name, options, cache=cache) for name in batch[2]]
    records: list[EvaluationRecord] = []
    session = _JudgeSession(judges, state, config, batch[3], records.append)
    works = []
    for line in batch[4]:
        pair = json.loads(line)
        work = _Work(load_model(Sample, json.dumps(pair["sample"])), *_index_method(pair))
        works.append(work)
        attempts = [_Attempt(n, v, f, raw, tuple(p)) for n, v, f, raw, p in pair["attempts"]]
        if attempts:
            session.previous[session.key_of(work)] = attempts
    outcomes: list[PairOutcome] = []
    try:
        await run_all(
            works, session.judge, outcomes.append, concurrency=config.concurrency, progress=False
        )
    finally:
        for judge in judges:
            await judge.aclose()
    return {
        "records": [model_json(record) for record in records],
        "pairs": len(batch[4]),
        "failed": outcomes.count("failed"),
        "usage": {judge.name: judge.usage.summary() for judge in judges},
        "reported": {name: sorted(models) for name, models in session.reported_models.items()},
        "exact_refused": session.exact_refused,
    }


def _index_method(pair: dict[str, Any]) -> tuple[int, Any]:
    return int(pair["judge_index"]), pair["method"]
