"""Agreement of a judge with ground truth of any kind: ``assay judge agreement RUN --labels F``.

A labels file (JSONL, or CSV with a header) has one label per line: ``question_id``,
``prompt_variant``, ``target_model`` (and optionally ``output_id``) name the sample;
``dimension`` is a rubric key (``INSTRUCTION_COMPLIANCE``, or ``D1``..``D4``), ``overall_score``
or ``verdict``; ``score`` is the label (0-2, 0-8, or PASS/PARTIAL/FAIL); ``annotator`` (optional)
says who gave it, so several annotators may label the same sample.

Per judge and dimension, on the judge's **valid** final evaluations only (the number of
labelled samples whose evaluation is invalid is stated, never counted as disagreement):
accuracy, Cohen's kappa (quadratic and linear weights), Krippendorff's alpha (ordinal) and the
confusion matrix against the annotators' consensus (the lower median of their labels), with
95% bootstrap intervals resampling questions. With two or more annotators, the same units also
give the annotators' agreement among themselves (alpha over annotators, mean pairwise quadratic
kappa) beside the judge's with each annotator, so judge-human agreement reads against
human-human agreement. The IFEval path (:mod:`.ground_truth`) is one use of
:func:`score_agreement`.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from .. import metrics
from ..errors import InputError, describe_problem, field_path, shown
from ..tables import Cell, Table
from .archive import EvaluationRecord
from .evaluations import Evaluation, SampleKey, as_evaluations, final_evaluations
from .protocol import DIMENSION_KEYS

AGREEMENT_FILE = "agreement.json"  # in the run directory, unless --out names another
VERDICT_CODES = {"FAIL": 0, "PARTIAL": 1, "PASS": 2}
DIMENSION_ALIASES = {f"D{i + 1}": key for i, key in enumerate(DIMENSION_KEYS)}
# a sample, or (pooled over draws) a sample and its draw: the question first, as the
# bootstrap resamples questions
Unit = tuple[str, ...]


class Label(BaseModel):
    """One line of a labels file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str = Field(min_length=1)
    prompt_variant: str = Field(min_length=1)
    target_model: str = Field(min_length=1)
    output_id: str | None = None
    dimension: str
    score: int
    annotator: str = "labels"

    @field_validator("dimension")
    @classmethod
    def _known_dimension(cls, value: str) -> str:
        name = DIMENSION_ALIASES.get(value, value)
        if name not in (*DIMENSION_KEYS, "overall_score", "verdict"):
            known = ", ".join((*DIMENSION_KEYS, "overall_score", "verdict", "D1..D4"))
            raise ValueError(f"unknown dimension {shown(value)} (one of {known})")
        return name

    @field_validator("score", mode="before")
    @classmethod
    def _score(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, str) and value.strip().upper() in VERDICT_CODES:
            return VERDICT_CODES[value.strip().upper()]
        from_csv = bool(info.context and info.context.get("csv"))
        if from_csv and isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)  # a CSV cell is text by nature
        if isinstance(value, bool) or not isinstance(value, int):
            # JSON has types: "2", true and 1.0 are not the integer 2 (docs/errors.md)
            raise ValueError(
                f"expected an integer (or PASS/PARTIAL/FAIL), got {_json_kind(value)} "
                f"{shown(value)}"
            )
        return value

    @field_validator("score")
    @classmethod
    def _on_the_scale(cls, value: int, info: ValidationInfo) -> int:
        dimension = info.data.get("dimension")
        if dimension is None:
            return value  # the dimension's own error is reported
        scale = scale_of(dimension)
        if value not in scale:
            raise ValueError(
                f"{value} is not on the scale of {dimension} ({scale[0]} to {scale[-1]})"
            )
        return value

    @property
    def key(self) -> SampleKey:
        return (self.question_id, self.prompt_variant, self.target_model)


class Interval(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    value: float | None
    low: float | None = None
    high: float | None = None
    note: str = ""  # why the value is undefined, when it is


class ScoreAgreement(BaseModel):
    """Agreement of predicted scores with ground-truth scores on one dimension."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dimension: str
    n: int
    accuracy: float | None
    kappa_linear: float | None
    kappa_note: str = ""  # why kappa is undefined, when it is
    labels: tuple[int, ...]
    confusion: tuple[tuple[int, ...], ...]  # rows = truth, columns = predicted, in `labels`
    no_truth: int = 0  # compared items without ground truth for this dimension


class DimensionAgreement(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    judge_model: str
    # cross_judge or self_judge: a judge's scores of its own outputs are kept apart, as in
    # every table of the analysis (self-judging is diagnostic, not a primary statistic)
    method: str
    dimension: str
    n: int  # valid evaluations with a label
    invalid_left_out: int  # labelled samples whose final evaluation is invalid
    annotators: tuple[str, ...]
    accuracy: Interval
    kappa_quadratic: Interval
    kappa_linear: Interval
    alpha_ordinal: Interval  # judge and annotators as raters
    confusion: ScoreAgreement  # against the consensus
    # with two or more annotators, on the same units
    annotators_alpha: Interval | None = None
    annotators_mean_kappa: Interval | None = None
    judge_mean_kappa_with_annotators: Interval | None = None


class JudgeDifference(BaseModel):
    """Judge B's agreement with the labels minus judge A's, on the samples both judged."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: str
    dimension: str
    judge_a: str
    judge_b: str
    n: int  # labelled samples both judged validly
    questions: int
    accuracy: Interval  # B - A
    kappa_quadratic: Interval  # B - A


class LabelledLengthPreference(BaseModel):
    """Over pairs of outputs to one question the labels score alike (and whose lengths and
    judge scores differ): the share the judge scored the longer output higher."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    judge_model: str
    method: str
    dimension: str
    questions: int
    pairs: int
    longer_higher: Interval  # 0.5: no preference at equal quality


class AgreementReport(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    labels_files: tuple[str, ...]
    labels: int
    unmatched_labels: int  # labels naming a sample no judge evaluated
    dimensions: tuple[DimensionAgreement, ...]
    # each pair of judges of one method, on the labelled samples both judged validly
    judge_differences: tuple[JudgeDifference, ...] = ()
    # per judge, method and dimension with a counted pair (empty before it existed)
    length_preference: tuple[LabelledLengthPreference, ...] = ()
    # `--by meta.KEY`: the same agreement per value of KEY (each slice's labels are those of
    # its samples, so a slice names no unmatched label)
    slices: tuple[AgreementSlices, ...] = ()


class AgreementSlices(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    by: str  # the option as given, meta.KEY
    values: dict[str, AgreementReport]  # per value of KEY ("(none)": samples without it)


AgreementReport.model_rebuild()


# ---------------------------------------------------------------- reading labels


def load_labels(path: Path) -> list[Label]:
    """The labels of a JSONL or CSV file; a bad line is a located error (file, line, field)."""
    from_csv = path.suffix.lower() == ".csv"
    rows = _csv_rows(path) if from_csv else _jsonl_rows(path)
    labels = []
    first_line: dict[tuple[SampleKey, str, str], tuple[int, int]] = {}
    for line, row in rows:
        try:
            label = Label.model_validate(row, context={"csv": from_csv})
        except ValidationError as error:
            first = error.errors()[0]
            field = field_path(first["loc"]) or None
            raise InputError(describe_problem(first), path=path, line=line, field=field) from None
        unit = (label.key, label.dimension, label.annotator)
        if unit in first_line:
            earlier, score = first_line[unit]
            same = (
                "the same score" if score == label.score else f"{score} there, {label.score} here"
            )
            raise InputError(
                f"labels the same sample, dimension and annotator as line {earlier} "
                f"({same}): give each label once",
                path=path,
                line=line,
                field="score",
            )
        first_line[unit] = (line, label.score)
        labels.append(label)
    if not labels:
        raise InputError("the labels file holds no label", path=path)
    return labels


def _jsonl_rows(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    from ..data.jsonl import iter_json_objects

    return iter_json_objects(path)


def _csv_rows(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    try:
        # utf-8-sig: Excel's "CSV UTF-8" starts with a byte order mark, which utf-8 would keep
        # in the first column's name (and then call that column missing)
        with path.open(encoding="utf-8-sig", newline="") as handle:
            rows = list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise InputError(f"cannot read the labels: {error}", path=path) from None
    for number, row in enumerate(rows, start=2):  # line 1 is the header
        if None in row:  # DictReader keeps the cells past the header under the key None
            raise InputError(
                f"{len(row) - 1 + len(row[None])} fields, but the header names {len(row) - 1}",
                path=path,
                line=number,
            )
        yield number, {k: v for k, v in row.items() if v not in ("", None)}


def _json_kind(value: Any) -> str:
    kinds = {bool: "a boolean", float: "a number", str: "a string", type(None): "null"}
    return kinds.get(type(value), "a value")


# ---------------------------------------------------------------- agreement


def label_agreement(
    records: Iterable[EvaluationRecord | Evaluation],
    labels: Sequence[Label],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    files: Sequence[str] = (),
) -> AgreementReport:
    from .agreement_pairs import judge_differences

    finals = final_evaluations(as_evaluations(records))
    evaluated = {r.sample for r in finals}
    by_dimension = labels_by_dimension(labels)
    results = []
    lengths: list[LabelledLengthPreference] = []
    scores: dict[tuple[JudgeRole, str], dict[Unit, int]] = {}
    for role in sorted({JudgeRole(r.judge_model, r.method) for r in finals}):
        mine = {r.sample: r for r in finals if JudgeRole(r.judge_model, r.method) == role}
        chars: dict[Unit, int | None] = {key: r.output_chars for key, r in mine.items()}
        for dimension, units in by_dimension.items():
            labelled = [key for key in units if key in mine]
            scored = scores[role, dimension] = {
                key: judge_score(mine[key], dimension) for key in labelled if mine[key].valid
            }
            compared = Compared(units, scored, len(labelled) - len(scored))
            results.append(dimension_agreement(role, dimension, compared, n_resamples, seed))
            length = _length_preference(role, dimension, compared, chars, (n_resamples, seed))
            lengths += [length] if length is not None else []
    unmatched = sum(1 for label in labels if label.key not in evaluated)
    return AgreementReport(
        labels_files=tuple(files),
        labels=len(labels),
        unmatched_labels=unmatched,
        dimensions=tuple(results),
        judge_differences=judge_differences(
            scores, by_dimension, n_resamples=n_resamples, seed=seed
        ),
        length_preference=tuple(lengths),
    )


def _length_preference(
    role: JudgeRole,
    dimension: str,
    compared: Compared,
    chars: Mapping[Unit, int | None],
    bootstrap: tuple[int, int],
) -> LabelledLengthPreference | None:
    """The judge's preference for longer outputs among the samples the labels score alike
    (none when no such pair differs in length and judge score)."""
    from .length_bias import at_equal_labels, longer_share

    consensus = {key: lower_median(compared.labels[key].values()) for key in compared.scored}
    counts = at_equal_labels(compared.scored, consensus, chars, len(scale_of(dimension)))
    n_resamples, seed = bootstrap
    questions, pairs, share, low, high = longer_share(counts, n_resamples=n_resamples, seed=seed)
    if share is None:
        return None
    return LabelledLengthPreference(
        judge_model=role.judge_model, method=role.method, dimension=dimension,
        questions=questions, pairs=pairs, longer_higher=Interval(value=share, low=low, high=high),
    )  # fmt: skip


LabelUnits = dict[str, dict[Unit, dict[str, int]]]  # dimension -> sample -> annotator -> label


def labels_by_dimension(labels: Iterable[Label]) -> LabelUnits:
    units: LabelUnits = {}
    for label in labels:
        units.setdefault(label.dimension, {}).setdefault(label.key, {})[label.annotator] = (
            label.score
        )
    return units


def sliced_agreement(
    records: Sequence[Evaluation],
    labels: Sequence[Label],
    option: str,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
) -> AgreementSlices:
    """``label_agreement`` per value of ``option``'s key in the samples' ``meta``, each with
    the labels of its own samples."""
    from ..data.meta import parse_by, slices

    groups = slices(records, lambda r: r.sample_meta, parse_by(option))
    values = {}
    for value, group in groups.items():
        keys = {r.sample for r in group}
        mine = [label for label in labels if label.key in keys]
        values[value] = label_agreement(group, mine, n_resamples=n_resamples, seed=seed)
    return AgreementSlices(by=option, values=values)


class JudgeRole(NamedTuple):
    """A judge and the method of its evaluations: its self-judgments are a group apart."""

    judge_model: str
    method: str


class Compared(NamedTuple):
    """A judge's scores of one dimension beside the labels of the same units."""

    labels: Mapping[Unit, dict[str, int]]  # unit -> annotator -> label
    scored: Mapping[Unit, int]  # labelled units the judge scored validly
    invalid_left_out: int  # labelled units whose final evaluation is invalid


def dimension_agreement(
    role: JudgeRole, dimension: str, compared: Compared, n_resamples: int, seed: int
) -> DimensionAgreement:
    units = compared.labels
    valid = list(compared.scored)
    annotators = tuple(sorted({a for key in valid for a in units[key]}))
    judge_scores = np.array([compared.scored[key] for key in valid], dtype=float)
    table = np.array(
        [[units[key].get(a, math.nan) for key in valid] for a in annotators], dtype=float
    ).reshape(len(annotators), len(valid))
    consensus = np.array([lower_median(units[key].values()) for key in valid], dtype=float)
    scale = scale_of(dimension)
    tables = AgreementTables.of([key[0] for key in valid], scale)
    ci = table_interval(len(valid), n_resamples, seed)
    confusion = tables.confusion(consensus, judge_scores)
    several = len(annotators) >= 2
    return DimensionAgreement(
        judge_model=role.judge_model,
        method=role.method,
        dimension=dimension,
        n=len(valid),
        invalid_left_out=compared.invalid_left_out,
        annotators=annotators,
        accuracy=ci(confusion, confusion_accuracy),
        kappa_quadratic=ci(confusion, confusion_kappa("quadratic")),
        kappa_linear=ci(confusion, confusion_kappa("linear")),
        alpha_ordinal=ci(tables.coincidence(np.vstack([table, judge_scores])), tables.alpha),
        confusion=score_agreement(
            dimension, consensus.astype(int), judge_scores.astype(int), scale
        ),
        annotators_alpha=ci(tables.coincidence(table), tables.alpha) if several else None,
        annotators_mean_kappa=ci(tables.pairs(table), _mean_annotator_kappa) if several else None,
        judge_mean_kappa_with_annotators=ci(
            tables.with_each(judge_scores, table), _mean_judge_kappa
        )
        if several
        else None,
    )


class AgreementTables(NamedTuple):
    """Per question (the cluster the bootstrap resamples), the tables agreement statistics
    are functions of: confusion matrices of two raters, coincidence matrices of several."""

    clusters: Any  # each unit's cluster code
    n_clusters: int
    scale: list[int]  # the scores, 0..k-1

    @classmethod
    def of(cls, questions: Sequence[str], scale: list[int]) -> AgreementTables:
        names, codes = np.unique(np.asarray(questions, dtype=object), return_inverse=True)
        return cls(np.asarray(codes, dtype=np.intp).reshape(-1), len(names), scale)

    def confusion(self, truth: Any, predicted: Any) -> Any:
        """Per cluster, the confusion matrix of two raters over units both rated."""
        both = ~(np.isnan(truth) | np.isnan(predicted))
        return metrics.confusion_tables(
            truth[both].astype(int), predicted[both].astype(int), self.clusters[both],
            self.n_clusters, len(self.scale),
        )  # fmt: skip

    def coincidence(self, ratings: Any) -> Any:
        return metrics.coincidence_tables(ratings, self.scale, self.clusters, self.n_clusters)

    def alpha(self, coincidence: Any) -> float:
        return metrics.alpha_from_coincidences(coincidence, self.scale, level="ordinal")

    def pairs(self, table: Any) -> Any:
        """Per cluster, a confusion matrix for each pair of annotators (clusters x pairs)."""
        pairs = itertools.combinations(range(len(table)), 2)
        return np.stack([self.confusion(table[i], table[j]) for i, j in pairs], axis=1)

    def with_each(self, judge: Any, table: Any) -> Any:
        """Per cluster, the judge's confusion matrix with each annotator."""
        return np.stack([self.confusion(judge, row) for row in table], axis=1)


def confusion_accuracy(confusion: Any) -> float:
    total = float(confusion.sum())
    if total == 0.0:
        raise ValueError("nothing to compare")
    return float(np.trace(confusion)) / total


def confusion_kappa(weights: Any) -> Callable[[Any], float]:
    return lambda confusion: metrics.kappa_from_confusion(confusion, weights=weights)


def _mean_annotator_kappa(pairs: Any) -> float:
    return _mean_kappa(pairs, "no pair of annotators labelled common samples with some variation")


def _mean_judge_kappa(pairs: Any) -> float:
    return _mean_kappa(pairs, "the judge and no annotator share samples with some variation")


def _mean_kappa(pairs: Any, none_defined: str) -> float:
    """The mean quadratic kappa of the pairs whose kappa is defined."""
    values = []
    for confusion in pairs:
        try:
            values.append(metrics.kappa_from_confusion(confusion, weights="quadratic"))
        except ValueError:
            continue
    if not values:
        raise ValueError(none_defined)
    return float(np.mean(values))


def score_agreement(
    dimension: str,
    truth: Sequence[int] | np.ndarray[Any, Any],
    predicted: Sequence[int] | np.ndarray[Any, Any],
    labels: Sequence[int],
    *,
    no_truth: int = 0,
) -> ScoreAgreement:
    """Accuracy, linear-weighted kappa and the confusion matrix of two score lists."""
    truth, predicted = list(truth), list(predicted)
    if len(truth) != len(predicted):
        raise ValueError(f"{len(truth)} truth scores but {len(predicted)} predictions")
    if not truth:
        empty = tuple(tuple(0 for _ in labels) for _ in labels)
        return ScoreAgreement(
            dimension=dimension, n=0, accuracy=None, kappa_linear=None,
            kappa_note="undefined: nothing to compare", labels=tuple(labels), confusion=empty,
            no_truth=no_truth,
        )  # fmt: skip
    matrix = metrics.confusion_matrix(truth, predicted, labels=list(labels))
    try:
        kappa: float | None = metrics.cohen_kappa_score(
            truth, predicted, weights="linear", labels=list(labels)
        )
        note = ""
    except ValueError as error:
        kappa, note = None, f"undefined: {error}"
    return ScoreAgreement(
        dimension=dimension,
        n=len(truth),
        accuracy=metrics.accuracy_score(truth, predicted),
        kappa_linear=kappa,
        kappa_note=note,
        labels=tuple(labels),
        confusion=tuple(tuple(int(cell) for cell in row) for row in matrix),
        no_truth=no_truth,
    )


def table_interval(
    n_rows: int, n_resamples: int, seed: int
) -> Callable[[Any, Callable[[Any], float]], Interval]:
    """A statistic of per-cluster tables (of ``n_rows`` units) with its bootstrap interval
    over clusters (an undefined value, or no resample defined, gives no value and says why)."""

    def interval(tables: Any, statistic: Callable[[Any], float]) -> Interval:
        if n_rows == 0:
            return Interval(value=None, note="undefined: nothing to compare")
        try:
            estimate = metrics.cluster_table_ci(
                tables, statistic, n_resamples=n_resamples, seed=seed, n_rows=n_rows
            )
        except ValueError as error:
            return Interval(value=None, note=f"undefined: {error}")
        low = None if math.isnan(estimate.low) else estimate.low
        high = None if math.isnan(estimate.high) else estimate.high
        return Interval(value=estimate.value, low=low, high=high)

    return interval


def lower_median(values: Iterable[int]) -> int:
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]


def scale_of(dimension: str) -> list[int]:
    if dimension == "overall_score":
        return list(range(2 * len(DIMENSION_KEYS) + 1))
    return [0, 1, 2]  # a rubric dimension, or a verdict as FAIL < PARTIAL < PASS


def judge_score(record: Evaluation, dimension: str) -> int:
    if dimension == "verdict":
        verdict = record.verdict
        assert verdict is not None  # valid evaluations have one
        return VERDICT_CODES[verdict]
    return record.score(dimension)


def report_markdown(report: AgreementReport) -> str:
    blocks = [labels_head(report), agreement_table(report).markdown()]
    extra = [judge_differences_table(report)] if report.judge_differences else []
    extra += [length_preference_table(report)] if report.length_preference else []
    blocks += [f"{t.title}:\n\n{t.markdown()}\n\n{t.note}" for t in extra]
    blocks += [
        f"by {t.title.removeprefix(SLICED)}:\n\n{t.markdown()}" for t in slice_tables(report)
    ]
    return "\n\n".join(blocks) + "\n"


SLICED = "Agreement with labels by "


def slice_tables(report: AgreementReport) -> list[Table]:
    """Per ``--by`` option: each value's accuracy and quadratic kappa per judge and dimension."""
    tables = []
    for sliced in report.slices:
        rows: list[list[Cell]] = [
            [value, d.judge_model, d.method, d.dimension, f"{d.n} ({d.invalid_left_out})",
             format_interval(d.accuracy), format_interval(d.kappa_quadratic)]
            for value, part in sliced.values.items()
            for d in part.dimensions
        ]  # fmt: skip
        columns = [sliced.by, "judge", "method", "dimension", "n (invalid left out)"]
        columns += ["accuracy", "kappa (quadratic)"]
        tables.append(Table(title=SLICED + sliced.by, columns=columns, rows=rows))
    return tables


def labels_head(report: AgreementReport) -> str:
    return (
        f"labels: {report.labels} from {', '.join(report.labels_files) or '-'}; "
        f"{report.unmatched_labels} name a sample no judge evaluated"
    )


def agreement_table(report: AgreementReport) -> Table:
    """Per judge, method and dimension: the agreement with the labels, with intervals."""
    columns = ["judge", "method", "dimension", "n (invalid left out)", "annotators", "accuracy"]
    columns += ["kappa (quadratic)", "alpha (ordinal)", "annotators' alpha"]
    columns += ["annotators' mean kappa", "judge's mean kappa with annotators"]
    rows: list[list[Cell]] = [
        [d.judge_model, d.method, d.dimension, f"{d.n} ({d.invalid_left_out})", len(d.annotators),
         *map(format_interval, (d.accuracy, d.kappa_quadratic, d.alpha_ordinal,
                                d.annotators_alpha, d.annotators_mean_kappa,
                                d.judge_mean_kappa_with_annotators))]
        for d in report.dimensions
    ]  # fmt: skip
    return Table(title="Agreement with labels", columns=columns, rows=rows)


def length_preference_table(report: AgreementReport) -> Table:
    """Per judge, method and dimension: the longer output's share at equal labels."""
    columns = ["judge", "method", "dimension", "questions", "pairs", "longer scored higher"]
    rows: list[list[Cell]] = [
        [d.judge_model, d.method, d.dimension, d.questions, d.pairs,
         format_interval(d.longer_higher)]
        for d in report.length_preference
    ]  # fmt: skip
    note = (
        "Over pairs of outputs to one question that the labels score alike, whose lengths "
        "(characters) and judge scores differ: the share the judge scored the longer one "
        "higher. With quality held equal by the labels, a share well above 0.5 is a "
        "preference for length itself (verbosity bias)."
    )
    return Table(title="Length preference at equal labels", columns=columns, rows=rows, note=note)


def judge_differences_table(report: AgreementReport) -> Table:
    """Per pair of judges and dimension: B's agreement minus A's, on the same samples."""
    columns = ["method", "dimension", "judge A", "judge B", "n (questions)"]
    columns += ["accuracy B - A", "kappa (quadratic) B - A"]
    rows: list[list[Cell]] = [
        [d.method, d.dimension, d.judge_a, d.judge_b, f"{d.n} ({d.questions})",
         format_difference(d.accuracy), format_difference(d.kappa_quadratic)]
        for d in report.judge_differences
    ]  # fmt: skip
    note = (
        "Over the labelled samples both judges judged validly, against the labels' consensus; "
        "intervals from one bootstrap of questions applied to both judges, so an interval "
        "that excludes 0 is a difference these samples show even where the judges' own "
        "intervals overlap."
    )
    return Table(title="Judges compared on the same samples", columns=columns, rows=rows, note=note)


def format_difference(interval: Interval) -> str:
    if interval.value is None:
        return "n/a"
    if interval.low is None or interval.high is None:
        return f"{interval.value:+.3f}"
    return f"{interval.value:+.3f} [{interval.low:+.3f}, {interval.high:+.3f}]"


def format_interval(interval: Interval | None) -> str:
    if interval is None:
        return "-"
    if interval.value is None:
        return "n/a"
    if interval.low is None or interval.high is None:
        return f"{interval.value:.3f}"
    return f"{interval.value:.3f} [{interval.low:.3f}, {interval.high:.3f}]"


def write_report(report: AgreementReport, path: Path) -> None:
    from ..runs import write_atomic

    write_atomic(path, json.dumps(report.model_dump(mode="json"), indent=2))
