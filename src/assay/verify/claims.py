"""Claim decomposition: an answer to atomic claims, each with the evidence ids cited for it.

The model-free decomposer (:func:`split_claims`) splits sentences, then clauses joined by a
semicolon or by ``, and`` / ``, but`` / ``; while`` ... when both sides read as full clauses
(a subject and a verb of their own), so "cats and dogs are mammals" stays one claim.
A claim carries the markers inside its sentence, or right after it (``... 1990. [cite:e1]``);
a sentence without a marker cites nothing. A clause split off a sentence keeps its own markers;
a clause without any takes those of the next clause that has some, else its sentence's.

:func:`decompose` can ask a model instead; when the call or its reply fails, it falls back to
the rules and says so in :attr:`Decomposition.failure` (never a silent switch).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..data.citations import CITE_MARKER, cited_ids, strip_citations, unique
from ..model import CallFailure, ChatMessage, GenerateConfig, JsonSchema, Model, system, user
from .reply_object import reply_object
from .types import Claim

DECOMPOSE_TAG = "[assay:claim_decompose]"


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


_ABBREVIATIONS = _wordset(
    "mr mrs ms dr prof st jr sr vs etc e.g i.e al fig no vol inc ltd co corp approx ca "
    "jan feb mar apr jun jul aug sep sept oct nov dec u.s u.k"
)
# a marker group directly after sentence-final punctuation belongs to that sentence
_TRAILING_MARKERS = re.compile(r"([.!?])((?:\s*\[\s*cite\s*:[^\[\]]*\])+)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*\s+")
_CLAUSE_JOINT = re.compile(r";\s+|,\s+(?:and|but|while|whereas|although|though|yet)\s+")
_SUBJECTS = _wordset(
    "it he she they we i you this that these those there its his her their the a an"
)
_VERBS = _wordset(
    "is are was were be been being has have had do does did will would can could may might "
    "shall should must remains became become becomes includes include included contains "
    "contain contained uses use used makes make made"
)
_MIN_CLAUSE_WORDS = 3


class Decomposition(BaseModel):
    """The claims of one answer and how they were made."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    claims: tuple[Claim, ...]
    method: Literal["rules", "model"]
    failure: str | None = None  # why the model decomposer was not used, when it was asked


def split_claims(answer: str, *, clauses: bool = True) -> list[Claim]:
    """Model-free decomposition of ``answer`` into claims (see the module doc)."""
    claims: list[Claim] = []
    for sentence in split_sentences(answer):
        parts = split_clauses(sentence) if clauses else [sentence]
        for part, ids in zip(parts, _clause_citations(sentence, parts), strict=True):
            text = strip_citations(part)
            if _has_words(text):
                claims.append(Claim(text=_finish(text), cited_ids=ids))
    return claims


def _clause_citations(sentence: str, parts: list[str]) -> list[tuple[str, ...]]:
    """A clause's own markers; else those of the next clause that has some (a marker usually
    closes the span it supports); else all of the sentence's."""
    own = [cited_ids(part) for part in parts]
    out = []
    for index, ids in enumerate(own):
        later = next((x for x in own[index:] if x), ())
        out.append(ids or later or cited_ids(sentence))
    return out


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``, each keeping its own citation markers."""
    text = _TRAILING_MARKERS.sub(lambda m: f"{m.group(2)}{m.group(1)}", text.strip())
    sentences: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        if _is_boundary(text, match.start(), match.end()):
            sentences.append(text[start : match.end()].strip())
            start = match.end()
    sentences.append(text[start:].strip())
    return [s for s in (x for piece in sentences for x in piece.split("\n")) if s.strip()]


def split_clauses(sentence: str) -> list[str]:
    """Independent clauses of one sentence, where a split is safe."""
    pieces: list[str] = []
    start = 0
    for match in _CLAUSE_JOINT.finditer(sentence):
        left, right = sentence[start : match.start()], sentence[match.end() :]
        if _safe_split(match.group(0), left, _until_next_joint(right)):
            pieces.append(left)
            start = match.end()
    pieces.append(sentence[start:])
    return [p.strip() for p in pieces if p.strip()]


def _is_boundary(text: str, end_of_punct: int, next_start: int) -> bool:
    if next_start >= len(text):
        return True
    following = text[next_start]
    if not (following.isupper() or following.isdigit() or following in "\"'([“"):
        return False
    words = text[:end_of_punct].split()
    last = words[-1].lower().rstrip(".") if words else ""
    return not (last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha()))


def _safe_split(joint: str, left: str, right: str) -> bool:
    # a semicolon joins clauses (lists use commas); a conjunction needs two full clauses
    if joint.startswith(";"):
        return _word_count(left) >= _MIN_CLAUSE_WORDS and _word_count(right) >= _MIN_CLAUSE_WORDS
    return _is_clause(left) and _is_clause(right)


def _word_count(text: str) -> int:
    return len(re.findall(r"[A-Za-z0-9]+", strip_citations(text)))


def _is_clause(text: str) -> bool:
    words = re.findall(r"[A-Za-z][A-Za-z'-]*", strip_citations(text))
    if len(words) < _MIN_CLAUSE_WORDS:
        return False
    lowered = [w.lower() for w in words]
    has_subject = lowered[0] in _SUBJECTS or words[0][0].isupper()
    has_verb = any(w in _VERBS or (w.endswith("ed") and len(w) > 4) for w in lowered)
    return has_subject and has_verb


def _until_next_joint(text: str) -> str:
    match = _CLAUSE_JOINT.search(text)
    return text if match is None else text[: match.start()]


def _has_words(text: str) -> bool:
    return bool(re.search(r"[A-Za-z0-9]{2,}", text))


def _finish(text: str) -> str:
    text = text.strip().rstrip(",;:")
    if text and text[0].islower():
        text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


# ---------------------------------------------------------------- model-based decomposition

DECOMPOSE_SCHEMA = JsonSchema(
    name="claim_decomposition",
    schema={
        "type": "object",
        "properties": {
            "claims": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string"},
                        "cited_ids": {"type": "array", "items": {"type": "string"}},
                    },
                    "required": ["text", "cited_ids"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["claims"],
        "additionalProperties": False,
    },
)

_DECOMPOSE_SYSTEM = (
    f"{DECOMPOSE_TAG} Split the answer into atomic factual claims. Each claim is one short, "
    "self-contained sentence stating one fact. Keep the evidence ids the answer cites for it "
    "([cite:id] markers). Reply with JSON only: "
    '{"claims": [{"text": "...", "cited_ids": ["id", ...]}]}'
)


def decompose_messages(answer: str) -> list[ChatMessage]:
    return [system(_DECOMPOSE_SYSTEM), user(f"Answer:\n{answer}")]


async def decompose_with_model(
    model: Model, answer: str, *, config: GenerateConfig | None = None
) -> list[Claim] | str:
    """Claims from ``model``; a string is the reason it failed (call or unusable reply)."""
    config = config or GenerateConfig(temperature=0.0, max_tokens=512)
    if model.backend.supports_json_schema:
        config = config.model_copy(update={"json_schema": DECOMPOSE_SCHEMA})
    result = await model.generate(decompose_messages(answer), config)
    if isinstance(result, CallFailure):
        return f"call failed: {result.describe()}"
    return parse_decomposition(result.text, allowed_ids=cited_ids(answer))


def parse_decomposition(text: str, *, allowed_ids: Sequence[str]) -> list[Claim] | str:
    """Claims from a model reply, or the reason the reply cannot be used."""
    data = reply_object(text)
    if isinstance(data, str):
        return f"reply {data}"
    items = data.get("claims")
    if not isinstance(items, list) or not items:
        return "reply has no non-empty 'claims' list"
    claims = [_claim_from(item, allowed_ids) for item in items]
    usable = [c for c in claims if c is not None]
    if len(usable) != len(claims):
        return "reply has a claim without text"
    return usable


def _claim_from(item: object, allowed_ids: Sequence[str]) -> Claim | None:
    if not isinstance(item, dict) or not isinstance(item.get("text"), str):
        return None
    text = strip_citations(item["text"])
    if not _has_words(text):
        return None
    raw_ids = item.get("cited_ids")
    ids = [str(i) for i in raw_ids] if isinstance(raw_ids, list) else []
    ids += list(cited_ids(item["text"]))
    # a model may invent ids; keep only ids the answer itself cites
    return Claim(text=_finish(text), cited_ids=unique(i for i in ids if i in allowed_ids))


async def decompose(answer: str, model: Model | None = None) -> Decomposition:
    """Claims by ``model`` when given, else by the rules; a model failure falls back visibly."""
    if model is None:
        return Decomposition(claims=tuple(split_claims(answer)), method="rules")
    outcome = await decompose_with_model(model, answer)
    if isinstance(outcome, str):
        return Decomposition(
            claims=tuple(split_claims(answer)), method="rules", failure=f"{model.name}: {outcome}"
        )
    return Decomposition(claims=tuple(outcome), method="model")


def has_marker(text: str) -> bool:
    return CITE_MARKER.search(text) is not None
