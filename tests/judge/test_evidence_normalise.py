"""The ASCII fast path of quote normalisation equals the character-by-character one."""

from __future__ import annotations

import random
import unicodedata

import pytest

from assay.judge import evidence


def _one_char_at_a_time(text: str, casefold: bool) -> tuple[str, tuple[int, ...]]:
    # The general path, run on ASCII text by hiding the text's ASCII-ness from the dispatcher.
    pieces, origins, in_space = [], [], True
    for index, char in enumerate(text):
        plain = unicodedata.normalize("NFKD", char).translate(evidence._TYPOGRAPHIC)
        plain = plain.casefold() if casefold else plain
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


@pytest.mark.parametrize("casefold", [True, False])
def test_ascii_fast_path_matches_the_general_one(casefold: bool) -> None:
    rng = random.Random(7)
    alphabet = "aZ9 .,-'\"\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x00~"
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        fast = evidence._ascii_normalised(text, casefold=casefold)
        assert fast == _one_char_at_a_time(text, casefold), repr(text)


def test_spans_found_on_ascii_and_unicode_outputs_point_at_the_original() -> None:
    output = "Intro line.\n\n  The   Answer is 42 \u2014 final.\nEnd"
    [(start, end)] = evidence.quote_spans("the answer is 42 - final", output) or []
    assert output[start:end] == "The   Answer is 42 \u2014 final"
    plain = "Intro line.\n\n  The   Answer is 42 - final.\nEnd"
    spans = evidence.quote_spans("the answer ... final", plain)
    assert spans is not None and [plain[a:b] for a, b in spans] == ["The   Answer", "final"]
