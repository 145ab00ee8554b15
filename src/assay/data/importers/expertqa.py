"""ExpertQA (Malaviya et al., 2024): expert questions, system answers split into claims, each claim
with the evidence its ``[n]`` markers cite and an expert's ``support`` judgement.

One record per claim. The claim is the answer to verify; its ``[n]`` markers become
``[cite:n]`` and each evidence string ``"[n] URL\\n\\npassage"`` becomes evidence ``n`` with the
URL as ``source``. Records of one question share ``group``.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..records import Evidence, GoldCitation, GroundedQARecord
from ._common import GroundedImport, RowReader, Tally, UniqueIds, read_rows, stable_key

DATASET = "expertqa"
LABEL_CONVENTION = (
    "support 'Complete' -> grounded (gold_error=false); 'Partial' and 'Incomplete' -> grounding "
    "error (gold_error=true, error_type = the support value). Left out: claims with no evidence "
    "('Missing'), with evidence that is only a URL (no passage text), with support 'N/A' or no "
    "support label."
)
GROUNDED_SUPPORT = "Complete"
ERROR_SUPPORT = frozenset({"Partial", "Incomplete"})

# "[3] https://example.org/page\n\npassage text"; the passage may be absent (URL only).
EVIDENCE_ITEM = re.compile(r"\A\s*\[(\d+)\][ \t]*(\S*)[ \t]*(?:\n+(.*))?\Z", re.DOTALL)
MARKER = re.compile(r"\[(\d+)\]")

SKIP_NO_EVIDENCE = "no evidence"
SKIP_URL_ONLY = "evidence is only URLs, no passage text"
SKIP_BAD_EVIDENCE = "evidence not in '[n] URL' form"
SKIP_CONFLICT = "two different passages under one [n]"
SKIP_EMPTY_CLAIM = "empty claim"
SKIP_NA = "support N/A"
SKIP_MISSING = "support Missing (no evidence found by the annotator)"
SKIP_UNLABELED = "no support label"


def import_expertqa(path: Path) -> GroundedImport:
    """Read an ExpertQA split (e.g. ``domain_val.jsonl``) into verify-only records."""
    tally = Tally()
    # counted from zero, so a file of questions without answers says "0 answers, 0 claims"
    tally.units.update(dict.fromkeys(("questions", "answers", "claims"), 0))
    ids = UniqueIds()
    records: list[GroundedQARecord] = []
    for line, row in read_rows(path, DATASET):
        tally.rows += 1
        reader = RowReader(row, path=path, line=line, dataset=DATASET)
        records.extend(_question_records(reader, tally, ids))
    return GroundedImport(
        records=tuple(records), report=tally.report(DATASET, path, records, LABEL_CONVENTION)
    )


def _question_records(reader: RowReader, tally: Tally, ids: UniqueIds) -> list[GroundedQARecord]:
    question = reader.text("question").strip()
    answers = reader.mapping("answers")
    meta = _slicing_fields(reader)
    tally.units["questions"] += 1
    out: list[GroundedQARecord] = []
    for system, answer in answers.items():
        tally.units["answers"] += 1
        answer_reader = reader.child(answer, f"answers.{system}")
        for index, claim in enumerate(answer_reader.items("claims")):
            tally.units["claims"] += 1
            claim_reader = answer_reader.child(claim, f"claims[{index}]")
            record_id = f"{DATASET}-{stable_key(question)}-{system}-c{index:02d}"
            record = _claim_record(claim_reader, question, record_id, tally)
            if record is not None:
                update = {
                    "id": ids.claim(record.id, reader.line),
                    "meta": {**meta, "system": system},
                }
                out.append(record.model_copy(update=update))
    return out


def _slicing_fields(reader: RowReader) -> dict[str, str]:
    """What users slice ExpertQA by: the expert's field, its subfield and the question type
    (the answering system is added per answer)."""
    metadata = reader.row.get("metadata")
    if not isinstance(metadata, dict):
        return {}
    keys = ("field", "specific_field", "question_type")
    return {k: metadata[k] for k in keys if isinstance(metadata.get(k), str)}


def _claim_record(
    reader: RowReader, question: str, record_id: str, tally: Tally
) -> GroundedQARecord | None:
    claim = reader.text("claim_string").strip()
    support = reader.text("support", optional=True)
    evidence, problem = _evidence(reader)
    problem = problem or _label_problem(support, reader)
    if problem is None and not MARKER.sub("", claim).strip():
        problem = SKIP_EMPTY_CLAIM
    if problem is not None:
        tally.skip(problem)
        return None
    known = {item.evidence_id for item in evidence}
    grounded = support == GROUNDED_SUPPORT
    revised = reader.text("revised_claim", optional=True).strip()
    return GroundedQARecord(
        id=record_id,
        question=question,
        gold_answer=cite_markers(revised or claim, known),
        evidence=evidence,
        gold_citations=_gold_citations(claim, known) if grounded else (),
        answer=cite_markers(claim, known),
        gold_error=not grounded,
        error_type=None if grounded else support,
        group=f"{DATASET}-{stable_key(question)}",
    )


def _evidence(reader: RowReader) -> tuple[tuple[Evidence, ...], str | None]:
    """The claim's evidence items, or the reason the claim cannot be verified."""
    raw = reader.items("evidence", optional=True)
    if not raw:
        return (), SKIP_NO_EVIDENCE
    items: dict[str, Evidence] = {}
    for index, text in enumerate(raw):
        if not isinstance(text, str):
            reader.fail(f"evidence[{index}]", f"expected a string, got {type(text).__name__}")
        match = EVIDENCE_ITEM.match(text)
        if match is None:
            return (), SKIP_BAD_EVIDENCE
        number, url, passage = match.group(1), match.group(2), (match.group(3) or "").strip()
        if not passage:
            continue
        item = Evidence(evidence_id=number, text=passage, source=url or None)
        if items.setdefault(number, item) != item:
            return (), SKIP_CONFLICT
    if not items:
        return (), SKIP_URL_ONLY
    return tuple(items.values()), None


def _label_problem(support: str, reader: RowReader) -> str | None:
    if support == GROUNDED_SUPPORT or support in ERROR_SUPPORT:
        return None
    if support == "N/A":
        return SKIP_NA
    if support == "Missing":
        return SKIP_MISSING
    if not support:
        return SKIP_UNLABELED
    return reader.fail(
        "support",
        f"unknown support value {support!r} (expected Complete, Partial, Incomplete, Missing "
        "or N/A)",
        shape=False,
    )


def cite_markers(text: str, known: set[str]) -> str:
    """``[n]`` -> ``[cite:n]`` for the evidence this claim has; markers naming evidence the claim
    does not carry are dropped, so every citation resolves."""

    def replace(match: re.Match[str]) -> str:
        return f"[cite:{match.group(1)}]" if match.group(1) in known else ""

    return MARKER.sub(replace, text).strip()


def _gold_citations(claim: str, known: set[str]) -> tuple[GoldCitation, ...]:
    cited = dict.fromkeys(n for n in MARKER.findall(claim) if n in known)
    return tuple(GoldCitation(evidence_id=n) for n in cited)
