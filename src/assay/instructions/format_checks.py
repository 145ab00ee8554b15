"""Checkers for layout instructions: detectable_format, detectable_content, startend,
punctuation and combination."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from .types import (
    CheckResult,
    failed,
    passed,
    reject_unknown,
    require_int,
    require_str,
    verdict,
)

_NONE: frozenset[str] = frozenset()


def _preview(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 3] + "...")


# --- detectable_format -------------------------------------------------------------------

# Indentation within the line: "\s*" from every line start crossed the blank lines after it
# (quadratic in a run of them) and counted each bullet once all the same. A "*" bullet is a "*"
# and one more character that is not "*" (a line break too: then, as in IFEval, the bullet takes
# the next line with it, and a lone "*" at the end of the response is none).
_STAR_BULLET = re.compile(r"^[^\S\n]*\*[^*].*$", re.MULTILINE)
_DASH_BULLET = re.compile(r"^[^\S\n]*-", re.MULTILINE)


def number_bullet_lists(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """Exactly N markdown bullets: lines starting with ``* `` or ``-`` (``**bold**`` is not one)."""
    reject_unknown(kwargs, frozenset({"num_bullets"}))
    expected = require_int(kwargs, "num_bullets", minimum=1)
    found = len(_STAR_BULLET.findall(response)) + len(_DASH_BULLET.findall(response))
    return verdict(found == expected, f"{found} bullet lines, expected exactly {expected}")


_CONSTRAINED = ("My answer is yes.", "My answer is no.", "My answer is maybe.")


def constrained_response(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """The response contains one of IFEval's fixed answer sentences."""
    reject_unknown(kwargs, _NONE)
    stripped = response.strip()
    for option in _CONSTRAINED:
        if option in stripped:
            return passed(f"contains {option!r}")
    return failed(f"contains none of {list(_CONSTRAINED)}")


# the closing fence's white space is taken from where it starts ("\s*" tried from each
# character of a long run of it was quadratic)
_FENCE = re.compile(r"^```(?:json|JSON|Json)?\s*|(?:(?<!\s)\s+)?```$")


def json_format(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """The whole response parses as JSON (one surrounding markdown code fence is allowed, plain
    or tagged json, JSON or Json as IFEval allows; ```javascript is not a JSON fence)."""
    reject_unknown(kwargs, _NONE)
    body = _FENCE.sub("", response.strip()).strip()
    try:
        json.loads(body)
    except ValueError as error:
        return failed(f"not valid JSON: {error}")
    return passed("the response parses as JSON")


def multiple_sections(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """At least N sections, each introduced by '<splitter> <number>' (e.g. 'SECTION 1')."""
    reject_unknown(kwargs, frozenset({"section_spliter", "num_sections"}))
    splitter = require_str(kwargs, "section_spliter").strip()
    expected = require_int(kwargs, "num_sections", minimum=1)
    headers = re.findall(r"\s?" + re.escape(splitter) + r"\s?\d+\s?", response)
    found = len(headers)
    return verdict(found >= expected, f"{found} '{splitter} <n>' headers, expected >= {expected}")


_ITALIC = re.compile(r"\*([^\n*]*)\*")
_BOLD = re.compile(r"\*\*([^\n*]*)\*\*")


def number_highlighted_sections(
    response: str, kwargs: Mapping[str, Any], prompt: str
) -> CheckResult:
    """At least N non-empty markdown highlights on one line: ``*text*`` or ``**text**``."""
    reject_unknown(kwargs, frozenset({"num_highlights"}))
    expected = require_int(kwargs, "num_highlights", minimum=1)
    italic = sum(1 for m in _ITALIC.findall(response) if m.strip())
    bold = sum(1 for m in _BOLD.findall(response) if m.strip())
    found = italic + bold
    return verdict(found >= expected, f"{found} highlighted spans, expected >= {expected}")


def title(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """A title in double angular brackets, ``<<like this>>``, on one line."""
    reject_unknown(kwargs, _NONE)
    for found in _titles(response):
        # as IFEval, the brackets around the title are all stripped: "<<>>>" has no title
        if found.lstrip("<").rstrip(">").strip():
            return passed(f"title <<{found.strip()}>>")
    return failed("no non-empty <<title>> found")


def _titles(text: str) -> Iterator[str]:
    """What ``<<([^\n]+?)>>`` finds, in order, in one pass over each line (the pattern tried
    from every "<<" of a line without ">>" rescanned the rest of the line each time)."""
    for line in text.split("\n"):
        start = line.find("<<")
        while start >= 0:
            end = line.find(">>", start + 3)  # at least one character between
            if end < 0:
                break  # no later "<<" of this line has a ">>" after it either
            yield line[start + 2 : end]
            start = line.find("<<", end + 2)


# --- detectable_content ------------------------------------------------------------------


_PLACEHOLDER = re.compile(r"\[[^\[\]\n]*\]")


def number_placeholders(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """At least N square-bracket placeholders like ``[name]``."""
    reject_unknown(kwargs, frozenset({"num_placeholders"}))
    expected = require_int(kwargs, "num_placeholders", minimum=1)
    # the same count as "\[.*?\]" (each "]" closing a "[" of its line since the last match),
    # but a scan from each "[" stops at the next bracket: "\[.*?\]" rescanned the rest of the
    # line from every "[" (3 s on a line of 20,000 of them)
    found = len(_PLACEHOLDER.findall(response))
    return verdict(found >= expected, f"{found} [placeholders], expected >= {expected}")


def postscript(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """A postscript introduced by the marker (``P.S.`` / ``P.P.S``, case and spacing tolerant)."""
    reject_unknown(kwargs, frozenset({"postscript_marker"}))
    marker = require_str(kwargs, "postscript_marker").strip()
    pattern = _marker_pattern(marker)
    found = re.search(pattern, response.lower(), flags=re.MULTILINE)
    if found:
        return passed(f"postscript found: {_preview(found.group(0))}")
    return failed(f"no line with the postscript marker {marker!r}")


def _marker_pattern(marker: str) -> str:
    letters = [c for c in marker.lower() if c.isalpha()]
    if marker.upper().replace(" ", "") in {"P.S.", "P.P.S", "P.P.S."}:
        # The letters, each followed by a period with optional space, except a missing final
        # period after "P.P.S" (IFEval's own tolerance).
        dotted = r"\.\s?".join(letters)
        ending = r"\." if marker.rstrip().endswith(".") and len(letters) == 2 else r""
        return r"\s*" + dotted + ending + r".*$"
    return r"\s*" + re.escape(marker.lower()) + r".*$"


# --- startend ----------------------------------------------------------------------------


def end_checker(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """The response ends with the phrase (case-insensitive; trailing spaces and quotes ignored)."""
    reject_unknown(kwargs, frozenset({"end_phrase"}))
    phrase = require_str(kwargs, "end_phrase").strip()
    ending = response.strip().strip('"').lower()
    if ending.endswith(phrase.lower()):
        return passed(f"ends with {phrase!r}")
    return failed(f"ends with {_preview(ending[-len(phrase) - 10 :])}, not {phrase!r}")


def quotation(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """The whole response is wrapped in double quotation marks."""
    reject_unknown(kwargs, _NONE)
    stripped = response.strip()
    ok = len(stripped) > 1 and stripped[0] == '"' and stripped[-1] == '"'
    return verdict(ok, "wrapped in double quotes" if ok else "not wrapped in double quotes")


# --- punctuation -------------------------------------------------------------------------


def no_comma(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """No ASCII comma anywhere in the response."""
    reject_unknown(kwargs, _NONE)
    count = response.count(",")
    return verdict(count == 0, f"{count} commas")


# --- combination -------------------------------------------------------------------------


def repeat_prompt(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """The response starts by repeating the given request verbatim (case-insensitive)."""
    reject_unknown(kwargs, frozenset({"prompt_to_repeat"}))
    request = require_str(kwargs, "prompt_to_repeat").strip()
    if response.strip().lower().startswith(request.lower()):
        return passed("starts with the request, repeated word for word")
    return failed(f"does not start with the request; starts with {_preview(response.strip())}")


_SEPARATOR = "******"


def two_responses(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """Two different non-empty answers separated by six asterisks."""
    reject_unknown(kwargs, _NONE)
    parts = [p.strip() for p in response.split(_SEPARATOR)]
    answers = [p for i, p in enumerate(parts) if p or i not in (0, len(parts) - 1)]
    if len(answers) != 2 or not all(answers):
        return failed(f"{len(answers)} parts around '{_SEPARATOR}', expected two non-empty ones")
    if answers[0] == answers[1]:
        return failed("the two answers are identical")
    return passed("two different answers separated by '******'")
