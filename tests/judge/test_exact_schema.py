"""The protocol-exact schema: every reply it admits is valid; the validator stays as strict."""

from __future__ import annotations

import copy
import json
import random
import re
import time
from typing import Any

import pytest

from assay.judge.evalset import Sample
from assay.judge.exact_schema import (
    REASON_MAX_CHARS,
    compact_json,
    exact_schema,
    quote_spans,
    score_combinations,
)
from assay.judge.protocol import (
    DIMENSION_KEYS,
    FineDimension,
    FinerRubric,
    Protocol,
    Thresholds,
    output_schema,
    verdict_for,
)
from assay.judge.validate import classify

from .helpers import META, OUTPUT_TEXT

OUTPUTS = {
    "markdown": OUTPUT_TEXT,
    "escapes": 'He said "stop" \\ then left.\tTabs\there. Café au lait — 5 €. Emoji 😀 ok!\r\nEnd',
    "long": " ".join(f"word{i}" for i in range(300)) + ". Short one.",
    "one_symbol_line": "???\n---\nfine text",
}
FINE = FinerRubric(
    dimensions=(
        FineDimension(key="layout", description="", maps_to="FORMAT_COMPLIANCE"),
        FineDimension(key="fields", description="", maps_to="FORMAT_COMPLIANCE"),
        FineDimension(key="rules", description="", maps_to="INSTRUCTION_COMPLIANCE"),
        FineDimension(key="intent", description="", maps_to="SEMANTIC_FIDELITY"),
        FineDimension(key="parts", description="", maps_to="COMPLETENESS"),
    ),
)
PROTOCOLS = {
    "default": Protocol(),
    "custom_thresholds": Protocol(
        thresholds=Thresholds(pass_min=6, fail_max=2, pass_requires_nonzero=("COMPLETENESS",))
    ),
    "fine_min": Protocol(finer_rubric=FINE),
    "fine_mean": Protocol(finer_rubric=FINE.model_copy(update={"aggregation": "round_mean"})),
}


def walk(schema: dict[str, Any], node: Any, rng: random.Random) -> Any:
    """A random instance of ``node`` (the subset of JSON Schema the exact schema uses)."""
    if "$ref" in node:
        return walk(schema, schema["$defs"][node["$ref"].rsplit("/", 1)[1]], rng)
    if "anyOf" in node:
        return walk(schema, rng.choice(node["anyOf"]), rng)
    if "const" in node:
        return copy.deepcopy(node["const"])
    if "enum" in node:
        return copy.deepcopy(rng.choice(node["enum"]))
    if node.get("type") == "object":
        assert node["additionalProperties"] is False
        return {key: walk(schema, sub, rng) for key, sub in node["properties"].items()}
    if node.get("type") == "array":
        assert node["items"] is False
        return [walk(schema, item, rng) for item in node["prefixItems"]]
    if node.get("type") == "string":
        return _random_string(node["pattern"], rng)
    raise AssertionError(f"unexpected schema node {node}")


def _random_string(pattern: str, rng: random.Random) -> str:
    """A random string of ``^[first]?[class]{low,high}$``: an optional leading character class,
    then a repeated one (the shapes the exact schema uses). Spaces are drawn often, so that
    blank and space-led strings come up whenever the pattern admits them."""
    char_class = r"\[(?:\\.|[^\]\\])*\]"  # [...] with escaped characters inside
    shape = re.fullmatch(rf"\^({char_class})?({char_class})\{{(\d+),(\d+)\}}\$", pattern)
    assert shape is not None, pattern
    first, repeated, low, high = shape.groups()

    def draw(char_class: str) -> str:
        alphabet = [chr(c) for c in range(0x20, 0x7F) if re.fullmatch(char_class, chr(c))]
        return " " if " " in alphabet and rng.random() < 0.5 else rng.choice(alphabet)

    head = draw(first) if first else ""
    return head + "".join(draw(repeated) for _ in range(rng.randint(int(low), int(high))))


@pytest.mark.parametrize("protocol_name", PROTOCOLS)
@pytest.mark.parametrize("output_name", OUTPUTS)
def test_seeded_random_walks_all_validate(protocol_name: str, output_name: str) -> None:
    protocol, output = PROTOCOLS[protocol_name], OUTPUTS[output_name]
    exact = exact_schema(protocol, META, output)
    assert exact.schema_ is not None, exact.unavailable
    rng = random.Random(f"{protocol_name}/{output_name}")
    for _ in range(200):
        reply = walk(exact.schema_, exact.schema_, rng)
        text = compact_json(reply)
        result = classify(text, META, output, protocol)
        assert result.valid, (result.problems(), text)
        assert result.warnings == ()
        assert len(text.encode()) <= exact.max_reply_bytes


def test_walks_reach_every_score_combination_and_verdict() -> None:
    exact = exact_schema(Protocol(), META, OUTPUT_TEXT)
    assert exact.schema_ is not None
    branches = exact.schema_["anyOf"]
    assert [b["properties"]["verdict"]["const"] for b in branches] == ["PASS", "PARTIAL", "FAIL"]
    admitted = []
    for branch in branches:
        for scores in branch["properties"]["scores"]["anyOf"]:
            values = {k: v["const"] for k, v in scores["properties"].items()}
            overall = values.pop("overall_score")
            assert overall == sum(values.values())
            assert verdict_for(values, Thresholds()) == branch["properties"]["verdict"]["const"]
            admitted.append(values)
    assert sorted(map(str, admitted)) == sorted(map(str, score_combinations()))
    assert len(admitted) == 81


def test_spans_are_clauses_without_escapes_capped_and_located() -> None:
    spans = quote_spans(OUTPUTS["escapes"], Protocol())
    assert spans[:3] == ("He said", "stop", "then left.")
    assert all('"' not in s and "\\" not in s and "\t" not in s for s in spans)
    assert "Café au lait — 5 €." in spans
    long_spans = quote_spans(OUTPUTS["long"], Protocol())
    assert all(len(s) <= 160 and len(s.split()) <= 60 for s in long_spans)
    assert long_spans[-1] == "Short one."
    assert quote_spans("", Protocol()) == ()


def test_no_quotable_span_means_no_exact_schema() -> None:
    exact = exact_schema(Protocol(), META, "... !!! ???")
    assert exact.schema_ is None and exact.unavailable == "the output has no quotable span"


def _valid_walk() -> dict[str, Any]:
    exact = exact_schema(Protocol(), META, OUTPUT_TEXT)
    assert exact.schema_ is not None
    reply: dict[str, Any] = walk(exact.schema_, exact.schema_, random.Random(3))
    return reply


def _flags_of(reply: dict[str, Any]) -> tuple[str, ...]:
    result = classify(compact_json(reply), META, OUTPUT_TEXT, Protocol())
    assert not result.valid
    return result.flags


def test_overall_not_the_sum_is_still_rejected() -> None:
    reply = _valid_walk()
    reply["scores"]["overall_score"] = (reply["scores"]["overall_score"] + 1) % 9
    assert "INTERNAL_INCONSISTENCY" in _flags_of(reply)


def test_quote_not_in_the_output_is_still_rejected() -> None:
    reply = _valid_walk()
    reply["evidence"][2]["quote"] = "exact excerpt"
    assert _flags_of(reply) == ("EVIDENCE_NOT_FOUND",)


def test_wrong_identifier_is_still_rejected() -> None:
    reply = _valid_walk()
    reply["meta"]["output_id"] = "output-000000000000"
    assert _flags_of(reply) == ("INCOMPLETE_COVERAGE",)


def test_verdict_off_the_thresholds_is_still_rejected() -> None:
    reply = _valid_walk()
    reply["verdict"] = next(v for v in ("PASS", "FAIL") if v != reply["verdict"])
    assert "INTERNAL_INCONSISTENCY" in _flags_of(reply)


def test_llama_cpp_grammar_is_compact_and_quick_to_build() -> None:
    pytest.importorskip("llama_cpp")
    from assay.model.providers.llamacpp import gbnf_literal, json_schema_grammar

    exact = exact_schema(Protocol(), META, OUTPUTS["escapes"])
    assert exact.schema_ is not None
    before = json.dumps(exact.schema_)
    started = time.perf_counter()
    grammar = json_schema_grammar(exact.schema_)
    assert time.perf_counter() - started < 5.0  # about 0.03 s; generous for a busy machine
    assert json.dumps(exact.schema_) == before  # the caller's schema is left as it was
    rules = dict(line.split(" ::= ", 1) for line in grammar.splitlines())
    assert rules["space"] == '""'  # no optional whitespace anywhere, none after the last }
    assert gbnf_literal('a"b\\c') == '"a\\"b\\\\c"'
    assert "\\u" not in grammar  # literals are written as UTF-8, not JSON escapes
    structure = dict(
        line.split(" ::= ", 1)
        for line in json_schema_grammar(output_schema(Protocol())).splitlines()
    )
    assert structure["space"] == '" "?'  # unmarked schemas keep the converter's one space


def test_aliases_are_stable_opaque_and_distinct() -> None:
    from assay.judge.prompts import JudgeRequest, blind_aliases

    sample = Sample(
        question_id="Q1",
        prompt_variant="A",
        target_model="openai/gpt-4",
        output_id="gpt4/Q1__A.txt",
        output_text="x",
        prompt="p",
    )
    aliases = blind_aliases(sample)
    assert aliases == blind_aliases(sample.model_copy())
    assert "gpt" not in json.dumps(aliases)
    other = blind_aliases(sample.model_copy(update={"output_id": "gpt4/Q2__A.txt"}))
    assert other["target_model"] == aliases["target_model"]
    assert other["output_id"] != aliases["output_id"]
    request = JudgeRequest(
        judge_model="j", method="cross_judge", timestamp="2026-01-01", blind=True
    )
    assert request.meta(sample)["target_model"] == aliases["target_model"]
    seen = JudgeRequest(judge_model="j", method="cross_judge", timestamp="2026-01-01")
    assert seen.meta(sample)["target_model"] == "openai/gpt-4"


def test_every_dimension_gets_evidence_in_rubric_order() -> None:
    exact = exact_schema(Protocol(), META, OUTPUT_TEXT)
    assert exact.schema_ is not None
    items = exact.schema_["$defs"]["evidence"]["prefixItems"]
    assert [item["properties"]["dimension"]["const"] for item in items] == list(DIMENSION_KEYS)
    reason = exact.schema_["$defs"]["reason"]["pattern"]
    assert re.fullmatch(reason, "x" * REASON_MAX_CHARS)
    assert not re.fullmatch(reason, "x" * (REASON_MAX_CHARS + 1))
    assert not re.fullmatch(reason, " ") and not re.fullmatch(reason, "")
    assert not re.fullmatch(reason, "<why they support this score>")  # the format example's


def _expected_structural(value: object) -> int:
    """Structural characters of a value's compact JSON, counted from the value itself."""
    if isinstance(value, dict):
        inner = sum(_expected_structural(v) for v in value.values())
        return 2 + len(value) + max(len(value) - 1, 0) + inner  # braces, colons, commas
    if isinstance(value, list):
        return 2 + max(len(value) - 1, 0) + sum(_expected_structural(v) for v in value)
    return 0


def test_structural_characters_skip_everything_inside_strings() -> None:
    import random

    from assay.judge.exact_schema import _structural_characters, compact_json

    rng = random.Random(3)
    alphabet = 'ab{}[]:,"\\\n é\u2028'

    def text() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))

    def value(depth: int) -> object:
        kind = rng.randint(0, 4 if depth < 4 else 1)
        if kind == 0:
            return text()
        if kind == 1:
            return rng.choice([0, -1.5, True, None])
        if kind in (2, 3):
            return {text(): value(depth + 1) for _ in range(rng.randint(0, 4))}
        return [value(depth + 1) for _ in range(rng.randint(0, 4))]

    for _ in range(500):
        item = value(0)
        assert _structural_characters(compact_json(item)) == _expected_structural(item)
