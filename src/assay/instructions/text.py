"""Counting words, sentences and capitalised words the way IFEval's labels count them.

IFEval counts with NLTK (a ``\\w+`` word tokenizer, the Punkt sentence splitter and the Treebank
word tokenizer). assay does not depend on NLTK; these are small rules written to give the same
counts on ordinary prose, with the differences documented in docs/instructions.md.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")

# Tokens ending in "." that do not end a sentence when followed by a name (titles).
_TITLES = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "st",
        "jr",
        "sr",
        "rev",
        "gen",
        "col",
        "capt",
        "lt",
        "sgt",
        "gov",
        "sen",
        "rep",
        "hon",
        "fr",
        "messrs",
        "mt",
        "ft",
    ]
)
# Tokens ending in "." that usually do not end a sentence; followed by a capitalised common
# word they still do (that word then starts the next sentence).
_ABBREVIATIONS = _TITLES | frozenset(
    [
        "e.g",
        "i.e",
        "etc",
        "vs",
        "viz",
        "cf",
        "approx",
        "dept",
        "est",
        "inc",
        "ltd",
        "co",
        "corp",
        "no",
        "nos",
        "vol",
        "fig",
        "figs",
        "eq",
        "al",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "mon",
        "tue",
        "wed",
        "thu",
        "fri",
        "sat",
        "sun",
        "a.m",
        "p.m",
        "u.s",
        "u.k",
        "u.n",
        "u.s.a",
        "d.c",
        "ph.d",
        "b.a",
        "m.a",
        "b.sc",
        "m.sc",
        "a.d",
        "b.c",
    ]
)
# A sentence end: terminal punctuation, optional closing quotes or brackets, then whitespace
# and the next token.
_BOUNDARY = re.compile(r"([.?!]+)([\"'”’)\]}*]*)(\s+)(?=(\S+))")
_LAST_TOKEN = re.compile(r"(\S*)$")


def count_words(text: str) -> int:
    return len(_WORD.findall(text))


def split_sentences(text: str) -> list[str]:
    """Sentences in the sense of a Punkt-like splitter: ends at . ? ! before whitespace, not at
    line breaks alone, not after known abbreviations, initials or list numbers before a
    lowercase word."""
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        if _is_break(text, match):
            sentences.append(text[start : match.end(2)])
            start = match.end(3)
    tail = text[start:]
    if tail.strip():
        sentences.append(tail)
    return [s.strip() for s in sentences if s.strip()]


def count_sentences(text: str) -> int:
    return len(split_sentences(text))


def _is_break(text: str, match: re.Match[str]) -> bool:
    punctuation, next_token = match.group(1), match.group(4)
    if "?" in punctuation or "!" in punctuation:
        return True
    before = _LAST_TOKEN.search(text, 0, match.start(1))
    token = (before.group(1) if before else "").lstrip("\"'“‘([{*").lower()
    starts_lower = next_token[:1].islower()
    if len(punctuation) > 1:  # an ellipsis ends a sentence only before a capital
        return not starts_lower
    if token in _TITLES:
        return False
    if token in _ABBREVIATIONS or _is_dotted_abbreviation(token):
        return not starts_lower
    if _is_initial(token) or token.isdigit():
        return not starts_lower
    return True


def _is_initial(token: str) -> bool:
    return len(token) == 1 and token.isalpha()


def _is_dotted_abbreviation(token: str) -> bool:
    parts = token.split(".")
    return len(parts) > 1 and all(len(p) == 1 and p.isalpha() for p in parts)


# Treebank-like word tokens: contractions split off ("I'm" -> "I", "'m"), hyphens and inner
# periods kept inside a token ("COVID-19", "U.S.").
_CASE_TOKEN = re.compile(r"[^\W_]+(?:[-.][^\W_]+)*\.?|'[^\W_]+")


def capitalized_words(text: str) -> list[str]:
    """Words written entirely in capitals (letters upper-case, at least one cased letter)."""
    return [t for t in _CASE_TOKEN.findall(text) if t.isupper()]


def split_paragraphs_blank_line(text: str) -> list[str]:
    return re.split(r"\n\s*\n", text)
