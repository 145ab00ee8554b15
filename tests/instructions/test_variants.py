"""Small prompt changes keep every instruction checkable, on every prompt of IFEval's file."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from assay.instructions.variants import (
    PREAMBLE,
    REMINDER,
    VARIANT_KINDS,
    prompt_variants,
    protected_spans,
)
from tests.conftest import SHARED_DATA

KINDS = list(VARIANT_KINDS)


@pytest.fixture(scope="module")
def ifeval_prompts() -> list[dict[str, Any]]:
    path = SHARED_DATA / "ifeval" / "input_data.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _variants(row: dict[str, Any], kinds: list[str] = KINDS, seed: int = 0) -> dict[str, Any]:
    return prompt_variants(
        row["prompt"],
        row["instruction_id_list"],
        row["kwargs"],
        kinds,
        seed=seed,
        key=str(row["key"]),
    )


def _argument_strings(row: dict[str, Any]) -> list[str]:
    values = []
    for kwargs in row["kwargs"]:
        for value in kwargs.values():
            values += [value] if isinstance(value, str) else []
            values += [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
    return [v.strip() for v in values if v and v.strip()]


def test_every_argument_string_and_address_the_prompt_holds_is_kept_as_it_was(
    ifeval_prompts: list[dict[str, Any]],
) -> None:
    kept = 0
    for row in ifeval_prompts:
        held = [v for v in _argument_strings(row) if v in row["prompt"]]
        held += re.findall(r"https?://\S+", row["prompt"])
        for kind, text in _variants(row).items():
            if text is None:
                continue
            if VARIANT_KINDS[kind].adds_text:
                assert row["prompt"] in text
                continue
            for value in held:
                # none lost (a typo may make a new one: "keywords" -> "keyowrds" holds "yo")
                assert text.count(value) >= row["prompt"].count(value), (row["key"], kind, value)
                kept += 1
    assert kept > 1000  # the file has such strings: the check is not vacuous


def test_typos_swap_two_inner_letters_of_some_words_and_touch_nothing_else(
    ifeval_prompts: list[dict[str, Any]],
) -> None:
    changed_words = 0
    for row in ifeval_prompts:
        text = _variants(row, ["typos"])["typos"]
        assert text is not None and text != row["prompt"]
        before, after = re.split(r"(\W+)", row["prompt"]), re.split(r"(\W+)", text)
        assert len(before) == len(after)
        for old, new in zip(before, after, strict=True):
            if old == new:
                continue
            changed_words += 1
            assert old[0] == new[0] and old[-1] == new[-1] and sorted(old) == sorted(new)
            differing = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
            assert len(differing) == 2 and differing[1] == differing[0] + 1
    assert changed_words >= len(ifeval_prompts)


def _spaced(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_lowercase_and_line_breaks_change_only_case_and_the_spaces_between_sentences(
    ifeval_prompts: list[dict[str, Any]],
) -> None:
    for row in ifeval_prompts:
        variants = _variants(row, ["lowercase", "line-per-sentence"])
        lowered, broken = variants["lowercase"], variants["line-per-sentence"]
        if lowered is not None:
            assert lowered.lower() == row["prompt"].lower() and lowered != row["prompt"]
        if broken is not None:
            assert _spaced(broken) == _spaced(row["prompt"])
            assert broken.count("\n") > row["prompt"].count("\n")


def test_text_around_the_prompt_is_not_added_to_a_prompt_that_asks_to_be_repeated(
    ifeval_prompts: list[dict[str, Any]],
) -> None:
    repeats = [r for r in ifeval_prompts if "combination:repeat_prompt" in r["instruction_id_list"]]
    assert repeats
    for row in repeats:
        variants = _variants(row)
        assert variants["preamble"] is None and variants["reminder"] is None
    other = next(r for r in ifeval_prompts if r not in repeats)
    variants = _variants(other)
    assert variants["preamble"] == PREAMBLE + other["prompt"]
    assert variants["reminder"] == other["prompt"] + REMINDER


def test_variants_depend_on_seed_and_prompt_not_on_the_other_kinds_asked_for(
    ifeval_prompts: list[dict[str, Any]],
) -> None:
    row = ifeval_prompts[0]
    assert _variants(row)["typos"] == _variants(row, ["typos"])["typos"]
    assert _variants(row, seed=1)["typos"] != _variants(row)["typos"]


def test_a_protected_string_is_found_in_any_case() -> None:
    prompt = "Mark each part with Section X. Use the word BLUE twice."
    kwargs: list[dict[str, Any]] = [
        {"section_spliter": "SECTION", "num_sections": 2},
        {"keyword": "blue"},
    ]
    spans = protected_spans(prompt, kwargs)
    assert [prompt[a:b] for a, b in spans] == ["Section", "BLUE"]
    lowered = prompt_variants(prompt, ["x"], kwargs, ["lowercase"], seed=0, key="k")
    assert lowered["lowercase"] == "mark each part with Section x. use the word BLUE twice."


def test_the_documented_example_gives_what_the_page_says() -> None:
    """docs/instructions.md quotes this call's result."""
    from assay.instructions import prompt_variants as exported

    variants = exported(
        "Describe the harbour without commas.",
        ["punctuation:no_comma"],
        [{}],
        ["typos", "lowercase"],
        seed=0,
        key="1",
    )
    assert variants == {
        "typos": "Describe the habrour without commas.",
        "lowercase": "describe the harbour without commas.",
    }
