"""The typed payload of an HTML report: what the page script receives as JSON.

The Python side decides *what* is shown (adapters per run kind build these values); the page
script only knows how to draw these shapes, so binding to a new artifact field is a change in
Python, covered by unit tests, not in JavaScript.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# one table model: Markdown in tables.py, HTML here
from ..tables import Cell as Cell
from ..tables import Table as Table

ColumnType = Literal["text", "number", "category"]
# CSS classes the page knows; anything else is refused by validation, so data never picks a class
MarkClass = Literal["supported", "unsupported", "uncertain", "quote", "missing", "gold"]
BadgeClass = Literal["good", "bad", "warn", "neutral"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Metric(_Model):
    """A headline number; ``path`` locates it in summary.json so that tests can check it."""

    label: str
    value: Cell
    ci_low: float | None = None
    ci_high: float | None = None
    path: str = ""
    note: str = ""


class Plot(_Model):
    name: str
    title: str
    src: str = Field(pattern=r"^data:image/png;base64,[A-Za-z0-9+/=]*$")


class Document(_Model):
    """A text artifact of the run (e.g. results_analysis.md), shown as plain text."""

    title: str
    text: str


class Column(_Model):
    key: str
    label: str
    type: ColumnType = "text"
    # the filter box searches text columns, and category columns that hold identifiers a user
    # types (a question id among 500 is found faster by typing it than in a drop-down)
    searchable: bool = False


class ExampleSet(_Model):
    """A filterable, sortable table whose rows open into details read lazily from chunks."""

    title: str
    source: str
    columns: list[Column]
    row_count: int
    rows: list[list[Cell]] = Field(default_factory=list)
    rows_block: str | None = None  # when set, the rows are in this (gzip) block instead
    chunk_size: int = 0
    chunk_encoding: Literal["json", "gzip"] = "json"
    chunk_ids: list[str] = Field(default_factory=list)
    # texts many examples repeat (evidence, questions, gold answers), each stored once
    text_chunk_size: int = 0
    text_chunk_ids: list[str] = Field(default_factory=list)
    truncated_to: int | None = None


class Fact(_Model):
    label: str
    value: Cell
    badge: BadgeClass | None = None


class Mark(_Model):
    """A highlighted span ``[start, end)`` of a text, in UTF-16 code units (JavaScript's)."""

    start: int
    end: int
    cls: MarkClass
    label: str = ""  # shown after the span
    title: str = ""  # shown on hover (default: the label)
    ref: str | None = None  # an evidence id this span points to


class TextSection(_Model):
    type: Literal["text"] = "text"
    title: str
    text: str
    marks: list[Mark] = Field(default_factory=list)
    pre: bool = False
    collapsed: bool = False  # shown folded, opened on click
    text_ref: int | None = None  # set by the encoder: the text is in the shared text store


class ClaimItem(_Model):
    text: str
    label: str
    cls: MarkClass
    facts: list[Fact] = Field(default_factory=list)
    cited: list[str] = Field(default_factory=list)
    supporting: list[str] = Field(default_factory=list)
    note: str = ""


class ClaimsSection(_Model):
    type: Literal["claims"] = "claims"
    title: str
    items: list[ClaimItem]


class EvidenceItem(_Model):
    evidence_id: str
    title: str = ""
    source: str = ""
    text: str
    marks: list[Mark] = Field(default_factory=list)
    badges: list[Fact] = Field(default_factory=list)
    details: str = ""  # the passage's meta (a retriever's score, its metadata), as one line
    text_ref: int | None = None  # set by the encoder: the text is in the shared text store


class EvidenceSection(_Model):
    type: Literal["evidence"] = "evidence"
    title: str
    items: list[EvidenceItem]


class FactsSection(_Model):
    type: Literal["facts"] = "facts"
    title: str
    facts: list[Fact]


class TableSection(_Model):
    type: Literal["table"] = "table"
    table: Table


Section = TextSection | ClaimsSection | EvidenceSection | FactsSection | TableSection


class Detail(_Model):
    """Everything shown when one example (or evaluation) is opened."""

    title: str
    facts: list[Fact] = Field(default_factory=list)
    sections: list[Section] = Field(default_factory=list)


class RunSection(_Model):
    name: str
    kind: str
    path: str
    reproducibility: list[Fact]
    # the first screen: one line on what the run was, and the few numbers that answer it
    description: str = ""
    headline: list[Metric] = Field(default_factory=list)
    metrics: list[Metric] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    plots: list[Plot] = Field(default_factory=list)
    tables: list[Table] = Field(default_factory=list)
    documents: list[Document] = Field(default_factory=list)
    example_sets: list[ExampleSet] = Field(default_factory=list)
    summary: dict[str, Any] = Field(default_factory=dict)
    run: dict[str, Any] = Field(default_factory=dict)


class ReportPayload(_Model):
    title: str
    generated_at: str
    assay_version: str
    runs: list[RunSection]
    across_runs: list[ExampleSet] = Field(default_factory=list)
