"""Where an evidence quote is looked for: normalisation and in-order matching of pieces."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_TYPOGRAPHIC = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
    }
)
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\S+")
_SURROUNDING_QUOTES = ('"', "'", "`")


def normalise(text: str, *, casefold: bool = True) -> str:
    """NFKD, plain quotes and dashes, one space for any whitespace run, optionally casefolded."""
    return _normalised_with_origins(text, casefold=casefold)[0]


# A sample's output is normalised once for all its quotes (and for every candidate span of an
# exact schema), not once per quote.
@lru_cache(maxsize=32)
def _normalised_with_origins(text: str, *, casefold: bool) -> tuple[str, tuple[int, ...]]:
    """The normalised text and, for each of its characters, the index of the original one.

    Normalising one character at a time keeps the way back to the original text, so that a
    match found on normalised text can be shown in the original (the HTML report highlights
    exactly what the validator found). NFKD decomposes character by character, which NFKC's
    recomposition would not allow.
    """
    if text.isascii():
        return _ascii_normalised(text, casefold=casefold)
    return _general_normalised(text, casefold=casefold)


def _general_normalised(text: str, *, casefold: bool) -> tuple[str, tuple[int, ...]]:
    pieces: list[str] = []
    origins: list[int] = []
    in_space = True  # drops leading whitespace
    for index, char in enumerate(text):
        plain = unicodedata.normalize("NFKD", char).translate(_TYPOGRAPHIC)
        if casefold:
            plain = plain.casefold()
        for piece in plain:
            if piece.isspace():
                if in_space:
                    continue
                piece, in_space = " ", True
            else:
                in_space = False
            pieces.append(piece)
            origins.append(index)
    if pieces and pieces[-1] == " ":
        pieces.pop()
        origins.pop()
    return "".join(pieces), tuple(origins)


def _ascii_normalised(text: str, *, casefold: bool) -> tuple[str, tuple[int, ...]]:
    """The same for ASCII text, a word at a time: NFKD and the typographic map change no
    ASCII character and casefolding is lowering, so only whitespace runs collapse."""
    words: list[str] = []
    origins: list[int] = []
    previous_end = 0
    for match in _WORD.finditer(text):
        start, end = match.span()
        if words:
            origins.append(previous_end)  # a collapsed run stands at its first character
        words.append(match.group())
        origins.extend(range(start, end))
        previous_end = end
    joined = " ".join(words)
    return (joined.lower() if casefold else joined), tuple(origins)


def quote_located(quote: str, output_text: str, *, casefold: bool = True) -> bool:
    """Whether the quote occurs in the output; "..." marks skipped words (pieces in order).

    A quote with nothing but quote marks, dots and spaces is located only in an empty output.
    """
    if not _quote_pieces(quote, casefold=casefold):
        return not normalise(output_text, casefold=casefold)
    return quote_spans(quote, output_text, casefold=casefold) is not None


def quote_spans(
    quote: str, output_text: str, *, casefold: bool = True
) -> list[tuple[int, int]] | None:
    """Where each piece of the quote occurs in the original output text, or None if not found.

    The one matcher of quotes: the validator asks whether spans exist, the report marks them.
    Spans are ``(start, end)`` Python indices into ``output_text``.
    """
    pieces = _quote_pieces(quote, casefold=casefold)
    if not pieces:
        return None
    haystack, origins = _normalised_with_origins(output_text, casefold=casefold)
    spans, position = [], 0
    for piece in pieces:
        found = haystack.find(piece, position)
        if found == -1:
            return None
        position = found + len(piece)
        spans.append((origins[found], origins[position - 1] + 1))
    return spans


def _quote_pieces(quote: str, *, casefold: bool) -> list[str]:
    needle = normalise(quote, casefold=casefold)
    if len(needle) >= 2 and needle[0] == needle[-1] and needle[0] in _SURROUNDING_QUOTES:
        needle = needle[1:-1].strip()
    return [piece.strip() for piece in needle.split("...") if piece.strip()]
