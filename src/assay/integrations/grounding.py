"""assay's model-free grounding check as a Python call, for an application's own code: a RAG
service's guard, a notebook, a pipeline step.

``check_grounding(answer, evidence)`` gives the verdict ``assay bench run --pattern entailment
--verifier learned`` gives the same answer and evidence: the answer is split into claims by
assay's rules, each claim is checked by the ``learned`` checker against every passage (and the
passages it cites, ``[cite:ID]``), and the answer's ``p_error`` is its weakest claim's::

    from assay import check_grounding

    result = check_grounding(
        "The capital of Australia is Sydney.",
        ["Canberra is the capital city of Australia."],
    )
    result.grounded        # False
    result.p_error         # 0.914...
    print(result.explanation)

The evidence is a string, or a list (any iterable) of strings (ids ``1``, ``2``, ...), of
passage objects (``text``, ``id``, ``title``, ``source``) or of a retrieval library's documents
as they come (LangChain's ``Document``, LlamaIndex's ``TextNode`` and ``NodeWithScore``,
Haystack's ``Document``, or their serialised dicts); one passage object or document alone is
a list of one. No model is called and nothing is downloaded.

The operating point is ``threshold`` on ``p_error`` (0.5 by default), or a calibration file
``assay bench calibrate`` fitted on a labelled dev run of your own: its map turns ``p_error``
into the calibrated probability and its threshold decides, as ``bench run --calibration``
does. An answer the checker cannot score (an empty one, a script written without spaces) gets
``p_error`` None and ``grounded`` None with the reason in ``failure``: never a verdict.

This module sits above every layer of assay: it imports them, and nothing in assay imports it
but the package's lazy top-level ``assay.check_grounding``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..verify.calibration import Calibration
from ..verify.checkers.learned import CHECKER_VERSION
from ..verify.patterns.base import AnswerScore
from ..verify.types import ClaimCheck
from ._grounding import (
    OperatingPoint,
    decide,
    failure,
    library_evidence,
    operating_point,
    run_blocking,
    score_grounding,
)

__all__ = ["ClaimVerdict", "Grounding", "acheck_grounding", "check_grounding"]


@dataclass(frozen=True)
class ClaimVerdict:
    """One claim of the answer: its verdict, the evidence window the verdict rests on and the
    claim's words the evidence lacks (even as a synonym), heaviest first."""

    text: str
    label: str  # "supported", "unsupported" or "uncertain"
    p_supported: float | None
    supporting_ids: tuple[str, ...]
    evidence_window: str | None
    missing_words: tuple[str, ...]


@dataclass(frozen=True)
class Grounding:
    """The verdict on one answer. ``p_error`` is the probability that the answer has a
    grounding error (calibrated when a calibration was given; ``raw_p_error`` is the checker's
    own); ``grounded`` is ``p_error < threshold``. Both are None when the checker could not
    score the answer, and ``failure`` says why."""

    grounded: bool | None
    p_error: float | None
    raw_p_error: float | None
    threshold: float
    claims: tuple[ClaimVerdict, ...]
    explanation: str
    failure: str | None
    checker: str = CHECKER_VERSION
    # the calibration file's fingerprint, as runs record it; None: the raw p_error decided
    calibration: str | None = None


def check_grounding(
    answer: str,
    evidence: Any,
    *,
    question: str = "",
    threshold: float | None = None,
    calibration: str | Path | Calibration | None = None,
) -> Grounding:
    """``answer`` checked against ``evidence`` (see the module's doc for the forms it takes).

    Runs where it is called, also inside a running event loop (a notebook, an async web
    handler): there the check runs on a worker thread. In async code, ``await
    acheck_grounding(...)`` instead.
    """
    return run_blocking(
        acheck_grounding(
            answer, evidence, question=question, threshold=threshold, calibration=calibration
        )
    )


async def acheck_grounding(
    answer: str,
    evidence: Any,
    *,
    question: str = "",
    threshold: float | None = None,
    calibration: str | Path | Calibration | None = None,
) -> Grounding:
    """:func:`check_grounding` for async code."""
    for name, value in (("answer", answer), ("question", question)):
        if not isinstance(value, str):
            raise TypeError(f"{name}: expected a string, got {type(value).__name__}")
    point = operating_point(threshold, calibration)
    passages = library_evidence(evidence, field="evidence", holder="the call")
    result = await score_grounding(answer, record_id="answer", question=question, evidence=passages)
    return _grounding(result, point)


def _grounding(result: AnswerScore, point: OperatingPoint) -> Grounding:
    decision = decide(result, point)
    calibration = point.calibration
    return Grounding(
        grounded=None if decision is None else decision.grounded,
        p_error=None if decision is None else decision.p_error,
        raw_p_error=result.p_error,
        threshold=point.threshold,
        claims=tuple(_claim(check) for check in result.claim_checks),
        explanation=failure(result) if decision is None else decision.explanation,
        failure=failure(result) if decision is None else None,
        calibration=None if calibration is None else calibration.fingerprint(),
    )


def _claim(check: ClaimCheck) -> ClaimVerdict:
    return ClaimVerdict(
        text=check.claim.text,
        label=check.label,
        p_supported=check.p_supported,
        supporting_ids=check.supporting_ids,
        evidence_window=check.evidence_window,
        missing_words=check.missing_words,
    )
