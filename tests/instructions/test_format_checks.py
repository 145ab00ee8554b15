"""detectable_format, detectable_content, startend, punctuation and combination checkers."""

from __future__ import annotations

from typing import Any

import pytest

from assay.errors import InputError
from assay.instructions import check_one


def followed(instruction_id: str, response: str, prompt: str = "p", **kwargs: Any) -> bool:
    return check_one(instruction_id, kwargs, prompt, response).followed


def test_bullet_lists_count_star_and_dash_lines_but_not_bold() -> None:
    response = "Intro\n* one\n- two\n  * three\n**Bold line**\n"
    assert followed("detectable_format:number_bullet_lists", response, num_bullets=3)
    assert not followed("detectable_format:number_bullet_lists", response, num_bullets=2)
    assert not followed("detectable_format:number_bullet_lists", "1. one\n2. two", num_bullets=2)
    # a "*" needs a character after it: a lone "*" closing the response is no bullet, and a lone
    # "*" line takes the line after it along (IFEval's pattern "^\s*\*[^\*].*$")
    assert followed("detectable_format:number_bullet_lists", "* one\n* two\n*", num_bullets=2)
    assert followed("detectable_format:number_bullet_lists", "*\n* one\n* two", num_bullets=2)


def test_constrained_response_needs_one_of_the_fixed_sentences() -> None:
    assert followed("detectable_format:constrained_response", "Well. My answer is maybe.")
    assert not followed("detectable_format:constrained_response", "My answer is: yes")


def test_json_format_accepts_a_fenced_block_and_rejects_prose() -> None:
    assert followed("detectable_format:json_format", '```json\n{"a": [1, 2]}\n```')
    assert followed("detectable_format:json_format", '  {"a": 1}  ')
    assert not followed("detectable_format:json_format", 'Here it is: {"a": 1}')
    assert followed("detectable_format:json_format", '```JSON\n{"a": 1}\n```')
    assert followed("detectable_format:json_format", '```\n{"a": 1}\n```')
    # IFEval removes only these fences; another language tag is left in front of the JSON
    assert not followed("detectable_format:json_format", '```javascript\n{"a": 1}\n```')


def test_multiple_sections_counts_numbered_headers() -> None:
    response = "SECTION 1\nfoo\nSECTION 2\nbar"
    assert followed(
        "detectable_format:multiple_sections", response, section_spliter="SECTION", num_sections=2
    )
    assert not followed(
        "detectable_format:multiple_sections", response, section_spliter="SECTION", num_sections=3
    )
    assert not followed(
        "detectable_format:multiple_sections",
        "Section one\nSection two",
        section_spliter="Section",
        num_sections=1,
    )


def test_highlighted_sections_count_italic_and_bold_but_not_empty() -> None:
    response = "*one* and **two** but ** ** and *\nbroken*"
    assert followed("detectable_format:number_highlighted_sections", response, num_highlights=2)
    assert not followed("detectable_format:number_highlighted_sections", response, num_highlights=3)


def test_title_needs_non_empty_double_angular_brackets() -> None:
    assert followed("detectable_format:title", "<<A Poem>>\nroses")
    assert not followed("detectable_format:title", "<< >>\n<A Poem>")
    assert not followed("detectable_format:title", "<<>>>\nroses")  # only brackets inside
    assert not followed("detectable_format:title", "<<<>>>\nroses")
    assert followed("detectable_format:title", "<<<A Poem>>>\nroses")


def test_placeholders_count_square_brackets() -> None:
    assert followed(
        "detectable_content:number_placeholders", "[name] at [address]", num_placeholders=2
    )
    assert not followed("detectable_content:number_placeholders", "[name]", num_placeholders=2)


@pytest.mark.parametrize(
    ("marker", "response", "expected"),
    [
        ("P.S.", "Hi.\n\nP.S. see you", True),
        ("P.S.", "Hi.\n\np.s. see you", True),
        ("P.S.", "Hi. No postscript here.", False),
        ("P.P.S", "Hi.\nP.P.S. more", True),
        ("P.P.S", "Hi.\nP.S. only one", False),
        ("Note:", "Hi.\nNote: this", True),
    ],
)
def test_postscript_markers(marker: str, response: str, expected: bool) -> None:
    assert followed("detectable_content:postscript", response, postscript_marker=marker) is expected


def test_end_checker_ignores_case_space_and_closing_quote() -> None:
    phrase = "Is there anything else I can help with?"
    assert followed(
        "startend:end_checker",
        'Text.\n"is there anything else i can help with?"\n',
        end_phrase=phrase,
    )
    assert not followed("startend:end_checker", f"{phrase} Bye.", end_phrase=phrase)


def test_quotation_wraps_whole_response() -> None:
    assert followed("startend:quotation", ' "All of it." ')
    assert not followed("startend:quotation", '"Part" of it')
    assert not followed("startend:quotation", '"')


def test_no_comma() -> None:
    assert followed("punctuation:no_comma", "No commas here.")
    assert not followed("punctuation:no_comma", "One, two")


def test_repeat_prompt_must_come_first_word_for_word() -> None:
    request = "Write a poem about cats."
    assert followed(
        "combination:repeat_prompt", "write a poem about cats. Meow.", prompt_to_repeat=request
    )
    assert not followed(
        "combination:repeat_prompt", "Sure! Write a poem about cats.", prompt_to_repeat=request
    )


def test_two_responses_must_differ_and_both_be_present() -> None:
    assert followed("combination:two_responses", "Answer A\n******\nAnswer B")
    assert not followed("combination:two_responses", "Same\n******\nSame")
    assert not followed("combination:two_responses", "Only one\n******\n")
    assert not followed("combination:two_responses", "A\n******\nB\n******\nC")


def test_bad_kwargs_are_one_input_error_naming_the_field() -> None:
    with pytest.raises(InputError, match="num_bullets"):
        check_one("detectable_format:number_bullet_lists", {"num_bullets": "3"}, "p", "x")
    with pytest.raises(InputError, match="unexpected argument"):
        check_one("punctuation:no_comma", {"extra": 1}, "p", "x")


def test_null_kwargs_from_ifeval_files_are_ignored() -> None:
    assert check_one("punctuation:no_comma", {"num_bullets": None}, "p", "x").followed
