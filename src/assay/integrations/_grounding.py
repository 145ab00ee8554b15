"""What assay's checks inside other tools share: evidence passages given in the tool's own
fields read as assay evidence, an answer scored by the model-free ``learned`` checker, and the
explanation of a score (``p_error``, then each claim with its verdict and evidence window).

Imports no other tool, so every integration can use it: :mod:`assay.integrations.inspect_ai`
and :mod:`assay.integrations.promptfoo` (which promptfoo loads by its file path, so the
imports here and there are absolute).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from assay.data.passages import PASSAGE_KEYS, PassageError, read_passage
from assay.errors import ConfigError, type_name
from assay.model import Model, UnopenedBackend
from assay.verify.calibration import (
    Calibration,
    read_calibration,
    scorer_difference,
    scorer_of,
)
from assay.verify.checkers.learned import CHECKER_VERSION, LearnedChecker
from assay.verify.patterns.base import AnswerScore, PatternContext, PatternSettings
from assay.verify.patterns.scoring import score_answer
from assay.verify.types import ClaimCheck, Evidence, GroundedQARecord

WINDOW_SHOWN = 300  # characters of a matched evidence window the explanation quotes
DEFAULT_THRESHOLD = 0.5
# what made the p_error a calibration is fitted on, as `bench calibrate` records it: a map
# fitted on another scorer's p_error means nothing here
SCORER = scorer_of(
    {"pattern": "entailment", "verifier": "learned", "claim_splitter": "rules"}, CHECKER_VERSION
)


@dataclass(frozen=True)
class OperatingPoint:
    """Where a check decides: grounded when ``p_error < threshold``, on the checker's own
    ``p_error`` or, with a calibration ``assay bench calibrate`` fitted, on the probability
    its map gives (and at its threshold), as ``bench run --calibration`` decides."""

    threshold: float = DEFAULT_THRESHOLD
    calibration: Calibration | None = None

    def p_error(self, raw: float) -> float:
        if self.calibration is None:
            return raw
        return float(self.calibration.apply([raw])[0])


def operating_point(
    threshold: float | None = None, calibration: str | Path | Calibration | None = None
) -> OperatingPoint:
    """The operating point of a threshold (0.5 when None) or of a calibration file; a
    ValueError for both or a threshold outside [0, 1], a ConfigError for a file that cannot
    be read or was fitted on another scorer's ``p_error``."""
    if threshold is not None and (
        isinstance(threshold, bool) or not isinstance(threshold, int | float)
    ):
        raise TypeError(f"threshold: expected a number, got {type_name(threshold)}")
    if calibration is None:
        threshold = DEFAULT_THRESHOLD if threshold is None else threshold
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be between 0 and 1, got {threshold}")
        return OperatingPoint(threshold)
    if threshold is not None:
        raise ValueError(
            "give a threshold or a calibration, not both: the calibration's threshold decides"
        )
    if isinstance(calibration, Calibration):
        fitted = calibration
    else:
        fitted = _read_calibration(Path(calibration))
    _check_scorer(fitted, str(calibration) if isinstance(calibration, str | Path) else "")
    return OperatingPoint(fitted.threshold, fitted)


def _read_calibration(path: Path) -> Calibration:
    """The file, read again only when it changed: a service calling ``check_grounding`` with
    the same path for every answer should not parse it every time."""
    try:
        stat = path.stat()
    except OSError:
        return read_calibration(path)  # which says what is wrong with the path
    return _read_unchanged(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=16)
def _read_unchanged(path: str, mtime_ns: int, size: int) -> Calibration:
    return read_calibration(Path(path))


def _check_scorer(fitted: Calibration, name: str) -> None:
    differ = scorer_difference(fitted, SCORER)
    if differ is None:
        return
    raise ConfigError(
        f"{name or 'the calibration'}: fitted on the p_error of {fitted.dev_run}, which was "
        f"made otherwise than this check's ({differ}); fit a map on a dev run of `assay bench "
        "run --pattern entailment --verifier learned` (assay bench calibrate DEV_RUN)"
    )


T = TypeVar("T")


def run_blocking(check: Coroutine[Any, Any, T]) -> T:
    """``check`` run to its end from synchronous code, also from inside a running event loop
    (a notebook cell, an async handler), where ``asyncio.run`` would refuse: there it runs in
    a loop of its own on a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(check)
    with ThreadPoolExecutor(max_workers=1) as worker:
        return worker.submit(asyncio.run, check).result()


@functools.cache
def checking_context() -> PatternContext:
    """What :func:`score_answer` needs: the learned checker (its weights loaded once per
    process) and the claim rules. No model is called; the generator and critic roles get models
    that refuse every call. Its threshold is the default's: the verdict is decided at each
    tool's own operating point (:func:`decide`), not here."""
    unused = Model(UnopenedBackend("none"), cache=None, max_concurrency=1)
    return PatternContext(
        generator=unused,
        checker=LearnedChecker(),
        critic=unused,
        settings=PatternSettings(threshold=DEFAULT_THRESHOLD),
    )


async def score_grounding(
    answer: str, *, record_id: str, question: str, evidence: tuple[Evidence, ...]
) -> AnswerScore:
    """``answer`` checked against ``evidence``: the score ``assay bench run --pattern
    entailment --verifier learned`` gives the same answer and evidence."""
    record = GroundedQARecord(id=record_id, question=question, gold_answer="", evidence=evidence)
    return await score_answer(answer, record, checking_context())


@dataclass(frozen=True)
class Decision:
    """An answer's verdict at an operating point, with what a tool's score shows of it."""

    p_error: float
    grounded: bool
    explanation: str
    metadata: dict[str, Any]


def decide(result: AnswerScore, point: OperatingPoint) -> Decision | None:
    """The verdict on ``result`` at ``point``; None when the checker gave no ``p_error``
    (:func:`failure` says why): such an answer gets no verdict."""
    if result.p_error is None:
        return None
    p_error = point.p_error(result.p_error)
    calibration = point.calibration
    return Decision(
        p_error=p_error,
        grounded=p_error < point.threshold,
        explanation=explanation(
            result, p_error, point.threshold, calibrated=calibration is not None
        ),
        metadata=score_metadata(result, p_error, point.threshold, calibration),
    )


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
        got = f"an empty {type(value).__name__}" if isinstance(value, Sequence) else None
        raise ValueError(
            f"{field}: expected the evidence passages (a string, or a non-empty list of "
            f"strings or of passage objects), got {got or type(value).__name__}"
        )
    return tuple(_evidence(item, index, field) for index, item in enumerate(value, start=1))


def library_evidence(value: Any, *, field: str, holder: str) -> tuple[Evidence, ...]:
    """:func:`evidence_items` of evidence that may also be a retrieval library's documents or
    any iterable of passages (:func:`library_passages`): what a caller's own objects give."""
    return evidence_items(library_passages(value), field=field, holder=holder)


def library_passages(evidence: Any) -> Any:
    """The evidence as the passage reader takes it: one passage object or library document
    as a list of one, any other iterable (a retriever's generator) as a list, library
    documents as the dicts their own serialisation gives; a string, and what is none of these,
    as it is (the reader says what it cannot read)."""
    if evidence is None or isinstance(evidence, str):
        return evidence
    if isinstance(evidence, bytes):
        return [evidence]  # refused as a passage, by its type, not read as numbers
    if isinstance(evidence, Mapping) or _serialiser(evidence) is not None:
        return [_as_passage(evidence)]
    if isinstance(evidence, Iterable):
        return [_as_passage(item) for item in evidence]
    return evidence


def _as_passage(item: Any) -> Any:
    serialise = _serialiser(item)
    return item if serialise is None else serialise()


def _serialiser(item: Any) -> Callable[[], Any] | None:
    # LangChain's Document and LlamaIndex's nodes are pydantic models; Haystack's Document is
    # a dataclass with its own to_dict
    for method in ("model_dump", "to_dict"):
        serialise = getattr(item, method, None)
        if callable(serialise):
            return cast(Callable[[], Any], serialise)
    return None


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


def explanation(
    result: AnswerScore, p_error: float, threshold: float, *, calibrated: bool = False
) -> str:
    """``p_error`` and the verdict, then each claim with its evidence window; a calibrated
    ``p_error`` also gives the checker's own."""
    verdict = "grounded" if p_error < threshold else "not grounded"
    checks = result.claim_checks
    own = own_p_error(result, calibrated)
    header = (
        f"p_error {p_error:.3f}{own} ({verdict}: threshold {threshold}; {result.method}, "
        f"{len(checks)} claim{'' if len(checks) == 1 else 's'}, checker {CHECKER_VERSION})"
    )
    return "\n".join([header, *claim_lines(result)])


def own_p_error(result: AnswerScore, calibrated: bool) -> str:
    """`` (calibrated; the checker's own 0.812)`` after a calibrated ``p_error``, else ``""``."""
    if not calibrated or result.p_error is None:
        return ""
    return f" (calibrated; the checker's own {result.p_error:.3f})"


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


def score_metadata(
    result: AnswerScore, p_error: float, threshold: float, calibration: Calibration | None = None
) -> dict[str, Any]:
    """What a score keeps besides its verdict: ``p_error``, the threshold, the checker and
    every claim check (JSON-ready); with a calibration, the checker's own ``p_error`` and the
    calibration's fingerprint, as runs record it."""
    calibrated = (
        {}
        if calibration is None
        else {"raw_p_error": result.p_error, "calibration": calibration.fingerprint()}
    )
    return {
        "p_error": p_error,
        "threshold": threshold,
        **calibrated,
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


class UnscorableAnswer(ValueError):
    """The checker gave the answer no ``p_error`` (an empty answer, a script written without
    spaces); the message says why. Raised where a tool records an evaluator's exception as
    that evaluation's failure (Phoenix, DSPy)."""


def failure(result: AnswerScore) -> str:
    """Why an answer got no ``p_error``."""
    return result.failure or "the checker gave no probability"
