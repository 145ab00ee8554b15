"""``assay judge analyze``: tables, summary.json, results_analysis.md and plots of a judge run.

Only valid evaluations enter score statistics; invalid ones are counted as invalid-evaluation
rates with their flags. Self-judging (judge == target) is diagnostic: every table carries
``method`` and the report keeps cross and self apart. The evaluation of a sample by a judge
is its valid attempt if there is one, else its last attempt; first-attempt validity is
reported on its own.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from .. import metrics
from ..errors import ConfigError, RunError
from ..model import runs_in_process
from ..runs import read_run_json, read_state_file, write_atomic
from ..runs.prices import Money, read_run_prices, run_money
from .analysis_types import (
    AgreementRow,
    AnalysisResult,
    AnalysisSettings,
    Counts,
    InvalidRow,
    JudgeSummary,
    ScoreRow,
    SelfPreferenceRow,
    VariantEffectRow,
    VerdictRow,
)
from .archive import EvaluationRecord, read_protocol_state
from .evalset import CoverageReport
from .evaluations import Evaluation, as_evaluations, final_evaluations, load_evaluations
from .length_bias import length_preference_rows
from .protocol import DIMENSION_KEYS, JUDGE_CALL_FAILED, MAX_OVERALL, SCORE_VALUES, VERDICTS
from .run import COVERAGE_FILE

SUMMARY_FILE = "summary.json"
REPORT_FILE = "results_analysis.md"
PLOTS_DIR = "plots"
SCORE_FIELDS: tuple[str, ...] = (*DIMENSION_KEYS, "overall_score")


# ---------------------------------------------------------------- entry point


def analyze_run(
    run_dir: Path,
    settings: AnalysisSettings | None = None,
    loaded: tuple[list[Evaluation], list[str]] | None = None,
) -> AnalysisResult:
    """Read the archives of ``run_dir`` (or take ``loaded``, what :func:`load_evaluations`
    already read of them) and write summary.json, the report and plots."""
    from .analysis_report import render_report
    from .plots import write_plots

    settings = settings or AnalysisSettings()
    state = read_protocol_state(run_dir)
    if state is None:
        raise RunError(f"{run_dir} is not a judge run directory (no protocol.json)")
    records, unreadable = loaded or load_evaluations(run_dir)
    summary = summarize(records, settings, run_dir=str(run_dir), fingerprint=state.fingerprint)
    summary = summary.model_copy(
        update={
            "thresholds": state.protocol.thresholds.model_dump(),
            "coverage": read_coverage(run_dir),
            "skipped_unreadable": tuple(unreadable),
            "money": _money(run_dir, len(final_evaluations(records))),
        }
    )
    plots: list[str] = []
    if settings.plots:
        plots = write_plots(summary, run_dir / PLOTS_DIR)
        summary = summary.model_copy(update={"plots": tuple(plots)})
    write_atomic(run_dir / SUMMARY_FILE, summary.model_dump_json(indent=2))
    write_atomic(run_dir / REPORT_FILE, render_report(summary))
    written = (str(run_dir / SUMMARY_FILE), str(run_dir / REPORT_FILE), *plots)
    return AnalysisResult(summary=summary, written=written)


def _money(run_dir: Path, items: int) -> Money:
    """The run's cost per sample x judge under its price table (``--prices``)."""
    config = ((read_run_json(run_dir) or {}).get("config")) or {}
    batch = config.get("executor") == "batch"
    table = read_run_prices(run_dir)
    return run_money(run_dir, table, items, batch=batch, in_process=runs_in_process)


def read_coverage(run_dir: Path) -> CoverageReport | None:
    """The run's coverage.json (None when the run has none), or an error naming the file."""
    path = run_dir / COVERAGE_FILE
    return read_state_file(path, CoverageReport, "the coverage report", "the run's coverage report")


def summarize(
    evaluations: Iterable[EvaluationRecord | Evaluation],
    settings: AnalysisSettings,
    *,
    run_dir: str = "",
    fingerprint: str = "",
) -> JudgeSummary:
    records = as_evaluations(evaluations)
    refuse_unknown_baseline(records, settings.baseline_variant)
    finals = final_evaluations(records)
    valid = [r for r in finals if r.valid]
    stats = _Stats(settings)
    return JudgeSummary(
        run_dir=run_dir,
        fingerprint=fingerprint,
        thresholds={},
        confidence=settings.confidence,
        n_resamples=settings.n_resamples,
        bootstrap="percentile bootstrap over questions (pairs resampled by question)",
        counts=_counts(records, finals),
        judges=tuple(sorted({r.judge_model for r in records})),
        targets=tuple(sorted({r.target_model for r in records})),
        scores=tuple(score_rows(valid, stats)),
        verdicts=tuple(verdict_rows(valid)),
        variant_effects=tuple(variant_effect_rows(valid, stats)),
        invalid_rates=tuple(invalid_rows(records, finals)),
        self_preference=tuple(self_preference_rows(valid, stats)),
        agreement=tuple(agreement_rows(valid)),
        length_preference=tuple(length_preference_rows(valid, settings)),
        notes=tuple(constant_judge_notes(valid)),
    )


# a judge that gave this many valid evaluations one score each has shown it tells none apart
CONSTANT_JUDGE_MIN = 10


def constant_judge_notes(valid: Sequence[Evaluation]) -> Iterable[str]:
    """Per judge with ``CONSTANT_JUDGE_MIN`` valid evaluations or more, all of one score on
    every dimension: its means, effects and agreement say nothing about the outputs."""
    for judge, group in _group(valid, lambda r: (r.judge_model,)).items():
        scores = {r.scores for r in group}
        if len(group) >= CONSTANT_JUDGE_MIN and len(scores) == 1:
            (only,) = scores
            shown = "/".join(map(str, only or ()))
            yield (
                f"{judge[0]} gave all {len(group)} of its valid evaluations the same scores "
                f"(D1-D4 {shown}): it told none of the outputs apart, so its means, variant "
                "effects and agreement say nothing about them"
            )


# ---------------------------------------------------------------- helpers


def refuse_unknown_baseline(records: Sequence[Evaluation], baseline: str | None) -> None:
    if baseline is None or not records:
        return
    labels = sorted({r.prompt_variant for r in records})
    if baseline not in labels:
        raise ConfigError(
            f"--baseline {baseline!r}: no evaluated sample has this prompt variant",
            hint="the run's variants: " + ", ".join(map(repr, labels[:20])),
        )


class _Stats:
    """Bootstrap means with the run's settings."""

    def __init__(self, settings: AnalysisSettings) -> None:
        self.settings = settings

    def mean_ci(
        self, values: Sequence[float], clusters: Sequence[str]
    ) -> tuple[float, float, float]:
        estimate = metrics.cluster_mean_ci(
            np.asarray(values, dtype=float),
            np.asarray(clusters),
            n_resamples=self.settings.n_resamples,
            confidence=self.settings.confidence,
            seed=self.settings.seed,
        )
        return estimate.value, estimate.low, estimate.high


def score_of(record: Evaluation, field: str) -> int:
    return record.score(field)


def _group(
    records: Iterable[Evaluation], key: Callable[[Evaluation], tuple[str, ...]]
) -> dict[tuple[str, ...], list[Evaluation]]:
    groups: dict[tuple[str, ...], list[Evaluation]] = defaultdict(list)
    for record in records:
        groups[key(record)].append(record)
    return dict(sorted(groups.items()))


def _cell(r: Evaluation) -> tuple[str, ...]:
    return (r.method, r.judge_model, r.target_model, r.prompt_variant)


def first_answered(records: Iterable[Evaluation]) -> list[Evaluation]:
    """Each sample x judge pair's first attempt that reached the judge. A call that failed
    (``JUDGE_CALL_FAILED``: the server down, a timeout) holds no reply, so it says nothing of
    how often the judge answers validly at once; the attempt after it is the judge's first."""
    firsts: dict[tuple[str, ...], Evaluation] = {}
    for r in records:
        if JUDGE_CALL_FAILED in r.flags:
            continue
        key = (*r.work_key, r.method)
        if key not in firsts or r.attempt < firsts[key].attempt:
            firsts[key] = r
    return list(firsts.values())


def _rate(part: int, whole: int) -> float:
    return part / whole if whole else math.nan


# ---------------------------------------------------------------- tables


def _counts(records: Sequence[Evaluation], finals: Sequence[Evaluation]) -> Counts:
    firsts = first_answered(records)
    valid = sum(r.valid for r in finals)
    first_valid = sum(r.valid for r in firsts)
    by_method: dict[str, dict[str, int]] = {}
    for method in ("cross_judge", "self_judge"):
        chosen = [r for r in finals if r.method == method]
        by_method[method] = {"valid": sum(r.valid for r in chosen), "work_items": len(chosen)}
    return Counts(
        records=len(records),
        work_items=len(finals),
        valid=valid,
        invalid=len(finals) - valid,
        valid_rate=_rate(valid, len(finals)),
        first_attempts=len(firsts),
        first_attempt_valid=first_valid,
        first_attempt_valid_rate=_rate(first_valid, len(firsts)),
        by_method=by_method,
    )


def score_rows(valid: Sequence[Evaluation], stats: _Stats) -> Iterable[ScoreRow]:
    for (method, judge, target, variant), group in _group(valid, _cell).items():
        for field in SCORE_FIELDS:
            values = [score_of(r, field) for r in group]
            mean, low, high = stats.mean_ci(values, [r.question_id for r in group])
            yield ScoreRow(
                method=method,
                judge_model=judge,
                target_model=target,
                prompt_variant=variant,
                dimension=field,
                n=len(values),
                mean=mean,
                ci_low=low,
                ci_high=high,
            )


def verdict_rows(valid: Sequence[Evaluation]) -> Iterable[VerdictRow]:
    for (method, judge, target, variant), group in _group(valid, _cell).items():
        counted = Counter(r.verdict for r in group)
        yield VerdictRow(
            method=method,
            judge_model=judge,
            target_model=target,
            prompt_variant=variant,
            n=len(group),
            counts={verdict: counted.get(verdict, 0) for verdict in VERDICTS},
        )


def variant_effect_rows(valid: Sequence[Evaluation], stats: _Stats) -> Iterable[VariantEffectRow]:
    """Each variant against the baseline variant (``baseline_variant``, else the first label
    in sorted order), paired by question."""
    by_setting = _group(valid, lambda r: (r.method, r.judge_model, r.target_model))
    for (method, judge, target), group in by_setting.items():
        table = {(r.question_id, r.prompt_variant): r for r in group}
        labels = sorted({r.prompt_variant for r in group})
        baseline = stats.settings.baseline_variant or labels[0]
        for variant in (label for label in labels if label != baseline):
            questions = sorted(q for q, v in table if v == variant and (q, baseline) in table)
            if not questions:
                continue
            for field in SCORE_FIELDS:
                diffs = [
                    score_of(table[(q, variant)], field) - score_of(table[(q, baseline)], field)
                    for q in questions
                ]
                mean, low, high = stats.mean_ci(diffs, questions)
                yield VariantEffectRow(
                    method=method,
                    judge_model=judge,
                    target_model=target,
                    baseline=baseline,
                    variant=variant,
                    dimension=field,
                    n_pairs=len(questions),
                    mean_difference=mean,
                    ci_low=low,
                    ci_high=high,
                )


def invalid_rows(
    records: Sequence[Evaluation], finals: Sequence[Evaluation]
) -> Iterable[InvalidRow]:
    firsts = _group(first_answered(records), _cell)
    for cell, group in _group(finals, _cell).items():
        invalid = [r for r in group if not r.valid]
        first = firsts.get(cell, [])
        first_invalid = sum(not r.valid for r in first)
        flags = Counter(flag for r in invalid for flag in r.flags)
        yield InvalidRow(
            method=cell[0],
            judge_model=cell[1],
            target_model=cell[2],
            prompt_variant=cell[3],
            n=len(group),
            invalid=len(invalid),
            rate=_rate(len(invalid), len(group)),
            first_attempt_n=len(first),
            first_attempt_invalid=first_invalid,
            first_attempt_rate=_rate(first_invalid, len(first)),
            flags=dict(sorted(flags.items())),
        )


def _sample_key(r: Evaluation) -> tuple[str, str, str, str]:
    return (r.question_id, r.prompt_variant, r.target_model, r.output_id)


def self_preference_rows(valid: Sequence[Evaluation], stats: _Stats) -> Iterable[SelfPreferenceRow]:
    """Self-judge minus mean cross-judge score on the same outputs, per model."""
    for model in sorted({r.target_model for r in valid if r.method == "self_judge"}):
        own = {
            _sample_key(r): r for r in valid if r.method == "self_judge" and r.judge_model == model
        }
        others = _group(
            (r for r in valid if r.target_model == model and r.method == "cross_judge"),
            lambda r: _sample_key(r),
        )
        paired = sorted(key for key in own if key in others)
        if not paired:
            continue
        judges = tuple(sorted({r.judge_model for key in paired for r in others[key]}))
        used = [own[key] for key in paired] + [r for key in paired for r in others[key]]
        judging = blind_mode(used)
        for field in SCORE_FIELDS:
            self_scores = [float(score_of(own[key], field)) for key in paired]
            cross_scores = [
                float(np.mean([score_of(r, field) for r in others[key]])) for key in paired
            ]
            diffs = [a - b for a, b in zip(self_scores, cross_scores, strict=True)]
            mean, low, high = stats.mean_ci(diffs, [key[0] for key in paired])
            yield SelfPreferenceRow(
                model=model,
                dimension=field,
                n_pairs=len(paired),
                self_mean=float(np.mean(self_scores)),
                cross_mean=float(np.mean(cross_scores)),
                difference=mean,
                ci_low=low,
                ci_high=high,
                cross_judges=judges,
                judging=judging,
            )


def blind_mode(records: Sequence[Evaluation]) -> str:
    """ "blind", "not blind" or "mixed": whether the judges saw aliases or the real names."""
    modes = {"blind" if r.blind else "not blind" for r in records}
    return modes.pop() if len(modes) == 1 else "mixed"


NO_SHARED_SAMPLE = "undefined: no sample validly judged by two of these judges in this scope"


def agreement_rows(valid: Sequence[Evaluation]) -> Iterable[AgreementRow]:
    """Weighted kappa per judge pair and Krippendorff's alpha over all judges, per dimension."""
    scopes: dict[Literal["cross_only", "all_methods"], list[Evaluation]] = {
        "cross_only": [r for r in valid if r.method == "cross_judge"],
        "all_methods": list(valid),
    }
    for scope, chosen in scopes.items():
        judges = sorted({r.judge_model for r in chosen})
        if len(judges) < 2:
            continue
        ratings = {(r.judge_model, _sample_key(r)): r for r in chosen}
        units = sorted({_sample_key(r) for r in chosen})
        for field in SCORE_FIELDS:
            yield from _kappa_rows(scope, field, judges, units, ratings)
            yield _alpha_row(scope, field, judges, units, ratings)


_Ratings = dict[tuple[str, tuple[str, str, str, str]], Evaluation]


def _labels(field: str) -> list[int]:
    return list(range(MAX_OVERALL + 1)) if field == "overall_score" else list(SCORE_VALUES)


def _kappa_rows(
    scope: Literal["cross_only", "all_methods"],
    field: str,
    judges: list[str],
    units: list[tuple[str, str, str, str]],
    ratings: _Ratings,
) -> Iterable[AgreementRow]:
    for first, second in itertools.combinations(judges, 2):
        common = [u for u in units if (first, u) in ratings and (second, u) in ratings]
        a = [score_of(ratings[(first, u)], field) for u in common]
        b = [score_of(ratings[(second, u)], field) for u in common]
        kappa = functools.partial(
            metrics.cohen_kappa_score, a, b, weights="quadratic", labels=_labels(field)
        )
        # two judges that share no validly judged sample (cross-judging with two judges: each
        # judges only the other's outputs) get a row that says so, not silence
        value, note = _undefined_as_none(kappa) if common else (None, NO_SHARED_SAMPLE)
        yield AgreementRow(
            scope=scope,
            dimension=field,
            statistic="cohen_kappa_quadratic",
            judges=(first, second),
            n_units=len(common),
            value=value,
            note=note,
        )


def _alpha_row(
    scope: Literal["cross_only", "all_methods"],
    field: str,
    judges: list[str],
    units: list[tuple[str, str, str, str]],
    ratings: _Ratings,
) -> AgreementRow:
    table = np.full((len(judges), len(units)), np.nan)
    for i, judge in enumerate(judges):
        for j, unit in enumerate(units):
            if (judge, unit) in ratings:
                table[i, j] = score_of(ratings[(judge, unit)], field)
    pairable = int(((~np.isnan(table)).sum(axis=0) >= 2).sum())
    value, note = (None, NO_SHARED_SAMPLE)
    if pairable:
        alpha = functools.partial(metrics.krippendorff_alpha, table, level="ordinal")
        value, note = _undefined_as_none(alpha)
    return AgreementRow(
        scope=scope,
        dimension=field,
        statistic="krippendorff_alpha_ordinal",
        judges=tuple(judges),
        n_units=pairable,
        value=value,
        note=note,
    )


def _undefined_as_none(compute: Callable[[], float]) -> tuple[float | None, str]:
    try:
        value = compute()
    except ValueError as error:
        return None, f"undefined: {error}"
    return (None, "undefined") if math.isnan(value) else (value, "")
