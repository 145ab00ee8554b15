"""assay's model-free claim checker as a deepeval metric.

``GroundedClaimsMetric()`` scores a test case's ``actual_output`` against its
``retrieval_context`` without a model call, next to deepeval's own metrics::

    from deepeval import evaluate
    from deepeval.test_case import LLMTestCase
    from assay.integrations.deepeval import GroundedClaimsMetric

    case = LLMTestCase(
        input="Where is the Eiffel Tower?",
        actual_output="The Eiffel Tower is in Paris.",
        retrieval_context=["The Eiffel Tower stands in Paris."],
    )
    evaluate([case], metrics=[GroundedClaimsMetric(threshold=0.5)])

The output is split into claims by assay's rules, each claim is checked by the ``learned``
checker against all the passages (and against the passages it cites, ``[cite:ID]``), and the
answer's ``p_error`` is the one ``assay bench run --pattern entailment --verifier learned``
gives the same answer and evidence (the weakest claim decides). deepeval's metrics are
higher-is-better, so the score is ``1 - p_error`` and the test case passes when ``score >=
threshold`` (0.5 unless given). ``GroundedClaimsMetric(calibration=FILE)`` uses the operating
point of a file ``assay bench calibrate`` fitted instead: its map gives ``p_error`` and the
threshold is ``1 -`` its own. The reason gives the score, ``p_error`` and, per claim, its verdict
and the evidence window it was matched to; ``score_breakdown`` keeps ``p_error``, the threshold
and every claim check.

A test case without the evidence field (``retrieval_context``, or ``context`` with
``evidence="context"``), without an ``actual_output``, or whose output states no claim the
checker can score raises deepeval's ``MissingTestCaseParamsError`` naming the field: deepeval
stops the run, records it as the test case's error (``ErrorConfig(ignore_errors=True)``) or
skips the metric for that test case (``skip_on_missing_params=True``).

Needs the ``deepeval`` extra. This module sits above every layer of assay: it imports them,
and nothing in assay imports it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from deepeval.errors import MissingTestCaseParamsError
from deepeval.metrics import BaseMetric
from deepeval.test_case import LLMTestCase, RetrievedContextData

from ..verify.checkers.learned import CHECKER_VERSION
from ..verify.patterns.base import AnswerScore
from ..verify.types import Evidence
from ._grounding import (
    OperatingPoint,
    claim_lines,
    evidence_items,
    failure,
    operating_point,
    own_p_error,
    run_blocking,
    score_grounding,
    score_metadata,
)

__all__ = ["GroundedClaimsMetric"]

EvidenceField = Literal["retrieval_context", "context"]
METRIC_NAME = "Grounded Claims (assay)"


# deepeval's BaseMetric.__init_subclass__ (which wraps measure for its tracing) is unannotated
class GroundedClaimsMetric(BaseMetric):  # type: ignore[no-untyped-call]
    """The grounding of ``actual_output`` in the test case's passages, by assay's ``learned``
    checker: score ``1 - p_error``, success when ``score >= threshold``."""

    def __init__(
        self,
        threshold: float | None = None,
        evidence: EvidenceField = "retrieval_context",
        async_mode: bool = True,
        verbose_mode: bool = False,
        calibration: str | Path | None = None,
    ) -> None:
        if evidence not in ("retrieval_context", "context"):
            raise ValueError(f"evidence must be 'retrieval_context' or 'context', got {evidence!r}")
        self._point = _operating_point(threshold, calibration)
        self.threshold = 1.0 - self._point.threshold
        # kept under its parameter's name: deepeval copies a metric by passing its attributes
        # named like __init__'s parameters to a new one (the threshold with it, which agrees)
        self.calibration = calibration
        self.evidence = evidence
        self.async_mode = async_mode
        self.verbose_mode = verbose_mode
        self.include_reason = True
        self.evaluation_model = f"assay {CHECKER_VERSION}"

    @property
    def __name__(self) -> str:  # deepeval names a metric by this property
        return METRIC_NAME

    def measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any) -> float:
        # also from a running event loop (a notebook cell, an async test)
        return run_blocking(self.a_measure(test_case))

    async def a_measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any) -> float:
        self._reset()
        try:
            answer, passages = self._inputs(test_case)
            result = await score_grounding(
                answer,
                record_id=str(test_case.name or "deepeval"),
                question=str(test_case.input or ""),
                evidence=passages,
            )
            return self._set_score(result)
        except MissingTestCaseParamsError as error:
            self.error = str(error)
            raise

    def is_successful(self) -> bool:
        self.success = (
            self.error is None and self.score is not None and self.score >= (self.threshold or 0.0)
        )
        return self.success

    def _reset(self) -> None:
        """One instance may measure many test cases (``assert_test``, a loop of one's own)."""
        self.score = self.reason = self.error = self.success = None
        self.score_breakdown = {}

    def _inputs(self, test_case: LLMTestCase) -> tuple[str, tuple[Evidence, ...]]:
        if test_case.actual_output is None:
            raise MissingTestCaseParamsError(
                "actual_output: missing: the test case gives no output to check"
            )
        return test_case.actual_output, self._passages(test_case)

    def _passages(self, test_case: LLMTestCase) -> tuple[Evidence, ...]:
        value = getattr(test_case, self.evidence)
        if not value:
            raise MissingTestCaseParamsError(
                f"{self.evidence}: missing: the test case gives no evidence passages to check "
                "against"
            )
        return evidence_items(_plain(value), field=self.evidence, holder="the test case")

    def _set_score(self, result: AnswerScore) -> float:
        if result.p_error is None:
            raise MissingTestCaseParamsError(
                f"actual_output: assay {CHECKER_VERSION}: no score: {failure(result)}"
            )
        p_error = self._point.p_error(result.p_error)
        score = 1.0 - p_error
        self.score = score
        self.score_breakdown = score_metadata(
            result, p_error, self.threshold or 0.0, self._point.calibration
        )
        self.success = self.is_successful()
        self.reason = self._explanation(result, score, p_error)
        if self.verbose_mode:
            self.verbose_logs = self.reason
        return score

    def _explanation(self, result: AnswerScore, score: float, p_error: float) -> str:
        verdict = "grounded" if self.success else "not grounded"
        count = len(result.claim_checks)
        raw = own_p_error(result, self._point.calibration is not None)
        header = (
            f"score {score:.3f} = 1 - p_error {p_error:.3f}{raw} ({verdict}: threshold "
            f"{self.threshold}; {result.method}, {count} claim{'' if count == 1 else 's'}, "
            f"checker {CHECKER_VERSION})"
        )
        return "\n".join([header, *claim_lines(result)])


def _operating_point(threshold: float | None, calibration: str | Path | None) -> OperatingPoint:
    """deepeval's threshold is on the score, ``1 - p_error``; the operating point's is on
    ``p_error`` (a calibration's own, or ``1 - threshold``, refused outside [0, 1]). A
    threshold beside a calibration is refused unless it is the one the calibration gives, as
    in deepeval's copy of the metric."""
    if calibration is None:
        return operating_point(None if threshold is None else 1.0 - threshold)
    point = operating_point(None, calibration)
    if threshold is not None and not math.isclose(threshold, 1.0 - point.threshold):
        raise ValueError(
            "give a threshold or a calibration, not both: the calibration's threshold decides "
            f"(here a score of at least {1.0 - point.threshold:.4f})"
        )
    return point


def _plain(value: Sequence[str | RetrievedContextData]) -> list[str | dict[str, str]]:
    """deepeval's passages as assay's evidence reads them: a retrieved passage with its source
    (``RetrievedContextData``) keeps the source."""
    return [
        {"text": item.context, "source": item.source}
        if isinstance(item, RetrievedContextData)
        else item
        for item in value
    ]
