"""Finding the JSON object(s) in a judge reply, and what about the reply breaks the protocol.

A reply is accepted as-is only when, stripped of surrounding JSON whitespace (space, tab, line
feed, carriage return: RFC 8259's, nothing else), it is one JSON object. Otherwise the top-level
objects are salvaged (nested objects of a broken one are not) so the remaining checks can run,
and the reasons are recorded: code fences, text outside (around a broken object too), several
objects, duplicate keys, syntax errors, no JSON at all.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..data.jsonl import MAX_DEPTH, may_nest_too_deep, too_deep
from .findings import Findings
from .protocol import JUDGE_REFUSAL_OR_EVASION, PROTOCOL_VIOLATION, UNPARSABLE_OUTPUT

CODE_FENCE = re.compile(r"```|~~~")
# The only whitespace a JSON text may have around its value (RFC 8259). Python's str.strip()
# also takes a no-break space, U+3000, form feeds and record separators, around which a strict
# JSON parser refuses the reply: such a reply is not "exactly one JSON object".
JSON_WHITESPACE = " \t\n\r"


class _DuplicateKeyError(ValueError):
    pass


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _DuplicateKeyError(
            f"duplicate keys: {sorted({k for k in keys if keys.count(k) > 1})}"
        )
    return dict(pairs)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs_hook, parse_constant=_reject_constant)
_LENIENT = json.JSONDecoder(parse_constant=_reject_constant)  # finds objects despite duplicates


def parse_reply(reply: str, findings: Findings) -> tuple[list[dict[str, Any]], str]:
    """The JSON objects in the reply and the text outside them; records parse checks.

    An object nested deeper than :data:`~assay.data.jsonl.MAX_DEPTH` levels is no judgment
    (the protocol's deepest field is 3 levels down) and could not be archived and read back:
    it is dropped, with a failed ``nesting_depth`` check. The raw reply is kept as it came.
    """
    objects, outside = _parse_reply(reply, findings)
    if not may_nest_too_deep(reply):
        return objects, outside
    shallow = [item for item in objects if too_deep(item) is None]
    if len(shallow) < len(objects):
        findings.fail(
            "nesting_depth",
            UNPARSABLE_OUTPUT,
            f"a JSON object nested deeper than {MAX_DEPTH} levels",
        )
    return shallow, outside


def _parse_reply(reply: str, findings: Findings) -> tuple[list[dict[str, Any]], str]:
    if not findings.check(
        "non_empty", bool(reply.strip()), JUDGE_REFUSAL_OR_EVASION, "empty reply"
    ):
        findings.fail("json_syntax", UNPARSABLE_OUTPUT, "empty reply")
        return [], ""
    text = reply.strip(JSON_WHITESPACE)
    whole, error = _decode_whole(text)
    if isinstance(whole, dict):
        findings.check("single_json_object", True, PROTOCOL_VIOLATION)
        return [whole], ""
    if error is not None and isinstance(error, _DuplicateKeyError):
        findings.fail("no_duplicate_keys", PROTOCOL_VIOLATION, str(error))
    if whole is not None:  # valid JSON, but not an object
        findings.fail("single_json_object", PROTOCOL_VIOLATION, f"a JSON {type(whole).__name__}")
        objects = (
            [item for item in whole if isinstance(item, dict)] if isinstance(whole, list) else []
        )
        if not objects:
            findings.fail("json_syntax", UNPARSABLE_OUTPUT, "no JSON object in the reply")
        return objects, ""
    return _salvage(text, findings, error)


def _decode_whole(text: str) -> tuple[Any, Exception | None]:
    try:
        return _DECODER.decode(text), None
    except (ValueError, RecursionError) as error:
        return None, error


def _salvage(
    text: str, findings: Findings, error: Exception | None
) -> tuple[list[dict[str, Any]], str]:
    objects, spans = _find_objects(text)
    outside = _outside(text, spans)
    if CODE_FENCE.search(text):
        findings.fail("no_code_fences", PROTOCOL_VIOLATION, "the reply uses a code fence")
    if not objects:
        detail = "no JSON object" if "{" not in text else f"JSON syntax error: {error}"
        findings.fail("json_syntax", UNPARSABLE_OUTPUT, detail[:300])
        if "{" not in text:
            findings.fail("has_scores", JUDGE_REFUSAL_OR_EVASION, "no JSON and no scores")
        else:
            _check_text_outside(_outside(text, _brace_spans(text)), findings)
        return [], outside
    duplicates = [found for start, end in spans if (found := _duplicate_keys(text[start:end]))]
    if duplicates and not isinstance(error, _DuplicateKeyError):
        findings.fail("no_duplicate_keys", PROTOCOL_VIOLATION, duplicates[0])
    if len(objects) > 1:
        findings.fail("single_json_object", PROTOCOL_VIOLATION, f"{len(objects)} JSON objects")
    _check_text_outside(outside, findings)
    return objects, outside


def _check_text_outside(outside: str, findings: Findings) -> None:
    extra = outside.strip(JSON_WHITESPACE)
    if extra:
        findings.fail("no_text_outside_object", PROTOCOL_VIOLATION, f"extra text: {extra[:120]!r}")


def _duplicate_keys(span: str) -> str:
    try:
        _DECODER.decode(span)
    except _DuplicateKeyError as error:
        return str(error)
    except (ValueError, RecursionError):
        return ""
    return ""


def _find_objects(text: str) -> tuple[list[dict[str, Any]], list[tuple[int, int]]]:
    """Top-level JSON objects in ``text``: nested objects of a broken one are not salvaged.

    Each candidate is decoded within its own braces: a decode error raised against the whole
    text counts the lines before it, so a reply of many broken objects cost time quadratic in
    its length (1.4 s for 40,000 of them)."""
    objects: list[dict[str, Any]] = []
    spans: list[tuple[int, int]] = []
    position = text.find("{")
    while position != -1:
        closing = _matching_brace(text, position)
        if closing is None:
            break  # unbalanced: the rest of the text is inside the broken object
        try:
            value, length = _LENIENT.raw_decode(text[position : closing + 1])
        except (ValueError, RecursionError):
            position = text.find("{", closing + 1)
            continue
        if isinstance(value, dict):
            objects.append(value)
            spans.append((position, position + length))
        position = text.find("{", position + length)
    return objects, spans


def _brace_spans(text: str) -> list[tuple[int, int]]:
    """Where the reply's top-level objects stand, decodable or not: a broken object still has
    its braces, and what lies outside them is prose around an attempted object. An object left
    open runs to the end of the reply."""
    spans: list[tuple[int, int]] = []
    position = text.find("{")
    while position != -1:
        closing = _matching_brace(text, position)
        if closing is None:
            spans.append((position, len(text)))
            break
        spans.append((position, closing + 1))
        position = text.find("{", closing + 1)
    return spans


def _matching_brace(text: str, start: int) -> int | None:
    """The index of the brace closing the one at ``start`` (JSON strings respected)."""
    depth, in_string, escaped = 0, False, False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index
    return None


def _outside(text: str, spans: list[tuple[int, int]]) -> str:
    pieces, last = [], 0
    for start, end in spans:
        pieces.append(text[last:start])
        last = end
    pieces.append(text[last:])
    return " ".join(pieces)
