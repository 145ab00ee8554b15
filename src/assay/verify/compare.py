"""``assay bench compare``: runs side by side, as markdown.

Each run is read from its summary.json (rebuilt from results.jsonl, without plots, when the
file is missing), so comparing never calls a model and never changes a run directory.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InputError
from ..metrics import mcnemar_exact_p
from ..tables import Table
from .paired_runs import PAIRED_RESAMPLES, PairedRun, ScoredRow, metric_differences, scored_rows
from .results import RESULTS_FILE
from .summary import SUMMARY_FILE, BenchSummary, build_summary, with_current_money

DETECTION_COLUMNS = (
    ("precision", "precision"),
    ("recall", "recall"),
    ("f1", "F1"),
    ("auroc", "AUROC"),
    ("auprc", "AUPRC"),
    ("ece_uniform", "ECE (15 equal-width)"),
    ("ece_quantile", "ECE (15 equal-mass)"),
    ("brier", "Brier"),
)
GROUNDING_COLUMNS = (
    ("citation_coverage", "citation coverage"),
    ("supported_claim_rate", "supported-claim rate"),
    ("uncertain_rate", "uncertain rate"),
    ("citation_precision", "citation precision"),
    ("gold_citation_precision", "gold-citation precision"),
    ("gold_citation_recall", "gold-citation recall"),
)


def load_summary(run_dir: Path) -> BenchSummary:
    """The run's summary.json (its money as today's rules give it), or one rebuilt from its
    results.jsonl (no plots written)."""
    path = run_dir / SUMMARY_FILE
    if path.is_file():
        return with_current_money(run_dir, _read_summary(path))
    if not (run_dir / RESULTS_FILE).is_file():
        raise InputError(
            "not a bench run directory (no summary.json, no results.jsonl)", path=run_dir
        )
    return build_summary(run_dir, plots=False)


def _read_summary(path: Path) -> BenchSummary:
    """A summary.json, or one error naming the file and its first bad field (``bench
    summarize RUN`` rebuilds it from the run's results)."""
    try:
        return BenchSummary.model_validate_json(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {error.start + 1})", path=path) from None
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or None
        raise InputError(
            f"not a bench summary: {first['msg']}",
            path=path,
            field=field,
            hint=f"assay bench summarize {path.parent} rebuilds it from the run's results",
        ) from None


@dataclass(frozen=True)
class PairDifferences:
    """Run B's detection metrics minus run A's on the answers both scored (``differences``:
    :func:`~.paired_runs.metric_differences`, None when they share no labelled answer)."""

    run_a: str
    run_b: str
    differences: dict[str, Any] | None


@dataclass(frozen=True)
class Comparison:
    """What ``bench compare`` prints, and the data its paired sections were made of."""

    names: list[str]
    run_dirs: list[Path]
    summaries: list[BenchSummary]
    pairs: list[PairDifferences]  # every pair in order (A before B), up to MAX_PAIRED_RUNS runs
    markdown: str


def compare_markdown(run_dirs: Sequence[Path]) -> str:
    """The comparison report of ``run_dirs`` (in the order given)."""
    return compare_runs(run_dirs).markdown


def compare_runs(run_dirs: Sequence[Path], by: Sequence[str] = ()) -> Comparison:
    """The comparison of ``run_dirs`` (in the order given): its markdown and paired data;
    ``by``: also the paired differences per value of each ``meta.KEY``."""
    names = [_name(d, run_dirs) for d in run_dirs]
    summaries = [(name, load_summary(d)) for name, d in zip(names, run_dirs, strict=True)]
    sections = [
        "# Verifier benchmark comparison",
        "Positive class: the answer has a grounding error. Scores are `p_error`; an answer is "
        "flagged when `p_error >= threshold`. Brackets are 95% bootstrap intervals clustered "
        "by question (`record.group`, else the id).",
        _runs_table(summaries),
        _detection_table(summaries),
        _gate_table(summaries),
        _grounding_table(summaries),
        _cost_table(summaries),
        _revision_table(summaries),
        _bucket_table(summaries),
    ]
    pairs: list[PairDifferences] = []
    if len(run_dirs) > MAX_PAIRED_RUNS:
        skipped = f"Skipped: more than {MAX_PAIRED_RUNS} runs."
        sections += [f"## {title}\n\n{skipped}" for title in PAIRED_TITLES]
    elif len(run_dirs) > 1:
        by = list(dict.fromkeys(by))
        rows = [scored_rows(d, by) for d in run_dirs]  # each run read once for every paired section
        sections.append(identical_section(names, run_dirs, [s for _, s in summaries], rows))
        sections.append(paired_table(names, rows))
        runs = [PairedRun(d, r, s) for d, r, (_, s) in zip(run_dirs, rows, summaries, strict=True)]
        pairs = [
            PairDifferences(names[i], names[j], metric_differences(runs[i], runs[j]))
            for i, j in itertools.combinations(range(len(runs)), 2)
        ]
        sections.append(differences_section(pairs))
        sections += [
            sliced_differences_section(names, runs, option, k) for k, option in enumerate(by)
        ]
    markdown = "\n\n".join(sections) + "\n"
    return Comparison(names, list(run_dirs), [s for _, s in summaries], pairs, markdown)


def _name(run_dir: Path, all_dirs: Sequence[Path]) -> str:
    names = [d.name for d in all_dirs]
    return run_dir.name if names.count(run_dir.name) == 1 else str(run_dir)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    return Table(columns=list(header), rows=[list(row) for row in rows]).markdown(empty="")


def _fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _estimate(block: dict[str, Any] | None) -> str:
    if not block or block.get("value") is None:
        return "n/a" if not block else f"n/a ({block.get('reason')})"
    text = _fmt(block["value"])
    if block.get("low") is not None and block.get("high") is not None:
        text += f" [{_fmt(block['low'])}, {_fmt(block['high'])}]"
    return text


Named = tuple[str, BenchSummary]


def _runs_table(summaries: Sequence[Named]) -> str:
    rows = []
    for name, s in summaries:
        labels = ", ".join(f"{k} {v}" for k, v in s.labels.get("used_for_detection", {}).items())
        rows.append(
            [
                name,
                str(s.pattern),
                ", ".join(f"{k} {v}" for k, v in s.counts.get("modes", {}).items()),
                str(s.counts.get("results", 0)),
                str(s.counts.get("scored", 0)),
                str(s.counts.get("verifier_failures", 0)),
                labels or "none",
                _fmt(s.threshold, 2),
            ]
        )
    header = ["run", "pattern", "mode", "results", "scored", "verifier failures"]
    header += ["labels used (source n)", "threshold"]
    return "## Runs\n\n" + _table(header, rows)


def _detection_table(summaries: Sequence[Named]) -> str:
    notes = [f"- {name}: {s.detection_note}" for name, s in summaries if s.detection_note]
    text = "## Error detection\n\n" + _detection_rows(summaries, first_pass=False)
    text += "\n\n" + "\n".join(notes) if notes else ""
    if any(s.detection_first_pass for _, s in summaries):
        text += (
            "\n\n### On the first answers, before revision\n\n"
            "Runs that revised: the verifier judged against the oracle's labels of the "
            "answers it saw first (the table above is about the answers finally selected).\n\n"
            + _detection_rows(summaries, first_pass=True)
        )
    return text


def _detection_rows(summaries: Sequence[Named], *, first_pass: bool) -> str:
    rows = []
    for name, s in summaries:
        block = s.detection_first_pass if first_pass else s.detection
        if first_pass and block is None and s.revision.used == 0:
            rows.append([name, "no revision: as above", *([""] * (len(DETECTION_COLUMNS) + 1))])
            continue
        if block is None:
            rows.append([name, *(["n/a"] * len(DETECTION_COLUMNS)), "—", "—"])
            continue
        cells = [_estimate(block["metrics"].get(key)) for key, _ in DETECTION_COLUMNS]
        aurc = _fmt(s.selective["aurc"]) if s.selective and not first_pass else "—"
        rows.append([name, *cells, aurc, str(block.get("n", 0))])
    header = ["run", *(label for _, label in DETECTION_COLUMNS), "AURC", "n"]
    return _table(header, rows)


def _gate_table(summaries: Sequence[Named]) -> str:
    rows = []
    for name, s in summaries:
        selective = s.selective or {}
        gate, curve = selective.get("gate") or {}, selective.get("accuracy_at_coverage") or {}
        rows.append(
            [
                name,
                _fmt(gate.get("threshold"), 2),
                _fmt(gate.get("coverage")),
                _fmt(gate.get("accuracy_of_passed")),
                _fmt(curve.get("1.0")),
                _fmt(curve.get("0.8")),
                _fmt(curve.get("0.5")),
            ]
        )
    header = ["run", "threshold", "answered (passed)", "grounded among passed"]
    header += ["grounded, all", "grounded @80% kept", "grounded @50% kept"]
    note = (
        "Selective prediction: the gate answers when p_error < threshold. 'grounded, all' is "
        "the base rate; '@k% kept' keeps the k% of answers with the lowest p_error. "
        "`summary.json` has the same at thresholds 0.1 to 0.9 (`selective.thresholds`)."
    )
    return "## Gating (coverage vs accuracy)\n\n" + _table(header, rows) + "\n\n" + note


def _grounding_table(summaries: Sequence[Named]) -> str:
    rows = []
    for name, s in summaries:
        metrics = s.grounding.metrics
        cells = [_fmt(metrics.get(key)) for key, _ in GROUNDING_COLUMNS]
        rows.append([name, str(s.grounding.counts.claims), *cells])
    header = ["run", "claims", *(label for _, label in GROUNDING_COLUMNS)]
    note = (
        "What a 'claim' is depends on the pattern: entailment checks atomic claims; best_of_n "
        "gives one answer-level verdict per answer (the whole answer is its one claim; its "
        "citation coverage still counts the answer's claims); "
        "self_consistency's claims are the answer's claims labelled by its critique's findings."
    )
    return "## Grounding\n\n" + _table(header, rows) + "\n\n" + note


def _cost_table(summaries: Sequence[Named]) -> str:
    rows = []
    for name, s in summaries:
        per = s.cost.per_example
        rows.append(
            [
                name,
                _fmt(per.get("model_requests"), 2),
                _fmt(per.get("calls"), 2),
                _fmt(per.get("tokens"), 1),
                _fmt(per.get("latency_ms"), 0),
                _fmt(s.cost.check_ms_per_claim, 1),
                _money_per_example(s),
                str(s.cost.failures),
            ]
        )
    header = ["run", "model requests / ex", "uncached calls / ex", "tokens / ex"]
    header += ["latency ms / ex", "ms / claim check", "money / ex", "failed calls"]
    note = (
        "Model requests and tokens include cache hits; uncached calls are what the run paid "
        "for. Latency sums each call's time, waiting for the model included. Money is the "
        "work's tokens at the run's price table (`--prices`); a model run in assay's process "
        "that the table does not price costs nothing (in-process); unknown says why."
    )
    return "## Cost per example\n\n" + _table(header, rows) + "\n\n" + note


def _money_per_example(summary: BenchSummary) -> str:
    money = summary.money
    if money is None or not money.known or money.per_item is None:
        missing = ", ".join(money.missing_prices) if money is not None else ""
        return f"unknown (no price: {missing})" if missing else "unknown"
    value = f"{money.per_item:.6f} {money.currency}"
    return f"{value} (in-process: {', '.join(money.in_process)})" if money.in_process else value


def _revision_table(summaries: Sequence[Named]) -> str:
    rows = []
    broken: list[str] = []
    for name, s in summaries:
        r = s.revision
        counts = (r.attempted, r.used, r.failed, r.passed_after, r.labelled_pairs, r.fixed)
        rows.append([name, *map(str, counts), str(r.broken), str(r.supported_claims_lost)])
        if r.broken_ids:
            broken.append(f"- {name}: broken by revision: {', '.join(r.broken_ids)}")
        if r.lost_support_ids:
            broken.append(f"- {name}: lost supported claims: {', '.join(r.lost_support_ids)}")
    header = ["run", "attempted", "used", "failed", "verifier pass after"]
    header += ["oracle-labelled pairs", "fixed", "broken", "lost supported claims"]
    note = (
        "fixed / broken compare the oracle's labels before and after a revision (they need "
        "--oracle); 'lost supported claims' counts revisions that kept fewer supported claims."
    )
    extra = "\n" + "\n".join(broken) if broken else ""
    return "## Revision\n\n" + _table(header, rows) + "\n\n" + note + extra


def _bucket_table(summaries: Sequence[Named]) -> str:
    buckets = sorted({b for _, s in summaries for b in s.buckets})
    rows = []
    for bucket in buckets:
        cells = [_bucket_cell(s, bucket, lambda b: b.flag_rate) for _, s in summaries]
        rows.append([bucket, *cells])
    header = ["failure bucket", *(name for name, _ in summaries)]
    note = (
        "Each cell: flag rate (flagged / scored) and the scored count. For error buckets the "
        "flag rate is the verifier's recall on that kind of error; for `grounded` it is the "
        "false-alarm rate (lower is better)."
    )
    return "## By failure bucket\n\n" + _table(header, rows) + "\n\n" + note


def _bucket_cell(summary: BenchSummary, bucket: str, value: Callable[[Any], float | None]) -> str:
    stats = summary.buckets.get(bucket)
    if stats is None:
        return "—"
    return f"{_fmt(value(stats))} (n={stats.scored})"


MAX_PAIRED_RUNS = 8


PAIRED_TITLES = ("Identical by construction", "Paired verdicts", "Paired metric differences")
DIFFERENCE_COLUMNS = (
    ("auroc", "AUROC"),
    ("auprc", "AUPRC"),
    ("balanced_accuracy", "balanced accuracy"),
    ("ece_uniform", "ECE (15 equal-width)"),
    ("brier", "Brier"),
)


def paired_table(names: Sequence[str], rows: Sequence[dict[str, ScoredRow]]) -> str:
    """Pairs of runs on the records they share: where their gate verdicts differ."""
    verdicts = [
        {key: row.verdict_right for key, row in run.items() if row.verdict_right is not None}
        for run in rows
    ]
    table = []
    for i, j in itertools.combinations(range(len(rows)), 2):
        common = verdicts[i].keys() & verdicts[j].keys()
        if not common:
            continue
        first = sum(verdicts[i][k] and not verdicts[j][k] for k in common)
        second = sum(verdicts[j][k] and not verdicts[i][k] for k in common)
        both = sum(verdicts[i][k] and verdicts[j][k] for k in common)
        p = mcnemar_exact_p(first, second)
        table.append([names[i], names[j], str(len(common)), str(both), str(first), str(second)])
        table[-1].append(f"{p:.3g}")
    header = ["run A", "run B", "shared", "both right", "only A right", "only B right"]
    header.append("McNemar p")
    note = (
        "Paired by record id over the answers both runs scored and had labels for; a verdict "
        "is right when the gate flags exactly the erroneous answers. In generate mode the "
        "runs' answers to one record differ, so the pairing is by question, not by answer."
    )
    body = _table(header, table) if table else "No two runs share a labelled, scored record."
    return "## Paired verdicts\n\n" + body + "\n\n" + note


def differences_section(pairs: Sequence[PairDifferences]) -> str:
    """B - A of the threshold-free metrics and balanced accuracy, with paired intervals."""
    table, unpaired = [], []
    for pair in pairs:
        differences = pair.differences
        if differences is None:
            continue
        metrics = differences["metrics"]
        clusters = differences["n_clusters"]
        shared = f"{differences['n']} ({clusters} questions)"
        table.append([pair.run_a, pair.run_b, shared, *difference_cells(metrics)])
        if differences["unpaired"]:
            unpaired.append(f"{pair.run_a} / {pair.run_b}: {differences['unpaired']}")
    header = [
        "run A",
        "run B",
        "shared answers",
        *(f"{title} B - A" for _, title in DIFFERENCE_COLUMNS),
    ]
    note = (
        f"B - A over the labelled answers both runs scored, the same answer with the same "
        f"label; each run's scores as its summary has them (its calibration, its threshold). "
        f"Intervals: {PAIRED_RESAMPLES} resamples of the shared questions, each applied to "
        "both runs (seed 0), so they hold only the variation of the difference: an interval "
        "that excludes 0 is a difference these answers show, even where the runs' own "
        "intervals above overlap. Higher is better for AUROC, AUPRC and balanced accuracy; "
        "lower for ECE and Brier."
    )
    if unpaired:
        note += (
            " Left out, shared ids whose answer or label differs between the runs (generate "
            "mode answers each record anew): " + "; ".join(unpaired) + "."
        )
    title = "## Paired metric differences\n\n"
    if not table:
        return title + "No two runs scored the same labelled answer."
    return title + _table(header, table) + "\n\n" + note


def sliced_differences_section(
    names: Sequence[str], runs: Sequence[PairedRun], option: str, index: int
) -> str:
    """The paired differences per value of ``option`` (run A's record decides the slice)."""
    values = sorted({row.slices[index] for run in runs for row in run.rows.values()})
    table = []
    for i, j in itertools.combinations(range(len(runs)), 2):
        for value in values:
            differences = metric_differences(runs[i], runs[j], (index, value))
            if differences is None:
                continue
            metrics = differences["metrics"]
            shared = f"{differences['n']} ({differences['n_clusters']})"
            table.append([names[i], names[j], value, shared, *difference_cells(metrics)])
    header = ["run A", "run B", option, "shared answers (questions)"]
    header += [f"{title} B - A" for _, title in DIFFERENCE_COLUMNS]
    title = f"## Paired metric differences by {option}\n\n"
    if not table:
        return title + "No two runs scored the same labelled answer."
    note = (
        "As the table above, within each slice: the shared answers whose record (in run A) "
        "has that value at the key, with intervals from resamples of the slice's questions. A "
        "metric one slice's labels leave undefined (one class only) says why."
    )
    return title + _table(header, table) + "\n\n" + note


def difference_cells(metrics: dict[str, Any]) -> list[str]:
    """The cells of :data:`DIFFERENCE_COLUMNS` for one pair's (or slice's) differences."""
    return [difference_cell(metrics[key]) for key, _ in DIFFERENCE_COLUMNS]


def difference_cell(block: dict[str, Any]) -> str:
    if block.get("difference") is None:
        return f"n/a ({block.get('reason')})"
    text = f"{block['difference']:+.3f}"
    if block.get("low") is not None and block.get("high") is not None:
        text += f" [{block['low']:+.3f}, {block['high']:+.3f}]"
    return text


# settings that decide a verify-only verdict, named when two runs agree by construction
VERDICT_SETTINGS = (
    "verifier",
    "claim_check",
    "claim_template",
    "claim_evidence_cut",
    "claim_splitter",
    "splitter",
    "checker_votes",
    "critic",
    "threshold",
    "seed",
)
# settings a model-free verifier never reads (they only shape a model's prompt or votes)
MODEL_ONLY_SETTINGS = frozenset(
    {"claim_check", "claim_template", "claim_evidence_cut", "checker_votes"}
)
# settings added after runs were made, with the value every earlier run had: a run that did
# not record one used it, so it does not differ from a run that records it
ADDED_SETTINGS: dict[str, Any] = {"claim_evidence_cut": "page_order"}
MODEL_FREE_VERIFIERS = frozenset({"lexical", "learned"})
_NOT_SETTINGS = frozenset({"out_dir", "n_resamples", "concurrency", "model_options"})


def _scores(rows: dict[str, ScoredRow]) -> dict[str, tuple[float, str, int]]:
    """id -> (p_error, score method, claims checked) of every scored record."""
    return {
        key: (row.p_error, row.score_method, row.claims)
        for key, row in rows.items()
        if row.p_error is not None
    }


def identical_pairs(
    names: Sequence[str],
    run_dirs: Sequence[Path],
    summaries: Sequence[BenchSummary],
    read: Sequence[dict[str, ScoredRow]] | None = None,
) -> list[list[str]]:
    """Pairs of runs whose p_error (hence every gate verdict) is the same on every record both
    scored: [run A, run B, shared records, what they share, what differs] (``read``: the
    runs' rows, already read)."""
    scores = [_scores(run) for run in read or [scored_rows(d) for d in run_dirs]]
    rows = []
    for i, j in itertools.combinations(range(len(run_dirs)), 2):
        common = scores[i].keys() & scores[j].keys()
        if not common or any(abs(scores[i][k][0] - scores[j][k][0]) > 1e-9 for k in common):
            continue
        methods = sorted({scores[i][k][1] for k in common} | {scores[j][k][1] for k in common})
        shared, differing = _settings(summaries[i].config, summaries[j].config)
        shared.append(f"scoring {'/'.join(methods)}")
        if all(scores[i][k][2] == 1 == scores[j][k][2] for k in common):
            # a one-claim answer makes a claim check and an answer-level check the same question
            shared.append("every answer checked as a single claim")
        rows.append([names[i], names[j], str(len(common)), "; ".join(shared), differing])
    return rows


def _settings(first: dict[str, Any], second: dict[str, Any]) -> tuple[list[str], str]:
    """The verdict-deciding settings both runs share, and every setting that differs."""
    first, second = {**ADDED_SETTINGS, **first}, {**ADDED_SETTINGS, **second}
    model_free = str(first.get("verifier")) in MODEL_FREE_VERIFIERS
    shared = [
        f"{key} {first[key]}"
        for key in VERDICT_SETTINGS
        if first.get(key) is not None
        and first.get(key) == second.get(key)
        and not (model_free and key in MODEL_ONLY_SETTINGS)
    ]
    keys = sorted((first.keys() | second.keys()) - _NOT_SETTINGS)
    differing = [
        f"{key} {first.get(key)} vs {second.get(key)}"
        for key in keys
        if first.get(key) != second.get(key)
    ]
    return shared, "; ".join(differing) or "nothing recorded"


def identical_section(
    names: Sequence[str],
    run_dirs: Sequence[Path],
    summaries: Sequence[BenchSummary],
    read: Sequence[dict[str, ScoredRow]],
) -> str:
    """The pairs of runs that agree by construction, and why."""
    rows = identical_pairs(names, run_dirs, summaries, read)
    note = (
        "Two runs listed here give the same p_error, hence the same verdict, on every record "
        "both scored: the settings they share decide the score, and the settings that differ "
        "never reach it (e.g. `n` of a pattern whose verify-only verdict ignores it). Their "
        "rows in the tables above are equal by construction and compare nothing."
    )
    if not rows:  # the note explains listed pairs: with none, it would contradict the line
        return (
            "## Identical by construction\n\nNo two runs give the same p_error on every "
            "shared record."
        )
    header = ["run A", "run B", "shared records", "same (deciding the verdicts)", "differ"]
    return "## Identical by construction\n\n" + _table(header, rows) + "\n\n" + note
