"""The ASCII fast path of quote normalisation equals the character-by-character one."""

from __future__ import annotations

import random

import pytest

from assay.judge import evidence


@pytest.mark.parametrize("casefold", [True, False])
def test_ascii_fast_path_matches_the_general_one(casefold: bool) -> None:
    rng = random.Random(7)
    alphabet = "aZ9 .,-'\"\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x00~"
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        fast = evidence._ascii_normalised(text, casefold=casefold)
        assert fast == evidence._general_normalised(text, casefold=casefold), repr(text)


def test_spans_found_on_ascii_and_unicode_outputs_point_at_the_original() -> None:
    output = "Intro line.\n\n  The   Answer is 42 \u2014 final.\nEnd"
    [(start, end)] = evidence.quote_spans("the answer is 42 - final", output) or []
    assert output[start:end] == "The   Answer is 42 \u2014 final"
    plain = "Intro line.\n\n  The   Answer is 42 - final.\nEnd"
    spans = evidence.quote_spans("the answer ... final", plain)
    assert spans is not None and [plain[a:b] for a, b in spans] == ["The   Answer", "final"]
