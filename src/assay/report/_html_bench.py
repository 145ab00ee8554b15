"""Report content of a verifier-benchmark run (``assay bench run``): headline metrics with
intervals, the four plots, the failure-bucket table and every example, openable."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from ..json_safe import load_model
from ..verify.results import RESULTS_FILE, ResultRecord, iter_numbered_results, result_lines
from ..verify.summary import failure_reasons_line
from ._html_bench_detail import detail
from ._html_common import (
    ExampleSource,
    ItemSample,
    PackedRecords,
    RunContent,
    SampleSettings,
    compact,
    metric,
    money_note,
    readable_slices,
)
from ._html_generic import base_section
from ._html_model import Cell, Column, Metric, Table

PLOT_TITLES = {
    "calibration": "Reliability diagram (calibration of p_error)",
    "pr_curve": "Precision-recall curve (error detection)",
    "roc_curve": "ROC curve (error detection)",
    "coverage_accuracy": "Coverage vs accuracy (selective prediction)",
}
COLUMNS = [
    Column(key="id", label="id", type="text"),
    Column(key="question", label="question", type="text"),
    Column(key="bucket", label="bucket", type="category"),
    Column(key="gold", label="gold", type="category"),
    Column(key="verdict", label="verifier", type="category"),
    Column(key="outcome", label="outcome", type="category"),
    Column(key="p_error", label="p_error", type="number"),
    Column(key="supported", label="supported claims", type="number"),
    Column(key="revised", label="revised", type="category"),
    Column(key="tokens", label="tokens", type="number"),
]
# (label, path in summary.json, note)
HEADLINE: tuple[tuple[str, str, str], ...] = (
    ("balanced accuracy", "detection.metrics.balanced_accuracy", "mean of the two class recalls"),
    ("precision (error detection)", "detection.metrics.precision", "flag = p_error >= threshold"),
    ("recall (error detection)", "detection.metrics.recall", ""),
    ("F1 (error detection)", "detection.metrics.f1", ""),
    ("AUROC", "detection.metrics.auroc", "from the continuous p_error"),
    ("AUPRC", "detection.metrics.auprc", ""),
    ("ECE, 15 equal-width bins", "detection.metrics.ece_uniform", "calibration of p_error"),
    ("ECE, equal-mass bins", "detection.metrics.ece_quantile", ""),
    ("maximum calibration error", "detection.metrics.mce", ""),
    ("Brier score", "detection.metrics.brier", "lower is better"),
    ("accuracy", "detection.metrics.accuracy", ""),
    ("flag rate", "detection.metrics.flag_rate", "share of answers the verifier flags"),
    ("error rate (gold)", "detection.metrics.positive_rate", "share of answers with an error"),
    ("area under risk-coverage", "selective.aurc", "lower is better"),
    ("citation coverage", "grounding.metrics.citation_coverage", "claims with >= 1 citation"),
    ("supported-claim rate", "grounding.metrics.supported_claim_rate", ""),
    ("uncertain-claim rate", "grounding.metrics.uncertain_rate", "counted, never dropped"),
    ("citation precision", "grounding.metrics.citation_precision", ""),
    ("gold citation precision", "grounding.metrics.gold_citation_precision", ""),
    ("gold citation recall", "grounding.metrics.gold_citation_recall", ""),
    ("examples", "counts.results", ""),
    ("scored", "counts.scored", ""),
    ("verifier failures", "counts.verifier_failures", "recorded with their reason"),
    (
        "examples with failed calls",
        "counts.examples_with_failed_calls",
        "a model call failed after every retry: left out, redone by the next run",
    ),
    ("used for detection metrics", "counts.used_for_detection", "labelled and scored"),
    ("revisions used", "revision.used", ""),
    ("revisions that fixed an error", "revision.fixed", ""),
    ("revisions that broke an answer", "revision.broken", ""),
    ("money per example", "money.per_item", "the work's tokens at the run's price table"),
    ("model calls per example", "cost.per_example.calls", ""),
    ("tokens per example", "cost.per_example.tokens", ""),
    ("latency per example (ms)", "cost.per_example.latency_ms", ""),
)
BUCKET_FIELDS = ("examples", "scored", "flagged", "passed", "unscored", "mean_p_error", "flag_rate")


def bench_content(
    run_dir: Path,
    run: dict[str, Any],
    sampling: SampleSettings | None = None,
    *,
    examples: bool = True,
) -> RunContent:
    section = base_section(run_dir, run, PLOT_TITLES)
    # the money figures as today's rules give them; the summary.json card stays as recorded
    current = {**section.summary, "money": current_money(run_dir, section.summary)}
    section.metrics = headline_metrics(current)
    section.headline = [m for m in section.metrics if m.label in FIRST_SCREEN]
    section.description = describe_bench(run, section.summary)
    for note_key in ("detection_note", "plots_note"):
        if section.summary.get(note_key):
            section.notes.append(str(section.summary[note_key]))
    if (reasons := failure_reasons_line(section.summary.get("counts") or {})) is not None:
        section.notes.append(reasons)  # why examples failed, as bench run printed it
    if (money := money_note(current["money"] or {})) is not None:
        section.notes.append(money)
    if section.summary.get("score_event"):
        section.notes.append(f"score: {section.summary['score_event']}")
    if (calibrated := calibration_note(section.summary)) is not None:
        section.notes.append(calibrated)
    section.tables.extend(bucket_table(section.summary))
    section.tables.extend(missing_words_table(section.summary))
    section.tables.extend(slice_tables(run_dir, section.notes))
    if not examples:  # the numbers alone (assay track): the results are not read
        return RunContent(section=section)
    path = run_dir / RESULTS_FILE
    if not path.exists():
        section.notes.append(f"{RESULTS_FILE} is missing: no example has finished.")
    # The results are read once to sample (keeping line numbers), then the kept lines again
    # as text, held compressed: memory follows the sample, not the run.
    sample: ItemSample[int] = ItemSample(sampling or SampleSettings())
    for number, record in iter_numbered_results(path):
        sample.add(number, failed=record.failure is not None or not record.complete)
    if (note := sample.note("examples", "examples with a failed or unscored check")) is not None:
        section.notes.insert(0, note)
    kept: PackedRecords[ResultRecord] = PackedRecords(ResultRecord)
    rows = []
    for _, line in result_lines(path, set(sample.kept())):
        record = load_model(ResultRecord, line)
        rows.append(row(record))
        kept.add(record.id, line)
    source = ExampleSource(
        title="Examples" if note is None else "Examples (sampled, see the note above)",
        source=RESULTS_FILE,
        columns=COLUMNS,
        rows=rows,
        detail=lambda i, cap: compact(detail(kept.at(i), i + 1, cap)),
    )
    return RunContent(section=section, sources=[source], bench_results=kept)


# the numbers on the first screen, before any configuration
FIRST_SCREEN = {
    "balanced accuracy",
    "AUROC",
    "recall (error detection)",
    "precision (error detection)",
    "ECE, 15 equal-width bins",
    "examples",
}


def describe_bench(run: dict[str, Any], summary: dict[str, Any]) -> str:
    config = run.get("config") or summary.get("config") or {}
    parts = ["verifier benchmark"]
    for key, label in (("pattern", "pattern"), ("verifier", "verifier"), ("data", "data")):
        if config.get(key):
            parts.append(f"{label} {Path(str(config[key])).name if key == 'data' else config[key]}")
    return ", ".join(parts)


def calibration_note(summary: dict[str, Any]) -> str | None:
    """Which calibration file the metrics were scored with, and where its map came from."""
    applied = summary.get("calibration")
    if not isinstance(applied, dict):
        return None
    if applied.get("stated_error_rate") is not None:
        source = f"a stated error rate of {applied['stated_error_rate']:g}, no labels"
    else:
        source = f"fitted on {applied.get('dev_run')} ({applied.get('dev_n')} labelled answers)"
    return (
        f"calibrated: p_error mapped by {applied.get('file')} ({applied.get('method')} map, "
        f"{source}); flagged at calibrated p_error >= {applied.get('threshold', 0.0):.4f} "
        f"(raw {applied.get('raw_threshold', 0.0):.4f}, target {applied.get('target')})"
    )


def headline_metrics(summary: dict[str, Any]) -> list[Metric]:
    found = []
    for label, path, note in HEADLINE:
        item = metric(summary, label, path, note)
        if item is not None:
            found.append(item)
    return found


def current_money(run_dir: Path, summary: dict[str, Any]) -> Any:
    """The summary's money recomputed from the run's tokens under today's rules (a summary of
    an older assay said "unknown" for a model in assay's own process); as recorded when the
    summary is not this version's."""
    from pydantic import ValidationError

    from ..verify.summary import BenchSummary, with_current_money

    try:
        parsed = BenchSummary.model_validate(summary)
    except ValidationError:
        return summary.get("money")
    money = with_current_money(run_dir, parsed).money
    return None if money is None else money.model_dump(mode="json")


def slice_tables(run_dir: Path, notes: list[str]) -> list[Table]:
    """One table per ``bench summarize --by meta.KEY`` written into the run."""
    from ..verify.slices import COLUMNS, SLICES_DIR, slice_cells
    from ..verify.summary import BenchSummary

    tables = []
    rewrite = "`assay bench summarize RUN --by KEY`"
    for path, by, summaries in readable_slices(run_dir / SLICES_DIR, BenchSummary, notes, rewrite):
        rows: list[list[Cell]] = [list(slice_cells(k, v)) for k, v in summaries.items()]
        tables.append(
            Table(
                title=f"Slices by {by}",
                columns=[by, "n", "error rate", *COLUMNS],
                rows=rows,
                note="every metric on the slice's answers alone, 95% intervals; "
                f"from {SLICES_DIR}/{path.name}",
            )
        )
    return tables


def bucket_table(summary: dict[str, Any]) -> list[Table]:
    buckets = summary.get("buckets")
    if not isinstance(buckets, dict) or not buckets:
        return []
    rows: list[list[Cell]] = [
        [name, *(stats.get(field) for field in BUCKET_FIELDS)]
        for name, stats in buckets.items()
        if isinstance(stats, dict)
    ]
    return [
        Table(
            title="Failure buckets",
            columns=["bucket", *(f.replace("_", " ") for f in BUCKET_FIELDS)],
            rows=rows,
            note="bucket = the gold error type of the answer (grounded = no error); "
            "flagged = the verifier says it has an error",
        )
    ]


def missing_words_table(summary: dict[str, Any]) -> list[Table]:
    """The claim words the checker found nowhere, side by side for its false alarms and the
    errors it caught (summary.json's ``missing_words``; only a model-free checker keeps them)."""
    stats = summary.get("missing_words")
    if not isinstance(stats, dict):
        return []
    false_alarms, caught = stats.get("in_false_alarms") or [], stats.get("in_caught_errors") or []
    rows: list[list[Cell]] = [
        [*(a or ("", None)), *(c or ("", None))]
        for a, c in itertools.zip_longest(false_alarms, caught)
    ]
    note = (
        f"answers missing each word, among the {stats.get('false_alarms', 0)} grounded answers "
        f"flagged (false alarms) and the {stats.get('caught_errors', 0)} error answers flagged; "
        "words the false alarms miss are what the checker could not match (a paraphrase, the "
        "answer's own words)"
    )
    if stats.get("capped"):
        note += "; words first met after 50,000 distinct ones were not counted"
    return [
        Table(
            title="Claim words not found in the evidence",
            columns=["word (false alarms)", "answers", "word (caught errors)", "answers"],
            rows=rows,
            note=note,
        )
    ]


def gold_label(record: ResultRecord) -> str:
    if record.gold_error is None:
        return "none"
    return "error" if record.gold_error else "grounded"


def verdict(record: ResultRecord) -> str:
    if record.verifier_pass is None:
        return "unscored"
    return "pass" if record.verifier_pass else "flag"


def outcome(record: ResultRecord) -> str:
    """The verifier's call against the gold label; an error is the positive class."""
    if record.verifier_pass is None:
        return "unscored"
    if record.gold_error is None:
        return "unlabelled"
    if record.gold_error:
        return "missed error (FN)" if record.verifier_pass else "caught error (TP)"
    return "correct pass (TN)" if record.verifier_pass else "false alarm (FP)"


def bucket(record: ResultRecord) -> str:
    return record.failure_bucket or ("unlabelled" if record.gold_error is None else "other")


def row(record: ResultRecord) -> list[Cell]:
    claims = record.claim_checks
    supported = sum(1 for c in claims if c.label == "supported")
    return [
        record.id,
        record.question,  # whole: the filter searches it and a hover shows it in full
        bucket(record),
        gold_label(record),
        verdict(record),
        outcome(record),
        record.verifier_score,
        round(supported / len(claims), 4) if claims else None,
        "yes" if record.revision_used else "no",
        record.usage.prompt_tokens + record.usage.completion_tokens,
    ]
