"""assay's model-free claim checker as an inspect_ai scorer.

``grounded_claims()`` scores a sample's output against evidence passages given in the sample's
metadata, without a model call: the output is split into claims by assay's rules, each claim is
checked by the ``learned`` checker against all the passages (and against the passages it cites,
``[cite:ID]``), and the answer's ``p_error`` is the one ``assay bench run --pattern entailment
--verifier learned`` gives the same answer and evidence (the weakest claim decides). The score
is ``C`` (grounded) when ``p_error < threshold``, else ``I``; the explanation gives ``p_error``
and, per claim, its verdict and the evidence window it was matched to::

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

from collections.abc import Mapping, Sequence
from typing import Any

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

from ..model import Model, UnopenedBackend
from ..verify.checkers.learned import CHECKER_VERSION, LearnedChecker
from ..verify.patterns.base import AnswerScore, PatternContext, PatternSettings
from ..verify.patterns.scoring import score_answer
from ..verify.types import ClaimCheck, Evidence, GroundedQARecord

__all__ = ["evidence_items", "grounded_claims"]

WINDOW_SHOWN = 300  # characters of a matched evidence window the explanation quotes


@scorer(metrics=[accuracy(), stderr()])
def grounded_claims(evidence: str = "evidence", threshold: float = 0.5) -> Scorer:
    """Score the output's grounding in ``metadata[evidence]`` with assay's ``learned`` checker.

    ``metadata[evidence]`` holds the passages: a string, a list of strings (ids ``1``, ``2``,
    ...) or a list of objects with ``text`` and ``id`` (or ``evidence_id``), optionally
    ``title`` and ``source``. ``C`` when ``p_error < threshold``; the score's metadata keeps
    ``p_error``, the threshold and every claim check.
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be between 0 and 1, got {threshold}")
    context = _checking_context(threshold)

    async def score(state: TaskState, target: Target) -> Score | None:
        passages = evidence_items(state.metadata.get(evidence), field=f"metadata.{evidence}")
        record = GroundedQARecord(
            id=str(state.sample_id),
            question=state.input_text,
            gold_answer="",
            evidence=passages,
        )
        answer = state.output.completion
        result = await score_answer(answer, record, context)
        p_error = result.p_error
        if p_error is None:
            transcript().info(f"assay {CHECKER_VERSION}: no score: {_failure(result)}")
            return None
        return Score(
            value=CORRECT if p_error < threshold else INCORRECT,
            answer=answer,
            explanation=_explanation(result, p_error, threshold),
            metadata={
                "p_error": p_error,
                "threshold": threshold,
                "checker": CHECKER_VERSION,
                "method": result.method,
                "claims": [_claim_meta(check) for check in result.claim_checks],
            },
        )

    return score


def _checking_context(threshold: float) -> PatternContext:
    """What :func:`score_answer` needs: the learned checker and the claim rules. No model is
    called; the generator and critic roles get models that refuse every call."""
    unused = Model(UnopenedBackend("none"), cache=None, max_concurrency=1)
    return PatternContext(
        generator=unused,
        checker=LearnedChecker(),
        critic=unused,
        settings=PatternSettings(threshold=threshold),
    )


def evidence_items(value: Any, *, field: str = "metadata.evidence") -> tuple[Evidence, ...]:
    """The passages of a sample's metadata as assay evidence; a ValueError naming ``field``
    when there are none or they are of another shape."""
    if value is None:
        raise ValueError(
            f"{field}: missing: the sample gives no evidence passages to check against"
        )
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Sequence) or not value:
        raise ValueError(
            f"{field}: expected the evidence passages (a string, or a non-empty list of "
            f"strings or of objects with 'text'), got {type(value).__name__}"
        )
    return tuple(_evidence(item, index, field) for index, item in enumerate(value, start=1))


def _evidence(item: Any, index: int, field: str) -> Evidence:
    if isinstance(item, str):
        return Evidence(evidence_id=str(index), text=item)
    if isinstance(item, Mapping) and isinstance(item.get("text"), str):
        given = item.get("evidence_id", item.get("id", index))
        return Evidence(
            evidence_id=str(given),
            text=item["text"],
            title=item.get("title"),
            source=item.get("source"),
        )
    raise ValueError(
        f"{field}[{index - 1}]: expected a string or an object with 'text', got "
        f"{type(item).__name__}"
    )


def _explanation(result: AnswerScore, p_error: float, threshold: float) -> str:
    """``p_error`` and the verdict, then each claim with its evidence window."""
    verdict = "grounded" if p_error < threshold else "not grounded"
    checks = result.claim_checks
    lines = [
        f"p_error {p_error:.3f} ({verdict}: threshold {threshold}; {result.method}, "
        f"{len(checks)} claim{'' if len(checks) == 1 else 's'}, checker {CHECKER_VERSION})"
    ]
    for number, check in enumerate(checks, start=1):
        lines.append(f"claim {number}: {check.claim.text!r}: {_verdict(check)}")
        if check.evidence_window:
            lines.append(f"  evidence window: {_cut(check.evidence_window)!r}")
        if check.missing_words:
            lines.append(f"  not in the evidence: {', '.join(check.missing_words)}")
    return "\n".join(lines)


def _verdict(check: ClaimCheck) -> str:
    probability = "" if check.p_supported is None else f", p_supported {check.p_supported:.3f}"
    ids = f", supporting ids {', '.join(check.supporting_ids)}" if check.supporting_ids else ""
    return f"{check.label}{probability}{ids}"


def _cut(text: str) -> str:
    return text if len(text) <= WINDOW_SHOWN else text[:WINDOW_SHOWN] + "…"


def _claim_meta(check: ClaimCheck) -> dict[str, Any]:
    return {
        "claim": check.claim.text,
        "label": check.label,
        "p_supported": check.p_supported,
        "supporting_ids": list(check.supporting_ids),
        "evidence_window": check.evidence_window,
        "missing_words": list(check.missing_words),
    }


def _failure(result: AnswerScore) -> str:
    return result.failure or "the checker gave no probability"
