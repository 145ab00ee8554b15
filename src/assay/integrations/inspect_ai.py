"""assay's model-free claim checker as an inspect_ai scorer.

``grounded_claims()`` scores a sample's output against evidence passages given in the sample's
metadata, without a model call: the output is split into claims by assay's rules, each claim is
checked by the ``learned`` checker against all the passages (and against the passages it cites,
``[cite:ID]``), and the answer's ``p_error`` is the one ``assay bench run --pattern entailment
--verifier learned`` gives the same answer and evidence (the weakest claim decides). The score
is ``C`` (grounded) when ``p_error < threshold``, else ``I`` (or at the operating point of a
``calibration`` file ``assay bench calibrate`` fitted); the explanation gives ``p_error`` and,
per claim, its verdict and the evidence window it was matched to::

    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate
    from assay.integrations.inspect_ai import grounded_claims

    Task(
        dataset=[Sample(input="Where is the Eiffel Tower?",
                        metadata={"evidence": ["The Eiffel Tower stands in Paris."]})],
        solver=generate(),
        scorer=grounded_claims(),
    )

An output the checker cannot score (empty, or a claim in a script written without spaces) is
left unscored (the scorer returns no score, and the reason goes into the sample's transcript),
never counted as ``I``. A sample without evidence is an error of that sample, naming the field.

Needs the ``inspect`` extra. This module sits above every layer of assay: it imports them, and
nothing in assay imports it.
"""

from __future__ import annotations

from inspect_ai.log import transcript
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Score,
    Scorer,
    Target,
    accuracy,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from ..verify.checkers.learned import CHECKER_VERSION
from ._grounding import (
    decide,
    evidence_items,
    failure,
    operating_point,
    score_grounding,
)

__all__ = ["evidence_items", "grounded_claims"]


@scorer(metrics=[accuracy(), stderr()])
def grounded_claims(
    evidence: str = "evidence", threshold: float | None = None, calibration: str | None = None
) -> Scorer:
    """Score the output's grounding in ``metadata[evidence]`` with assay's ``learned`` checker.

    ``metadata[evidence]`` holds the passages: a string, a list of strings (ids ``1``, ``2``,
    ...) or a list of objects with ``text`` and ``id`` (or ``evidence_id``), optionally
    ``title`` and ``source``. ``C`` when ``p_error < threshold`` (0.5 unless given), or at the
    operating point of ``calibration``, a file ``assay bench calibrate`` fitted (its map gives
    ``p_error``, its threshold decides); the score's metadata keeps ``p_error``, the threshold
    and every claim check.
    """
    point = operating_point(threshold, calibration)

    async def score(state: TaskState, target: Target) -> Score | None:
        passages = evidence_items(state.metadata.get(evidence), field=f"metadata.{evidence}")
        answer = state.output.completion
        result = await score_grounding(
            answer,
            record_id=str(state.sample_id),
            question=state.input_text,
            evidence=passages,
        )
        decision = decide(result, point)
        if decision is None:
            transcript().info(f"assay {CHECKER_VERSION}: no score: {failure(result)}")
            return None
        return Score(
            value=CORRECT if decision.grounded else INCORRECT,
            answer=answer,
            explanation=decision.explanation,
            metadata=decision.metadata,
        )

    return score
