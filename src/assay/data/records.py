"""The grounded-QA input record: the spec's schema plus the optional verify-only fields.

These are what the data layer loads and the importers write; the verifier benchmark
(``assay.verify``) consumes them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool


class Evidence(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    evidence_id: str = Field(min_length=1)
    title: str | None = None
    text: str
    source: str | None = None
    # what the retriever said about the passage (its score, the document's metadata): carried
    # into results and the report, never shown to a verifier. A passage without one is written
    # as before the field existed (pydantic >= 2.12 honours exclude_if; a function serializer
    # did the same at three times the cost of a WiCE record's 120 passages)
    meta: dict[str, Any] | None = Field(default=None, exclude_if=lambda meta: meta is None)


class GoldCitation(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    evidence_id: str = Field(min_length=1)
    span: str | None = None


class GroundedQARecord(BaseModel):
    """One input record (spec schema plus the optional verify-only fields)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    question: str
    gold_answer: str
    evidence: tuple[Evidence, ...] = Field(min_length=1)
    gold_citations: tuple[GoldCitation, ...] = ()
    # verify-only mode: an answer that already exists, with its gold label
    answer: str | None = None
    citations: tuple[str, ...] | None = None  # structured citation list, evidence ids
    gold_error: StrictBool | None = None  # strict: "yes" is an error, not True
    error_type: str | None = None
    # grouping for clustered confidence intervals (defaults to the id)
    group: str | None = None
    # anything the user slices results by (source system, domain, annotation setting): any
    # JSON object, carried into results untouched; `--by meta.KEY` gives metrics per value
    meta: dict[str, Any] | None = None

    @property
    def cluster(self) -> str:
        return self.group or self.id

    def evidence_by_id(self) -> dict[str, Evidence]:
        return {e.evidence_id: e for e in self.evidence}
