"""assay's model-free claim checker as a ragas metric.

``GroundedClaims()`` scores a single-turn sample's ``response`` against its
``retrieved_contexts``, without a model call, so ``ragas.evaluate`` needs no LLM and no
embeddings for it: the response is split into claims by assay's rules, each claim is checked by
the ``learned`` checker against all the passages (and against the passages it cites,
``[cite:N]``, the passages numbered ``1``, ``2``, ... in their order), and ``p_error`` is the one
``assay bench run --pattern entailment --verifier learned`` gives the same answer and evidence
(the weakest claim decides). The sample's score is ``1 - p_error``: higher is more grounded, as
with ragas' ``faithfulness``::

    from ragas import EvaluationDataset, evaluate
    from assay.integrations.ragas import GroundedClaims

    dataset = EvaluationDataset.from_list([{
        "user_input": "Where is the Eiffel Tower?",
        "retrieved_contexts": ["The Eiffel Tower stands in Paris."],
        "response": "The Eiffel Tower is in Paris.",
    }])
    result = evaluate(dataset, metrics=[GroundedClaims()])

ragas keeps a number per sample; ``metric.explain(sample)`` gives the explanation (``p_error``,
then each claim with its verdict and evidence window) and ``metric.details(sample)`` the claim
checks as JSON, for any sample of the dataset. A response the checker cannot score (empty, or a
claim in a script written without spaces) scores NaN, as ragas scores a metric that could not
run; a sample without retrieved contexts is an error of that sample naming the field.

Needs the ``ragas`` extra. This module sits above every layer of assay: it imports them, and
nothing in assay imports it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ragas.async_utils import run as run_async
from ragas.dataset_schema import SingleTurnSample
from ragas.metrics.base import MetricType, SingleTurnMetric
from ragas.run_config import RunConfig

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
COLUMNS = {"response", "retrieved_contexts", "user_input:optional"}


@dataclass
class GroundedClaims(SingleTurnMetric):
    """``1 - p_error`` of the response against the retrieved contexts (assay's ``learned``
    checker); ``threshold`` (0.5 unless given) only sets the verdict the explanation states
    (``p_error < threshold``: grounded). With ``calibration``, a file ``assay bench calibrate``
    fitted, ``p_error`` is the one its map gives and its threshold sets the verdict."""

    name: str = NAME
    threshold: float | None = None
    calibration: str | None = None
    _required_columns: dict[MetricType, set[str]] = field(
        default_factory=lambda: {MetricType.SINGLE_TURN: set(COLUMNS)}
    )

    def __post_init__(self) -> None:
        # ragas' own __post_init__ only names a metric left without a name
        self.name = self.name or NAME
        # refuses a threshold outside [0, 1], or beside a calibration
        self._point = operating_point(self.threshold, self.calibration)

    def init(self, run_config: RunConfig) -> None:
        """Nothing to set up: no model, no embeddings."""

    async def _single_turn_ascore(self, sample: SingleTurnSample, callbacks: Any) -> float:
        decision = decide(await self._check(sample), self._point)
        return math.nan if decision is None else 1.0 - decision.p_error

    def explain(self, sample: SingleTurnSample) -> str:
        """``p_error`` and the verdict, then each claim with its evidence window; or why the
        response got no score. Runs inside a running event loop too (a notebook), as ragas'
        own synchronous scoring does."""
        result: AnswerScore = run_async(self._check(sample))
        decision = decide(result, self._point)
        return f"no score: {failure(result)}" if decision is None else decision.explanation

    def details(self, sample: SingleTurnSample) -> dict[str, Any]:
        """``p_error``, the threshold, the checker and every claim check (JSON-ready); the
        reason under ``failure`` where the response got no score."""
        result: AnswerScore = run_async(self._check(sample))
        decision = decide(result, self._point)
        if decision is None:
            return {"p_error": None, "failure": failure(result)}
        return decision.metadata

    async def _check(self, sample: SingleTurnSample) -> AnswerScore:
        passages = evidence_items(
            sample.retrieved_contexts, field="retrieved_contexts", holder="the sample"
        )
        return await score_grounding(
            sample.response or "",
            record_id="ragas",
            question=sample.user_input or "",
            evidence=passages,
        )
