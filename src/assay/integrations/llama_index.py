"""assay's model-free claim checker as a LlamaIndex evaluator.

``GroundedClaimsEvaluator()`` is a ``llama_index.core.evaluation.BaseEvaluator``, used where
LlamaIndex's ``FaithfulnessEvaluator`` is, with no LLM: ``evaluate_response(query, response)``
checks a query engine's ``Response`` against its source nodes, ``evaluate(query, response,
contexts)`` a response string against context strings, and ``BatchEvalRunner`` runs it over many
queries beside LlamaIndex's own evaluators::

    from llama_index.core.evaluation import BatchEvalRunner
    from assay.integrations.llama_index import GroundedClaimsEvaluator

    evaluator = GroundedClaimsEvaluator()
    result = evaluator.evaluate_response(query="Where is the Eiffel Tower?", response=response)
    result.passing   # grounded: p_error < threshold
    result.score     # 1 - p_error
    result.feedback  # p_error and the verdict, then each claim with its evidence window

The response is split into claims by assay's rules, each claim is checked by the ``learned``
checker against all the contexts (numbered ``1``, ``2``, ... in their order, as ``[cite:N]``
cites them), and ``p_error`` is the one ``assay bench run --pattern entailment --verifier
learned`` gives the same answer and passages. The operating point is ``threshold`` (0.5 unless
given) or a ``calibration`` file ``assay bench calibrate`` fitted. A response the checker cannot
score (an empty one, a script written without spaces) gets ``invalid_result=True`` with the
reason in ``invalid_reason``: LlamaIndex's own word for an evaluation that gave no verdict.
Missing contexts or a missing response raise a ``ValueError`` naming the field, as LlamaIndex's
evaluators do.

Needs the ``llama-index`` extra (tested with ``llama-index-core`` 0.14.25). This module sits
above every layer of assay: it imports them, and nothing in assay imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
from llama_index.core.prompts.mixin import PromptDictType

from ._grounding import (
    decide,
    evidence_items,
    failure,
    operating_point,
    score_grounding,
)

__all__ = ["GroundedClaimsEvaluator"]


class GroundedClaimsEvaluator(BaseEvaluator):
    """The grounding of a response in its contexts, by assay's ``learned`` checker: passing
    when ``p_error < threshold`` (or at a calibration file's operating point), score
    ``1 - p_error``."""

    def __init__(
        self, threshold: float | None = None, calibration: str | Path | None = None
    ) -> None:
        # refuses a threshold outside [0, 1], or beside a calibration
        self._point = operating_point(threshold, calibration)
        self.threshold = self._point.threshold

    def _get_prompts(self) -> PromptDictType:
        return {}  # no LLM, so no prompt to show or replace

    def _update_prompts(self, prompts_dict: PromptDictType) -> None:
        if prompts_dict:
            raise ValueError(f"no prompts to update: {', '.join(prompts_dict)} (no LLM is asked)")

    async def aevaluate(
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> EvaluationResult:
        if response is None:
            raise ValueError("response: missing: nothing to check")
        passages = evidence_items(
            list(contexts) if contexts else None, field="contexts", holder="the evaluation"
        )
        result = await score_grounding(
            response,
            record_id="llama_index",
            question=query or "",
            evidence=passages,
        )
        decision = decide(result, self._point)
        if decision is None:
            return EvaluationResult(
                query=query,
                response=response,
                contexts=list(contexts or ()),
                invalid_result=True,
                invalid_reason=failure(result),
            )
        return EvaluationResult(
            query=query,
            response=response,
            contexts=list(contexts or ()),
            passing=decision.grounded,
            score=1.0 - decision.p_error,
            feedback=decision.explanation,
        )
