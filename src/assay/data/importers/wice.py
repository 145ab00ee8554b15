"""WiCE (Kamoi et al., 2023): claims from Wikipedia with the web page they cite, split into
sentences, a support label and the minimal sets of supporting sentences.

One record per claim. There is no question: ``question`` is the empty string, and the claim is
both the answer to verify and ``gold_answer``. Evidence item ``i`` is sentence ``i`` of the
page (blank sentences are left out, the others keep their index). ``gold_citations`` is the
union of all supporting-sentence sets. Claims cut from the same Wikipedia article share
``group``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..records import Evidence, GoldCitation, GroundedQARecord
from ._common import GroundedImport, RowReader, Tally, UniqueIds, read_rows

DATASET = "wice"
LABEL_CONVENTION = (
    "label 'supported' -> grounded (gold_error=false); 'partially_supported' and 'not_supported' "
    "-> grounding error (gold_error=true, error_type = the label), as in LLM-AggreFact."
)
GROUNDED_LABEL = "supported"
ERROR_LABELS = frozenset({"partially_supported", "not_supported"})
QUESTION = ""  # WiCE has no question; the claim stands alone

SKIP_NO_EVIDENCE = "no evidence sentences"
SKIP_EMPTY_CLAIM = "empty claim"


def import_wice(path: Path) -> GroundedImport:
    """Read a WiCE claim (or subclaim) split, e.g. ``claim_dev.jsonl``."""
    tally = Tally()
    ids = UniqueIds()
    records: list[GroundedQARecord] = []
    for line, row in read_rows(path, DATASET):
        tally.rows += 1
        tally.units["claims"] += 1
        record = _claim_record(RowReader(row, path=path, line=line, dataset=DATASET), tally)
        if record is not None:
            records.append(record.model_copy(update={"id": ids.claim(record.id, line)}))
    return GroundedImport(
        records=tuple(records), report=tally.report(DATASET, path, records, LABEL_CONVENTION)
    )


def _claim_record(reader: RowReader, tally: Tally) -> GroundedQARecord | None:
    claim = reader.text("claim").strip()
    label = _label(reader)
    sentences = _sentences(reader)
    supporting = _supporting(reader, len(sentences))
    meta = reader.child(reader.mapping("meta"), "meta")
    evidence = tuple(
        Evidence(evidence_id=str(i), text=text.strip())
        for i, text in enumerate(sentences)
        if text.strip()
    )
    if not claim or not evidence:
        tally.skip(SKIP_EMPTY_CLAIM if not claim else SKIP_NO_EVIDENCE)
        return None
    known = {item.evidence_id for item in evidence}
    grounded = label == GROUNDED_LABEL
    return GroundedQARecord(
        id=f"{DATASET}-{meta.text('id')}",
        question=QUESTION,
        gold_answer=claim,
        evidence=evidence,
        gold_citations=tuple(
            GoldCitation(evidence_id=str(i)) for i in supporting if str(i) in known
        ),
        answer=claim,
        gold_error=not grounded,
        error_type=None if grounded else label,
        group=f"{DATASET}-article:{meta.text('claim_title').strip() or meta.text('id')}",
        meta={
            "article": meta.text("claim_title", optional=True).strip(),
            "section": meta.text("claim_section", optional=True).strip(),
        },
    )


def _label(reader: RowReader) -> str:
    label = reader.text("label")
    if label != GROUNDED_LABEL and label not in ERROR_LABELS:
        reader.fail(
            "label",
            f"unknown label {label!r} (expected supported, partially_supported or not_supported)",
            shape=False,
        )
    return label


def _sentences(reader: RowReader) -> list[str]:
    sentences = reader.items("evidence")
    for index, sentence in enumerate(sentences):
        if not isinstance(sentence, str):
            reader.fail(f"evidence[{index}]", f"expected a string, got {type(sentence).__name__}")
    return sentences


def _supporting(reader: RowReader, n_sentences: int) -> list[int]:
    """Every sentence index in any supporting set, ascending (the sets are alternatives)."""
    found: set[int] = set()
    for g, group in enumerate(reader.items("supporting_sentences")):
        if not isinstance(group, list):
            reader.fail(f"supporting_sentences[{g}]", "expected a list of sentence indices")
        for k, index in enumerate(group):
            if not _is_index(index, n_sentences):
                page = _sentence_count(n_sentences)
                reader.fail(
                    f"supporting_sentences[{g}][{k}]",
                    f"{index!r} is not a sentence index (the page has {page})",
                    shape=False,
                )
            found.add(index)
    return sorted(found)


def _is_index(value: Any, size: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < size


def _sentence_count(count: int) -> str:
    return "1 sentence" if count == 1 else f"{count} sentences"
