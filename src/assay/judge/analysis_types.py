"""The typed tables of a judge analysis; summary.json is :class:`JudgeSummary` as JSON.

Every row carries ``method`` (``cross_judge`` primary, ``self_judge`` diagnostic) so the two are
never pooled. Means and differences come with percentile-bootstrap intervals resampled by
question; rates are over the final evaluation of each sample x judge.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..runs.prices import Money
from .evalset import CoverageReport


class AnalysisSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    n_resamples: int = Field(default=1000, ge=1)
    confidence: float = Field(default=0.95, gt=0, lt=1)
    seed: int = Field(default=0, ge=0)  # numpy's generators take no negative seed
    plots: bool = True
    # the prompt variant every other one is compared with; None: the first label in sorted order
    baseline_variant: str | None = None


class _Row(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ScoreRow(_Row):
    method: str
    judge_model: str
    target_model: str
    prompt_variant: str
    dimension: str
    n: int
    mean: float
    ci_low: float
    ci_high: float


class VerdictRow(_Row):
    method: str
    judge_model: str
    target_model: str
    prompt_variant: str
    n: int
    counts: dict[str, int]


class VariantEffectRow(_Row):
    method: str
    judge_model: str
    target_model: str
    baseline: str
    variant: str
    dimension: str
    n_pairs: int
    mean_difference: float  # variant minus baseline, paired by question
    ci_low: float
    ci_high: float


class InvalidRow(_Row):
    method: str
    judge_model: str
    target_model: str
    prompt_variant: str
    n: int
    invalid: int
    rate: float
    first_attempt_n: int
    first_attempt_invalid: int
    first_attempt_rate: float
    flags: dict[str, int]


class SelfPreferenceRow(_Row):
    model: str
    dimension: str
    n_pairs: int
    self_mean: float
    cross_mean: float
    difference: float  # self minus cross, paired by sample
    ci_low: float
    ci_high: float
    cross_judges: tuple[str, ...]
    # Under which judging mode the paired evaluations were made: "blind" (opaque aliases for
    # target model and output id), "not blind", or "mixed".
    judging: str = "not blind"


class LengthPreferenceRow(_Row):
    """Within questions, how often the longer of two outputs got the higher overall score."""

    method: str
    judge_model: str
    questions: int  # questions with a counted pair
    pairs: int  # pairs of outputs to one question whose lengths and overall scores differ
    longer_higher: float  # share of those pairs the longer output won (0.5: no preference)
    ci_low: float | None
    ci_high: float | None


class AgreementRow(_Row):
    scope: Literal["cross_only", "all_methods"]
    dimension: str
    statistic: Literal["cohen_kappa_quadratic", "krippendorff_alpha_ordinal"]
    judges: tuple[str, ...]
    n_units: int
    value: float | None
    note: str = ""


class Counts(_Row):
    records: int
    work_items: int
    valid: int
    invalid: int
    valid_rate: float
    first_attempts: int
    first_attempt_valid: int
    first_attempt_valid_rate: float
    by_method: dict[str, dict[str, int]]


class JudgeSummary(BaseModel):
    """summary.json. ``kind`` is always "judge"."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["judge"] = "judge"
    schema_version: int = 1
    run_dir: str
    fingerprint: str
    thresholds: dict[str, Any]
    confidence: float
    n_resamples: int
    bootstrap: str
    counts: Counts
    coverage: CoverageReport | None = None  # set-level coverage, from coverage.json
    judges: tuple[str, ...]
    targets: tuple[str, ...]
    scores: tuple[ScoreRow, ...]
    verdicts: tuple[VerdictRow, ...]
    variant_effects: tuple[VariantEffectRow, ...]
    invalid_rates: tuple[InvalidRow, ...]
    self_preference: tuple[SelfPreferenceRow, ...]
    agreement: tuple[AgreementRow, ...]
    # per judge and method; empty for runs analysed before it existed
    length_preference: tuple[LengthPreferenceRow, ...] = ()
    plots: tuple[str, ...] = ()
    # record files that could not be read, left out of every statistic (never silently)
    skipped_unreadable: tuple[str, ...] = ()
    # cost in money under the run's price table (``--prices``; per sample x judge), or why not
    money: Money | None = None
    notes: tuple[str, ...] = ()  # what the tables cannot show (a judge that never varied)


class AnalysisResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    summary: JudgeSummary
    written: tuple[str, ...]

    def headline(self) -> dict[str, Any]:
        return {"kind": "judge", **self.summary.counts.model_dump()}
