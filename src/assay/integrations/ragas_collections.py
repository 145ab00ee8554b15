"""assay's model-free claim checker as a metric of ragas' ``metrics.collections`` interface.

ragas 0.3 and later have two metric interfaces: the ``Metric`` classes ``ragas.evaluate`` runs
(:class:`assay.integrations.ragas.GroundedClaims`), and the classes of
``ragas.metrics.collections``, called directly on a sample's fields, one at a time or in a
batch, each returning a ``MetricResult`` with its value and its reason. This is the second::

    from assay.integrations.ragas_collections import GroundedClaims

    metric = GroundedClaims()
    result = await metric.ascore(
        response="The Eiffel Tower is in Paris.",
        retrieved_contexts=["The Eiffel Tower stands in Paris."],
    )
    result.value   # 1 - p_error: higher is more grounded
    result.reason  # p_error and the verdict, then each claim with its evidence window

The value is the one ``GroundedClaims`` of ``ragas.evaluate`` gives the same sample, and
``1 - p_error`` of ``assay bench run --pattern entailment --verifier learned`` on the same
answer and passages (numbered ``1``, ``2``, ... in their order, as ``[cite:N]`` cites them).
A response the checker cannot score has the value NaN and the reason why; a sample without
retrieved contexts is an error naming the field. ``score`` and ``batch_score`` are ragas'
synchronous forms.

Needs the ``ragas`` extra (ragas 0.4; tested with 0.4.3). This module sits above every layer
of assay: it imports them, and nothing in assay imports it.
"""

from __future__ import annotations

import math
from typing import Any

from ragas.metrics.collections.base import BaseMetric
from ragas.metrics.result import MetricResult

from ..verify.patterns.base import AnswerScore
from ._grounding import (
    decide,
    evidence_items,
    failure,
    operating_point,
    score_grounding,
)

__all__ = ["GroundedClaims"]

NAME = "assay_grounded_claims"


class GroundedClaims(BaseMetric):
    """``1 - p_error`` of ``response`` against ``retrieved_contexts`` (assay's ``learned``
    checker); ``threshold`` (0.5 unless given) only sets the verdict the reason states
    (``p_error < threshold``: grounded). With ``calibration``, a file ``assay bench calibrate``
    fitted, ``p_error`` is the one its map gives and its threshold sets the verdict."""

    def __init__(
        self,
        name: str = NAME,
        threshold: float | None = None,
        calibration: str | None = None,
        **base_kwargs: Any,
    ) -> None:
        super().__init__(name=name, **base_kwargs)
        # refuses a threshold outside [0, 1], or beside a calibration
        self._point = operating_point(threshold, calibration)
        self.threshold = self._point.threshold
        self.calibration = calibration

    async def ascore(
        self, response: str, retrieved_contexts: list[str], user_input: str = ""
    ) -> MetricResult:
        passages = evidence_items(
            retrieved_contexts, field="retrieved_contexts", holder="the sample"
        )
        result: AnswerScore = await score_grounding(
            response or "",
            record_id="ragas",
            question=user_input or "",
            evidence=passages,
        )
        decision = decide(result, self._point)
        if decision is None:
            return MetricResult(value=math.nan, reason=f"no score: {failure(result)}")
        return MetricResult(value=1.0 - decision.p_error, reason=decision.explanation)
