"""What an opened benchmark example shows: the question, the answer with each claim marked and
linked to the evidence it cites, the claim checks, the evidence, candidates, critique, revision,
and the gold label with its source."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..verify.patterns.base import AnswerScore, Candidate, Critique, Revision
from ..verify.results import OracleVerdict, ResultRecord
from ..verify.types import ClaimCheck
from ._html_common import clip, isolated, main_cap, marks_for
from ._html_model import (
    Cell,
    ClaimItem,
    ClaimsSection,
    Detail,
    EvidenceItem,
    EvidenceSection,
    Fact,
    FactsSection,
    MarkClass,
    Table,
    TableSection,
    TextSection,
)

_CLAIM_CLASS: dict[str, MarkClass] = {
    "supported": "supported",
    "unsupported": "unsupported",
    "uncertain": "uncertain",
}


def detail(record: ResultRecord, line: int, cap: int | None) -> Detail:
    sections: list[Any] = [
        TextSection(title="Question", text=clip(record.question, main_cap(cap))),
        answer_section(record, cap),
        ClaimsSection(title="Claims", items=[claim_item(c, cap) for c in record.claim_checks]),
        evidence_section(record, cap),
    ]
    sections.extend(candidate_sections(record, cap))
    if record.critique is not None:
        sections.append(critique_section(record.critique, cap))
    if record.revision is not None:
        sections.extend(revision_sections(record.revision, cap))
    if record.gold_answer:
        sections.append(TextSection(title="Gold answer", text=clip(record.gold_answer, cap)))
    for title, verdict in (
        ("Oracle verdict", record.oracle),
        ("Oracle verdict before revision", record.oracle_before_revision),
    ):
        if verdict is not None:
            sections.append(oracle_section(title, verdict, cap))
    return Detail(title=record.id, facts=facts(record, line), sections=sections)


def facts(record: ResultRecord, line: int) -> list[Fact]:
    from ._html_bench import bucket, gold_label, outcome, verdict

    flagged = verdict(record)
    badge = {"flag": "bad", "pass": "good"}.get(flagged, "warn")
    return [
        Fact(label="gold label", value=gold_label(record)),
        Fact(label="label source", value=record.label_source),
        Fact(label="failure bucket", value=bucket(record)),
        Fact(label="error type (as labelled)", value=record.error_type),
        Fact(label="verifier", value=flagged, badge=badge),  # type: ignore[arg-type]
        Fact(label="p_error", value=record.verifier_score),
        Fact(label="threshold", value=record.threshold),
        Fact(label="outcome", value=outcome(record)),
        Fact(label="score method", value=record.score_method),
        Fact(label="pattern / mode", value=f"{record.pattern} / {record.mode}"),
        Fact(label="revision used", value=record.revision_used),
        Fact(label="model calls", value=record.usage.calls),
        Fact(label="tokens", value=record.usage.prompt_tokens + record.usage.completion_tokens),
        Fact(label="latency (ms)", value=record.usage.latency_ms),
        Fact(label="results.jsonl line", value=line),
        Fact(label="failure", value=record.failure, badge="bad" if record.failure else None),
    ]


def answer_section(record: ResultRecord, cap: int | None) -> TextSection:
    answer = clip(record.selected_answer, main_cap(cap))
    needles = [
        (
            check.claim.text,
            _CLAIM_CLASS.get(check.label, "uncertain"),
            f"{n} {check.label}",
            check.claim.cited_ids[0] if check.claim.cited_ids else None,
        )
        for n, check in enumerate(record.claim_checks, start=1)
    ]
    marks, _ = marks_for(answer, needles)
    title = "Selected answer (claims marked; click one to see the evidence it cites)"
    if record.selected_answer is None:
        title = "No answer was selected"
    return TextSection(title=title, text=answer, marks=marks)


def claim_item(check: ClaimCheck, cap: int | None) -> ClaimItem:
    note = check.failure or check.rationale
    return ClaimItem(
        text=clip(check.claim.text, main_cap(cap)),
        label=check.label,
        cls=_CLAIM_CLASS.get(check.label, "uncertain"),
        facts=[
            Fact(label="p_supported", value=check.p_supported),
            Fact(label="from", value=check.probability_source),
            Fact(label="checker", value=check.checker),
            *_explanation(check, cap),
        ],
        cited=list(check.claim.cited_ids),
        supporting=list(check.supporting_ids),
        note=clip(("failure: " if check.failure else "") + note, cap),
    )


def _explanation(check: ClaimCheck, cap: int | None) -> list[Fact]:
    """What a model-free checker matched: its evidence window, deciding features and the
    claim's words it did not find."""
    facts = []
    if check.evidence_window:
        facts.append(Fact(label="matched window", value=clip(check.evidence_window, cap)))
    if check.deciding_features:
        deciding = ", ".join(f"{name} {value:+.2f}" for name, value in check.deciding_features)
        facts.append(Fact(label="deciding features", value=deciding))
    if check.missing_words:
        missing = ", ".join(check.missing_words)
        facts.append(Fact(label="not in the evidence", value=clip(missing, cap)))
    return facts


def meta_line(meta: Mapping[str, Any] | None) -> str:
    """A passage's meta (a retriever's score, a document's metadata) as one line,
    ``meta: score 0.82 · metadata {"page": 3}``: strings as they are, other values as JSON."""
    if not meta:
        return ""
    shown = (
        f"{key} {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}"
        for key, value in meta.items()
    )
    return "meta: " + " · ".join(shown)


def evidence_section(record: ResultRecord, cap: int | None) -> EvidenceSection:
    cited, gold = set(record.citations), set(record.gold_citations)
    items = []
    for ev in record.evidence:
        badges = []
        if ev.evidence_id in cited:
            badges.append(Fact(label="cited", value="cited by the answer", badge="neutral"))
        if ev.evidence_id in gold:
            badges.append(Fact(label="gold", value="gold citation", badge="good"))
        items.append(
            EvidenceItem(
                evidence_id=ev.evidence_id,
                title=ev.title or "",
                source=ev.source or "",
                text=clip(ev.text, cap),
                badges=badges,
                details=clip(meta_line(ev.meta), cap),
            )
        )
    title = "Evidence"
    if record.unknown_citations:
        unknown = ", ".join(map(isolated, record.unknown_citations))
        title += f" (the answer also cites unknown ids: {unknown})"
    return EvidenceSection(title=title, items=items)


def candidate_sections(record: ResultRecord, cap: int | None) -> list[Any]:
    if len(record.candidates) < 2:
        return []
    rows = [_candidate_row(c, record.selected_index, cap) for c in record.candidates]
    table = Table(
        title=f"Candidates ({len(rows)})",
        columns=["#", "selected", "p_error", "pass", "answer", "failure"],
        rows=rows,
    )
    return [TableSection(table=table)]


def _candidate_row(candidate: Candidate, selected: int | None, cap: int | None) -> list[Cell]:
    score = candidate.score
    return [
        candidate.index,
        "selected" if candidate.index == selected else "",
        None if score is None else score.p_error,
        None if score is None else score.verifier_pass,
        clip(candidate.text, cap),
        clip(candidate.failure or (score.failure if score else None), cap),
    ]


def critique_section(critique: Critique, cap: int | None) -> FactsSection:
    def joined(items: tuple[str, ...]) -> str:
        return clip("; ".join(items), cap) or "none"

    return FactsSection(
        title="Critique",
        facts=[
            Fact(label="error probability", value=critique.error_probability),
            Fact(label="votes", value=critique.votes),
            Fact(label="contradictions", value=joined(critique.contradictions)),
            Fact(label="missing citations", value=joined(critique.missing_citations)),
            Fact(label="unsupported claims", value=joined(critique.unsupported_claims)),
            Fact(label="rationale", value=clip(critique.rationale, cap)),
            Fact(label="failures", value=joined(critique.failures)),
        ],
    )


def revision_sections(revision: Revision, cap: int | None) -> list[Any]:
    def score_facts(prefix: str, score: AnswerScore | None) -> list[Fact]:
        if score is None:
            return [Fact(label=f"{prefix}", value="no score")]
        return [
            Fact(label=f"p_error {prefix}", value=score.p_error),
            Fact(label=f"pass {prefix}", value=score.verifier_pass),
        ]

    sections: list[Any] = [
        FactsSection(
            title="Revision",
            facts=[
                *score_facts("before", revision.before),
                *score_facts("after", revision.after),
                Fact(label="failure", value=revision.failure),
            ],
        ),
        TextSection(title="Answer before revision", text=clip(revision.before.answer, cap)),
    ]
    if revision.after is not None:
        sections.append(
            TextSection(title="Answer after revision", text=clip(revision.after.answer, cap))
        )
    return sections


def oracle_section(title: str, verdict: OracleVerdict, cap: int | None) -> FactsSection:
    return FactsSection(
        title=title,
        facts=[
            Fact(label="model", value=verdict.model),
            Fact(label="has error", value=verdict.has_error),
            Fact(label="error type", value=verdict.error_type),
            Fact(label="rationale", value=clip(verdict.rationale, cap)),
            Fact(label="failure", value=verdict.failure),
        ],
    )
