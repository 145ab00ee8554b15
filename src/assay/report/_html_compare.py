"""Benchmark runs side by side, example by example: for each example id, what every run's
verifier said, and whether the runs agree (the place to see where one pattern catches an error
another misses)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..verify.results import ResultRecord
from ._html_bench import bucket, gold_label, outcome, verdict
from ._html_bench_detail import answer_section, evidence_section
from ._html_common import ExampleSource, RunContent, clip, compact, main_cap
from ._html_model import Cell, Column, Detail, Fact, FactsSection, TextSection


def across_runs_source(contents: list[RunContent]) -> ExampleSource | None:
    """The cross-run table when two or more benchmark runs share example ids, else None."""
    runs = [c for c in contents if c.bench_results]
    if len(runs) < 2:
        return None
    by_id: list[Mapping[str, ResultRecord]] = [c.bench_results for c in runs if c.bench_results]
    ids = list(dict.fromkeys(i for table in by_id for i in table))
    if not any(all(i in table for table in by_id) for i in ids):
        return None
    names = [c.section.name for c in runs]
    columns = [
        Column(key="id", label="id", type="text"),
        Column(key="question", label="question", type="text"),
        Column(key="gold", label="gold", type="category"),
        Column(key="bucket", label="bucket", type="category"),
        Column(key="agreement", label="runs agree?", type="category"),
    ]
    for n, name in enumerate(names):
        columns.append(Column(key=f"verdict_{n}", label=f"{name}: verifier", type="category"))
        columns.append(Column(key=f"p_error_{n}", label=f"{name}: p_error", type="number"))
    rows = [_row(i, by_id) for i in ids]

    def detail(index: int, cap: int | None) -> dict[str, Any]:
        return compact(_detail(ids[index], by_id, names, cap))

    title = "Examples across runs"
    return ExampleSource(
        title=title, source="results.jsonl of each run", columns=columns, rows=rows, detail=detail
    )


def _first(example_id: str, by_id: list[Mapping[str, ResultRecord]]) -> ResultRecord:
    return next(table[example_id] for table in by_id if example_id in table)


def agreement(verdicts: list[str]) -> str:
    if "missing" in verdicts:
        return "missing in a run"
    scored = {v for v in verdicts if v != "unscored"}
    if len(scored) > 1:
        return "disagree"
    return f"all {scored.pop()}" if scored else "unscored"


def _row(example_id: str, by_id: list[Mapping[str, ResultRecord]]) -> list[Cell]:
    first = _first(example_id, by_id)
    records = [table.get(example_id) for table in by_id]
    verdicts = [verdict(r) if r is not None else "missing" for r in records]
    row: list[Cell] = [
        example_id,
        first.question,  # whole: the filter searches it and a hover shows it in full
        gold_label(first),
        bucket(first),
        agreement(verdicts),
    ]
    for record, shown in zip(records, verdicts, strict=True):
        row.extend([shown, None if record is None else record.verifier_score])
    return row


def _detail(
    example_id: str, by_id: list[Mapping[str, ResultRecord]], names: list[str], cap: int | None
) -> Detail:
    first = _first(example_id, by_id)
    sections: list[Any] = [TextSection(title="Question", text=clip(first.question, main_cap(cap)))]
    for name, table in zip(names, by_id, strict=True):
        record = table.get(example_id)
        if record is None:
            sections.append(FactsSection(title=name, facts=[Fact(label="result", value="missing")]))
            continue
        facts = [
            Fact(label="verifier", value=verdict(record)),
            Fact(label="p_error", value=record.verifier_score),
            Fact(label="outcome", value=outcome(record)),
            Fact(label="pattern", value=record.pattern),
            Fact(label="revision used", value=record.revision_used),
            Fact(label="candidates", value=len(record.candidates)),
            Fact(label="tokens", value=record.usage.prompt_tokens + record.usage.completion_tokens),
        ]
        sections.append(FactsSection(title=name, facts=facts))
        section = answer_section(record, cap)
        sections.append(section.model_copy(update={"title": f"{name}: selected answer"}))
    sections.append(evidence_section(first, cap))
    facts = [
        Fact(label="gold label", value=gold_label(first)),
        Fact(label="label source", value=first.label_source),
        Fact(label="failure bucket", value=bucket(first)),
    ]
    return Detail(title=example_id, facts=facts, sections=sections)
