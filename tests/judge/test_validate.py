"""Hand-written judge replies and the classification each must get; properties of classify."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.judge.evidence import normalise, quote_located
from assay.judge.protocol import (
    EVIDENCE_NOT_FOUND,
    INCOMPLETE_COVERAGE,
    INTERNAL_INCONSISTENCY,
    JUDGE_REFUSAL_OR_EVASION,
    PROTOCOL_VIOLATION,
    UNPARSABLE_OUTPUT,
    EvidencePolicy,
    FineDimension,
    FinerRubric,
    Protocol,
)
from assay.judge.validate import classify

from .helpers import META, OUTPUT_TEXT, dumps, valid_body

PV, UO, IC = PROTOCOL_VIOLATION, UNPARSABLE_OUTPUT, INCOMPLETE_COVERAGE
RE, II, EN = JUDGE_REFUSAL_OR_EVASION, INTERNAL_INCONSISTENCY, EVIDENCE_NOT_FOUND


def edited(change: Callable[[dict[str, Any]], object]) -> str:
    body = valid_body()
    change(body)
    return dumps(body)


def set_score(key: str, value: object) -> Callable[[dict[str, Any]], object]:
    return lambda b: b["scores"].__setitem__(key, value)


def set_meta(key: str, value: object) -> Callable[[dict[str, Any]], object]:
    return lambda b: b["meta"].__setitem__(key, value)


def all_twos(body: dict[str, Any]) -> None:
    for key in list(body["scores"])[:4]:
        body["scores"][key] = 2
    body["scores"]["overall_score"] = 8
    body["verdict"] = "PASS"


VALID = dumps(valid_body())

# (case id, reply, expected flags); an empty tuple means valid.
CASES: list[tuple[str, str, tuple[str, ...]]] = [
    # valid shapes
    ("valid", VALID, ()),
    ("valid, surrounding whitespace", f"\n  {VALID}\n\n", ()),
    ("valid, no notes", edited(lambda b: b.pop("notes")), ()),
    ("valid, notes null", edited(lambda b: b.__setitem__("notes", None)), ()),
    ("valid, PASS at 8", edited(all_twos), ()),
    ("valid, judge flags listed", edited(lambda b: b.__setitem__("flags", [PV])), ()),
    (
        "valid, two items for one dimension",
        edited(lambda b: b["evidence"].append(dict(b["evidence"][0], quote="chaining"))),
        (),
    ),
    (
        "valid, elided and curly-quoted quote",
        edited(lambda b: b["evidence"][0].__setitem__("quote", "“A hash map … in buckets.”")),
        (),
    ),
    (
        "valid, FAIL with zeros",
        edited(
            lambda b: b.update(
                scores={
                    "FORMAT_COMPLIANCE": 0,
                    "INSTRUCTION_COMPLIANCE": 1,
                    "SEMANTIC_FIDELITY": 1,
                    "COMPLETENESS": 1,
                    "overall_score": 3,
                },
                verdict="FAIL",
            )
        ),
        (),
    ),
    # PROTOCOL_VIOLATION
    ("prose before", "Here is my evaluation:\n" + VALID, (PV,)),
    ("prose after", VALID + "\nI hope this helps.", (PV,)),
    ("code fence", "```json\n" + VALID + "\n```", (PV,)),
    ("two objects", VALID + "\n" + VALID, (PV,)),
    # JSON's whitespace is space, tab, LF and CR only: json.loads refuses the others
    ("no-break space around", "\u00a0" + VALID + "\u3000", (PV,)),
    ("form feed after", VALID + "\x0c", (PV,)),
    ("array of one object", f"[{VALID}]", (PV,)),
    ("duplicate key (the last value wins)", VALID[:-1] + ', "verdict": "PASS"}', (PV, II)),
    ("extra top-level field", edited(lambda b: b.__setitem__("confidence", 0.9)), (PV,)),
    ("extra meta field", edited(set_meta("language", "en")), (PV,)),
    ("altered rubric", edited(set_score("CREATIVITY", 2)), (PV,)),
    (
        "altered scale 0-5",
        edited(lambda b: b["scores"].update(FORMAT_COMPLIANCE=5, overall_score=9)),
        (PV,),
    ),
    ("unknown verdict", edited(lambda b: b.__setitem__("verdict", "GOOD")), (PV,)),
    ("unknown method", edited(set_meta("method", "peer_review")), (PV,)),
    ("missing evidence for a dimension", edited(lambda b: b["evidence"].pop()), (PV,)),
    ("empty evidence list", edited(lambda b: b.__setitem__("evidence", [])), (PV,)),
    (
        "evidence for an unknown dimension",
        edited(lambda b: b["evidence"].append(dict(b["evidence"][0], dimension="STYLE"))),
        (PV,),
    ),
    # UNPARSABLE_OUTPUT
    ("truncated JSON", VALID[: len(VALID) // 2], (UO,)),
    ("prose before truncated JSON", "Here it is: " + VALID[: len(VALID) // 2], (PV, UO)),
    ("prose after a broken object", VALID.replace('"verdict"', "verdict") + " Done.", (PV, UO)),
    ("single quotes", VALID.replace('"', "'"), (UO,)),
    ("score as string", edited(set_score("COMPLETENESS", "1")), (UO,)),
    ("score as float", edited(set_score("COMPLETENESS", 1.0)), (UO,)),
    ("score as bool", edited(set_score("COMPLETENESS", True)), (UO,)),
    ("missing dimension", edited(lambda b: b["scores"].pop("COMPLETENESS")), (UO,)),
    ("missing overall", edited(lambda b: b["scores"].pop("overall_score")), (UO,)),
    ("missing flags", edited(lambda b: b.pop("flags")), (UO,)),
    ("flags not a list", edited(lambda b: b.__setitem__("flags", "none")), (UO,)),
    ("missing verdict", edited(lambda b: b.pop("verdict")), (UO,)),
    ("verdict not a string", edited(lambda b: b.__setitem__("verdict", 1)), (UO,)),
    ("notes not a string", edited(lambda b: b.__setitem__("notes", ["x"])), (UO,)),
    ("missing method", edited(lambda b: b["meta"].pop("method")), (UO,)),
    ("bad timestamp", edited(set_meta("timestamp", "yesterday")), (UO,)),
    # strict reply types (issue 14 #6): null is not a verdict or a flags list
    ("verdict null", edited(lambda b: b.__setitem__("verdict", None)), (UO,)),
    ("flags null", edited(lambda b: b.__setitem__("flags", None)), (UO,)),
    ("timestamp in full-width digits", edited(set_meta("timestamp", "２０２６-０１-０２")), (UO,)),
    ("timestamp in Arabic-Indic digits", edited(set_meta("timestamp", "٢٠٢٦-٠١-٠٢")), (UO,)),
    ("timestamp with trailing text", edited(set_meta("timestamp", "2026-01-02x")), (UO,)),
    ("timestamp not a calendar date", edited(set_meta("timestamp", "2026-13-40")), (UO,)),
    (
        "evidence item without reason",
        edited(lambda b: b["evidence"].append({"dimension": "COMPLETENESS", "quote": "x"})),
        (UO,),
    ),
    ("NaN score", VALID.replace('"COMPLETENESS": 1', '"COMPLETENESS": NaN'), (UO,)),
    # INCOMPLETE_COVERAGE
    ("wrong question id", edited(set_meta("question_id", "Q2")), (IC,)),
    ("missing output id", edited(lambda b: b["meta"].pop("output_id")), (IC,)),
    ("wrong target model", edited(set_meta("target_model", "stub/other")), (IC,)),
    ("wrong prompt variant", edited(set_meta("prompt_variant", "B")), (IC,)),
    ("wrong judge model", edited(set_meta("judge_model", "gpt-x")), (IC,)),
    ("method not matching", edited(set_meta("method", "self_judge")), (IC,)),
    ("a day other than the request's", edited(set_meta("timestamp", "2026-01-03")), (IC,)),
    ("no meta", edited(lambda b: b.pop("meta")), (UO, IC)),
    # JUDGE_REFUSAL_OR_EVASION
    ("empty reply", "", (UO, RE)),
    ("whitespace reply", "  \n ", (UO, RE)),
    ("refusal prose", "I'm sorry, but I cannot evaluate this output.", (UO, RE)),
    ("prose without JSON", "The output looks good overall.", (UO, RE)),
    (
        "refusal around an object",
        "I cannot do this properly, but: " + VALID,
        (PV, RE),
    ),
    ("off-topic object", dumps({"answer": "Paris"}), (PV, UO, IC, RE)),
    ("scores all null", edited(lambda b: b.__setitem__("scores", {})), (UO, RE)),
    # INTERNAL_INCONSISTENCY
    ("overall not the sum", edited(set_score("overall_score", 7)), (II,)),
    ("verdict not from thresholds", edited(lambda b: b.__setitem__("verdict", "PASS")), (II,)),
    (
        "FAIL overlap: total 3 with a zero is FAIL, PARTIAL is inconsistent",
        edited(
            lambda b: b.update(
                scores={
                    "FORMAT_COMPLIANCE": 0,
                    "INSTRUCTION_COMPLIANCE": 1,
                    "SEMANTIC_FIDELITY": 1,
                    "COMPLETENESS": 1,
                    "overall_score": 3,
                },
                verdict="PARTIAL",
            )
        ),
        (II,),
    ),
    # EVIDENCE_NOT_FOUND
    (
        "invented quote",
        edited(lambda b: b["evidence"][1].__setitem__("quote", "Lookup is O(log n)")),
        (EN,),
    ),
    (
        "elided pieces out of order",
        edited(lambda b: b["evidence"][1].__setitem__("quote", "chaining ... Lookup")),
        (EN,),
    ),
    (
        "empty quote in a non-empty output",
        edited(lambda b: b["evidence"].append(dict(b["evidence"][0], quote=""))),
        (EN,),
    ),
    # PROTOCOL_VIOLATION: evidence is a quote and the reason it supports the score
    (
        "empty reason",
        edited(lambda b: b["evidence"][2].__setitem__("reason", "")),
        (PV,),
    ),
    (
        "blank reason beside a located quote",
        edited(lambda b: b["evidence"][0].__setitem__("reason", " \n\t")),
        (PV,),
    ),
    (
        "reason copied from the format example",
        edited(lambda b: b["evidence"][1].__setitem__("reason", "<why they support this score>")),
        (PV,),
    ),
    (
        "reason that mentions a tag",
        edited(lambda b: b["evidence"][1].__setitem__("reason", "<b> tags, as asked")),
        (),
    ),
    # several flags at once
    (
        "fenced, wrong sum, wrong id",
        "```\n"
        + edited(lambda b: (set_score("overall_score", 1)(b), set_meta("question_id", "Q9")(b)))
        + "\n```",
        (PV, IC, II),
    ),
]


@pytest.mark.parametrize(("reply", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_classification_table(reply: str, expected: tuple[str, ...]) -> None:
    result = classify(reply, META, OUTPUT_TEXT, Protocol())
    assert result.flags == expected, result.problems()
    assert result.valid == (not expected)
    fired = {check.flag for check in result.failed_checks}
    assert fired == set(expected)
    if result.valid:
        assert result.scores is not None and result.verdict is not None
    else:
        assert result.scores is None and result.verdict is None and result.overall_score is None


def test_salvaged_object_is_recorded_but_invalid() -> None:
    result = classify("Sure!\n```json\n" + VALID + "\n```", META, OUTPUT_TEXT, Protocol())
    assert result.parse == "salvaged"
    assert result.parsed == json.loads(VALID)
    assert not result.valid and result.scores is None
    assert {c.name for c in result.failed_checks} == {"no_code_fences", "no_text_outside_object"}


def test_several_objects_counted() -> None:
    result = classify(VALID + VALID + VALID, META, OUTPUT_TEXT, Protocol())
    assert result.objects_found == 3 and PV in result.flags


def test_unlocatable_quote_can_be_recorded_without_invalidating() -> None:
    lenient = Protocol(evidence=EvidencePolicy(unlocatable_invalidates=False))
    reply = edited(lambda b: b["evidence"][1].__setitem__("quote", "not in the output"))
    result = classify(reply, META, OUTPUT_TEXT, lenient)
    assert result.valid and result.flags == (EN,)
    assert [item.located for item in result.evidence] == [True, False, True, True]


def test_casefold_is_a_policy() -> None:
    strict = Protocol(evidence=EvidencePolicy(casefold=False))
    reply = edited(lambda b: b["evidence"][0].__setitem__("quote", "## SUMMARY"))
    assert classify(reply, META, OUTPUT_TEXT, Protocol()).valid
    assert classify(reply, META, OUTPUT_TEXT, strict).flags == (EN,)


def test_empty_output_accepts_only_empty_quotes() -> None:
    body = valid_body()
    body["scores"] = dict.fromkeys(body["scores"], 0)
    body["verdict"] = "FAIL"
    for item in body["evidence"]:
        item["quote"] = ""
    assert classify(dumps(body), META, "", Protocol()).valid
    body["evidence"][0]["quote"] = "## Summary"
    assert classify(dumps(body), META, "", Protocol()).flags == (EN,)


def test_long_quote_is_a_warning() -> None:
    text = " ".join(f"w{i}" for i in range(100))
    reply = edited(lambda b: b["evidence"][0].__setitem__("quote", text))
    result = classify(reply, META, OUTPUT_TEXT + " " + text, Protocol())
    assert result.valid and any("long quote" in w for w in result.warnings)


def finer_protocol() -> Protocol:
    keys = ("FORMAT_COMPLIANCE", "INSTRUCTION_COMPLIANCE", "SEMANTIC_FIDELITY", "COMPLETENESS")
    dims = [
        FineDimension(key=f"F{i}{j}", description=f"part {j} of {key}", maps_to=key)
        for i, key in enumerate(keys)
        for j in range(2)
    ]
    return Protocol(finer_rubric=FinerRubric(dimensions=tuple(dims), aggregation="min"))


def test_finer_rubric_scores_must_aggregate() -> None:
    body = valid_body()  # D = 2, 1, 2, 1
    body["fine_scores"] = {
        "F00": 2,
        "F01": 2,
        "F10": 1,
        "F11": 2,
        "F20": 2,
        "F21": 2,
        "F30": 1,
        "F31": 1,
    }
    assert classify(dumps(body), META, OUTPUT_TEXT, finer_protocol()).valid
    body["fine_scores"]["F00"] = 0  # min gives D1 = 0 but D1 says 2
    assert classify(dumps(body), META, OUTPUT_TEXT, finer_protocol()).flags == (II,)
    body.pop("fine_scores")
    assert classify(dumps(body), META, OUTPUT_TEXT, finer_protocol()).flags == (UO,)
    # without a finer rubric, fine_scores is an unknown field
    body["fine_scores"] = {"F00": 2}
    assert classify(dumps(body), META, OUTPUT_TEXT, Protocol()).flags == (PV,)


@pytest.mark.parametrize(
    ("quote", "located"),
    [
        ("key-value pairs", True),  # en dash in the output
        ("KEY–VALUE   PAIRS", True),
        ("'Lookup is O(1)'", True),
        ("A hash map ... buckets", True),
        ("buckets ... A hash map", False),
        ("...", False),
        ("O(1) on average. - Collisions", True),  # whitespace and newlines collapse
        ("O(2)", False),
    ],
)
def test_quote_location(quote: str, located: bool) -> None:
    assert quote_located(quote, OUTPUT_TEXT) is located


def test_normalise_nfkc_and_whitespace() -> None:
    assert normalise("ﬁne\u00a0\u2003text\n", casefold=False) == "fine text"


# ---------------------------------------------------------------- properties

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 10) | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=20,
)


def mutate(body: dict[str, Any], path: list[str], value: Any) -> dict[str, Any]:
    node: Any = body
    for key in path[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            return body
    node[path[-1]] = value
    return body


FIELDS = [
    ["meta"],
    ["scores"],
    ["verdict"],
    ["flags"],
    ["evidence"],
    ["notes"],
    ["meta", "method"],
    ["meta", "question_id"],
    ["scores", "COMPLETENESS"],
    ["scores", "overall_score"],
    ["extra"],
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400), st.text(max_size=80))
def test_classify_never_raises_on_any_text(reply: str, output: str) -> None:
    result = classify(reply, META, output, Protocol())
    assert result.valid == (not result.flags)
    assert "validator_internal_error" not in {c.name for c in result.checks}


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(FIELDS), json_values, st.sampled_from(["", "x ", "```\n"]))
def test_classify_always_classifies_mutated_replies(
    path: list[str], value: Any, prefix: str
) -> None:
    reply = prefix + dumps(mutate(valid_body(), path, value))
    result = classify(reply, META, OUTPUT_TEXT, Protocol())
    assert result.valid == (not result.flags)
    assert "validator_internal_error" not in {c.name for c in result.checks}
    if result.valid:
        assert result.scores is not None
        assert result.overall_score == sum(result.scores.values())


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=10), json_values, max_size=6))
def test_classify_arbitrary_objects(obj: dict[str, Any]) -> None:
    result = classify(dumps(obj), META, OUTPUT_TEXT, Protocol())
    assert not result.valid  # no arbitrary object carries the sample's identifiers
    assert result.flags
