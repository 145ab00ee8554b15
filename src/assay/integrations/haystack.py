"""assay's model-free claim checker as a Haystack evaluator component.

``GroundedClaimsEvaluator()`` is a Haystack ``@component`` with the inputs and outputs of
Haystack's ``FaithfulnessEvaluator`` (``questions``, ``contexts``, ``predicted_answers`` in;
``score``, ``individual_scores``, ``results`` out), so it goes where that one does, in an
evaluation pipeline or called alone, and asks no LLM::

    from haystack import Pipeline
    from assay.integrations.haystack import GroundedClaimsEvaluator

    pipeline = Pipeline()
    pipeline.add_component("grounded", GroundedClaimsEvaluator())
    out = pipeline.run({"grounded": {
        "questions": ["Where is the Eiffel Tower?"],
        "contexts": [["The Eiffel Tower stands in Paris."]],
        "predicted_answers": ["The Eiffel Tower is in Paris."],
    }})
    out["grounded"]["individual_scores"]  # 1 - p_error per answer

Each answer is split into claims by assay's rules, each claim is checked by the ``learned``
checker against the answer's contexts (strings or Haystack ``Document`` objects, numbered ``1``,
``2``, ... in their order unless a document has an id, as ``[cite:ID]`` cites them), and
``p_error`` is the one ``assay bench run --pattern entailment --verifier learned`` gives the
same answer and passages. Each result holds the claims (``statements``) and their
``p_supported`` (``statement_scores``), ``p_error``, ``passing`` (``p_error < threshold``, 0.5
unless given, or at the operating point of a ``calibration`` file ``assay bench calibrate``
fitted) and the explanation. An answer the checker cannot score has ``status`` ``"error"``, its
reason, and a NaN individual score, as Haystack's evaluators mark a failed evaluation; ``score``
is the mean over the answers that were scored. Lists of different lengths, or an answer without
contexts, raise a ``ValueError`` naming the input.

Needs Haystack (``haystack-ai``; tested with 3.4.1). This module sits above every layer of
assay: it imports them, and nothing in assay imports it.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

from haystack import component

from ..verify.patterns.base import AnswerScore
from ._grounding import (
    OperatingPoint,
    decide,
    failure,
    library_evidence,
    operating_point,
    run_blocking,
    score_grounding,
)

__all__ = ["GroundedClaimsEvaluator"]

Result = dict[str, Any]  # one answer's claims, scores and verdict


@component
class GroundedClaimsEvaluator:
    """The grounding of each predicted answer in its contexts, by assay's ``learned`` checker:
    ``1 - p_error`` per answer, their mean, and each answer's claims and verdict."""

    def __init__(
        self, threshold: float | None = None, calibration: str | Path | None = None
    ) -> None:
        # refuses a threshold outside [0, 1], or beside a calibration
        self._point: OperatingPoint = operating_point(threshold, calibration)
        self.threshold = threshold
        self.calibration = None if calibration is None else str(calibration)

    @component.output_types(score=float, individual_scores=list[float], results=list[Result])
    def run(
        self, questions: list[str], contexts: list[list[Any]], predicted_answers: list[str]
    ) -> dict[str, Any]:
        """``score`` (the mean of the scored answers' ``1 - p_error``), ``individual_scores``
        (NaN where an answer could not be scored) and ``results`` (one dict per answer)."""
        return run_blocking(self.run_async(questions, contexts, predicted_answers))

    @component.output_types(score=float, individual_scores=list[float], results=list[Result])
    async def run_async(
        self, questions: list[str], contexts: list[list[Any]], predicted_answers: list[str]
    ) -> dict[str, Any]:
        """:meth:`run` for Haystack's ``AsyncPipeline``."""
        _same_lengths(questions, contexts, predicted_answers)
        results = []
        for index, (question, passages, answer) in enumerate(
            zip(questions, contexts, predicted_answers, strict=True)
        ):
            evidence = library_evidence(passages, field=f"contexts[{index}]", holder="the input")
            scored = await score_grounding(
                answer, record_id=str(index), question=question, evidence=evidence
            )
            results.append(self._result(scored))
        individual = [result["score"] for result in results]
        scored_only = [value for value in individual if not math.isnan(value)]
        score = statistics.fmean(scored_only) if scored_only else math.nan
        return {"score": score, "individual_scores": individual, "results": results}

    def _result(self, scored: AnswerScore) -> dict[str, Any]:
        claims = [check.claim.text for check in scored.claim_checks]
        supported = [check.p_supported for check in scored.claim_checks]
        decision = decide(scored, self._point)
        if decision is None:
            return {"statements": claims, "statement_scores": supported, "score": math.nan,
                    "status": "error", "reason": failure(scored)}  # fmt: skip
        return {
            "statements": claims,
            "statement_scores": supported,
            "score": 1.0 - decision.p_error,
            "status": "evaluated",
            "p_error": decision.p_error,
            "passing": decision.grounded,
            "explanation": decision.explanation,
            **{key: decision.metadata[key] for key in ("threshold", "checker", "method")},
        }


def _same_lengths(questions: list[str], contexts: list[list[Any]], answers: list[str]) -> None:
    lengths = {"questions": len(questions), "contexts": len(contexts)}
    lengths["predicted_answers"] = len(answers)
    if len(set(lengths.values())) > 1:
        given = ", ".join(f"{name} {length}" for name, length in lengths.items())
        raise ValueError(f"the inputs must be lists of one length: {given}")
