"""Protocol-exact reply schemas: a JSON Schema per sample that admits only valid judgments.

Structure-only decoding (:func:`assay.judge.protocol.output_schema`) makes a reply well formed;
a weak judge still writes totals that are not the sum, verdicts the thresholds do not give and
quotes that are not in the output. The *exact* schema of one sample leaves no room for that:

- ``meta`` holds the sample's identifiers (aliases under blind judging), the judge, the method
  and the prompt's date, each as a ``const``;
- the four dimension scores, ``overall_score`` and ``verdict`` are generated jointly: the top
  level is an ``anyOf`` with one branch per verdict, and each branch's ``scores`` is an
  ``anyOf`` over the score combinations that give that verdict (81 in all, with
  ``overall_score`` a ``const`` equal to the sum). With a finer rubric there is one branch per
  D1-D4 combination, and ``fine_scores`` is an ``anyOf`` over the fine scores that aggregate to
  it (the declared ``min`` or ``round_mean``);
- ``evidence`` is one item per dimension in rubric order (``prefixItems``); each ``quote`` is an
  ``enum`` of *spans* of the evaluated output (see :func:`quote_spans`);
- ``flags`` is one of the 32 sets of distinct spec flags, in spec order; ``reason`` is printable
  ASCII without ``"`` or ``\\``, starting with neither a space nor ``<`` (never blank, never the
  format example's ``<...>`` placeholder), at most :data:`REASON_MAX_CHARS` characters; ``notes``
  (optional in the spec) is left out.

Every string the schema admits is therefore bounded, and :func:`max_reply_bytes` gives the
longest reply it admits. A token is at least one byte, so a token budget of that many tokens can
never cut a reply. Only ``anyOf``, ``const``, ``enum``, ``pattern``, ``prefixItems`` and
``$ref`` are used: llama.cpp's JSON-schema-to-grammar converter and servers that enforce
``response_format`` json_schema (llama.cpp server, vLLM) take it as it is.

Span unit
---------
A span is a clause of the output: the output is cut at line breaks, after sentence ends
(``.``, ``!``, ``?`` followed by whitespace) and at the characters that JSON must escape
(``"``, ``\\``, control characters) or that lie outside the Basic Multilingual Plane (servers
convert the schema with converters that mishandle escapes in literals). Whitespace runs become
one space; a clause longer than the quote limit (``min(quote_max_chars, SPAN_MAX_CHARS)``
characters and ``long_quote_words`` words) is cut at a word boundary. Only clauses that the
validator's own quote check locates in the output are offered, so every offered quote passes.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..model.providers.llamacpp import COMPACT_JSON
from .evidence import quote_located
from .protocol import (
    DIMENSION_KEYS,
    EXACT_SCHEMA_SETTINGS,
    SCORE_VALUES,
    SPEC_FLAGS,
    VERDICTS,
    Protocol,
    verdict_for,
)

# The bounds live in protocol.py so that they enter the fingerprint; bump the generator there
# when what this module builds changes.
REASON_MAX_CHARS = int(EXACT_SCHEMA_SETTINGS["reason_max_chars"])
SPAN_MAX_CHARS = int(EXACT_SCHEMA_SETTINGS["span_max_chars"])
MAX_SPANS = int(EXACT_SCHEMA_SETTINGS["max_spans"])
#: More fine-score alternatives than this and the exact schema is not built (structure-only).
MAX_FINE_ALTERNATIVES = int(EXACT_SCHEMA_SETTINGS["max_fine_alternatives"])
#: Printable ASCII without '"' and '\\': nothing that JSON escapes, one byte per character.
PLAIN_TEXT_CLASS = r"[ !#-\[\]-~]"
VISIBLE_TEXT_CLASS = r"[!#-\[\]-~]"  # PLAIN_TEXT_CLASS without the space
# A reason starts with a visible character other than '<', so it is never blank and never the
# format example's "<...>" placeholder (the validator refuses both), and it is at most
# REASON_MAX_CHARS long.
REASON_FIRST_CLASS = r"[!#-;=-\[\]-~]"  # VISIBLE_TEXT_CLASS without '<'
REASON_PATTERN = f"^{REASON_FIRST_CLASS}{PLAIN_TEXT_CLASS}{{0,{REASON_MAX_CHARS - 1}}}$"

_CLAUSE_BREAK = re.compile(
    r"[\r\n\"\\\x00-\x08\x0b\x0c\x0e-\x1f\x7f\U00010000-\U0010ffff]+|(?<=[.!?])\s+"
)
_SPACE = re.compile(r"\s+")
_WORDY = re.compile(r"\w")


class ExactSchema(BaseModel):
    """The exact schema of one sample, or why there is none (structure-only is used)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_: dict[str, Any] | None
    unavailable: str | None = None
    spans: tuple[str, ...] = ()
    max_reply_bytes: int = 0


def quote_spans(output_text: str, protocol: Protocol) -> tuple[str, ...]:
    """The output's clauses that a quote may be (see the module docstring), in order."""
    max_chars = min(protocol.quote_max_chars, SPAN_MAX_CHARS)
    max_words = protocol.evidence.long_quote_words
    spans: dict[str, None] = {}
    for piece in _CLAUSE_BREAK.split(output_text):
        span = _cap(_SPACE.sub(" ", piece).strip(), max_chars, max_words)
        wanted = bool(span and _WORDY.search(span)) and span not in spans
        if wanted and quote_located(span, output_text, casefold=protocol.evidence.casefold):
            spans[span] = None
        if len(spans) >= MAX_SPANS:
            break
    return tuple(spans)


def _cap(text: str, max_chars: int, max_words: int) -> str:
    words = text.split(" ")
    if len(words) > max_words:
        text = " ".join(words[:max_words])
    if len(text) <= max_chars:
        return text
    cut = text[: max_chars + 1].rsplit(" ", 1)[0]
    return (cut if cut and len(cut) <= max_chars else text[:max_chars]).strip()


def exact_schema(
    protocol: Protocol, expected_meta: Mapping[str, str], output_text: str
) -> ExactSchema:
    """The protocol-exact schema for one sample (``expected_meta``: what meta must hold)."""
    spans = quote_spans(output_text, protocol)
    if not spans:
        return ExactSchema(schema_=None, unavailable="the output has no quotable span")
    fine_count = _fine_alternative_count(protocol)
    if fine_count > MAX_FINE_ALTERNATIVES:
        return ExactSchema(
            schema_=None,
            unavailable=f"the finer rubric has {fine_count} score alternatives "
            f"(more than {MAX_FINE_ALTERNATIVES})",
        )
    defs = {
        "meta": _object({key: {"const": value} for key, value in expected_meta.items()}),
        "flags": {"enum": [list(subset) for subset in flag_subsets()]},
        "evidence": _evidence(),
        "quote": {"enum": list(spans)},
        "reason": {"type": "string", "pattern": REASON_PATTERN},
    }
    branches = _protocol_branches(protocol.model_dump_json())
    schema = {"$comment": COMPACT_JSON, "$defs": defs, "anyOf": list(branches)}
    bound = max_reply_bytes(protocol, expected_meta, spans)
    return ExactSchema(schema_=schema, spans=spans, max_reply_bytes=bound)


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _evidence() -> dict[str, Any]:
    items = [
        _object(
            {
                "dimension": {"const": key},
                "quote": {"$ref": "#/$defs/quote"},
                "reason": {"$ref": "#/$defs/reason"},
            }
        )
        for key in DIMENSION_KEYS
    ]
    count = len(items)
    return {
        "type": "array",
        "prefixItems": items,
        "items": False,
        "minItems": count,
        "maxItems": count,
    }


def flag_subsets() -> Iterator[tuple[str, ...]]:
    """Every set of distinct spec flags, each in spec order (2^5 = 32, the empty set first)."""
    for size in range(len(SPEC_FLAGS) + 1):
        yield from itertools.combinations(SPEC_FLAGS, size)


def score_combinations() -> Iterator[dict[str, int]]:
    """Every D1-D4 score combination (3^4 = 81), in a fixed order."""
    for values in itertools.product(SCORE_VALUES, repeat=len(DIMENSION_KEYS)):
        yield dict(zip(DIMENSION_KEYS, values, strict=True))


def _scores_object(scores: Mapping[str, int]) -> dict[str, Any]:
    props: dict[str, Any] = {key: {"const": scores[key]} for key in DIMENSION_KEYS}
    props["overall_score"] = {"const": sum(scores.values())}
    return _object(props)


def _reply_object(scores_schema: dict[str, Any], verdict: str, fine: Any) -> dict[str, Any]:
    properties: dict[str, Any] = {"meta": {"$ref": "#/$defs/meta"}}
    if fine is not None:
        properties["fine_scores"] = fine
    properties["scores"] = scores_schema
    properties["verdict"] = {"const": verdict}
    properties["flags"] = {"$ref": "#/$defs/flags"}
    properties["evidence"] = {"$ref": "#/$defs/evidence"}
    return _object(properties)


@functools.lru_cache(maxsize=8)
def _protocol_branches(protocol_json: str) -> tuple[dict[str, Any], ...]:
    """The score/verdict branches depend on the protocol alone: built once per protocol, not
    per sample (the schema is serialised, never mutated; the grammar converter works on a
    copy)."""
    return tuple(_branches(Protocol.model_validate_json(protocol_json)))


def _branches(protocol: Protocol) -> Iterator[dict[str, Any]]:
    thresholds = protocol.thresholds
    combos = list(score_combinations())
    if protocol.finer_rubric is None:
        # One branch per verdict keeps the parallel grammar states while meta is written at 3.
        for verdict in VERDICTS:
            mine = [c for c in combos if verdict_for(c, thresholds) == verdict]
            if mine:
                scores = {"anyOf": [_scores_object(c) for c in mine]}
                yield _reply_object(scores, verdict, None)
        return
    for combo in combos:
        fine = _fine_alternatives(protocol, combo)
        if fine:
            verdict = verdict_for(combo, thresholds)
            yield _reply_object(_scores_object(combo), verdict, {"anyOf": fine})


def _fine_alternatives(protocol: Protocol, combo: Mapping[str, int]) -> list[dict[str, Any]]:
    """The fine_scores objects that aggregate to ``combo`` under the declared aggregation."""
    rubric = protocol.finer_rubric
    assert rubric is not None
    keys = protocol.fine_keys
    out = []
    for values in itertools.product(SCORE_VALUES, repeat=len(keys)):
        fine = dict(zip(keys, values, strict=True))
        if rubric.aggregate(fine) == dict(combo):
            out.append(_object({key: {"const": value} for key, value in fine.items()}))
    return out


def _fine_alternative_count(protocol: Protocol) -> int:
    return 0 if protocol.finer_rubric is None else len(SCORE_VALUES) ** len(protocol.fine_keys)


def max_reply_bytes(
    protocol: Protocol, expected_meta: Mapping[str, str], spans: Sequence[str]
) -> int:
    """An upper bound on the UTF-8 length of any reply the exact schema admits.

    The longest compact reply, plus one byte for every place where a server's grammar may
    allow a single optional space (llama.cpp's converter does, after each structural character
    and each value): at most two per structural character.
    """
    longest_span = max(spans, key=lambda s: len(json.dumps(s, ensure_ascii=False).encode()))
    reply: dict[str, Any] = {"meta": dict(expected_meta)}
    if protocol.finer_rubric is not None:
        reply["fine_scores"] = {key: 0 for key in protocol.fine_keys}
    reply["scores"] = {**{key: 0 for key in DIMENSION_KEYS}, "overall_score": 0}
    reply["verdict"] = max(VERDICTS, key=len)
    reply["flags"] = list(SPEC_FLAGS)
    reply["evidence"] = [
        {"dimension": key, "quote": longest_span, "reason": "x" * REASON_MAX_CHARS}
        for key in DIMENSION_KEYS
    ]
    compact = compact_json(reply)
    structural = _structural_characters(compact)
    return len(compact.encode()) + 2 * structural


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _structural_characters(text: str) -> int:
    """How many of ``{}[]:,`` occur outside strings in compact JSON ``text``."""
    bare = _JSON_STRING.sub("", text)
    return sum(bare.count(char) for char in "{}[]:,")


def compact_json(value: Any) -> str:
    """JSON with no optional whitespace, as the exact grammar generates it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
