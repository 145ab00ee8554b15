"""Operating points chosen on a labelled dev run and applied to another run.

``assay bench calibrate DEV_RUN --target T`` fits a monotone map from the verifier's raw
``p_error`` to a calibrated one (isotonic by default, or Platt) on the dev run's labelled,
scored answers, then picks the threshold on the calibrated score that is best for the target:

- ``balanced_accuracy`` or ``f1``: the threshold maximising it;
- ``precision@R``: the highest recall whose precision is at least ``R`` (e.g. ``precision@0.9``);
- ``recall@R``: the highest precision whose recall is at least ``R``.

The file (:class:`Calibration`) is applied by ``assay bench run --calibration FILE`` and
``assay bench summarize --calibration FILE``: the run's summary scores the calibrated
``p_error`` at the file's threshold, and records which file it used. The map is non-decreasing,
so "calibrated p_error >= threshold" is the same decision as "raw p_error >= raw_threshold":
``bench run`` gates answers (pass / revise) with ``raw_threshold``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import ConfigError
from .results import RESULTS_FILE, iter_results

CALIBRATION_KIND = "assay.calibration"
CALIBRATION_FILE = "calibration.json"  # the copy a run keeps of the file it was given
Method = Literal["isotonic", "platt"]
Array = npt.NDArray[np.float64]
_TARGET = re.compile(r"^(balanced_accuracy|f1|(precision|recall)@(0?\.\d+|1(\.0+)?))$")


class Calibration(BaseModel):
    """A calibration map and an operating threshold, fitted on one dev run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str = CALIBRATION_KIND
    schema_version: int = 1
    method: Method
    # isotonic: knots (raw p_error, calibrated p_error), linear between them, flat outside
    knots_x: tuple[float, ...] = ()
    knots_y: tuple[float, ...] = ()
    # platt: calibrated = sigmoid(a * logit(raw) + b)
    platt_a: float = 1.0
    platt_b: float = 0.0
    target: str
    threshold: float  # on the calibrated p_error: flag (error) when calibrated >= threshold
    raw_threshold: float  # the same decision on the raw p_error
    dev_run: str
    dev_n: int
    dev_value: float  # the target's value on the dev run at the threshold (in fit)

    def apply(self, p_error: Sequence[float] | Array) -> Array:
        raw = np.clip(np.asarray(p_error, dtype=np.float64), 0.0, 1.0)
        if self.method == "isotonic":
            return np.interp(raw, self.knots_x, self.knots_y)
        return _sigmoid(self.platt_a * _logit(raw) + self.platt_b)

    def fingerprint(self) -> str:
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:16]


def dev_pairs(run_dir: Path) -> tuple[npt.NDArray[np.bool_], Array]:
    """(gold_error, raw p_error) of the run's labelled, scored answers."""
    path = run_dir / RESULTS_FILE
    if not path.is_file():
        raise ConfigError(f"{run_dir}: no {RESULTS_FILE} (not a bench run directory?)")
    truth, scores = [], []
    for result in iter_results(path):
        if result.gold_error is not None and result.verifier_score is not None:
            truth.append(result.gold_error)
            scores.append(result.verifier_score)
    if len(set(truth)) < 2:
        raise ConfigError(
            f"{path}: calibration needs labelled, scored answers of both classes "
            f"(found {len(truth)}, errors {sum(truth)})"
        )
    return np.array(truth, dtype=bool), np.array(scores, dtype=np.float64)


def fit_calibration(
    truth: npt.NDArray[np.bool_], raw: Array, *, target: str, method: Method, dev_run: str
) -> Calibration:
    """Fit the map on ``raw`` and choose the threshold for ``target`` (see the module doc)."""
    if not _TARGET.match(target):
        raise ConfigError(
            f"--target {target!r}: expected balanced_accuracy, f1, precision@R or recall@R "
            "with R in (0, 1]"
        )
    if method == "isotonic":
        knots_x, knots_y = _isotonic(truth, raw)
        mapped = Calibration(
            method=method, knots_x=knots_x, knots_y=knots_y, target=target, threshold=0.5,
            raw_threshold=0.5, dev_run=dev_run, dev_n=len(raw), dev_value=0.0,
        )  # fmt: skip
    else:
        a, b = _platt(truth, raw)
        mapped = Calibration(
            method=method, platt_a=a, platt_b=b, target=target, threshold=0.5,
            raw_threshold=0.5, dev_run=dev_run, dev_n=len(raw), dev_value=0.0,
        )  # fmt: skip
    calibrated = mapped.apply(raw)
    threshold, value = _best_threshold(truth, calibrated, target)
    raw_threshold = _raw_threshold(raw, calibrated, threshold)
    return mapped.model_copy(
        update={"threshold": threshold, "raw_threshold": raw_threshold, "dev_value": value}
    )


def _isotonic(truth: npt.NDArray[np.bool_], raw: Array) -> tuple[tuple[float, ...], ...]:
    """Pool-adjacent-violators on the sorted scores; knots at each block's mean raw score."""
    order = np.argsort(raw, kind="stable")
    blocks: list[list[float]] = []  # [sum_y, count, sum_x]
    for x, y in zip(raw[order], truth[order].astype(np.float64), strict=True):
        blocks.append([float(y), 1.0, float(x)])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] >= blocks[-1][0] / blocks[-1][1]:
            top = blocks.pop()
            blocks[-1] = [a + b for a, b in zip(blocks[-1], top, strict=True)]
    xs = tuple(round(b[2] / b[1], 9) for b in blocks)
    ys = tuple(round(b[0] / b[1], 9) for b in blocks)
    return xs, ys


def _platt(truth: npt.NDArray[np.bool_], raw: Array) -> tuple[float, float]:
    """Logistic regression of the label on logit(raw p_error), by Newton's method."""
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


def _best_threshold(truth: npt.NDArray[np.bool_], p: Array, target: str) -> tuple[float, float]:
    """The threshold (midway between distinct calibrated scores) best for ``target``."""
    values = np.unique(p)
    candidates = [float(values[0]) - 1e-6, *((values[:-1] + values[1:]) / 2), 1.0 + 1e-6]
    best: tuple[float, float, float] | None = None  # (key, secondary, threshold)
    for threshold in candidates:
        flagged = p >= threshold
        tp = float((flagged & truth).sum())
        precision = tp / flagged.sum() if flagged.any() else 1.0
        recall = tp / truth.sum()
        specificity = float((~flagged & ~truth).sum()) / max(1, (~truth).sum())
        key = _target_value(target, precision, recall, specificity)
        if key is None:
            continue
        if best is None or key > best[0]:
            best = (key, recall, threshold)
    if best is None:
        raise ConfigError(f"--target {target}: no threshold on the dev run reaches it")
    return round(best[2], 9), round(best[0], 6)


def _target_value(target: str, precision: float, recall: float, specificity: float) -> float | None:
    if target == "balanced_accuracy":
        return (recall + specificity) / 2
    if target == "f1":
        return 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    name, level = target.split("@")
    if name == "precision":
        return recall if precision >= float(level) else None
    return precision if recall >= float(level) else None


def _raw_threshold(raw: Array, calibrated: Array, threshold: float) -> float:
    """The raw score at which the (non-decreasing) map reaches ``threshold``."""
    above = raw[calibrated >= threshold]
    below = raw[calibrated < threshold]
    if not above.size:
        return 1.0 + 1e-6
    if not below.size:
        return 0.0
    return round(float((below.max() + above.min()) / 2), 9)


def _logit(p: Array) -> Array:
    q = np.clip(p, 1e-6, 1 - 1e-6)
    return np.asarray(np.log(q / (1 - q)), dtype=np.float64)


def _sigmoid(z: Array) -> Array:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(z, -50, 50))), dtype=np.float64)


def read_calibration(path: Path) -> Calibration:
    """A calibration file, or a ConfigError naming it and what is wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such calibration file") from None
    except json.JSONDecodeError as error:
        raise ConfigError(f"{path}:{error.lineno}: not JSON ({error.msg})") from None
    if not isinstance(data, dict) or data.get("kind") != CALIBRATION_KIND:
        raise ConfigError(f"{path}: not a calibration file (kind must be {CALIBRATION_KIND!r})")
    try:
        return Calibration.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{path}: field {field}: {first['msg']}") from None


def run_calibration(run_dir: Path) -> Calibration | None:
    """The calibration a run was given (its copy in the run directory), if any."""
    path = run_dir / CALIBRATION_FILE
    return read_calibration(path) if path.is_file() else None


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
    }
