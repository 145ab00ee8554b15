"""Judge runs of repeated draws, analysed together: a score or a variant's effect apart from
the noise of sampling the target (or the judge).

``assay generate --draws N`` samples every prompt N times (``OUT/draw-k``) and ``assay judge
run --draws`` judges each draw into a judge run of its own (``RUN/draw-k``); ``--judge-draws
N`` judges one set of outputs N times with a judge seed each; ``judge analyze
--repeats-as-draws`` reads the repeats of one run (promptfoo's, lm-eval's) as draws. One
draw's analysis mixes what a prompt variant does with what a resample does; here every
question's draws are averaged first, so a score's interval covers both the questions and the
draws, a variant's effect is tested by shuffling draws within each question, and a noise table
says how far two draws of one cell already differ.

Only each sample x judge pair's final valid evaluation counts, as in ``judge analyze``.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from .. import metrics
from ..errors import ConfigError, RunError
from .analysis_types import AnalysisSettings
from .analyze import (
    PLOTS_DIR,
    REPORT_FILE,
    SCORE_FIELDS,
    SUMMARY_FILE,
    constant_judge_notes,
    refuse_unknown_baseline,
)
from .archive import ProtocolState, read_protocol_state
from .evaluations import Evaluation, SampleKey, final_evaluations, load_evaluations
from .protocol import protocol_fingerprint

DRAWS_KIND = "judge-draws"  # run.json's kind in the directory of the draws
DRAW_FOLDER = re.compile(r"draw-[1-9][0-9]*")

Setting = tuple[str, str, str]  # method, judge, target
Cell = tuple[str, str, str, str]  # method, judge, target, variant


def draw_runs(path: Path) -> list[Path]:
    """The ``draw-K`` judge runs (each with its protocol.json) directly in ``path``, in the
    order of K; none when ``path`` is itself a judge run or holds no such folder."""
    if not path.is_dir() or (path / "protocol.json").exists():
        return []
    found = [
        p
        for p in path.iterdir()
        if DRAW_FOLDER.fullmatch(p.name) and (p / "protocol.json").is_file()
    ]
    return sorted(found, key=lambda p: int(p.name.removeprefix("draw-")))


class _Row(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DrawScoreRow(_Row):
    """A cell's score over its questions, each question's draws averaged first."""

    method: str
    judge_model: str
    target_model: str
    prompt_variant: str
    dimension: str
    questions: int  # with at least one valid evaluation in some draw
    evaluations: int  # valid evaluations, every draw counted
    mean: float  # mean over questions of the question's mean over its draws
    ci_low: float
    ci_high: float
    # the mean each draw alone gives (what a run of that draw alone reports; None: no valid
    # evaluation in that draw)
    draw_means: tuple[float | None, ...]
    # pooled standard deviation between the draws of one question (None: no question with two)
    within_sd: float | None


class DrawEffectRow(_Row):
    """A variant against the baseline, paired by question, each question's draws averaged."""

    method: str
    judge_model: str
    target_model: str
    baseline: str
    variant: str
    dimension: str
    n_pairs: int  # questions with a valid evaluation under both, in some draw
    mean_difference: float  # variant - baseline
    ci_low: float
    ci_high: float
    # draws shuffled between the two within each question (exact in its draw counts)
    test: Literal["permutation"] = "permutation"
    p_value: float
    # the effect each draw alone gives, paired by question within the draw
    draw_effects: tuple[float | None, ...]


class DrawNoiseRow(_Row):
    """Mean squared differences between draws (in squared score points), over the questions
    with two valid draws or more of the variant (and of the baseline)."""

    method: str
    judge_model: str
    target_model: str
    variant: str
    dimension: str
    questions: int
    within_variant: float  # two draws of the variant, of one question
    within_baseline: float | None  # the same for the baseline (None on the baseline's row)
    across: float | None  # a draw of the baseline and a draw of the variant
    # across minus the mean of the two within: per question an unbiased estimate of the
    # squared change the variant makes to the question's expected score
    excess: float | None
    ci_low: float | None
    ci_high: float | None


class DrawsSummary(BaseModel):
    """summary.json of a directory of draw runs. ``kind`` is always "judge-draws"."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["judge-draws"] = "judge-draws"
    schema_version: int = 1
    run_dir: str
    draws: tuple[str, ...]  # the draw runs, draw k at k-1
    fingerprint: str  # draw 1's judge protocol (the others differ at most in the seed)
    draw_fingerprints: tuple[str, ...] = ()
    judge_seeds: tuple[int, ...] = ()  # per draw: another in each with `--judge-draws`
    draw_valid: tuple[int, ...]  # valid final evaluations per draw
    baseline: str | None
    confidence: float
    n_resamples: int
    seed: int
    bootstrap: str
    scores: tuple[DrawScoreRow, ...]
    variant_effects: tuple[DrawEffectRow, ...]
    noise: tuple[DrawNoiseRow, ...]
    notes: tuple[str, ...] = ()
    plots: tuple[str, ...] = ()


# ---------------------------------------------------------------- reading


@dataclass(frozen=True)
class _Draws:
    """Every draw's valid final evaluations: per cell and question, one list of them per
    draw (empty where the draw has none)."""

    count: int
    grid: dict[Cell, dict[str, list[list[Evaluation]]]]

    @classmethod
    def of(cls, draws: Sequence[Sequence[Evaluation]]) -> _Draws:
        grid: dict[Cell, dict[str, list[list[Evaluation]]]] = defaultdict(dict)
        for k, evaluations in enumerate(draws):
            for r in final_evaluations(evaluations):
                if not r.valid:
                    continue
                cell = (r.method, r.judge_model, r.target_model, r.prompt_variant)
                per_draw = grid[cell].setdefault(r.question_id, [[] for _ in draws])
                per_draw[k].append(r)
        return cls(count=len(draws), grid=dict(sorted(grid.items())))

    def scores(self, cell: Cell, field: str) -> dict[str, list[float]]:
        """Per question, its valid scores of every draw (pooled)."""
        return {
            q: [float(r.score(field)) for draw in per_draw for r in draw]
            for q, per_draw in self.grid.get(cell, {}).items()
        }

    def draw_scores(self, cell: Cell, field: str, k: int) -> dict[str, float]:
        """Per question, its mean score in draw ``k`` alone (questions with none left out)."""
        found = {}
        for q, per_draw in self.grid.get(cell, {}).items():
            if per_draw[k]:
                found[q] = _mean([r.score(field) for r in per_draw[k]])
        return found

    def valid(self) -> list[Evaluation]:
        """Every draw's valid final evaluations."""
        return [
            r
            for per_question in self.grid.values()
            for per_draw in per_question.values()
            for draw in per_draw
            for r in draw
        ]

    def settings(self) -> dict[Setting, list[str]]:
        variants: dict[Setting, list[str]] = defaultdict(list)
        for method, judge, target, variant in self.grid:
            variants[(method, judge, target)].append(variant)
        return dict(variants)


@dataclass(frozen=True)
class LoadedDraws:
    names: list[str]  # draw k's name at k-1 (draw-k, or repeat-k)
    runs: list[Path]  # draw k's judge run at k-1 (none for the repeats of one run)
    evaluations: list[list[Evaluation]]  # every readable attempt of each draw
    fingerprints: list[str]  # each draw's judge protocol: the same but for the judge's seed
    judge_seeds: list[int]
    judge_temperature: float
    unreadable: list[list[str]]  # where each draw's unreadable records are, left out
    notes: list[str] = dataclasses.field(default_factory=list)  # said in the joint summary's notes
    # per draw, each sample's fingerprint of the output judged (read when asked for)
    outputs: list[dict[SampleKey, str]] = dataclasses.field(default_factory=list)


def load_draws(run_dir: Path, *, outputs: bool = False) -> LoadedDraws:
    """The draw runs of ``run_dir`` and their evaluations (``outputs``: and the fingerprints
    of the outputs judged). Draws judged under different protocols (judges' settings, rubric,
    templates) but for the judge's seed are refused: their scores are not comparable. Judge
    seeds that differ are draws of the judge too."""
    runs = draw_runs(run_dir)
    if not runs:
        raise RunError(f"{run_dir} holds no draw-K judge runs (`assay judge run --draws`)")
    states = {}
    for run in runs:
        state = read_protocol_state(run)
        assert state is not None  # draw_runs found its protocol.json
        states[run.name] = state
    if len({_seedless_fingerprint(state) for state in states.values()}) > 1:
        named = ", ".join(f"{name} {state.fingerprint}" for name, state in states.items())
        raise RunError(
            f"{run_dir}: the draws were judged under different protocol fingerprints ({named}), "
            "not only another judge seed",
            hint="judge every draw with the same judges and settings: `assay judge run --draws` "
            "or `--judge-draws`",
        )
    judged: list[dict[SampleKey, str]] = [{} for _ in runs]
    loaded = [load_evaluations(run, judged[k] if outputs else None) for k, run in enumerate(runs)]
    return LoadedDraws(
        names=[run.name for run in runs],
        runs=runs,
        evaluations=[evaluations for evaluations, _ in loaded],
        fingerprints=[state.fingerprint for state in states.values()],
        judge_seeds=[state.decoding.seed for state in states.values()],
        judge_temperature=next(iter(states.values())).decoding.temperature,
        unreadable=[unreadable for _, unreadable in loaded],
        outputs=judged if outputs else [],
    )


def repeats_as_draws(
    run_dir: Path, loaded: tuple[list[Evaluation], list[str]] | None = None
) -> LoadedDraws:
    """One judge run whose prompt variants include repeats (``<variant> (repeat k)``, as
    ``assay import`` names promptfoo's ``--repeat`` and lm-eval's ``repeats``), read as draws:
    repeat k of a variant is its draw k (the variant itself is repeat 1). ``loaded``: what
    :func:`load_evaluations` already read of the run."""
    from ..data.importers._common import split_repeat

    state = read_protocol_state(run_dir)
    if state is None:
        raise RunError(f"{run_dir} is not a judge run directory (no protocol.json)")
    evaluations, unreadable = loaded or load_evaluations(run_dir)
    draws: dict[int, list[Evaluation]] = defaultdict(list)
    for r in evaluations:
        variant, repeat = split_repeat(r.prompt_variant)
        draws[repeat].append(replace(r, prompt_variant=variant))
    if len(draws) < 2:
        raise ConfigError(
            f"--repeats-as-draws: no prompt variant of {run_dir} is a repeat "
            "('<variant> (repeat k)')",
            hint="`assay import promptfoo` and `assay import lm-eval` name the repeats so",
        )
    count = max(draws)
    return LoadedDraws(
        names=[f"repeat {k}" for k in range(1, count + 1)],
        runs=[],
        evaluations=[draws.get(k, []) for k in range(1, count + 1)],
        fingerprints=[state.fingerprint] * count,
        judge_seeds=[state.decoding.seed] * count,
        judge_temperature=state.decoding.temperature,
        unreadable=[[] for _ in range(count)],  # which repeat a damaged record held is unknown
        notes=[
            f"{run_dir}: {len(unreadable)} archived record(s) could not be read and are left "
            "out (the run's own analysis lists them)"
        ]
        if unreadable
        else [],
    )


def _seedless_fingerprint(state: ProtocolState) -> str:
    """The protocol fingerprint with the judge's seed left out."""
    decoding = state.decoding.model_copy(update={"seed": 0})
    return protocol_fingerprint(state.protocol, decoding, state.prompt_templates)


def write_draws_analysis(
    run_dir: Path, loaded: LoadedDraws, settings: AnalysisSettings
) -> tuple[DrawsSummary, list[str]]:
    """summary.json and results_analysis.md of the draws together, in ``run_dir`` (each
    draw's own analysis is `judge analyze` of its folder)."""
    from ..runs import write_atomic
    from .draws_report import render_draws_report

    summary = summarize_draws(
        loaded.evaluations,
        settings,
        names=loaded.names,
        run_dir=str(run_dir),
        fingerprint=loaded.fingerprints[0],
    )
    lost = [
        f"{name}: {len(where)} archived record(s) could not be read and are left out (its own "
        "analysis lists them)"
        for name, where in zip(loaded.names, loaded.unreadable, strict=True)
        if where
    ]
    summary = summary.model_copy(
        update={
            "draw_fingerprints": tuple(loaded.fingerprints),
            "judge_seeds": tuple(loaded.judge_seeds),
            "notes": (*summary.notes, *_judge_seed_notes(loaded), *lost, *loaded.notes),
        }
    )
    if settings.plots:
        from .draws_plots import write_draw_plots

        plots = write_draw_plots(summary, run_dir / PLOTS_DIR)
        summary = summary.model_copy(update={"plots": tuple(map(str, plots))})
    written = [run_dir / SUMMARY_FILE, run_dir / REPORT_FILE, *map(Path, summary.plots)]
    write_atomic(written[0], summary.model_dump_json(indent=2))
    write_atomic(written[1], render_draws_report(summary))
    _write_run_file(run_dir, summary, loaded)
    return summary, [str(path) for path in written]


def _judge_seed_notes(loaded: LoadedDraws) -> list[str]:
    if len(set(loaded.judge_seeds)) < 2:
        return []
    if loaded.judge_temperature == 0:
        return [
            "the draws were judged with other judge seeds at temperature 0, where a seed "
            "changes nothing: the spread is the target's"
        ]
    return [
        f"the judge sampled at temperature {loaded.judge_temperature:g} with another seed in "
        "each draw: the spread between draws holds the judge's own noise as well as any of "
        "the target's"
    ]


def _write_run_file(run_dir: Path, summary: DrawsSummary, loaded: LoadedDraws) -> None:
    """run.json of the parent (kind ``judge-draws``): what `assay report` and `assay export`
    know it by. Each draw's own run.json says how it was judged."""
    from ..runs import RunLog, utc_now, write_atomic

    log = RunLog(
        kind=DRAWS_KIND,
        status="success",
        ended_at=utc_now(),
        fingerprint=loaded.fingerprints[0],
        sample_count=sum(len(final_evaluations(e)) for e in loaded.evaluations),
        finished_count=sum(summary.draw_valid),
        config={
            "draws": list(summary.draws),
            "baseline": summary.baseline,
            "n_resamples": summary.n_resamples,
            "seed": summary.seed,
        },
    )
    write_atomic(run_dir / "run.json", log.model_dump_json(indent=2))


# ---------------------------------------------------------------- statistics


class _Bootstrap:
    def __init__(self, settings: AnalysisSettings) -> None:
        self.settings = settings

    def mean(self, values: Sequence[float], questions: Sequence[str]) -> metrics.Estimate:
        return metrics.cluster_mean_ci(
            np.asarray(values, dtype=np.float64),
            np.asarray(questions),
            n_resamples=self.settings.n_resamples,
            confidence=self.settings.confidence,
            seed=self.settings.seed,
        )


def summarize_draws(
    draws: Sequence[Sequence[Evaluation]],
    settings: AnalysisSettings,
    *,
    names: Sequence[str] = (),
    run_dir: str = "",
    fingerprint: str = "",
) -> DrawsSummary:
    """The tables of a run's draws (``draws[k]``: every archived attempt of draw k+1)."""
    refuse_unknown_baseline([r for d in draws for r in d], settings.baseline_variant)
    grid = _Draws.of(draws)
    bootstrap = _Bootstrap(settings)
    baseline = settings.baseline_variant
    return DrawsSummary(
        run_dir=run_dir,
        draws=tuple(names) or tuple(f"draw-{k + 1}" for k in range(len(draws))),
        fingerprint=fingerprint,
        draw_valid=tuple(sum(r.valid for r in final_evaluations(d)) for d in draws),
        baseline=baseline,
        confidence=settings.confidence,
        n_resamples=settings.n_resamples,
        seed=settings.seed,
        bootstrap="percentile bootstrap over questions (draws averaged within each)",
        scores=tuple(_score_rows(grid, bootstrap)),
        variant_effects=tuple(_effect_rows(grid, bootstrap)),
        noise=tuple(_noise_rows(grid, bootstrap)),
        notes=(*_notes(grid), *constant_judge_notes(grid.valid())),
    )


def _score_rows(grid: _Draws, bootstrap: _Bootstrap) -> Iterable[DrawScoreRow]:
    for cell in grid.grid:
        for field in SCORE_FIELDS:
            per_question = grid.scores(cell, field)
            questions = sorted(per_question)
            estimate = bootstrap.mean([_mean(per_question[q]) for q in questions], questions)
            yield DrawScoreRow(
                method=cell[0],
                judge_model=cell[1],
                target_model=cell[2],
                prompt_variant=cell[3],
                dimension=field,
                questions=len(questions),
                evaluations=sum(len(v) for v in per_question.values()),
                mean=estimate.value,
                ci_low=estimate.low,
                ci_high=estimate.high,
                draw_means=tuple(_draw_mean(grid, cell, field, k) for k in range(grid.count)),
                within_sd=_pooled_sd(per_question.values()),
            )


def _mean(values: Sequence[float]) -> float:
    # plain Python: numpy's per-call cost dominates on a question's handful of draws
    return sum(values) / len(values)


def _variance(values: Sequence[float]) -> float:
    """The unbiased variance of two values or more."""
    centre = _mean(values)
    return sum((x - centre) ** 2 for x in values) / (len(values) - 1)


def _draw_mean(grid: _Draws, cell: Cell, field: str, k: int) -> float | None:
    scores = [float(r.score(field)) for per_draw in grid.grid[cell].values() for r in per_draw[k]]
    return _mean(scores) if scores else None


def _pooled_sd(per_question: Iterable[Sequence[float]]) -> float | None:
    variances = [_variance(v) for v in per_question if len(v) > 1]
    return math.sqrt(_mean(variances)) if variances else None


def _baseline_of(variants: Sequence[str], chosen: str | None) -> str:
    """The option's variant, else the setting's first label in sorted order (as `judge
    analyze` chooses)."""
    return chosen or sorted(variants)[0]


def _comparisons(
    grid: _Draws, chosen: str | None, *, with_baseline: bool
) -> Iterator[tuple[Setting, str, str, str]]:
    """Every setting's (baseline, variant, dimension), the baseline's own rows first when
    ``with_baseline``, then the other variants in sorted order."""
    for setting, variants in grid.settings().items():
        baseline = _baseline_of(variants, chosen)
        for variant in sorted(variants, key=lambda v: (v != baseline, v)):
            if variant != baseline or with_baseline:
                for field in SCORE_FIELDS:
                    yield setting, baseline, variant, field


def _effect_rows(grid: _Draws, bootstrap: _Bootstrap) -> Iterable[DrawEffectRow]:
    chosen = bootstrap.settings.baseline_variant
    for setting, baseline, variant, field in _comparisons(grid, chosen, with_baseline=False):
        row = _effect_row(grid, setting, baseline, variant, field, bootstrap)
        if row is not None:
            yield row


def _effect_row(
    grid: _Draws, setting: Setting, baseline: str, variant: str, field: str, bootstrap: _Bootstrap
) -> DrawEffectRow | None:
    before = grid.scores((*setting, baseline), field)
    after = grid.scores((*setting, variant), field)
    questions = sorted(set(before) & set(after))
    if not questions:
        return None
    differences = [_mean(after[q]) - _mean(before[q]) for q in questions]
    estimate = bootstrap.mean(differences, questions)
    p = metrics.within_item_mean_permutation_p(
        [before[q] for q in questions],
        [after[q] for q in questions],
        n_resamples=bootstrap.settings.n_resamples,
        seed=bootstrap.settings.seed,
    )
    return DrawEffectRow(
        method=setting[0],
        judge_model=setting[1],
        target_model=setting[2],
        baseline=baseline,
        variant=variant,
        dimension=field,
        n_pairs=len(questions),
        mean_difference=estimate.value,
        ci_low=estimate.low,
        ci_high=estimate.high,
        p_value=p,
        draw_effects=tuple(
            _draw_effect(grid, setting, baseline, variant, field, k) for k in range(grid.count)
        ),
    )


def _draw_effect(
    grid: _Draws, setting: Setting, baseline: str, variant: str, field: str, k: int
) -> float | None:
    before = grid.draw_scores((*setting, baseline), field, k)
    after = grid.draw_scores((*setting, variant), field, k)
    paired = [after[q] - before[q] for q in after if q in before]
    return _mean(paired) if paired else None


def _noise_rows(grid: _Draws, bootstrap: _Bootstrap) -> Iterable[DrawNoiseRow]:
    if grid.count < 2:
        return
    chosen = bootstrap.settings.baseline_variant
    for setting, baseline, variant, field in _comparisons(grid, chosen, with_baseline=True):
        row = _noise_row(grid, setting, baseline, variant, field, bootstrap)
        if row is not None:
            yield row


def _noise_row(
    grid: _Draws, setting: Setting, baseline: str, variant: str, field: str, bootstrap: _Bootstrap
) -> DrawNoiseRow | None:
    after = _repeated(grid.scores((*setting, variant), field))
    before = _repeated(grid.scores((*setting, baseline), field))
    questions = sorted(after if variant == baseline else set(after) & set(before))
    if not questions:
        return None
    within = np.array([_within(after[q]) for q in questions])
    row = DrawNoiseRow(
        method=setting[0],
        judge_model=setting[1],
        target_model=setting[2],
        variant=variant,
        dimension=field,
        questions=len(questions),
        within_variant=float(within.mean()),
        within_baseline=None,
        across=None,
        excess=None,
        ci_low=None,
        ci_high=None,
    )
    if variant == baseline:
        return row
    within_baseline = np.array([_within(before[q]) for q in questions])
    across = np.array([_across(before[q], after[q]) for q in questions])
    excess = bootstrap.mean(list(across - (within + within_baseline) / 2), questions)
    return row.model_copy(
        update={
            "within_baseline": float(within_baseline.mean()),
            "across": float(across.mean()),
            "excess": excess.value,
            "ci_low": excess.low,
            "ci_high": excess.high,
        }
    )


def _repeated(per_question: dict[str, list[float]]) -> dict[str, list[float]]:
    return {q: v for q, v in per_question.items() if len(v) > 1}


def _within(values: Sequence[float]) -> float:
    """The mean squared difference of two distinct draws: twice their unbiased variance."""
    return 2 * _variance(values)


def _across(first: Sequence[float], second: Sequence[float]) -> float:
    """The mean squared difference of a draw of one and a draw of the other."""
    return sum((x - y) ** 2 for x in first for y in second) / (len(first) * len(second))


def _notes(grid: _Draws) -> Iterable[str]:
    if grid.count < 2:
        yield (
            "one draw: its scores hold no sampling noise to set apart; `assay generate "
            "--draws N` at a temperature above 0 makes more"
        )
    settings = grid.settings()
    variant_sets = {tuple(sorted(v)) for v in settings.values()}
    if len(variant_sets) > 1:
        yield "the judge x target settings were not all judged under the same prompt variants"
