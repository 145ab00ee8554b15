"""The checker table, strict/loose modes and check_response."""

from __future__ import annotations

import pytest

from assay.errors import InputError
from assay.instructions import (
    CHECKERS,
    check_one,
    check_response,
    covered_instruction_ids,
    loose_variants,
)


def test_covered_ids_have_checkers() -> None:
    covered = covered_instruction_ids()
    assert covered and set(covered) <= set(CHECKERS)
    assert "change_case:english_capital" not in covered


def test_loose_mode_forgives_a_preamble_and_markdown_stars() -> None:
    response = "Sure, here is my answer:\nno commas at all here"
    assert not check_one("punctuation:no_comma", {}, "p", response).followed
    loose = check_one("punctuation:no_comma", {}, "p", response, mode="loose")
    assert loose.followed and "without the first line" in loose.reason
    quoted = '*"wrapped"*'
    assert not check_one("startend:quotation", {}, "p", quoted).followed
    assert check_one("startend:quotation", {}, "p", quoted, mode="loose").followed


def test_loose_variants_are_the_eight_transformations() -> None:
    variants = loose_variants("a\n*b*\nc")
    assert len(variants) == 8
    assert variants[3] == "*b*" and variants[7] == "b"


def test_empty_response_follows_nothing() -> None:
    result = check_one("keywords:forbidden_words", {"forbidden_words": ["x"]}, "p", "  ")
    assert not result.followed


def test_check_response_returns_one_result_per_instruction() -> None:
    results = check_response(
        ["punctuation:no_comma", "startend:end_checker"],
        [{}, {"end_phrase": "Bye."}],
        "prompt",
        "Hello, world. Bye.",
    )
    assert [r.followed for r in results] == [False, True]
    assert all(r.covered for r in results)
    assert results[1].kwargs == {"end_phrase": "Bye."}


def test_check_response_errors_name_the_instruction_and_field() -> None:
    with pytest.raises(InputError, match=r"kwargs\[1\]\.end_phrase"):
        check_response(["punctuation:no_comma", "startend:end_checker"], [{}, {}], "p", "x")
    with pytest.raises(InputError, match="unknown instruction id") as unknown:
        check_response(["nope:nothing"], [{}], "p", "x")
    # the listing command (`instructions agreement` needs IFEval's data and prints a table)
    assert unknown.value.hint == "`assay instructions list` lists the ids assay checks"
    with pytest.raises(InputError, match="2 instruction ids but 1"):
        check_response(["punctuation:no_comma", "punctuation:no_comma"], [{}], "p", "x")
