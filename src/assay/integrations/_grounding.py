"""What assay's checks inside other tools share: evidence passages given in the tool's own
fields read as assay evidence, an answer scored by the model-free ``learned`` checker, and the
explanation of a score (``p_error``, then each claim with its verdict and evidence window).

Imports no other tool, so every integration can use it: :mod:`assay.integrations.inspect_ai`
and :mod:`assay.integrations.promptfoo` (which promptfoo loads by its file path, so the
imports here and there are absolute).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assay.data.passages import PASSAGE_KEYS, PassageError, read_passage
from assay.model import Model, UnopenedBackend
from assay.verify.checkers.learned import CHECKER_VERSION, LearnedChecker
from assay.verify.patterns.base import AnswerScore, PatternContext, PatternSettings
from assay.verify.patterns.scoring import score_answer
from assay.verify.types import ClaimCheck, Evidence, GroundedQARecord

WINDOW_SHOWN = 300  # characters of a matched evidence window the explanation quotes


def checking_context(threshold: float) -> PatternContext:
    """What :func:`score_answer` needs: the learned checker and the claim rules. No model is
    called; the generator and critic roles get models that refuse every call."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be between 0 and 1, got {threshold}")
    unused = Model(UnopenedBackend("none"), cache=None, max_concurrency=1)
    return PatternContext(
        generator=unused,
        checker=LearnedChecker(),
        critic=unused,
        settings=PatternSettings(threshold=threshold),
    )


async def score_grounding(
    answer: str,
    *,
    record_id: str,
    question: str,
    evidence: tuple[Evidence, ...],
    context: PatternContext,
) -> AnswerScore:
    """``answer`` checked against ``evidence``: the score ``assay bench run --pattern
    entailment --verifier learned`` gives the same answer and evidence."""
    record = GroundedQARecord(id=record_id, question=question, gold_answer="", evidence=evidence)
    return await score_answer(answer, record, context)


def evidence_items(
    value: Any, *, field: str = "metadata.evidence", holder: str = "the sample"
) -> tuple[Evidence, ...]:
    """The passages of a sample's metadata (or a test's vars) as assay evidence; a ValueError
    naming ``field`` when there are none or they are of another shape."""
    if value is None:
        raise ValueError(f"{field}: missing: {holder} gives no evidence passages to check against")
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Sequence) or not value:
        raise ValueError(
            f"{field}: expected the evidence passages (a string, or a non-empty list of "
            f"strings or of passage objects), got {type(value).__name__}"
        )
    return tuple(_evidence(item, index, field) for index, item in enumerate(value, start=1))


def _evidence(item: Any, index: int, field: str) -> Evidence:
    """Passage ``index`` (from 1): a string, or an object as
    :func:`~assay.data.passages.read_passage` reads it (a retrieval library's document too)."""
    if isinstance(item, str):
        return Evidence(evidence_id=str(index), text=item)
    where = f"{field}[{index - 1}]"
    if not isinstance(item, Mapping):
        raise ValueError(
            f"{where}: expected a string or an object with {PASSAGE_KEYS}, got "
            f"{type(item).__name__}"
        )
    try:
        passage = read_passage(item)
    except PassageError as error:
        raise ValueError(
            f"{where}{error.place}: expected {error.expected}, got {error.got}"
        ) from None
    return Evidence(
        evidence_id=passage.evidence_id or str(index),
        text=passage.text,
        title=passage.title,
        source=passage.source,
    )


def explanation(result: AnswerScore, p_error: float, threshold: float) -> str:
    """``p_error`` and the verdict, then each claim with its evidence window."""
    verdict = "grounded" if p_error < threshold else "not grounded"
    checks = result.claim_checks
    header = (
        f"p_error {p_error:.3f} ({verdict}: threshold {threshold}; {result.method}, "
        f"{len(checks)} claim{'' if len(checks) == 1 else 's'}, checker {CHECKER_VERSION})"
    )
    return "\n".join([header, *claim_lines(result)])


def claim_lines(result: AnswerScore) -> list[str]:
    """Each claim with its verdict, the evidence window it was matched to and the words the
    evidence lacks: the explanation below its first line."""
    lines: list[str] = []
    for number, check in enumerate(result.claim_checks, start=1):
        lines.append(f"claim {number}: {check.claim.text!r}: {_verdict(check)}")
        if check.evidence_window:
            lines.append(f"  evidence window: {_cut(check.evidence_window)!r}")
        if check.missing_words:
            lines.append(f"  not in the evidence: {', '.join(check.missing_words)}")
    return lines


def _verdict(check: ClaimCheck) -> str:
    probability = "" if check.p_supported is None else f", p_supported {check.p_supported:.3f}"
    ids = f", supporting ids {', '.join(check.supporting_ids)}" if check.supporting_ids else ""
    return f"{check.label}{probability}{ids}"


def _cut(text: str) -> str:
    return text if len(text) <= WINDOW_SHOWN else text[:WINDOW_SHOWN] + "…"


def score_metadata(result: AnswerScore, p_error: float, threshold: float) -> dict[str, Any]:
    """What a score keeps besides its verdict: ``p_error``, the threshold, the checker and
    every claim check (JSON-ready)."""
    return {
        "p_error": p_error,
        "threshold": threshold,
        "checker": CHECKER_VERSION,
        "method": result.method,
        "claims": [_claim_meta(check) for check in result.claim_checks],
    }


def _claim_meta(check: ClaimCheck) -> dict[str, Any]:
    return {
        "claim": check.claim.text,
        "label": check.label,
        "p_supported": check.p_supported,
        "supporting_ids": list(check.supporting_ids),
        "evidence_window": check.evidence_window,
        "missing_words": list(check.missing_words),
    }


def failure(result: AnswerScore) -> str:
    """Why an answer got no ``p_error``."""
    return result.failure or "the checker gave no probability"
