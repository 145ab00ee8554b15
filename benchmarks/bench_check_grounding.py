"""``assay.check_grounding`` against the path ``assay bench run --pattern entailment --verifier
learned`` takes per answer: ms per answer, side by side in one run, on the same answers.

    .venv/bin/python benchmarks/bench_check_grounding.py --repeats 3

The bench path is ``score_answer`` with the checking context the integrations share, on the
imported records' own evidence (what a run does per answer, without the run's files), each
answer run with ``asyncio.run``. The call is the public
``check_grounding(answer, passages)``: the passages given as plain dicts, as an application
holds them, read, checked and decided per call (an event loop per call), and given again as
a LangChain ``Document`` each, serialised per call. Both paths give the same ``p_error`` on
every answer (checked here, not only timed). Data: HaluEval QA (short answers, one short
knowledge paragraph) and WiCE dev (one claim against its cited web page, up to ~1,100
sentences). Each answer's time is the best of ``--repeats`` passes, caches cleared before
each pass, so a record's first check pays for indexing its evidence on every path.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
FILES = {"halueval": "halueval/qa_one-turn_data.json", "wice": "wice/claim_dev.jsonl"}
PATHS = ("bench path", "check_grounding (dicts)", "check_grounding (LangChain documents)")


def _records(name: str, data_dir: Path, limit: int) -> list[Any]:
    from assay.data.importers.halueval import import_halueval
    from assay.data.importers.wice import import_wice

    importer = {"halueval": import_halueval, "wice": import_wice}[name]
    return [r for r in importer(data_dir / FILES[name]).records if r.answer][:limit]


def _passages(record: Any) -> list[dict[str, str]]:
    return [{"id": e.evidence_id, "text": e.text} for e in record.evidence]


def _bench_path(records: Sequence[Any]) -> Callable[[int], float | None]:
    from assay.integrations._grounding import score_grounding

    def one(index: int) -> float | None:
        record = records[index]
        check = score_grounding(
            record.answer, record_id=record.id, question="", evidence=record.evidence
        )
        return asyncio.run(check).p_error

    return one


def _call(records: Sequence[Any], documents: bool) -> Callable[[int], float | None]:
    from langchain_core.documents import Document

    from assay import check_grounding

    def one(index: int) -> float | None:
        record = records[index]
        passages: list[Any] = _passages(record)
        if documents:
            passages = [Document(id=p["id"], page_content=p["text"]) for p in passages]
        return check_grounding(record.answer, passages).raw_p_error

    return one


def _clear_caches() -> None:
    """Empty the checker's lru caches (text statistics, evidence indexes)."""
    import importlib

    for name in (
        "assay.verify.checkers.learned",
        "assay.verify.checkers._learned_text",
        "assay.verify.checkers._align",
    ):
        module = importlib.import_module(name)
        for value in vars(module).values():
            cached = hasattr(value, "cache_clear") and value.__module__ == name
            if cached and getattr(value, "__name__", "") != "shipped_weights":
                value.cache_clear()


Timed = tuple[list[float], list[float | None]]  # best ms per answer, and its p_error


def _time(path: Callable[[int], float | None], count: int, repeats: int) -> Timed:
    best = [float("inf")] * count
    scores: list[float | None] = []
    for _ in range(repeats):
        _clear_caches()
        scores = []
        for index in range(count):
            start = time.perf_counter()
            scores.append(path(index))
            best[index] = min(best[index], 1000 * (time.perf_counter() - start))
    return best, scores


def measure(data_dir: Path, limit: int, repeats: int) -> list[str]:
    rows = []
    for name in FILES:
        records = _records(name, data_dir, limit)
        paths = {
            PATHS[0]: _bench_path(records),
            PATHS[1]: _call(records, documents=False),
            PATHS[2]: _call(records, documents=True),
        }
        timed = {label: _time(path, len(records), repeats) for label, path in paths.items()}
        reference = timed[PATHS[0]][1]
        for label, (_, scores) in timed.items():
            if scores != reference:
                raise SystemExit(f"{name}: {label} gives other p_error than the bench path")
        base = statistics.median(timed[PATHS[0]][0])
        for label, (times, _) in timed.items():
            ordered = sorted(times)
            median = statistics.median(ordered)
            p95 = ordered[int(0.95 * (len(ordered) - 1))]
            rows.append(
                f"| {name} | {label} | {len(ordered)} | {median:.2f} | {p95:.2f} | "
                f"{ordered[-1]:.1f} | {median / base:.2f}x |"
            )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=400, help="answers per data set")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes (best kept)")
    args = parser.parse_args()
    print("| data | path | answers | median ms | p95 ms | max ms | median / bench path |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for row in measure(args.data_dir, args.limit, args.repeats):
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
