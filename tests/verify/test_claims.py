"""Claim decomposition: rules, citation attachment, model decomposer and its visible fallback."""

from __future__ import annotations

import asyncio
import json

from assay.model import ModelOptions, get_model
from assay.model.providers.stub import StubBackend
from assay.verify.claims import decompose, parse_decomposition, split_claims, split_sentences
from assay.verify.stub_replies import RESPONDERS
from assay.verify.types import Claim

NO_CACHE = ModelOptions(cache=False)  # scripted replies must not be replayed from a cache


def test_sentences_keep_markers_inside_or_right_after() -> None:
    text = "It opened in 1932 [cite:e1]. It is long. [cite:e2] Dr. Lee built it in the U.S. city."
    assert split_sentences(text) == [
        "It opened in 1932 [cite:e1].",
        "It is long [cite:e2].",
        "Dr. Lee built it in the U.S. city.",
    ]


def test_claims_carry_their_own_citations_only() -> None:
    claims = split_claims("The bridge opened in 1932 [cite:e1]. It is made of steel. Tolls: none.")
    assert claims == [
        Claim(text="The bridge opened in 1932.", cited_ids=("e1",)),
        Claim(text="It is made of steel.", cited_ids=()),
        Claim(text="Tolls: none.", cited_ids=()),
    ]


def test_clauses_split_only_when_both_sides_are_clauses() -> None:
    claims = split_claims(
        "The bridge was opened in 1932, and it was painted red in 1950 [cite:e2]; "
        "the deck carries six lanes [cite:e3]. Cats and dogs are mammals, and birds too."
    )
    assert [c.text for c in claims] == [
        "The bridge was opened in 1932.",
        "It was painted red in 1950.",
        "The deck carries six lanes.",
        "Cats and dogs are mammals, and birds too.",
    ]
    # a clause without its own marker inherits the sentence's markers
    assert [c.cited_ids for c in claims] == [("e2",), ("e2",), ("e3",), ()]


def test_decimal_numbers_and_initials_do_not_split() -> None:
    assert len(split_claims("It costs 3.5 dollars. J. R. R. Tolkien wrote it.")) == 2


def test_parse_model_reply_keeps_only_cited_ids() -> None:
    reply = json.dumps({"claims": [{"text": "A is B", "cited_ids": ["e1", "invented"]}]})
    assert parse_decomposition(reply, allowed_ids=["e1"]) == [
        Claim(text="A is B.", cited_ids=("e1",))
    ]
    assert isinstance(parse_decomposition("no json", allowed_ids=[]), str)
    assert isinstance(parse_decomposition('{"claims": []}', allowed_ids=[]), str)


def test_model_decomposition_on_stub() -> None:
    reply = json.dumps({"claims": [{"text": "The bridge opened in 1932", "cited_ids": ["e1"]}]})
    model = get_model("stub/x", NO_CACHE, backend=StubBackend("x", replies=[reply]))
    result = asyncio.run(decompose("The bridge opened in 1932 [cite:e1].", model))
    assert result.method == "model" and result.failure is None
    assert result.claims == (Claim(text="The bridge opened in 1932.", cited_ids=("e1",)),)


def test_model_failure_falls_back_visibly() -> None:
    model = get_model("stub/x", NO_CACHE, backend=StubBackend("x", replies=["I cannot do that"]))
    result = asyncio.run(decompose("It opened in 1932 [cite:e1]. It is red.", model))
    assert result.method == "rules"
    assert result.failure is not None and "no JSON object" in result.failure
    assert [c.text for c in result.claims] == ["It opened in 1932.", "It is red."]


def test_model_decomposition_on_the_default_stub_responder() -> None:
    model = get_model("stub/default", NO_CACHE.with_stub_responders(RESPONDERS))
    answer = "It opened in 1932 [cite:e1]; the deck carries six lanes [cite:e2]."
    result = asyncio.run(decompose(answer, model))
    assert result.method == "model" and result.failure is None
    assert [c.cited_ids for c in result.claims] == [("e1",), ("e2",)]
