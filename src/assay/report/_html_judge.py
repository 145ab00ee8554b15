"""Report content of a judge run (``assay judge run`` then ``assay judge analyze``): the tables
of summary.json, and every archived evaluation, valid and invalid, openable."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from ..json_safe import model_json
from ..judge.analysis_types import JudgeSummary
from ..judge.archive import ArchivedFile, EvaluationRecord, iter_archive, read_archived
from ..judge.evidence import quote_spans
from ._html_common import (
    ExampleSource,
    ItemSample,
    PackedRecords,
    RunContent,
    SampleSettings,
    clip,
    compact,
    format_number,
    isolated,
    main_cap,
    money_note,
    readable_slices,
    utf16_index,
)
from ._html_generic import base_section, summary_metrics
from ._html_label_agreement import label_agreement_tables
from ._html_model import (
    Cell,
    Column,
    Detail,
    Fact,
    Mark,
    Metric,
    Table,
    TableSection,
    TextSection,
)

PLOT_TITLES = {
    "dimension_means_cross": "Mean score per dimension, cross-judge (95% CI)",
    "verdicts": "Verdict distribution (valid evaluations)",
    "invalid_rates": "Invalid-evaluation rate per judge x target x variant",
}
COLUMNS = [
    Column(key="question_id", label="question", type="category", searchable=True),
    Column(key="prompt_variant", label="variant", type="category", searchable=True),
    Column(key="target_model", label="target", type="category", searchable=True),
    Column(key="judge_model", label="judge", type="category", searchable=True),
    Column(key="method", label="method", type="category"),
    Column(key="attempt", label="attempt", type="number"),
    Column(key="verdict", label="verdict", type="category"),
    Column(key="overall_score", label="overall", type="number"),
    Column(key="flags", label="flags", type="text"),
    Column(key="output_id", label="output_id", type="text"),
]
_COUNTS = (
    ("evaluations (all attempts)", "records"),
    ("samples x judges", "work_items"),
    ("valid", "valid"),
    ("invalid", "invalid"),
    ("valid rate", "valid_rate"),
    ("first-attempt valid rate", "first_attempt_valid_rate"),
)


def judge_content(
    run_dir: Path,
    run: dict[str, Any],
    sampling: SampleSettings | None = None,
    *,
    examples: bool = True,
) -> RunContent:
    section = base_section(run_dir, run, PLOT_TITLES)
    summary = _typed_summary(section.summary, section.notes)
    if summary is None:
        section.metrics = summary_metrics(section.summary)
    else:
        section.metrics = count_metrics(summary)
        section.tables.extend(summary_tables(summary))
        section.notes.extend(summary.notes)
    section.tables.extend(slice_tables(run_dir, section.notes))
    section.tables.extend(label_agreement_tables(run_dir, section.notes, draws=False))
    money = section.summary.get("money") or {}
    if money.get("known") and money.get("per_item") is not None:
        section.metrics.append(
            Metric(label="money per sample x judge", value=money["per_item"], path="money.per_item")
        )
    if (note := money_note(money)) is not None:
        section.notes.append(note)
    section.headline = [m for m in section.metrics if m.label in FIRST_SCREEN]
    section.description = describe_judge(run)
    if not examples:  # the numbers alone (assay track): the archive is not read
        return RunContent(section=section)
    sample, unreadable_now = _records(run_dir, section.notes, sampling or SampleSettings())
    if summary is not None and (note := _stale_note(summary, sample, unreadable_now)):
        section.notes.insert(0, note)
    kept = kept_records(run_dir, sample.kept(), section.notes)
    unreadable = [n.removeprefix(UNREADABLE) for n in section.notes if n.startswith(UNREADABLE)]
    warn_unreadable(run_dir, unreadable, "report")
    if (note := sample.note("evaluations", "invalid evaluations")) is not None:
        section.notes.insert(0, note)
    marker = "" if note is None else " (sampled, see the note above)"
    sources = [
        _source(f"Valid evaluations{marker}", "valid_evaluations/", kept, valid=True),
        _source(f"Invalid evaluations{marker}", "invalid_evaluations/", kept, valid=False),
    ]
    return RunContent(section=section, sources=sources)


FIRST_SCREEN = {"samples x judges", "valid", "invalid", "valid rate", "first-attempt valid rate"}


def describe_judge(run: dict[str, Any]) -> str:
    judges = ", ".join(isolated(name) for name in sorted((run.get("usage") or {}).keys()))
    mode = (run.get("config") or {}).get("mode")
    parts = ["judge run"] + ([f"judges {judges}"] if judges else [])
    return ", ".join(parts + ([f"mode {mode}"] if mode else []))


def slice_tables(run_dir: Path, notes: list[str]) -> list[Table]:
    """One table per ``judge analyze --by meta.KEY`` written into the run."""
    from ..judge.slices import SLICES_DIR

    tables = []
    rewrite = "`assay judge analyze RUN --by KEY`"
    for path, by, summaries in readable_slices(run_dir / SLICES_DIR, JudgeSummary, notes, rewrite):
        rows: list[list[Cell]] = [
            [k, s.counts.work_items, s.counts.valid, s.counts.valid_rate, *_overall(s)]
            for k, s in summaries.items()
        ]
        tables.append(
            Table(
                title=f"Slices by {by}",
                columns=[by, "samples x judges", "valid", "valid rate", "mean overall"],
                rows=rows,
                note="overall score of the slice's valid evaluations; "
                f"from {SLICES_DIR}/{path.name}",
            )
        )
    return tables


def _overall(summary: JudgeSummary) -> list[Cell]:
    rows = [s for s in summary.scores if s.dimension == "overall_score"]
    n = sum(r.n for r in rows)
    return [round(sum(r.mean * r.n for r in rows) / n, 3) if n else None]


def _typed_summary(raw: dict[str, Any], notes: list[str]) -> JudgeSummary | None:
    if not raw:
        notes.append("No analysis yet: run `assay judge analyze RUN_DIR` for the score tables.")
        return None
    try:
        return JudgeSummary.model_validate(raw)
    except ValidationError as error:
        notes.append(f"summary.json does not match this assay version's judge summary: {error}")
        return None


def _records(
    run_dir: Path, notes: list[str], sampling: SampleSettings
) -> tuple[ItemSample[ArchivedFile], int]:
    """Every invalid record and a seeded sample of the valid ones (all of a small run), and
    how many records could not be read.

    The archive is read once without texts, which is all the sampling needs; only what is
    kept is read again whole (see :func:`kept_records`), so memory holds the sample's
    locations, not a million prompts."""
    sample: ItemSample[ArchivedFile] = ItemSample(sampling)
    unreadable = 0
    for item in iter_archive(run_dir, summary_only=True):
        if item.record is None:
            _note_unreadable(item, notes)
            unreadable += 1
            continue
        located = item.model_copy(update={"record": None})
        sample.add(located, failed=not item.in_valid_archive)
    return sample, unreadable


def _stale_note(
    summary: JudgeSummary, sample: ItemSample[ArchivedFile], unreadable: int
) -> str | None:
    """A warning when the archive holds other records than summary.json was computed on
    (``judge run`` added evaluations after ``judge analyze``): the tables would otherwise
    sit beside evaluations they do not count. ``judge analyze`` reads the archive as the
    report does, and records are only ever added, so equal counts mean the same records."""
    readable = sample.rest_seen + sample.failed_seen
    counted = summary.counts.records
    if (readable, unreadable) == (counted, len(summary.skipped_unreadable)):
        return None
    unread = f", {unreadable:,} unreadable" if unreadable else ""
    return (
        f"summary.json is out of date: it counts {counted:,} evaluation records, the archive "
        f"now holds {readable:,}{unread}; the score tables are the old ones: "
        "`assay judge analyze RUN_DIR` updates them"
    )


UNREADABLE = "unreadable evaluation "


def _note_unreadable(item: ArchivedFile, notes: list[str]) -> None:
    notes.append(f"{UNREADABLE}{item.where}: {(item.error or '')[:200]}")


def warn_unreadable(run_dir: Path, unreadable: list[str], what: str) -> None:
    """Say on stderr how many archived evaluations are left out of ``what`` and why: a
    damaged archive must not pass for a smaller run."""
    if not unreadable:
        return
    shown = "".join(f"\n  {line}" for line in unreadable[:5])
    more = f"\n  ... and {len(unreadable) - 5} more" if len(unreadable) > 5 else ""
    print(
        f"warning: {run_dir}: {len(unreadable)} archived evaluation(s) could not be read and "
        f"are left out of the {what} (`assay judge validate {run_dir}` checks the archive):"
        f"{shown}{more}",
        file=sys.stderr,
    )


class _Kept(NamedTuple):
    """What the page shows of the kept evaluations: rows now, records on demand."""

    rows: list[list[Cell]]
    records: PackedRecords[EvaluationRecord]  # by where each one is stored
    valid: list[bool]


def kept_records(run_dir: Path, kept: list[ArchivedFile], notes: list[str]) -> _Kept:
    """The kept items read again whole, in their order, and held compressed."""
    shown = _Kept([], PackedRecords(EvaluationRecord), [])
    for item in read_archived(run_dir, kept):
        if item.record is None:
            _note_unreadable(item, notes)
            continue
        where = str(item.path.relative_to(run_dir))
        where += "" if item.line is None else f":{item.line}"
        shown.rows.append(row(item.record))
        shown.records.add(where, model_json(item.record))
        shown.valid.append(item.in_valid_archive)
    return shown


def _source(title: str, folder: str, kept: _Kept, valid: bool) -> ExampleSource:
    chosen = [i for i, in_valid in enumerate(kept.valid) if in_valid == valid]
    wheres = list(kept.records)

    def detail_of(index: int, cap: int | None) -> dict[str, Any]:
        at = chosen[index]
        return compact(detail(kept.records.at(at), wheres[at], cap))

    return ExampleSource(
        title=title,
        source=folder,
        columns=COLUMNS,
        rows=[kept.rows[i] for i in chosen],
        detail=detail_of,
    )


def count_metrics(summary: JudgeSummary) -> list[Metric]:
    counts = summary.counts.model_dump()
    return [Metric(label=label, value=counts[key], path=f"counts.{key}") for label, key in _COUNTS]


def row(record: EvaluationRecord) -> list[Cell]:
    c = record.classification
    return [
        record.question_id,
        record.prompt_variant,
        record.target_model,
        record.judge_model,
        record.method,
        record.attempt,
        c.verdict if record.valid else "invalid",
        c.overall_score,
        " ".join(record.flags),
        record.output_id,
    ]


def _ci(mean: float, low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return format_number(mean)
    return f"{format_number(mean)} [{format_number(low)}, {format_number(high)}]"


def summary_tables(summary: JudgeSummary) -> list[Table]:
    return [
        *coverage_table(summary),
        score_table(summary),
        verdict_table(summary),
        invalid_table(summary),
        self_preference_table(summary),
        length_preference_table(summary),
        agreement_table(summary),
        variant_table(summary),
    ]


def coverage_table(summary: JudgeSummary) -> list[Table]:
    """Set-level coverage: the cross product question x variant x target and what was there."""
    coverage = summary.coverage
    if coverage is None:
        return []
    counts: list[list[Cell]] = [
        ["questions", coverage.questions],
        ["question x variant cells", coverage.variants],
        ["target models", len(coverage.target_models)],
        ["expected outputs", coverage.expected],
        ["aligned outputs", coverage.aligned],
        ["missing", coverage.count("missing")],
        ["duplicated", coverage.count("duplicated")],
        ["unexpected", coverage.count("unexpected")],
    ]
    issues: list[list[Cell]] = [
        [i.kind, i.question_id, i.prompt_variant, i.target_model, ", ".join(i.sources)]
        for i in coverage.issues
    ]
    tables = [
        Table(
            title="Evaluation set coverage",
            columns=["", "count"],
            rows=counts,
            note="complete" if coverage.complete else "INCOMPLETE_COVERAGE at set level",
        )
    ]
    if issues:
        columns = ["issue", "question", "variant", "target", "sources"]
        tables.append(Table(title="Coverage issues", columns=columns, rows=issues))
    return tables


def score_table(summary: JudgeSummary) -> Table:
    """Mean score [CI] per method x judge x target x variant (rows) and dimension (columns)."""
    dimensions = list(dict.fromkeys(r.dimension for r in summary.scores))
    cells: dict[tuple[str, ...], dict[str, str]] = {}
    counts: dict[tuple[str, ...], int] = {}
    for r in summary.scores:
        key = (r.method, r.judge_model, r.target_model, r.prompt_variant)
        cells.setdefault(key, {})[r.dimension] = _ci(r.mean, r.ci_low, r.ci_high)
        counts[key] = max(counts.get(key, 0), r.n)
    rows: list[list[Cell]] = [
        [*key, counts[key], *(cells[key].get(d, "—") for d in dimensions)] for key in cells
    ]
    return Table(
        title="Scores per target x variant x dimension (valid evaluations only)",
        columns=["method", "judge", "target", "variant", "n", *dimensions],
        rows=rows,
        note=f"mean [{summary.confidence:.0%} CI, {summary.bootstrap}]; self_judge rows are "
        "diagnostic, cross_judge rows are the primary statistics",
    )


def verdict_table(summary: JudgeSummary) -> Table:
    verdicts = list(dict.fromkeys(v for r in summary.verdicts for v in r.counts))
    rows: list[list[Cell]] = [
        [
            r.method,
            r.judge_model,
            r.target_model,
            r.prompt_variant,
            r.n,
            *_counts(r.counts, verdicts),
        ]
        for r in summary.verdicts
    ]
    columns = ["method", "judge", "target", "variant", "n", *verdicts]
    return Table(title="Verdicts", columns=columns, rows=rows)


def _counts(counts: dict[str, int], keys: list[str]) -> list[Cell]:
    return [counts.get(k, 0) for k in keys]


def invalid_table(summary: JudgeSummary) -> Table:
    rows: list[list[Cell]] = [
        [
            r.method,
            r.judge_model,
            r.target_model,
            r.prompt_variant,
            r.n,
            r.invalid,
            r.rate,
            r.first_attempt_rate,
            ", ".join(f"{flag} x{n}" for flag, n in sorted(r.flags.items())),
        ]
        for r in summary.invalid_rates
    ]
    columns = ["method", "judge", "target", "variant", "n", "invalid", "rate"]
    return Table(
        title="Invalid evaluations (never scored)",
        columns=[*columns, "first-attempt rate", "flags"],
        rows=rows,
    )


def self_preference_table(summary: JudgeSummary) -> Table:
    rows: list[list[Cell]] = [
        [
            r.model,
            r.dimension,
            r.n_pairs,
            r.self_mean,
            r.cross_mean,
            _ci(r.difference, r.ci_low, r.ci_high),
            ", ".join(r.cross_judges),
        ]
        for r in summary.self_preference
    ]
    columns = ["model", "dimension", "pairs", "self mean", "cross mean", "self - cross [CI]"]
    return Table(
        title="Self-judge vs cross-judge (self-preference)",
        columns=[*columns, "cross judges"],
        rows=rows,
        note="" if rows else "needs a model that judged its own outputs and was judged by another",
    )


def length_preference_table(summary: JudgeSummary) -> Table:
    from ..judge.analysis_report import LENGTH_INTRO

    rows: list[list[Cell]] = [
        [r.method, r.judge_model, r.questions, r.pairs, _ci(r.longer_higher, r.ci_low, r.ci_high)]
        for r in summary.length_preference
    ]
    columns = ["method", "judge", "questions", "pairs", "longer scored higher [CI]"]
    return Table(title="Length preference", columns=columns, rows=rows, note=LENGTH_INTRO)


def agreement_table(summary: JudgeSummary) -> Table:
    rows: list[list[Cell]] = [
        [r.scope, r.dimension, r.statistic, " vs ".join(r.judges), r.n_units, r.value, r.note]
        for r in summary.agreement
    ]
    return Table(
        title="Agreement between judges",
        columns=["scope", "dimension", "statistic", "judges", "units", "value", "note"],
        rows=rows,
        note="" if rows else "needs two or more judges scoring the same samples",
    )


def variant_table(summary: JudgeSummary) -> Table:
    rows: list[list[Cell]] = [
        [
            r.method,
            r.judge_model,
            r.target_model,
            f"{r.variant} - {r.baseline}",
            r.dimension,
            r.n_pairs,
            _ci(r.mean_difference, r.ci_low, r.ci_high),
        ]
        for r in summary.variant_effects
    ]
    columns = ["method", "judge", "target", "variant - baseline", "dimension", "pairs"]
    return Table(
        title="Prompt-variant effects (paired by question)",
        columns=[*columns, "mean difference [CI]"],
        rows=rows,
    )


def quote_marks(output: str, evidence: list[tuple[str, str]]) -> tuple[list[Mark], list[bool]]:
    """Marks for each (dimension, quote) in the output, and which quotes were found, by the
    validator's own matcher (:func:`assay.judge.evidence.quote_spans`). Quotes often overlap:
    the text is cut into segments at every quote boundary, each segment marked with every quote
    covering it."""
    spans: list[tuple[int, int, int]] = []  # start, end, quote number
    found: list[bool] = []
    for n, (_, quote) in enumerate(evidence, start=1):
        pieces = quote_spans(quote, output)
        found.append(pieces is not None)
        spans.extend((start, end, n) for start, end in pieces or [])
    cuts = sorted({p for start, end, _ in spans for p in (start, end)})
    marks = []
    for start, end in itertools.pairwise(cuts):
        covering = [n for s, e, n in spans if s <= start and end <= e]
        if not covering:
            continue
        ending = [n for s, e, n in spans if e == end]
        marks.append(
            Mark(
                start=utf16_index(output, start),
                end=utf16_index(output, end),
                cls="quote",
                label=" ".join(f"{n} {evidence[n - 1][0]}" for n in ending),
                title="evidence " + ", ".join(str(n) for n in covering),
            )
        )
    return marks, found


def detail(record: EvaluationRecord, where: str, cap: int | None) -> Detail:
    c = record.classification
    output = clip(record.evaluated_output, main_cap(cap))
    evidence = [(e.dimension, e.quote) for e in c.evidence]
    marks, highlighted = quote_marks(output, evidence)
    sections: list[Any] = [
        TextSection(
            title="Evaluated output (evidence quotes highlighted)", text=output, marks=marks
        )
    ]
    if c.scores:
        rows: list[list[Cell]] = [[k, v] for k, v in c.scores.items()]
        rows.append(["overall_score", c.overall_score])
        sections.append(TableSection(table=Table(title="Scores", columns=["", ""], rows=rows)))
    if c.evidence:
        sections.append(TableSection(table=evidence_table(c.evidence, highlighted, cap)))
    failed = c.failed_checks
    if failed:
        rows = [[k.name, k.flag, clip(k.detail, cap)] for k in failed]
        table = Table(title="Checks that fired", columns=["check", "flag", "detail"], rows=rows)
        sections.append(TableSection(table=table))
    sections.extend(_reply_sections(record, cap))
    return Detail(title=_title(record), facts=facts(record, where), sections=sections)


def evidence_table(evidence: Any, highlighted: list[bool], cap: int | None) -> Table:
    rows: list[list[Cell]] = [
        [n, e.dimension, clip(e.quote, cap), clip(e.reason, cap), e.located, shown]
        for n, (e, shown) in enumerate(zip(evidence, highlighted, strict=True), start=1)
    ]
    return Table(
        title="Evidence",
        columns=["#", "dimension", "quote", "reason", "located (validator)", "highlighted"],
        rows=rows,
        note="located: the validator found the quote after NFKD, quote/dash, whitespace and "
        "case normalisation; highlighted: this page could mark it in the text",
    )


def _reply_sections(record: EvaluationRecord, cap: int | None) -> list[Any]:
    c = record.classification
    sections: list[Any] = []
    if c.notes:
        sections.append(TextSection(title="Judge notes", text=clip(c.notes, cap)))
    if record.call_failure is not None:
        failure = record.call_failure
        text = f"{failure.kind}: {failure.message} (after {failure.attempts} attempts)"
        sections.append(TextSection(title="Judge call failed", text=clip(text, cap)))
    if record.raw_reply is not None:
        sections.append(
            TextSection(
                title="Raw judge reply", text=clip(record.raw_reply, main_cap(cap)), pre=True
            )
        )
    prompt = "\n\n".join(f"--- {m.role} ---\n{m.content}" for m in record.messages)
    title = "Prompt sent to the judge (verbatim)"
    sections.append(TextSection(title=title, text=clip(prompt, cap), pre=True, collapsed=True))
    if not record.valid and c.parsed is not None:
        salvaged = json.dumps(c.parsed, indent=2, ensure_ascii=False)
        title = "Salvaged object (kept for the record; the evaluation stays invalid)"
        sections.append(TextSection(title=title, text=clip(salvaged, cap), pre=True))
    return sections


def _title(record: EvaluationRecord) -> str:
    question, variant = isolated(record.question_id), isolated(record.prompt_variant)
    target, judge = isolated(record.target_model), isolated(record.judge_model)
    return f"{question} / {variant} / {target} judged by {judge} (attempt {record.attempt})"


def facts(record: EvaluationRecord, where: str) -> list[Fact]:
    c = record.classification
    validity = Fact(
        label="validity",
        value="valid" if record.valid else "invalid",
        badge="good" if record.valid else "bad",
    )
    found = [
        validity,
        Fact(label="verdict", value=c.verdict),
        Fact(label="overall_score", value=c.overall_score),
        Fact(label="method", value=record.method),
        Fact(label="output_id", value=record.output_id),
        Fact(label="flags", value=" ".join(record.flags) or "none"),
        Fact(label="constrained decoding", value=record.constrained),
        Fact(label="archived at", value=where),
        Fact(label="created", value=record.created_at),
    ]
    if record.call is not None:
        tokens = f"{record.call.prompt_tokens} + {record.call.completion_tokens}"
        found.append(Fact(label="tokens (prompt + completion)", value=tokens))
    return found
