"""assay's model-free claim checker as a Phoenix (Arize) code evaluator.

``GroundedClaimsEvaluator()`` is a ``phoenix.evals.Evaluator`` with the inputs of Phoenix's
``FaithfulnessEvaluator`` (``input``, ``output``, ``context``) and no LLM: use it where that
one goes, alone or in ``evaluate_dataframe`` beside Phoenix's own evaluators::

    from phoenix.evals import evaluate_dataframe
    from assay.integrations.phoenix import GroundedClaimsEvaluator

    scores = GroundedClaimsEvaluator().evaluate(
        {"input": question, "output": answer, "context": passages}
    )
    scores[0].label   # "faithful" or "unfaithful"
    scores[0].score   # 1 - p_error
    results = evaluate_dataframe(df, [GroundedClaimsEvaluator()])  # columns input, output, context

``context`` is a string or a list (of strings, passage objects or retrieval-library documents);
``bind_evaluator`` maps other column names, as for any Phoenix evaluator. The answer is split into
claims by assay's rules, each claim is checked by the ``learned`` checker against every passage,
and ``p_error`` is the one ``assay bench run --pattern entailment --verifier learned`` gives
the same answer and passages. The label is ``faithful`` when ``p_error < threshold`` (0.5
unless given, or at a calibration file's operating point), the explanation is the one every
integration gives, and ``metadata`` keeps ``p_error``, the threshold, the checker's version and
the claim checks. An answer the checker cannot score raises :class:`UnscorableAnswer` with the
reason: ``evaluate_dataframe`` records it in the row's execution details and leaves its score
empty, Phoenix's own form of an evaluation that failed, never a score. The failure is the same
on every attempt, so ``evaluate_dataframe(..., max_retries=0)`` spares Phoenix's retries when
no LLM evaluator runs beside it.

Needs the ``phoenix`` extra (tested with ``arize-phoenix-evals`` 3.9.4). This module sits above
every layer of assay: it imports them, and nothing in assay imports it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from phoenix.evals import Evaluator, Score
from phoenix.evals.evaluators import EvalInput
from pydantic import BaseModel, Field

from ._grounding import (
    UnscorableAnswer,
    decide,
    failure,
    library_evidence,
    operating_point,
    run_blocking,
    score_grounding,
)

__all__ = ["GroundedClaimsEvaluator", "UnscorableAnswer"]

LABELS = {True: "faithful", False: "unfaithful"}  # Phoenix's FaithfulnessEvaluator's labels


class GroundingInput(BaseModel):
    """What the evaluator reads of a record (Phoenix validates it against this schema)."""

    input: str = Field(default="", description="the question")
    output: str = Field(description="the answer to check")
    context: Any = Field(description="the passages: a string, or a list of passages")


class GroundedClaimsEvaluator(Evaluator):
    """The grounding of an answer in its context, by assay's ``learned`` checker: label
    ``faithful`` when ``p_error < threshold`` (or at a calibration file's operating point),
    score ``1 - p_error``."""

    def __init__(
        self,
        threshold: float | None = None,
        calibration: str | Path | None = None,
        name: str = "grounded_claims",
    ) -> None:
        super().__init__(name=name, kind="code", direction="maximize", input_schema=GroundingInput)
        # refuses a threshold outside [0, 1], or beside a calibration
        self._point = operating_point(threshold, calibration)

    def _evaluate(self, eval_input: EvalInput) -> list[Score]:
        passages = library_evidence(eval_input.get("context"), field="context", holder="the record")
        result = run_blocking(
            score_grounding(
                str(eval_input["output"]),
                record_id="phoenix",
                question=str(eval_input.get("input") or ""),
                evidence=passages,
            )
        )
        decision = decide(result, self._point)
        if decision is None:
            raise UnscorableAnswer(failure(result))
        return [
            Score(
                name=self.name,
                score=1.0 - decision.p_error,
                label=LABELS[decision.grounded],
                explanation=decision.explanation,
                metadata=decision.metadata,
                kind="code",
                direction="maximize",
            )
        ]
