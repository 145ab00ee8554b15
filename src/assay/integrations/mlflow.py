"""assay's model-free claim checker as an MLflow GenAI scorer.

``GroundedClaims()`` is an ``mlflow.genai.scorers.Scorer``, used in ``mlflow.genai.evaluate``
where MLflow's ``RetrievalGroundedness`` judge is, with no LLM and no judge endpoint::

    import mlflow
    from assay.integrations.mlflow import GroundedClaims

    results = mlflow.genai.evaluate(data=data, predict_fn=rag_app, scorers=[GroundedClaims()])
    results.metrics["grounded_claims/mean"]   # the share of answers judged grounded

The answer is the scorer's ``outputs`` (a string, or a dict with it under ``response``,
``answer``, ``output`` or ``content``). The passages it is checked against are
``inputs["context"]`` when the row gives them (a string, or a list of strings, passage objects
or retrieval-library documents; ``context_key`` names another input), else the documents the
trace's ``RETRIEVER`` spans returned, in their order, as MLflow records them for a traced RAG
app. The answer is split into claims by assay's rules, each claim is checked by the ``learned``
checker against every passage, and ``p_error`` is the one ``assay bench run --pattern
entailment --verifier learned`` gives the same answer and passages.

Each row gets one ``Feedback``: ``value`` True when the answer is grounded (``p_error <
threshold``, or at a calibration file's operating point), the explanation as ``rationale``
(``p_error``, then each claim with its verdict and evidence window), and in ``metadata`` (which
MLflow keeps as strings) ``p_error``, the threshold, the checker's version and the claim checks
as JSON. An answer the checker cannot score (an empty one, a script written without spaces)
gets a ``Feedback`` with an ``error`` and no value: MLflow's own form of an assessment that gave
no verdict, left out of the mean. A row with no passages at all raises a ``ValueError`` naming
where they were looked for, which MLflow records as that row's error.

Needs the ``mlflow`` extra (tested with ``mlflow`` 3.17.2). This module sits above every layer
of assay: it imports them, and nothing in assay imports it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mlflow.entities import AssessmentError, Feedback
from mlflow.entities.span import SpanType
from mlflow.entities.trace import Trace
from mlflow.genai.scorers import Scorer
from pydantic import PrivateAttr

from ._grounding import (
    OperatingPoint,
    decide,
    failure,
    library_evidence,
    operating_point,
    run_blocking,
    score_grounding,
)

__all__ = ["GroundedClaims"]

ANSWER_KEYS = ("response", "answer", "output", "content")
QUESTION_KEYS = ("question", "query", "request", "input")


class GroundedClaims(Scorer):
    """The grounding of an answer in its passages, by assay's ``learned`` checker: value True
    when ``p_error < threshold`` (or at a calibration file's operating point)."""

    name: str = "grounded_claims"
    threshold: float | None = None
    calibration: str | None = None
    context_key: str = "context"

    _point: OperatingPoint = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        # made once, with the scorer: a threshold outside [0, 1], one beside a calibration, or
        # a calibration file fitted on another scorer's p_error is refused here, not per row
        self._point = operating_point(self.threshold, self.calibration)

    def __call__(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        expectations: dict[str, Any] | None = None,
        trace: Trace | None = None,
        session: list[Trace] | None = None,
    ) -> Feedback:
        answer = _answer(outputs)
        passages = library_evidence(
            self._passages(inputs, trace), field=f"inputs.{self.context_key}", holder="the row"
        )
        result = run_blocking(
            score_grounding(
                answer, record_id="mlflow", question=_question(inputs), evidence=passages
            )
        )
        decision = decide(result, self._point)
        if decision is None:
            reason = failure(result)
            return Feedback(
                name=self.name, error=AssessmentError(error_code="UNSCORABLE", error_message=reason)
            )
        return Feedback(
            name=self.name,
            value=decision.grounded,
            rationale=decision.explanation,
            metadata={key: _text(value) for key, value in decision.metadata.items()},
        )

    def _passages(self, inputs: Any, trace: Trace | None) -> Any:
        """The row's own passages, else what the trace's retriever spans returned."""
        if isinstance(inputs, Mapping) and inputs.get(self.context_key) is not None:
            return inputs[self.context_key]
        documents = _retrieved(trace)
        if not documents:
            raise ValueError(
                f"inputs.{self.context_key}: missing, and the trace has no RETRIEVER span "
                "that returned documents: nothing to check the answer against"
            )
        return documents


def _retrieved(trace: Trace | None) -> list[Any]:
    """The documents every RETRIEVER span of ``trace`` returned, in the spans' order."""
    if trace is None:
        return []
    documents: list[Any] = []
    for span in trace.data.spans:
        if span.span_type != SpanType.RETRIEVER:
            continue
        found = span.outputs
        if isinstance(found, list):
            documents.extend(found)
        elif found is not None:
            documents.append(found)
    return documents


def _answer(outputs: Any) -> str:
    answer = _string(outputs, ANSWER_KEYS)
    if answer is None:
        raise ValueError(
            "outputs: expected the answer, a string or a dict with a string under one of "
            f"{', '.join(ANSWER_KEYS)}, got {type(outputs).__name__}"
        )
    return answer


def _question(inputs: Any) -> str:
    return _string(inputs, QUESTION_KEYS) or ""


def _string(value: Any, keys: tuple[str, ...]) -> str | None:
    """``value`` when it is a string, else its first string under ``keys``."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in keys:
            if isinstance(found := value.get(key), str):
                return found
    return None


def _text(value: Any) -> str:
    """A metadata value as MLflow keeps it: a string (JSON for a number, list or dict)."""
    return value if isinstance(value, str) else json.dumps(value)
