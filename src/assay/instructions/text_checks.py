"""Checkers for wording instructions: length_constraints, keywords, change_case, language."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .language import detect_language, is_english
from .text import capitalized_words, count_sentences, count_words
from .types import (
    CheckResult,
    compare,
    failed,
    kwargs_error,
    passed,
    reject_unknown,
    require_int,
    require_relation,
    require_str,
    require_str_list,
    verdict,
)

_NONE: frozenset[str] = frozenset()

# --- length_constraints ------------------------------------------------------------------


def number_words(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """Word count (runs of letters/digits) less than / at least N."""
    reject_unknown(kwargs, frozenset({"num_words", "relation"}))
    target = require_int(kwargs, "num_words", minimum=1)
    relation = require_relation(kwargs, "relation")
    found = count_words(response)
    return verdict(compare(found, relation, target), f"{found} words, expected {relation} {target}")


def number_sentences(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """Sentence count less than / at least N (see text.split_sentences for what a sentence is)."""
    reject_unknown(kwargs, frozenset({"num_sentences", "relation"}))
    target = require_int(kwargs, "num_sentences", minimum=1)
    relation = require_relation(kwargs, "relation")
    found = count_sentences(response)
    ok = compare(found, relation, target)
    return verdict(ok, f"{found} sentences, expected {relation} {target}")


_MARKDOWN_DIVIDER = re.compile(r"\s?\*\*\*\s?")


def number_paragraphs(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """Exactly N paragraphs separated by the markdown divider ``***``, none of them empty."""
    reject_unknown(kwargs, frozenset({"num_paragraphs"}))
    expected = require_int(kwargs, "num_paragraphs", minimum=1)
    parts = _MARKDOWN_DIVIDER.split(response)
    inner_empty = [i for i, p in enumerate(parts) if not p.strip() and 0 < i < len(parts) - 1]
    if inner_empty:
        return failed(f"paragraph {inner_empty[0] + 1} between '***' dividers is empty")
    found = sum(1 for i, p in enumerate(parts) if p.strip() or 0 < i < len(parts) - 1)
    return verdict(found == expected, f"{found} '***'-separated paragraphs, expected {expected}")


_PARAGRAPH_BREAK = re.compile(r"\n\n")
_WORD_STOP = frozenset(".,?!'\"")


def nth_paragraph_first_word(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """Exactly N paragraphs (separated by a blank line) and paragraph n starts with the word."""
    reject_unknown(kwargs, frozenset({"num_paragraphs", "nth_paragraph", "first_word"}))
    expected = require_int(kwargs, "num_paragraphs", minimum=1)
    nth = require_int(kwargs, "nth_paragraph", minimum=1)
    word = require_str(kwargs, "first_word").strip().lower()
    if nth > expected:
        raise kwargs_error("nth_paragraph", f"paragraph {nth} of {expected} does not exist")
    parts = _PARAGRAPH_BREAK.split(response)
    found = sum(1 for p in parts if p.strip())
    if nth > len(parts) or not parts[nth - 1].strip():
        return failed(f"{found} blank-line paragraphs; paragraph {nth} is missing or empty")
    first = _first_word(parts[nth - 1])
    ok = found == expected and first == word
    reason = f"{found} paragraphs (expected {expected}); paragraph {nth} starts with {first!r}"
    return verdict(ok, reason + ("" if first == word else f", not {word!r}"))


def _first_word(paragraph: str) -> str:
    token = paragraph.split()[0].lstrip("'\"")
    letters: list[str] = []
    for char in token:
        if char in _WORD_STOP:
            break
        letters.append(char.lower())
    return "".join(letters)


# --- keywords ----------------------------------------------------------------------------


def existence(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """Every keyword appears (case-insensitive substring)."""
    reject_unknown(kwargs, frozenset({"keywords"}))
    keywords = require_str_list(kwargs, "keywords")
    missing = [k for k in keywords if not re.search(re.escape(k), response, re.IGNORECASE)]
    if missing:
        return failed(f"missing keywords: {missing}")
    return passed(f"all {len(keywords)} keywords present")


def forbidden_words(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """None of the words appears as a whole word (case-insensitive)."""
    reject_unknown(kwargs, frozenset({"forbidden_words"}))
    words = require_str_list(kwargs, "forbidden_words")
    used = [w for w in words if re.search(r"\b" + re.escape(w) + r"\b", response, re.IGNORECASE)]
    if used:
        return failed(f"uses forbidden words: {used}")
    return passed(f"none of {len(words)} forbidden words used")


def frequency(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """The keyword occurs (case-insensitive substring) less than / at least N times."""
    reject_unknown(kwargs, frozenset({"keyword", "frequency", "relation"}))
    keyword = require_str(kwargs, "keyword").strip()  # IFEval strips the keyword too
    target = require_int(kwargs, "frequency", minimum=1)
    relation = require_relation(kwargs, "relation")
    found = len(re.findall(re.escape(keyword), response, re.IGNORECASE))
    ok = compare(found, relation, target)
    return verdict(ok, f"{keyword!r} occurs {found} times, expected {relation} {target}")


def letter_frequency(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """The letter (case-insensitive) occurs less than / at least N times."""
    reject_unknown(kwargs, frozenset({"letter", "let_frequency", "let_relation"}))
    letter = require_str(kwargs, "letter")
    if len(letter) != 1:
        raise kwargs_error("letter", f"expected a single character, got {letter!r}")
    target = require_int(kwargs, "let_frequency", minimum=1)
    relation = require_relation(kwargs, "let_relation")
    found = response.lower().count(letter.lower())
    ok = compare(found, relation, target)
    return verdict(ok, f"{letter!r} occurs {found} times, expected {relation} {target}")


# --- change_case -------------------------------------------------------------------------


def english_lowercase(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """English, with no capital letter anywhere."""
    reject_unknown(kwargs, _NONE)
    if not response.islower():
        capitals = [c for c in response if c.isupper()][:5]
        return failed(f"has capital letters (e.g. {''.join(capitals)!r})")
    if not is_english(response):
        return failed(f"lowercase, but not English (detected {detect_language(response)})")
    return passed("all lowercase English")


def english_capital(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """English, with no lowercase letter anywhere."""
    reject_unknown(kwargs, _NONE)
    if not response.isupper():
        lower = [c for c in response if c.islower()][:5]
        return failed(f"has lowercase letters (e.g. {''.join(lower)!r})")
    if not is_english(response.lower()):
        return failed(f"all capitals, but not English (detected {detect_language(response)})")
    return passed("all capital English")


def capital_word_frequency(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """Words in all capitals occur less than / at least N times."""
    reject_unknown(kwargs, frozenset({"capital_frequency", "capital_relation"}))
    target = require_int(kwargs, "capital_frequency", minimum=0)
    relation = require_relation(kwargs, "capital_relation")
    words = capitalized_words(response)
    ok = compare(len(words), relation, target)
    sample = f" (e.g. {words[:5]})" if words else ""
    return verdict(ok, f"{len(words)} all-capital words{sample}, expected {relation} {target}")


# --- language ----------------------------------------------------------------------------


def response_language(response: str, kwargs: Mapping[str, Any], prompt: str) -> CheckResult:
    """The response is written in the language (ISO 639-1 code) asked for."""
    reject_unknown(kwargs, frozenset({"language"}))
    wanted = require_str(kwargs, "language").strip().lower()
    detected = detect_language(response)
    if detected is None:
        return failed("could not identify the language")
    return verdict(detected == wanted, f"detected {detected}, expected {wanted}")
