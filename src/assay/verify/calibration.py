"""Operating points chosen on a labelled dev run and applied to another run.

``assay bench calibrate DEV_RUN --target T`` fits a monotone map from the verifier's raw
``p_error`` to a calibrated one (isotonic by default, Platt, or a shift of the log-odds) on the
dev run's labelled, scored answers, then picks the threshold on the calibrated score that is
best for the target:

- ``balanced_accuracy`` or ``f1``: the threshold maximising it;
- ``precision@R``: the highest recall whose precision is at least ``R`` (e.g. ``precision@0.9``);
- ``recall@R``: the highest precision whose recall is at least ``R``.

The file (:class:`Calibration`) is applied by ``assay bench run --calibration FILE`` and
``assay bench summarize --calibration FILE``: the run's summary scores the calibrated
``p_error`` at the file's threshold, and records which file it used. The map is non-decreasing
and ``raw_threshold`` is the least raw score it carries to ``threshold`` (:func:`preimage`), so
"calibrated p_error >= threshold" is the same decision as "raw p_error >= raw_threshold" on any
run, not only on the dev run's scores: ``bench run`` gates answers (pass / revise) with
``raw_threshold``.

A map is fitted on one scorer's ``p_error``: the file records what made the dev run's
(:func:`scorer_of`: the pattern, the deciding verifier and its version, the claim splitter), and
a run whose ``p_error`` is made otherwise refuses it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final, Literal

import numpy as np
import numpy.typing as npt
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from ..errors import ConfigError
from ..metrics import expected_calibration_error, roc_auc_score
from ..runs import read_run_json
from .defaults import MODEL_FREE_CHECKERS
from .results import RESULTS_FILE, iter_results

CALIBRATION_KIND: Final = "assay.calibration"
CALIBRATION_FILE = "calibration.json"  # the copy a run keeps of the file it was given
SCHEMA_VERSION: Final = 2
_LOGIT_FLOOR: Final = 1e-6  # scores are clipped to [floor, 1 - floor] before the log-odds
# how far a file's raw_threshold may be from the map's preimage of its threshold (rounding)
RAW_THRESHOLD_TOLERANCE: Final = 1e-6
Method = Literal["isotonic", "platt", "shift"]
Array = npt.NDArray[np.float64]
# R in (0, 1]: 0.5, .9, 1, 1.0; not 0, 0.0
_TARGET = re.compile(r"^(balanced_accuracy|f1|(precision|recall)@(0?\.\d*[1-9]\d*|1(\.0+)?))$")
Probability = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class CrossValidation(BaseModel):
    """What the method and target would have done on dev answers it was not fitted on: each
    of ``folds`` folds of the dev run (by group: no question or article on both sides) scored
    by a map and threshold fitted on the other folds, pooled. ``*_before`` is the dev run's own
    scores at its own threshold; a target value is None where the target is not reached."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    folds: int = Field(ge=2)
    threshold_before: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    target_before: float | None
    target_after: float | None
    ece_before: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    ece_after: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)


class Calibration(BaseModel):
    """A calibration map and an operating threshold, fitted on one dev run (or, for a shift,
    set from an error rate the user states: :func:`stated_error_rate_map`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["assay.calibration"] = CALIBRATION_KIND
    # 2: raw_threshold is the map's preimage of threshold (checked on reading). Files of
    # version 1 set it midway between two dev scores, which agrees with the map on the dev
    # run's answers only; they are read as they are, so their runs resume as they began.
    schema_version: Literal[1, 2] = SCHEMA_VERSION
    method: Method
    # isotonic: knots (raw p_error, calibrated p_error), linear between them, flat outside;
    # both non-decreasing (the map never reorders answers), of equal length, in [0, 1]
    knots_x: tuple[Probability, ...] = ()
    knots_y: tuple[Probability, ...] = ()
    # platt: calibrated = sigmoid(a * logit(raw) + b), a >= 0; shift: the same with a = 1
    platt_a: float = Field(default=1.0, ge=0.0, allow_inf_nan=False)
    platt_b: float = Field(default=0.0, allow_inf_nan=False)
    target: str = Field(pattern=_TARGET.pattern)
    # on the calibrated p_error: flag (error) when calibrated >= threshold
    threshold: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    raw_threshold: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)  # the same on raw p_error
    dev_run: str  # "" for a stated error rate
    dev_n: int = Field(ge=0)
    # the target's value on the dev run at the threshold (in fit); None without a dev run
    dev_value: float | None
    # what made the dev run's p_error (scorer_of); None in files from before it was recorded
    dev_scorer: dict[str, str] | None = None
    # the same fit, held out on folds of the dev run (cross_validate); None in older files and
    # when a fold's training part lacks a class
    dev_cross_validation: CrossValidation | None = None
    # a shift from an error rate the user states instead of labels (stated_error_rate_map)
    stated_error_rate: float | None = Field(default=None, gt=0.0, lt=1.0, allow_inf_nan=False)

    @field_validator("knots_x", "knots_y")
    @classmethod
    def _non_decreasing(cls, knots: tuple[float, ...]) -> tuple[float, ...]:
        if any(b < a for a, b in itertools.pairwise(knots)):
            raise ValueError("the knots must be non-decreasing")
        return knots

    @field_validator("knots_y")
    @classmethod
    def _as_many_as_x(cls, knots: tuple[float, ...], info: ValidationInfo) -> tuple[float, ...]:
        xs = info.data.get("knots_x")
        if xs is not None and len(xs) != len(knots):
            raise ValueError(f"{len(knots)} knots, but knots_x has {len(xs)}: give one per x")
        if xs is not None and info.data.get("method") == "isotonic" and not knots:
            raise ValueError("an isotonic map needs at least one knot")
        return knots

    @model_validator(mode="after")
    def _one_decision(self) -> Calibration:
        """A shift has slope 1, and (from version 2) the raw threshold is where the map
        reaches the threshold: otherwise ``bench run`` would gate answers one way and the
        summary count them another."""
        if self.method == "shift" and self.platt_a != 1.0:
            raise ValueError(f"platt_a: a shift has slope 1, not {self.platt_a}")
        if self.schema_version >= 2:
            expected = preimage(self, self.threshold)
            if abs(expected - self.raw_threshold) > RAW_THRESHOLD_TOLERANCE:
                raise ValueError(
                    f"raw_threshold: {self.raw_threshold} is not where the map reaches the "
                    f"threshold {self.threshold} ({expected:.9f}): the gate and the summary "
                    "would disagree"
                )
        return self

    def apply(self, p_error: Sequence[float] | Array) -> Array:
        raw = np.clip(np.asarray(p_error, dtype=np.float64), 0.0, 1.0)
        if self.method == "isotonic":
            return np.interp(raw, self.knots_x, self.knots_y)
        return _sigmoid(self.platt_a * _logit(raw) + self.platt_b)

    def fingerprint(self) -> str:
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:16]


@dataclass(frozen=True)
class DevAnswers:
    """A dev run's labelled, scored answers: gold label, raw ``p_error``, group, and the
    threshold the run gated them with."""

    truth: npt.NDArray[np.bool_]
    raw: Array
    groups: tuple[str, ...]
    threshold: float


def dev_answers(run_dir: Path) -> DevAnswers:
    """The labelled, scored answers of a bench run (both classes required)."""
    path = run_dir / RESULTS_FILE
    if not path.is_file():
        raise ConfigError(f"{run_dir}: no {RESULTS_FILE} (not a bench run directory?)")
    truth, scores, groups, thresholds = [], [], [], set()
    for result in iter_results(path):
        if result.gold_error is not None and result.verifier_score is not None:
            truth.append(result.gold_error)
            scores.append(result.verifier_score)
            groups.append(result.cluster)
            thresholds.add(result.threshold)
    if len(set(truth)) < 2:
        raise ConfigError(
            f"{path}: calibration needs labelled, scored answers of both classes "
            f"(found {len(truth)}, errors {sum(truth)})"
        )
    return DevAnswers(
        truth=np.array(truth, dtype=bool),
        raw=np.array(scores, dtype=np.float64),
        groups=tuple(groups),
        threshold=min(thresholds),  # one value unless the run's results were gated otherwise
    )


def scorer_of(config: Mapping[str, Any], checker_version: str | None) -> dict[str, str]:
    """What makes a run's ``p_error``, from its config: the pattern, the verifier that decides
    (the model-free primary of ``checker+model``: the model gives only a second opinion), the
    checker's version, how claims are split and, for a model verifier, how it is asked. A map
    fitted on one scorer's ``p_error`` means nothing on another's."""
    verifier = str(config.get("verifier"))
    first, plus, _ = verifier.partition("+")
    decider = first if plus and first in MODEL_FREE_CHECKERS else verifier
    scorer = {
        "pattern": str(config.get("pattern")),
        "verifier": decider,
        "claim_splitter": str(config.get("claim_splitter", "rules")),
    }
    if config.get("claim_splitter") == "model" and config.get("splitter"):
        scorer["splitter"] = str(config["splitter"])
    if checker_version:
        scorer["checker_version"] = checker_version
    if decider not in MODEL_FREE_CHECKERS:
        for key in ("claim_check", "claim_template", "claim_evidence_cut", "checker_votes"):
            if key in config:
                scorer[key] = str(config[key])
    return scorer


def run_scorer(run_dir: Path) -> dict[str, str] | None:
    """:func:`scorer_of` a run, from its run.json (None without one)."""
    data = read_run_json(run_dir)
    config = data.get("config") if data else None
    if not isinstance(config, dict):
        return None
    models = data.get("models") if data else None
    verifier = models.get("verifier") if isinstance(models, dict) else None
    version = verifier.get("checker_version") if isinstance(verifier, dict) else None
    return scorer_of(config, version if isinstance(version, str) else None)


def fit_calibration(
    truth: npt.NDArray[np.bool_],
    raw: Array,
    *,
    target: str,
    method: Method,
    dev_run: str,
    dev_scorer: dict[str, str] | None = None,
) -> Calibration:
    """Fit the map on ``raw`` and choose the threshold for ``target`` (see the module doc)."""
    if not _TARGET.match(target):
        raise ConfigError(
            f"--target {target!r}: expected balanced_accuracy, f1, precision@R or recall@R "
            "with R in (0, 1]"
        )
    fields: dict[str, Any] = {"method": method, "target": target, "dev_run": dev_run}
    fields |= {"dev_n": len(raw), **_map_fields(truth, raw, method)}
    mapped = Calibration.model_construct(**fields)  # the map alone, to score the dev answers
    threshold, value = _best_threshold(truth, mapped.apply(raw), target)
    return Calibration.model_validate(
        fields
        | {
            "threshold": threshold,
            "raw_threshold": preimage(mapped, threshold),
            "dev_value": value,
            "dev_scorer": dev_scorer,
        }
    )


def _map_fields(truth: npt.NDArray[np.bool_], raw: Array, method: Method) -> dict[str, Any]:
    """The fields of the fitted map: the knots, or Platt's slope and intercept (slope 1 for a
    shift)."""
    if method == "isotonic":
        knots_x, knots_y = _isotonic(truth, raw)
        return {"knots_x": knots_x, "knots_y": knots_y}
    if method == "platt":
        a, b = _platt(truth, raw)
        return {"platt_a": a, "platt_b": b}
    return {"platt_a": 1.0, "platt_b": _shift(truth, raw)}


def stated_error_rate_map(error_rate: float) -> Calibration:
    """A shift of the log-odds by ``logit(error_rate)``, with no labels: Bayes' rule for a
    new prior (Saerens, Latinne and Decaestecker, Neural Computation 2002). A verifier whose
    ``p_error`` speaks for a 50/50 prior (the learned checker: its classes were balanced in
    training) then speaks for the stated one. The decisions stay the verifier's: for balanced
    accuracy the best threshold of a calibrated score is the error rate itself, which is raw
    ``p_error`` 0.5 (the only target a stated rate can serve)."""
    if not _LOGIT_FLOOR <= error_rate <= 1 - _LOGIT_FLOOR:
        raise ConfigError(
            f"--error-rate {error_rate}: expected a rate between {_LOGIT_FLOOR:g} and "
            f"{1 - _LOGIT_FLOOR:g} (log-odds beyond them are not told apart)"
        )
    b = round(float(_logit(np.array([error_rate]))[0]), 9)
    fields: dict[str, Any] = {
        "method": "shift", "platt_b": b, "target": "balanced_accuracy", "dev_run": "",
        "dev_n": 0, "dev_value": None, "stated_error_rate": error_rate,
    }  # fmt: skip
    # the same arithmetic that maps a run's scores, so raw 0.5 lands exactly on the threshold
    threshold = float(Calibration.model_construct(**fields).apply(np.array([0.5]))[0])
    return Calibration.model_validate(fields | {"threshold": threshold, "raw_threshold": 0.5})


def cross_validate(
    dev: DevAnswers, *, target: str, method: Method, folds: int = 5
) -> CrossValidation | None:
    """Fit on all folds but one, score that one, for each fold; pool the held-out scores and
    compare them with the run's own scores at its own threshold (see :class:`CrossValidation`).
    None when some fold's training part has one class only (too few labels to say)."""
    fold = np.array([_fold_of(group, folds) for group in dev.groups])
    calibrated = np.zeros(len(dev.raw))
    flagged = np.zeros(len(dev.raw), dtype=bool)
    for k in range(folds):
        train, test = fold != k, fold == k
        if not test.any():
            continue
        if len(set(dev.truth[train].tolist())) < 2:
            return None
        fitted = fit_calibration(
            dev.truth[train], dev.raw[train], target=target, method=method, dev_run="-"
        )
        calibrated[test] = fitted.apply(dev.raw[test])
        flagged[test] = calibrated[test] >= fitted.threshold
    return CrossValidation(
        folds=folds,
        threshold_before=dev.threshold,
        target_before=_rounded_value(dev.truth, dev.raw >= dev.threshold, target),
        target_after=_rounded_value(dev.truth, flagged, target),
        ece_before=round(expected_calibration_error(dev.truth, dev.raw), 6),
        ece_after=round(expected_calibration_error(dev.truth, calibrated), 6),
    )


def _fold_of(group: str, folds: int) -> int:
    return int(hashlib.sha256(group.encode()).hexdigest()[:8], 16) % folds


def _rounded_value(
    truth: npt.NDArray[np.bool_], flagged: npt.NDArray[np.bool_], target: str
) -> float | None:
    value = _value_at(truth, flagged, target)
    return None if value is None else round(value, 6)


def backwards_note(truth: npt.NDArray[np.bool_], raw: Array, fitted: Calibration) -> str | None:
    """Why ``fitted`` is not worth applying, when the dev run's scores rank its errors no
    better than chance (AUROC <= 0.5): Platt's slope then stops at 0 (a map may not turn the
    verifier's order around) and isotonic regression fits one level: either map gives every
    answer the same probability and flags every answer or none. The file is written either
    way: the numbers are the fit's."""
    auroc = roc_auc_score(truth, raw)
    if auroc > 0.5:
        return None
    shape = (
        (
            "the Platt slope is held at 0 (it may not reverse the scores' order), so the map "
            "is one level"
            if fitted.platt_a == 0
            else f"the Platt slope is {fitted.platt_a:.3f}"
        )
        if fitted.method == "platt"
        else f"a shift of the log-odds (by {fitted.platt_b:.3f}) keeps that order"
        if fitted.method == "shift"
        else f"the isotonic map has {len(set(fitted.knots_y))} level(s)"
    )
    return (
        f"on {fitted.dev_n} dev answers the verifier's p_error ranks errors no better than "
        f"chance (AUROC {auroc:.3f}): {shape}; check the verifier before applying this map"
    )


def _isotonic(truth: npt.NDArray[np.bool_], raw: Array) -> tuple[tuple[float, ...], ...]:
    """Pool-adjacent-violators over the distinct scores (answers with one score are one block
    from the start, so the map does not depend on their order); knots at each block's mean raw
    score, strictly increasing."""
    scores, first, counts = np.unique(raw, return_inverse=True, return_counts=True)
    errors = np.bincount(first, weights=truth.astype(np.float64), minlength=len(scores))
    blocks: list[list[float]] = []  # [sum_y, count, sum_x]
    for x, y, n in zip(scores, errors, counts, strict=True):
        blocks.append([float(y), float(n), float(x) * float(n)])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] >= blocks[-1][0] / blocks[-1][1]:
            top = blocks.pop()
            blocks[-1] = [a + b for a, b in zip(blocks[-1], top, strict=True)]
    xs = tuple(round(b[2] / b[1], 9) for b in blocks)
    ys = tuple(round(b[0] / b[1], 9) for b in blocks)
    return xs, ys


def _platt(truth: npt.NDArray[np.bool_], raw: Array) -> tuple[float, float]:
    """Logistic regression of the label on logit(raw p_error), by Newton's method, with the
    slope held at 0 or above: a map must not reverse the verifier's order (the gate compares
    raw scores with one threshold). Where the free fit's slope is negative the likelihood,
    concave, is best on the boundary: slope 0 and the dev run's error rate for every answer."""
    a, b = _platt_free(truth, raw)
    if a >= 0:
        return a, b
    return 0.0, _shift(truth, np.full_like(raw, 0.5))


def _platt_free(truth: npt.NDArray[np.bool_], raw: Array) -> tuple[float, float]:
    z = _logit(raw)
    design = np.stack([z, np.ones_like(z)], axis=1)
    y = truth.astype(np.float64)
    beta = np.array([1.0, 0.0])
    for _ in range(100):
        p = _sigmoid(design @ beta)
        gradient = design.T @ (p - y) + 1e-6 * beta
        hessian = (design * (p * (1 - p))[:, None]).T @ design + 1e-6 * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if float(np.max(np.abs(step))) < 1e-10:
            break
    return round(float(beta[0]), 9), round(float(beta[1]), 9)


def _shift(truth: npt.NDArray[np.bool_], raw: Array) -> float:
    """The intercept ``b`` of ``sigmoid(logit(raw) + b)`` by maximum likelihood (Newton's method):
    one number, the log of how much more often the dev run's answers are wrong than the scores
    say. A verifier trained with its classes balanced speaks for a 50/50 prior; this moves it to
    the dev data's own base rate and keeps its slope, so a few dozen labels pin it where a
    two-parameter or isotonic map would still follow the sample's noise."""
    z = _logit(raw)
    y = truth.astype(np.float64)
    b = 0.0
    for _ in range(100):
        p = _sigmoid(z + b)
        step = float((p - y).sum()) / (float((p * (1 - p)).sum()) + 1e-6)
        b -= step
        if abs(step) < 1e-10:
            break
    return round(b, 9)


def _best_threshold(truth: npt.NDArray[np.bool_], p: Array, target: str) -> tuple[float, float]:
    """The threshold (midway between distinct calibrated scores) best for ``target``; the first
    of equals. Every candidate is scored at once from sorted scores (O(n log n)), so a dev run
    of a million answers takes seconds."""
    values = np.unique(p)
    # flag all (0.0), midpoints, and flag none where a threshold in [0, 1] can say it
    ends = [1.0] if values[-1] < 1.0 else []
    candidates = np.concatenate([[0.0], (values[:-1] + values[1:]) / 2, ends])
    keys = _target_values(target, *_rates(truth, p, candidates))
    if np.isnan(keys).all():
        raise ConfigError(f"--target {target}: no threshold on the dev run reaches it")
    best = int(np.nanargmax(keys))
    return round(float(candidates[best]), 9), round(float(keys[best]), 6)


def _value_at(
    truth: npt.NDArray[np.bool_], flagged: npt.NDArray[np.bool_], target: str
) -> float | None:
    """The target's value when the ``flagged`` answers are called errors (None: not reached)."""
    as_score = flagged.astype(np.float64)  # flagged = score >= 1
    value = float(_target_values(target, *_rates(truth, as_score, np.array([1.0])))[0])
    return None if np.isnan(value) else value


def _rates(truth: npt.NDArray[np.bool_], p: Array, thresholds: Array) -> tuple[Array, Array, Array]:
    """(precision, recall, specificity) of flagging ``p >= t``, for each threshold ``t``."""
    errors, grounded = np.sort(p[truth]), np.sort(p[~truth])
    tp = (len(errors) - np.searchsorted(errors, thresholds, side="left")).astype(np.float64)
    fp = (len(grounded) - np.searchsorted(grounded, thresholds, side="left")).astype(np.float64)
    flagged = tp + fp
    precision = np.divide(tp, flagged, out=np.ones_like(tp), where=flagged > 0)
    recall = tp / max(1, len(errors))
    specificity = (len(grounded) - fp) / max(1, len(grounded))
    return precision, recall, specificity


def _target_values(target: str, precision: Array, recall: Array, specificity: Array) -> Array:
    """The target at each threshold; NaN where it is not reached (precision@R, recall@R)."""
    if target == "balanced_accuracy":
        return (recall + specificity) / 2
    if target == "f1":
        both = precision + recall
        return np.divide(2 * precision * recall, both, out=np.zeros_like(both), where=both > 0)
    name, level = target.split("@")
    if name == "precision":
        return np.where(precision >= float(level), recall, np.nan)
    return np.where(recall >= float(level), precision, np.nan)


def preimage(calibration: Calibration, threshold: float) -> float:
    """The least raw ``p_error`` the (non-decreasing) map carries to ``threshold`` or above:
    0.0 when every score reaches it, 1.0 when none does. Rounded up to 9 decimals, so the gate
    never flags a score the map leaves under the threshold."""
    if calibration.method == "isotonic":
        exact = _isotonic_preimage(calibration.knots_x, calibration.knots_y, threshold)
    else:
        exact = _sigmoid_preimage(calibration.platt_a, calibration.platt_b, threshold)
    return min(1.0, math.ceil(round(exact * 1e9, 3)) / 1e9)


def _isotonic_preimage(xs: Sequence[float], ys: Sequence[float], threshold: float) -> float:
    if ys[0] >= threshold:  # flat at ys[0] left of the first knot
        return 0.0
    if ys[-1] < threshold:
        return 1.0
    i = next(k for k, y in enumerate(ys) if y >= threshold)
    (x0, y0), (x1, y1) = (xs[i - 1], ys[i - 1]), (xs[i], ys[i])
    return x0 + (threshold - y0) * (x1 - x0) / (y1 - y0)


def _sigmoid_preimage(a: float, b: float, threshold: float) -> float:
    def mapped(raw: float) -> float:
        return float(_sigmoid(a * _logit(np.array([raw])) + b)[0])

    if mapped(0.0) >= threshold:  # scores are clipped before the log-odds: flat below the floor
        return 0.0
    if a == 0 or mapped(1.0) < threshold:
        return 1.0
    return float(_sigmoid(np.array([(float(_logit(np.array([threshold]))[0]) - b) / a]))[0])


def _logit(p: Array) -> Array:
    q = np.clip(p, _LOGIT_FLOOR, 1 - _LOGIT_FLOOR)
    return np.asarray(np.log(q / (1 - q)), dtype=np.float64)


def _sigmoid(z: Array) -> Array:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(z, -50, 50))), dtype=np.float64)


def read_calibration(path: Path) -> Calibration:
    """A calibration file, checked whole (every field, the map's knots, the thresholds), or
    one ConfigError naming the file and the field."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such calibration file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a calibration file") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text (byte {error.start + 1})") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the calibration file: {error.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(f"{path}:{error.lineno}: not JSON ({error.msg})") from None
    except (RecursionError, ValueError) as error:
        raise ConfigError(f"{path}: not readable JSON ({error})") from None
    if not isinstance(data, dict) or data.get("kind") != CALIBRATION_KIND:
        raise ConfigError(f"{path}: not a calibration file (kind must be {CALIBRATION_KIND!r})")
    try:  # strict: a number written as a string is a mistake in the file, not a number
        return Calibration.model_validate_json(text, strict=True)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")
        if field == "schema_version":
            message = f"{data.get('schema_version')!r} is not a version this assay reads (1, 2)"
        where = f"field {field!r}: " if field else ""
        raise ConfigError(f"{path}: {where}{message}") from None


def run_calibration(run_dir: Path) -> Calibration | None:
    """The calibration a run was given (its copy in the run directory), if any."""
    path = run_dir / CALIBRATION_FILE
    return read_calibration(path) if path.is_file() else None


def adopt_calibration(path: Path, run_dir: Path, *, replace: bool) -> None:
    """Keep a copy of the calibration file in the run, so its summary is rebuilt with it
    (checked whole first, by :func:`check_adoption`, against the run's recorded scorer)."""
    if check_adoption(path, run_dir, replace=replace, scorer=run_scorer(run_dir)):
        run_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, run_dir / CALIBRATION_FILE)


def check_adoption(
    path: Path, run_dir: Path, *, replace: bool, scorer: dict[str, str] | None
) -> bool:
    """Whether the run should keep a copy of ``path`` (False: it already has this one).
    A file fitted on another scorer's ``p_error`` than the run's (``scorer``; None: unknown)
    is refused. ``bench run`` (``replace=False``) refuses a file that gates otherwise than the
    run's results were gated (their raw threshold, whichever file, if any, set it; ``bench
    summarize --calibration`` may have swapped the run's copy since); ``bench summarize`` may
    re-score."""
    new = read_calibration(path)
    _check_scorer(new, path, run_dir, scorer)
    kept = run_dir / CALIBRATION_FILE
    if path.resolve() == kept.resolve():
        return False
    gate = _results_gate(run_dir) if not replace else None
    if gate is not None and gate != new.raw_threshold:
        raise ConfigError(
            f"{run_dir}: its results were gated at raw p_error >= {gate:g}, and {path} gates "
            f"at {new.raw_threshold:g}",
            hint="resume with the calibration file (or --threshold) the run began with, or "
            "use a new --out_dir; `bench summarize --calibration` re-scores finished results",
        )
    return True


def _results_gate(run_dir: Path) -> float | None:
    """The raw threshold a run's results were gated with (None: no results yet)."""
    path = run_dir / RESULTS_FILE
    if not path.is_file():
        return None
    return next((result.threshold for result in iter_results(path)), None)


def scorer_difference(calibration: Calibration, scorer: dict[str, str] | None) -> str | None:
    """How the scorer ``calibration`` was fitted on differs from ``scorer`` (``verifier lexical
    there, learned here``), or None: the same, or either unknown (files from before it was
    recorded)."""
    fitted = calibration.dev_scorer
    if fitted is None or scorer is None or fitted == scorer:
        return None
    return "; ".join(
        f"{key} {fitted.get(key, '(none)')} there, {scorer.get(key, '(none)')} here"
        for key in sorted(fitted.keys() | scorer.keys())
        if fitted.get(key) != scorer.get(key)
    )


def _check_scorer(
    calibration: Calibration, path: Path, run_dir: Path, scorer: dict[str, str] | None
) -> None:
    differ = scorer_difference(calibration, scorer)
    if differ is None:
        return
    raise ConfigError(
        f"{path}: fitted on the p_error of {calibration.dev_run}, which was made otherwise than "
        f"{run_dir}'s ({differ}); fit a map on a dev run made like this one "
        "(assay bench calibrate DEV_RUN)"
    )


def write_calibration(calibration: Calibration, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(calibration.model_dump_json(indent=1) + "\n", encoding="utf-8")


def calibration_record(calibration: Calibration, source: Path | str) -> dict[str, object]:
    """What a summary records about the calibration it applied."""
    return {
        "file": str(source),
        "fingerprint": calibration.fingerprint(),
        "method": calibration.method,
        "target": calibration.target,
        "threshold": calibration.threshold,
        "raw_threshold": calibration.raw_threshold,
        "dev_run": calibration.dev_run,
        "dev_n": calibration.dev_n,
        "dev_scorer": calibration.dev_scorer,
        "stated_error_rate": calibration.stated_error_rate,
    }
