"""Agreement with labels of a directory of draw runs: ``assay judge agreement RUN --labels L``
where RUN holds ``draw-K`` judge runs (``judge run --draws`` or ``--judge-draws``).

One draw's agreement mixes the judge's skill with the luck of one sample (of the targets, of
the judge, or both). Here every draw gets its own agreement, as one run would, and together,
per judge, method and dimension:

- each draw's accuracy and quadratic kappa, and the SD of the accuracy across draws: how far
  one draw's figure can be trusted;
- the draws pooled (a unit is a sample of one draw), with intervals resampling questions, so
  that every draw of a question is kept or left out together;
- when every draw judged the same outputs under the same labels (draws of the judge), the
  judge's median: the lower median of its valid scores of a sample over the draws against the
  labels, and its gain in accuracy over one draw on the same samples (self-consistency).

A labels file applies to every draw; a labels folder gives draw k its own file,
``labels-draw-k.jsonl`` (as ``instructions robustness --draws`` writes them; those of draws
the run does not hold are named in a note). A file that
applies to every draw is refused when the draws judged different output texts of one sample:
a label describes one output.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict

from ..data.questions import DRAW_LABELS, draw_labels_file
from ..errors import ConfigError, InputError
from ..tables import Cell, Table
from .agreement import (
    AgreementReport,
    AgreementTables,
    Compared,
    DimensionAgreement,
    Interval,
    JudgeRole,
    Label,
    LabelUnits,
    Unit,
    dimension_agreement,
    format_interval,
    judge_score,
    label_agreement,
    labels_by_dimension,
    load_labels,
    lower_median,
    table_interval,
)
from .draws import LoadedDraws
from .evaluations import Evaluation, SampleKey, final_evaluations


class MedianOfDraws(BaseModel):
    """The accuracy of the judge's median over k of its draws, on average over the ways of
    choosing them, on the samples with k valid draws or more."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    draws: int  # k
    samples: int
    accuracy: Interval


class JudgeMedian(BaseModel):
    """The judge's median over its draws of each sample, against the labels."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agreement: DimensionAgreement  # the median as the judge's score
    draws_per_sample: float  # valid draws behind each median, on average
    one_draw_accuracy: Interval  # a single draw's accuracy on the same samples, on average
    gain: Interval  # the median's accuracy minus one draw's, paired by sample
    by_draws: tuple[MedianOfDraws, ...] = ()  # k = 1, 2, ...: how many draws are worth asking


class DrawsDimensionAgreement(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    judge_model: str
    method: str
    dimension: str
    draw_n: tuple[int, ...]  # per draw: valid evaluations compared with a label
    draw_accuracy: tuple[float | None, ...]
    draw_kappa_quadratic: tuple[float | None, ...]
    accuracy_sd: float | None  # of the draws' accuracies (two or more draws with a value)
    pooled: DimensionAgreement  # every draw's units together
    judge_median: JudgeMedian | None  # only when the draws judged the same outputs


class DrawsAgreementReport(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["judge-draws-agreement"] = "judge-draws-agreement"
    schema_version: int = 1
    run_dir: str
    draws: tuple[str, ...]
    labels_files: tuple[tuple[str, ...], ...]  # per draw
    labels: tuple[int, ...]  # per draw
    unmatched_labels: tuple[int, ...]  # per draw: labels naming a sample the draw lacks
    # every sample judged in two draws was the same output text (None: records without the
    # fingerprint of the output judged, archived before assay kept one, cannot tell)
    same_outputs: bool | None
    n_resamples: int
    seed: int
    dimensions: tuple[DrawsDimensionAgreement, ...]
    notes: tuple[str, ...] = ()


# ---------------------------------------------------------------- labels per draw


class DrawLabels(NamedTuple):
    files: list[list[tuple[Path, list[Label]]]]  # per draw: each labels file and its labels
    unused: list[str]  # labels files of a folder for draws the run does not hold


def labels_per_draw(paths: Sequence[Path], draws: Sequence[str]) -> DrawLabels:
    """Each draw's labels files and labels: a file serves every draw, a folder gives draw k
    its ``labels-draw-k.jsonl`` (every draw needs one; a folder's files of draws the run does
    not hold, such as draws generated but not judged, are named as unused)."""
    numbers = [int(name.removeprefix("draw-")) for name in draws]
    per_draw: list[list[tuple[Path, list[Label]]]] = [[] for _ in draws]
    unused: list[str] = []
    for path in paths:
        if not path.is_dir():
            shared = (path, load_labels(path))
            for found in per_draw:
                found.append(shared)
            continue
        unused += _other_draws(path, numbers)
        for found, number in zip(per_draw, numbers, strict=True):
            file = path / draw_labels_file(number)
            if not file.is_file():
                raise InputError(
                    f"no {file.name}: a labels folder gives each draw its own file",
                    path=path,
                    hint="`assay instructions robustness --draws` writes labels-draw-K.jsonl",
                )
            found.append((file, load_labels(file)))
    return DrawLabels(per_draw, unused)


def _other_draws(folder: Path, numbers: Sequence[int]) -> list[str]:
    return [
        str(file)
        for file in sorted(folder.iterdir())
        if (match := DRAW_LABELS.fullmatch(file.name)) and int(match.group(1)) not in numbers
    ]


def refuse_shared_labels_of_other_outputs(
    paths: Sequence[Path], loaded: LoadedDraws
) -> bool | None:
    """Whether every sample judged in two draws was the same output text; when it was not, a
    labels file (not a folder) among ``paths`` is refused: it describes one draw's outputs.
    None: some records carry no fingerprint of the output judged (archived before assay kept
    one), so it cannot be told."""
    same = _same_outputs(loaded)
    files = [p for p in paths if not p.is_dir()]
    differing = _first_difference(loaded) if same is False and files else None
    if differing is not None:
        earlier, later, sample = differing
        raise ConfigError(
            f"{files[0]}: a labels file serves every draw, but {earlier} and {later} "
            f"judged different outputs of {'/'.join(sample)} (draws of the targets)",
            hint="give a labels folder with labels-draw-K.jsonl, one per draw "
            "(`assay instructions robustness --draws` writes them)",
        )
    return same


def _same_outputs(loaded: LoadedDraws) -> bool | None:
    """Whether every sample judged in two draws was the same output text (None: a record
    without the output's fingerprint)."""
    for evaluations, outputs in zip(loaded.evaluations, loaded.outputs, strict=True):
        if any(r.sample not in outputs for r in evaluations):
            return None
    return _first_difference(loaded) is None


def _first_difference(loaded: LoadedDraws) -> tuple[str, str, SampleKey] | None:
    """The first two draws that judged different outputs of one sample, and the sample."""
    first_seen: dict[SampleKey, tuple[str, str]] = {}
    for name, outputs in zip(loaded.names, loaded.outputs, strict=True):
        for sample, fingerprint in outputs.items():
            earlier = first_seen.setdefault(sample, (name, fingerprint))
            if earlier[1] != fingerprint:
                return earlier[0], name, sample
    return None


def repeats_for_agreement(
    loaded: LoadedDraws, files: Sequence[tuple[Path, list[Label]]], outputs: Mapping[SampleKey, str]
) -> tuple[LoadedDraws, DrawLabels, bool | None]:
    """One run's repeats as draws (:func:`~.draws.repeats_as_draws`), with each repeat's
    labels: a label of ``<variant> (repeat k)`` is draw k's label of ``<variant>`` (a plain
    variant is repeat 1; a label of a repeat the run does not hold is left out, and the run's
    own agreement counts it as naming no evaluated sample). Whether the repeats judged the
    same outputs comes from each record's fingerprint of the output (None when a record has
    none)."""
    from ..data.importers._common import split_repeat

    count = len(loaded.names)
    per_draw: list[list[tuple[Path, list[Label]]]] = [[] for _ in range(count)]
    for path, labels in files:
        split: list[list[Label]] = [[] for _ in range(count)]
        for label in labels:
            variant, repeat = split_repeat(label.prompt_variant)
            if repeat <= count:
                split[repeat - 1].append(label.model_copy(update={"prompt_variant": variant}))
        for found, mine in zip(per_draw, split, strict=True):
            found.append((path, mine))
    draw_outputs: list[dict[SampleKey, str]] = [{} for _ in range(count)]
    for (question, name, target), fingerprint in outputs.items():
        variant, repeat = split_repeat(name)
        draw_outputs[repeat - 1][question, variant, target] = fingerprint
    loaded = dataclasses.replace(loaded, outputs=draw_outputs)
    return loaded, DrawLabels(per_draw, []), _same_outputs(loaded)


# ---------------------------------------------------------------- agreement


def draws_agreement(
    run_dir: Path,
    loaded: LoadedDraws,
    labels: DrawLabels,
    *,
    same_outputs: bool | None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> tuple[DrawsAgreementReport, list[AgreementReport]]:
    """The draws' agreement together, and each draw's own (as ``label_agreement`` gives it)."""
    draw_labels = [[label for _, found in files for label in found] for files in labels.files]
    finals = [final_evaluations(evaluations) for evaluations in loaded.evaluations]
    per_draw = [
        label_agreement(
            draw, found, n_resamples=n_resamples, seed=seed, files=[str(p) for p, _ in files]
        )
        for draw, found, files in zip(finals, draw_labels, labels.files, strict=True)
    ]
    units = [labels_by_dimension(found) for found in draw_labels]
    shared = same_outputs is True and all(u == units[0] for u in units)
    roles = sorted({JudgeRole(r.judge_model, r.method) for draw in finals for r in draw})
    dimensions = sorted({dimension for draw in units for dimension in draw})
    rows = [
        _dimension_row(role, dimension, finals, units, per_draw, shared, (n_resamples, seed))
        for role in roles
        for dimension in dimensions
    ]
    report = DrawsAgreementReport(
        run_dir=str(run_dir),
        draws=tuple(loaded.names),
        labels_files=tuple(tuple(str(p) for p, _ in files) for files in labels.files),
        labels=tuple(len(found) for found in draw_labels),
        unmatched_labels=tuple(r.unmatched_labels for r in per_draw),
        same_outputs=same_outputs,
        n_resamples=n_resamples,
        seed=seed,
        dimensions=tuple(rows),
        notes=tuple(_notes(loaded, labels, same_outputs, shared)),
    )
    return report, per_draw


def _dimension_row(
    role: JudgeRole,
    dimension: str,
    finals: Sequence[Sequence[Evaluation]],
    units: Sequence[LabelUnits],
    per_draw: Sequence[AgreementReport],
    shared: bool,
    bootstrap: tuple[int, int],
) -> DrawsDimensionAgreement:
    mine = [_role_finals(draw, role) for draw in finals]
    own = [_own_row(report, role, dimension) for report in per_draw]
    accuracies = [None if r is None else r.accuracy.value for r in own]
    known = [a for a in accuracies if a is not None]
    return DrawsDimensionAgreement(
        judge_model=role.judge_model,
        method=role.method,
        dimension=dimension,
        draw_n=tuple(0 if r is None else r.n for r in own),
        draw_accuracy=tuple(accuracies),
        draw_kappa_quadratic=tuple(None if r is None else r.kappa_quadratic.value for r in own),
        accuracy_sd=float(np.std(known, ddof=1)) if len(known) >= 2 else None,
        pooled=dimension_agreement(
            role,
            dimension,
            _pooled(mine, [u.get(dimension, {}) for u in units], dimension),
            *bootstrap,
        ),
        judge_median=_judge_median(role, dimension, mine, units[0].get(dimension, {}), bootstrap)
        if shared
        else None,
    )


def _role_finals(draw: Sequence[Evaluation], role: JudgeRole) -> dict[Unit, Evaluation]:
    return {r.sample: r for r in draw if JudgeRole(r.judge_model, r.method) == role}


def _own_row(report: AgreementReport, role: JudgeRole, dimension: str) -> DimensionAgreement | None:
    for row in report.dimensions:
        if (row.judge_model, row.method, row.dimension) == (*role, dimension):
            return row
    return None


def _pooled(
    mine: Sequence[Mapping[Unit, Evaluation]],
    labels: Sequence[Mapping[Unit, dict[str, int]]],
    dimension: str,
) -> Compared:
    """Every draw's labelled units as units of their own: (question, variant, target, draw)."""
    pooled_labels: dict[Unit, dict[str, int]] = {}
    scored: dict[Unit, int] = {}
    invalid = 0
    for number, (finals, found) in enumerate(zip(mine, labels, strict=True), start=1):
        for sample, annotated in found.items():
            record = finals.get(sample)
            if record is None:
                continue
            unit = (*sample, str(number))
            pooled_labels[unit] = annotated
            if record.valid:
                scored[unit] = judge_score(record, dimension)
            else:
                invalid += 1
    return Compared(pooled_labels, scored, invalid)


def _judge_median(
    role: JudgeRole,
    dimension: str,
    mine: Sequence[Mapping[Unit, Evaluation]],
    labels: Mapping[Unit, dict[str, int]],
    bootstrap: tuple[int, int],
) -> JudgeMedian:
    """The lower median of the judge's valid draws of each sample as its score, and one
    draw's accuracy on the same samples (each sample's share of draws matching the labels)."""
    medians: dict[Unit, int] = {}
    truths: list[int] = []
    one_draw: list[float] = []
    draws_behind: list[int] = []
    valid_scores: list[list[int]] = []
    invalid = 0
    for sample, annotated in labels.items():
        judged = [finals[sample] for finals in mine if sample in finals]
        scores = [judge_score(r, dimension) for r in judged if r.valid]
        if not scores:
            invalid += bool(judged)
            continue
        truth = lower_median(annotated.values())
        truths.append(truth)
        medians[sample] = lower_median(scores)
        one_draw.append(float(np.mean([score == truth for score in scores])))
        draws_behind.append(len(scores))
        valid_scores.append(scores)
    agreement = dimension_agreement(role, dimension, Compared(labels, medians, invalid), *bootstrap)
    matched = np.array(list(medians.values())) == np.array(truths)
    # per question: one draw's share of matches summed, the median's matches, the samples
    tables = AgreementTables.of([s[0] for s in medians], [])
    sums = np.zeros((tables.n_clusters, 3))
    for column, values in enumerate((one_draw, matched, np.ones(len(medians)))):
        np.add.at(sums[:, column], tables.clusters, values)
    ci = table_interval(len(medians), *bootstrap)
    return JudgeMedian(
        agreement=agreement,
        draws_per_sample=float(np.mean(draws_behind)) if draws_behind else 0.0,
        one_draw_accuracy=ci(sums, lambda t: _share(t[0], t[2])),
        gain=ci(sums, lambda t: _share(t[1] - t[0], t[2])),
        by_draws=_median_of_k_draws(valid_scores, truths, tables, bootstrap),
    )


SUBSETS_MAX = 500  # past this many ways of choosing k draws, a seeded sample of them


def _median_of_k_draws(
    scores: Sequence[Sequence[int]],
    truths: Sequence[int],
    tables: AgreementTables,
    bootstrap: tuple[int, int],
) -> tuple[MedianOfDraws, ...]:
    """For k = 1 .. the most valid draws of a sample: each sample's share of k-subsets of its
    valid draws whose lower median matches the label, summed per question, with an interval
    over questions. k = 1 is one draw's accuracy."""
    rng = np.random.default_rng(bootstrap[1])
    most = max((len(s) for s in scores), default=0)
    sums = np.zeros((tables.n_clusters, most, 2))
    for cluster, draws, truth in zip(tables.clusters, scores, truths, strict=True):
        for k in range(1, len(draws) + 1):
            sums[cluster, k - 1] += (_median_match(draws, truth, k, rng), 1.0)
    points = []
    for k in range(1, most + 1):
        samples = int(sums[:, k - 1, 1].sum())
        ci = table_interval(samples, *bootstrap)
        accuracy = ci(sums[:, k - 1], lambda t: _share(t[0], t[1]))
        points.append(MedianOfDraws(draws=k, samples=samples, accuracy=accuracy))
    return tuple(points)


def _median_match(draws: Sequence[int], truth: int, k: int, rng: np.random.Generator) -> float:
    """The share of k-subsets of ``draws`` whose lower median is ``truth``."""
    if math.comb(len(draws), k) <= SUBSETS_MAX:
        subsets: Iterable[Sequence[int]] = itertools.combinations(draws, k)
    else:
        picks = (rng.choice(len(draws), size=k, replace=False) for _ in range(SUBSETS_MAX))
        subsets = ([draws[i] for i in pick] for pick in picks)
    matches = [lower_median(int(x) for x in subset) == truth for subset in subsets]
    return float(np.mean(matches))


def _share(part: float, whole: float) -> float:
    if whole == 0:
        raise ValueError("nothing to compare")
    return float(part / whole)


def _notes(
    loaded: LoadedDraws, labels: DrawLabels, same_outputs: bool | None, shared: bool
) -> list[str]:
    notes = list(loaded.notes)
    if labels.unused:
        notes.append(f"labels of draws the run does not hold, not used: {', '.join(labels.unused)}")
    for name, unreadable in zip(loaded.names, loaded.unreadable, strict=True):
        if unreadable:
            notes.append(f"{name}: {len(unreadable)} archived record(s) could not be read")
    if same_outputs is None:
        notes.append(
            "some records carry no fingerprint of the output judged (archived before assay "
            "kept one): whether the draws judged the same outputs is unknown, so no judge median"
        )
    elif not same_outputs:
        notes.append(
            "the draws judged different outputs (draws of the targets): no judge median, "
            "which needs one output judged several times"
        )
    elif not shared:
        notes.append("the draws have different labels: no judge median")
    return notes


# ---------------------------------------------------------------- output


def draws_agreement_markdown(report: DrawsAgreementReport) -> str:
    lines = [draws_labels_head(report), "", draws_agreement_table(report).markdown()]
    curve = median_curve_table(report)
    if curve.rows:
        lines += ["", f"{curve.title}:", "", curve.markdown()]
    lines += [f"note: {note}" for note in report.notes]
    return "\n".join(lines) + "\n"


def median_curve_table(report: DrawsAgreementReport) -> Table:
    """For draws of the judge: the accuracy of its median over k draws, k = 1, 2, ..."""
    rows: list[list[Cell]] = [
        [d.judge_model, d.method, d.dimension, point.draws, point.samples,
         format_interval(point.accuracy)]
        for d in report.dimensions
        if d.judge_median is not None
        for point in d.judge_median.by_draws
    ]  # fmt: skip
    columns = ["judge", "method", "dimension", "draws (k)", "samples", "accuracy of the median"]
    return Table(
        title="Accuracy of the judge's median over k draws",
        columns=columns,
        rows=rows,
        note="each sample's k-subsets of its valid draws averaged (a seeded sample of 500 "
        "where there are more ways to choose); k = 1 is one draw",
    )


def draws_labels_head(report: DrawsAgreementReport) -> str:
    return (
        f"{len(report.draws)} draws; labels per draw: "
        f"{', '.join(str(n) for n in report.labels)}; naming a sample the draw lacks: "
        f"{', '.join(str(n) for n in report.unmatched_labels)}"
    )


def draws_agreement_table(report: DrawsAgreementReport) -> Table:
    """Per judge, method and dimension: each draw's accuracy, the draws pooled and, for
    draws of the judge, its median over the draws against one draw."""
    columns = ["judge", "method", "dimension", "draws' accuracy", "SD", "pooled n"]
    columns += ["pooled accuracy", "pooled kappa (quadratic)", "judge median accuracy"]
    columns += ["one draw", "median's gain"]
    rows: list[list[Cell]] = []
    for d in report.dimensions:
        median = d.judge_median
        rows.append(
            [d.judge_model, d.method, d.dimension, _values(d.draw_accuracy), _number(d.accuracy_sd),
             f"{d.pooled.n} ({d.pooled.invalid_left_out})", format_interval(d.pooled.accuracy),
             format_interval(d.pooled.kappa_quadratic),
             "-" if median is None else format_interval(median.agreement.accuracy),
             "-" if median is None else format_interval(median.one_draw_accuracy),
             "-" if median is None else format_interval(median.gain)]
        )  # fmt: skip
    return Table(title="Agreement with labels over the draws", columns=columns, rows=rows)


def _values(values: Sequence[float | None]) -> str:
    return " / ".join(_number(v) for v in values)


def _number(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.3f}"


def write_draws_agreement(report: DrawsAgreementReport, path: Path) -> None:
    from ..runs import write_atomic

    write_atomic(path, json.dumps(report.model_dump(mode="json"), indent=2))
