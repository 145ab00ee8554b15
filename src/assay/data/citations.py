"""Citations in answers: ``[cite:id]`` markers (``[cite:a,b]`` for several) and a structured list.

An answer may cite in its text, in a structured ``citations`` list, or both;
:func:`answer_citations` merges the two (text order first, duplicates dropped) and says
which ids name no evidence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

from pydantic import BaseModel, ConfigDict

# ``[cite:id]`` / ``[cite: a, b]``; ids are anything but brackets and commas.
CITE_MARKER = re.compile(r"\[\s*cite\s*:\s*([^\[\]]*?)\s*\]", re.IGNORECASE)


# Citations written in another syntax: ``[e1]``, ``[e1, e2]``, ``[source: e1]``, ``(cite:e1)``.
# Read as plain text they would leave the answer citing nothing, so a loader refuses a group
# whose every id names the record's evidence (``misspelt_markers``). A bare number (``[2]``) is
# never refused: footnote numbers are common in real answers and claims (WebGPT's answers,
# Wikipedia sentences), where they cite nothing of the record's evidence.
_BRACKETED = re.compile(r"\[\s*(?:[A-Za-z]+\s*:\s*)?([^\[\]]*?)\s*\]")
_PARENTHESISED_CITE = re.compile(r"\(\s*cite\s*:\s*([^()]*?)\s*\)", re.IGNORECASE)


class CitationMarker(BaseModel):
    """One marker in a text: its evidence ids and its character span."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ids: tuple[str, ...]
    start: int
    end: int


class AnswerCitations(BaseModel):
    """The citations of one answer, merged and checked against the record's evidence ids."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ids: tuple[str, ...]  # every cited id, first-appearance order, no duplicates
    from_markers: tuple[str, ...]
    from_list: tuple[str, ...]
    unknown: tuple[str, ...]  # cited ids that name no evidence

    @property
    def valid(self) -> tuple[str, ...]:
        return tuple(i for i in self.ids if i not in set(self.unknown))


def parse_citations(text: str) -> list[CitationMarker]:
    """Every ``[cite:...]`` marker in ``text``, in order (empty ids dropped)."""
    markers = []
    for match in CITE_MARKER.finditer(text):
        ids = tuple(part.strip() for part in match.group(1).split(",") if part.strip())
        markers.append(CitationMarker(ids=ids, start=match.start(), end=match.end()))
    return markers


def cited_ids(text: str) -> tuple[str, ...]:
    """The ids cited by the markers of ``text``, first-appearance order, no duplicates."""
    return unique(iter_marker_ids(text))


def iter_marker_ids(text: str) -> Iterator[str]:
    """Every id of every marker, in order (the fast path: no objects built)."""
    if "[" not in text:
        return
    for match in CITE_MARKER.finditer(text):
        for part in match.group(1).split(","):
            if part := part.strip():
                yield part


def misspelt_markers(text: str, evidence_ids: Sequence[str]) -> Iterator[tuple[str, str]]:
    """``(group, the marker it means)`` for each group of ``text`` outside the ``[cite:...]``
    markers that names only the record's evidence ids, not all of them numbers, in another
    syntax (``[e1]`` means ``[cite:e1]``)."""
    if "[" not in text and "(" not in text:
        return
    known = set(evidence_ids)
    plain = CITE_MARKER.sub(" ", text)
    for pattern in (_BRACKETED, _PARENTHESISED_CITE):
        for match in pattern.finditer(plain):
            ids = [part.strip() for part in match.group(1).split(",")]
            if all(i in known for i in ids) and not all(i.isdigit() for i in ids):
                yield match.group(0), format_marker(ids)


def strip_citations(text: str) -> str:
    """``text`` without its markers, with the spacing around them tidied."""
    plain = CITE_MARKER.sub("", text)
    plain = re.sub(r"[ \t]+([.,;:!?])", r"\1", plain)
    return re.sub(r"[ \t]{2,}", " ", plain).strip()


def format_marker(ids: Sequence[str]) -> str:
    return f"[cite:{','.join(ids)}]" if ids else ""


def answer_citations(
    text: str, listed: Sequence[str] | None, evidence_ids: Iterable[str]
) -> AnswerCitations:
    """Merge the markers of ``text`` with the structured list and check them."""
    from_markers = cited_ids(text)
    from_list = unique(listed or ())
    known = set(evidence_ids)
    ids = unique((*from_markers, *from_list))
    return AnswerCitations(
        ids=ids,
        from_markers=from_markers,
        from_list=from_list,
        unknown=tuple(i for i in ids if i not in known),
    )


def unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
