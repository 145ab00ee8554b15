"""One line of ``results.jsonl``: a record, what the pattern did with it, and its gold label.

``verifier_score`` is ``p_error`` of the *selected* answer (after a revision, when one was
used); ``gold_error`` is the label of that same answer. In verify-only mode the label comes
from the dataset (``label_source="dataset"``) or from ``assay perturb`` (``"injected"``); in
generate mode from the oracle model when one is given (``"oracle"``), else there is none.

results.jsonl is append-only. An example with a model call that failed after every retry
(``usage.failures > 0``) is written like any other, but it is not finished: the next run does
it again and appends a new line for the same id. The last line of an id supersedes the earlier
ones; :func:`iter_results` reads only those, so every reader sees one result per id.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InputError, describe_problem, field_path
from ..json_safe import load_model
from ..metrics.grounding import GroundingCounts
from ..runs import fingerprint, parse_record_line, read_numbered_lines
from .patterns.base import (
    Candidate,
    Critique,
    Mode,
    PatternName,
    PatternOutcome,
    Revision,
)
from .types import (
    SCORE_EVENT,
    ClaimCheck,
    ErrorBucket,
    Evidence,
    ExampleCost,
    GroundedQARecord,
    LabelSource,
)

RESULTS_FILE = "results.jsonl"
RESULT_SCHEMA_VERSION = 1
BUCKETS: tuple[str, ...] = get_args(ErrorBucket)
# names datasets use for the buckets (lower case, spaces and dashes as underscores)
_BUCKET_SYNONYMS = {
    "supported": "grounded",
    "unsupported": "unsupported_claim",
    "not_supported": "unsupported_claim",
    "hallucination": "unsupported_claim",
    "misattribution": "wrong_citation",
    "wrong_citations": "wrong_citation",
    "overgeneralisation": "overgeneralization",
    "omission": "evidence_omission",
    "contradicted": "contradiction",
}


class OracleVerdict(BaseModel):
    """The oracle model's label for one answer, or why there is none."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    has_error: bool | None = None
    error_type: str | None = None
    rationale: str = ""
    failure: str | None = None


class ResultRecord(BaseModel):
    """One example of a benchmark run (one line of results.jsonl)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = RESULT_SCHEMA_VERSION
    id: str
    cluster: str
    pattern: PatternName
    mode: Mode
    question: str
    gold_answer: str = ""
    evidence: tuple[Evidence, ...] = ()
    selected_answer: str | None
    selected_index: int | None = None
    candidates: tuple[Candidate, ...] = ()
    score_event: str = SCORE_EVENT
    verifier_score: float | None = Field(default=None, ge=0.0, le=1.0)
    verifier_pass: bool | None = None
    score_method: str = ""
    threshold: float
    revision_used: bool = False
    revision: Revision | None = None
    citations: tuple[str, ...] = ()
    unknown_citations: tuple[str, ...] = ()
    gold_citations: tuple[str, ...] = ()
    claim_checks: tuple[ClaimCheck, ...] = ()
    # the selected answer's claims with a citation / its claims (None: no claim): the spec
    # names citation coverage among what a check outputs for an answer
    citation_coverage: float | None = Field(default=None, ge=0.0, le=1.0)
    critique: Critique | None = None
    gold_error: bool | None = None
    label_source: LabelSource = "none"
    error_type: str | None = None  # as the dataset or the oracle wrote it
    failure_bucket: ErrorBucket | None = None  # None when the answer has no label
    oracle: OracleVerdict | None = None
    oracle_before_revision: OracleVerdict | None = None
    failure: str | None = None  # why the verifier could not score the selected answer
    best_index: int | None = None  # best_of_n: the candidate the verifier ranks first
    pass_at_n: bool | None = None  # best_of_n: some candidate passes the gate
    usage: ExampleCost = Field(default_factory=ExampleCost)
    meta: dict[str, Any] | None = None  # the input record's own fields, for slicing
    # the input record's content fingerprint: a resumed run refuses a record that changed
    record_hash: str | None = None

    @property
    def scored(self) -> bool:
        return self.verifier_score is not None

    @property
    def labelled(self) -> bool:
        return self.gold_error is not None

    @property
    def complete(self) -> bool:
        """No model call failed: the result is final (else the next run redoes the example)."""
        return self.usage.failures == 0


class GoldLabel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    error: bool | None = None
    source: LabelSource = "none"
    error_type: str | None = None


def failure_bucket(error: bool | None, error_type: str | None) -> ErrorBucket | None:
    """The spec's qualitative bucket of a labelled answer (``None`` when unlabelled)."""
    if error is None:
        return None
    if not error:
        return "grounded"
    key = (error_type or "").strip().lower().replace(" ", "_").replace("-", "_")
    key = _BUCKET_SYNONYMS.get(key, key)
    if key in BUCKETS and key != "grounded":
        return key  # type: ignore[return-value]
    return "other"


# error_type values that name no error (a grounded record may say so in its own words)
_NO_ERROR = frozenset({"", "grounded", "none", "no_error", "correct", "faithful"})


def label_conflict(error: bool | None, error_type: str | None) -> str | None:
    """How a record's ``error_type`` contradicts its ``gold_error``, or ``None``: an error type
    on an answer labelled grounded is scored as grounded, and one on an unlabelled answer is
    not scored as a label at all; either way the file likely meant something else."""
    if error is True or error_type is None:
        return None
    key = error_type.strip().lower().replace(" ", "_").replace("-", "_")
    if _BUCKET_SYNONYMS.get(key, key) in _NO_ERROR:
        return None
    if error is False:
        return f"gold_error is false but error_type is {error_type!r} (scored as grounded)"
    return f"error_type is {error_type!r} but gold_error is missing (scored as unlabelled)"


def dataset_label(record: GroundedQARecord, *, injected: bool = False) -> GoldLabel:
    """The record's own label: ``injected`` when told so, or when the record has the shape
    ``assay perturb`` writes (id ``<source id>::<bucket>`` with ``error_type`` that bucket)."""
    if record.gold_error is None:
        return GoldLabel()
    return GoldLabel(
        error=record.gold_error,
        source="injected" if injected or looks_injected(record) else "dataset",
        error_type=record.error_type,
    )


def looks_injected(record: GroundedQARecord) -> bool:
    bucket = record.error_type or ""
    return bucket in BUCKETS and record.id.endswith(f"::{bucket}")


def oracle_label(verdict: OracleVerdict) -> GoldLabel:
    if verdict.has_error is None:
        return GoldLabel()
    return GoldLabel(error=verdict.has_error, source="oracle", error_type=verdict.error_type)


def make_result(
    record: GroundedQARecord,
    outcome: PatternOutcome,
    label: GoldLabel,
    *,
    threshold: float,
    oracle: tuple[OracleVerdict | None, OracleVerdict | None] = (None, None),
) -> ResultRecord:
    """Combine a record, its pattern outcome, its label and the oracle's verdicts."""
    return ResultRecord(
        id=record.id,
        cluster=record.cluster,
        pattern=outcome.pattern,
        mode=outcome.mode,
        question=record.question,
        gold_answer=record.gold_answer,
        evidence=record.evidence,
        selected_answer=outcome.selected_answer,
        selected_index=outcome.selected_index,
        candidates=outcome.candidates,
        verifier_score=outcome.p_error,
        verifier_pass=outcome.verifier_pass,
        score_method=outcome.score_method,
        threshold=threshold,
        revision_used=outcome.revision_used,
        revision=outcome.revision,
        citations=outcome.citations,
        unknown_citations=outcome.unknown_citations,
        gold_citations=tuple(dict.fromkeys(c.evidence_id for c in record.gold_citations)),
        claim_checks=outcome.claim_checks,
        citation_coverage=answer_citation_coverage(outcome.claim_checks),
        critique=outcome.critique,
        gold_error=label.error,
        label_source=label.source,
        error_type=label.error_type,
        failure_bucket=failure_bucket(label.error, label.error_type),
        oracle=oracle[0],
        oracle_before_revision=oracle[1],
        failure=outcome.failure,
        best_index=outcome.best_index,
        pass_at_n=outcome.pass_at_n,
        usage=outcome.usage,
        meta=record.meta,
        record_hash=record_fingerprint(record),
    )


def answer_citation_coverage(checks: tuple[ClaimCheck, ...]) -> float | None:
    """One answer's citation coverage from its claim checks; None when it has no claim."""
    counts = GroundingCounts()
    counts.add_checks(checks)
    return counts.rates()["citation_coverage"]


def record_fingerprint(record: GroundedQARecord) -> str:
    """A hash of an input record's content (fields left at their defaults are left out, so a
    field added to the format later does not change it)."""
    return fingerprint(
        record.model_dump(mode="json", by_alias=True, exclude_defaults=True), length=16
    )


def iter_results(path: Path) -> Iterator[ResultRecord]:
    """The current result of each id (its last line), in file order; a line that is not a
    result is an InputError."""
    for _, record in iter_numbered_results(path):
        yield record


def result_lines(path: Path, numbers: set[int]) -> Iterator[tuple[int, str]]:
    """The lines of the given numbers (as :func:`iter_numbered_results` counts), as text."""
    for number, line in read_numbered_lines(path):
        if number in numbers:
            yield number, line


def iter_numbered_results(path: Path) -> Iterator[tuple[int, ResultRecord]]:
    """:func:`iter_results` with each result's line number."""
    current = _last_line_of_each_id(path)
    for number, line in read_numbered_lines(path):
        if current.get(_line_id(line, path, number)) not in (None, number):
            continue  # superseded by a later line of the same id (a retried example)
        try:  # strict: a value of the wrong JSON type ("true", "0.5") is refused, not cast
            yield number, load_model(ResultRecord, line, strict=True)
        except ValidationError as error:
            parse_record_line(line, path, number)  # not JSON: json's own located message
            first = error.errors()[0]
            field = field_path(first["loc"]) or None
            raise InputError(describe_problem(first), path=path, line=number, field=field) from None


def _id_of(data: dict[str, Any]) -> str | None:
    value = data.get("id")
    return None if value is None else str(value)


# How assay writes a result line's start; the id is read from it without parsing the line
# (a plain string id only: anything else is parsed).
_LEADING_ID = re.compile(r'\{"schema_version":\d+,"id":"([^"\\]*)",')


def _last_line_of_each_id(path: Path) -> dict[str | None, int]:
    last: dict[str | None, int] = {}
    for number, line in read_numbered_lines(path):
        key = _line_id(line, path, number)
        if key is not None:
            last[key] = number
    return last


def _line_id(line: str, path: Path, number: int) -> str | None:
    leading = _LEADING_ID.match(line)
    return leading.group(1) if leading else _id_of(parse_record_line(line, path, number))


class CurrentResult(NamedTuple):
    """What a resumed run needs of an id's current result (its last line)."""

    line: int
    complete: bool
    record_hash: str | None  # None: written before results recorded it


def result_index(path: Path) -> dict[str, CurrentResult]:
    """Each id's current result: its line, whether it is complete (an example whose model
    calls failed is not: the next run retries it), its input's fingerprint. Every current
    result is read whole on the way (a line that is not a result is an InputError): what a
    resumed run checks before it writes anything."""
    return {
        result.id: CurrentResult(number, result.complete, result.record_hash)
        for number, result in iter_numbered_results(path)
    }
