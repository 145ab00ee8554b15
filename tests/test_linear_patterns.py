"""Patterns (and the judge's JSON salvage) rewritten to run in linear time match as their
definitions did.

Each pattern below was once written in a form that a long run of one kind of character (white
space, characters without a space, "[" or "<<") made quadratic: tried from every character of
the run, it rescanned the rest of the run. The rewrites take such a run from where it starts,
or scan forward once. These tests hold each rewrite to the original form, as its definition, on
random strings built from the characters that matter to it (the timings are in
benchmarks/README.md, "Long inputs in linear time").
"""

from __future__ import annotations

import random
import re
import zlib
from collections.abc import Callable

import pytest

from assay.instructions import format_checks
from assay.instructions.language import _NOT_PROSE
from assay.judge import reply_json
from assay.verify import perturb
from assay.verify.checkers import _learned_text

PIECES = ["a", "b", " ", "  ", "\n", "\t", ",", ";", "-", "—", "(", "[", "]", ".", "!", "'"]
WORDS = ["if", "when", "only if", "and", "which", "[cite:1]", "[ cite :2]", "*", "**", "```"]
TAGS = ["<<", ">>", "<", ">", "@", "<p class='x'>", "</p>", "x@y.com"]


def _random_texts(seed: int, count: int = 20000) -> list[str]:
    rng = random.Random(seed)
    alphabet = PIECES + WORDS + TAGS
    return ["".join(rng.choices(alphabet, k=rng.randint(0, 24))) for _ in range(count)]


def _spans(pattern: re.Pattern[str]) -> Callable[[str], list[tuple[int, int]]]:
    return lambda text: [m.span() for m in pattern.finditer(text)]


DEFINITIONS: dict[str, tuple[Callable[[str], object], Callable[[str], object]]] = {
    "claim sentence breaks": (
        _spans(re.compile(r"(\S*)[.!?][\"'”’)\]]*\s+(?=\S)")),
        _spans(_learned_text._CLAIM_BREAK),
    ),
    "claim piece joints": (
        re.compile(
            r"\s*[,;:()\[\]]\s*|\s+[-\u2013\u2014]+\s+"
            r"|\s+(?=(?:and|but|or|which|who|whom|whose|where|when|while|whereas|although"
            r"|though|because|since|including)\s)",
            re.IGNORECASE,
        ).split,
        _learned_text._PIECE_JOINT.split,
    ),
    "bullet count": (
        lambda t: (
            len(re.findall(r"^\s*\*[^\*].*$", t, re.MULTILINE))
            + len(re.findall(r"^\s*-.*$", t, re.MULTILINE))
        ),
        lambda t: (
            len(format_checks._STAR_BULLET.findall(t)) + len(format_checks._DASH_BULLET.findall(t))
        ),
    ),
    "JSON fence": (
        lambda t: re.sub(r"^```(?:json|JSON|Json)?\s*|\s*```$", "", t.strip()),
        lambda t: format_checks._FENCE.sub("", t.strip()),
    ),
    "titles": (
        lambda t: re.findall(r"<<([^\n]+?)>>", t),
        lambda t: list(format_checks._titles(t)),
    ),
    "placeholder count": (
        lambda t: len(re.findall(r"\[.*?\]", t)),
        lambda t: len(format_checks._PLACEHOLDER.findall(t)),
    ),
    "citation markers": (
        _spans(re.compile(r"\s*\[\s*cite\s*:[^\[\]]*\]", re.IGNORECASE)),
        _spans(perturb._MARKER_RE),
    ),
    "qualifying clause": (
        _spans(
            re.compile(
                r",?\s*\b(?:if|unless|provided that|as long as|only when|only if|except when"
                r"|when)\b[^.;,]*",
                re.IGNORECASE,
            )
        ),
        _spans(perturb._QUALIFYING_CLAUSE),
    ),
}


@pytest.mark.parametrize("name", sorted(DEFINITIONS))
def test_a_linear_rewrite_matches_as_its_definition(name: str) -> None:
    definition, rewrite = DEFINITIONS[name]
    differing = [t for t in _random_texts(zlib.crc32(name.encode())) if definition(t) != rewrite(t)]
    assert not differing, (name, differing[:3])


def test_the_language_detector_drops_the_same_letters_as_its_definition() -> None:
    """Addresses, links and tags are not language. The rewrite starts an address at a word or a
    tag's end. It keeps the same letters except where a tag with a space in it is followed,
    inside one word, by more tags or ">" before an "@" (``<p class='x'>a</p>@b``), which no
    IFEval response has; on these tag-heavy strings that is under 1%."""
    definition = re.compile(r"\S+@\S+|https?://\S+|www\.\S+|(?<!<)</?[A-Za-z][^<>\n]*>(?!>)")

    def letters(pattern: re.Pattern[str], text: str) -> list[str]:
        return [c for c in pattern.sub(" ", text) if c.isalpha()]

    texts = _random_texts(7)
    differing = [t for t in texts if letters(definition, t) != letters(_NOT_PROSE, t)]
    assert len(differing) <= len(texts) // 100, differing[:3]
    assert all(re.search(r"<[A-Za-z][^<>\n]* [^<>\n]*>", t) for t in differing)


def _objects_decoded_against_the_whole_text(text: str) -> tuple[list[object], list[object]]:
    """The judge's JSON salvage as first written: each candidate decoded against the whole
    reply, so each decode error counted the lines before it."""
    objects: list[object] = []
    spans: list[object] = []
    position = text.find("{")
    while position != -1:
        try:
            value, end = reply_json._LENIENT.raw_decode(text, position)
        except (ValueError, RecursionError):
            closing = reply_json._matching_brace(text, position)
            if closing is None:
                break
            position = text.find("{", closing + 1)
            continue
        if isinstance(value, dict):
            objects.append(value)
            spans.append((position, end))
        position = text.find("{", end)
    return objects, spans


def test_the_judge_salvages_the_same_objects_as_before() -> None:
    rng = random.Random(3)
    alphabet = ["{", "}", "[", "]", '"', "\\", ":", ",", "1", "a", " ", "\n", '"a"', "true"]
    alphabet += ['{"a": 1}', '{"b": [1, {"c": "}"}]}']
    for _ in range(20000):
        text = "".join(rng.choices(alphabet, k=rng.randint(0, 20)))
        found = reply_json._find_objects(text)
        assert (list(found[0]), list(found[1])) == _objects_decoded_against_the_whole_text(text)
