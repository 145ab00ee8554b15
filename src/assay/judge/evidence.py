"""Where an evidence quote is looked for: normalisation and in-order matching of pieces."""

from __future__ import annotations

import re
import unicodedata

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
_SURROUNDING_QUOTES = ('"', "'", "`")


def normalise(text: str, *, casefold: bool = True) -> str:
    """NFKC, plain quotes and dashes, one space for any whitespace run, optionally casefolded."""
    plain = unicodedata.normalize("NFKC", text).translate(_TYPOGRAPHIC)
    plain = _SPACE.sub(" ", plain).strip()
    return plain.casefold() if casefold else plain


def quote_located(quote: str, output_text: str, *, casefold: bool = True) -> bool:
    """Whether the quote occurs in the output; "..." marks skipped words (pieces in order).

    A quote with nothing but quote marks, dots and spaces is located only in an empty output.
    """
    haystack = normalise(output_text, casefold=casefold)
    needle = normalise(quote, casefold=casefold)
    if len(needle) >= 2 and needle[0] == needle[-1] and needle[0] in _SURROUNDING_QUOTES:
        needle = needle[1:-1].strip()
    pieces = [piece.strip() for piece in needle.split("...") if piece.strip()]
    if not pieces:
        return not haystack
    position = 0
    for piece in pieces:
        found = haystack.find(piece, position)
        if found == -1:
            return False
        position = found + len(piece)
    return True
