"""Rubric, thresholds and their resolution order, finer rubric mapping, schema, fingerprint."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.judge.prompts import PROMPT_TEMPLATES
from assay.judge.protocol import (
    DIMENSION_KEYS,
    DecodingSettings,
    FineDimension,
    FinerRubric,
    Protocol,
    Thresholds,
    load_protocol,
    output_schema,
    protocol_fingerprint,
    verdict_for,
)
from assay.judge.validate import classify

from .helpers import META, OUTPUT_TEXT, dumps, valid_body


def scores(*values: int) -> dict[str, int]:
    return dict(zip(DIMENSION_KEYS, values, strict=True))


@pytest.mark.parametrize(
    ("values", "verdict"),
    [
        ((2, 2, 2, 2), "PASS"),
        ((2, 2, 2, 1), "PASS"),
        ((1, 2, 2, 2), "PASS"),
        ((2, 2, 1, 1), "PARTIAL"),  # 6
        ((1, 1, 1, 1), "PARTIAL"),  # 4
        ((2, 2, 2, 0), "PARTIAL"),  # 6 with a zero
        ((0, 1, 1, 1), "FAIL"),  # 3 with a zero: FAIL wins over "any dimension 0"
        ((0, 0, 0, 0), "FAIL"),
        ((2, 1, 0, 0), "FAIL"),
    ],
)
def test_default_verdicts(values: tuple[int, ...], verdict: str) -> None:
    assert verdict_for(scores(*values), Thresholds()) == verdict


def test_every_score_combination_gets_exactly_the_documented_verdict() -> None:
    for values in itertools.product((0, 1, 2), repeat=4):
        total = sum(values)
        expected = "FAIL" if total <= 3 else "PASS" if total >= 7 else "PARTIAL"
        assert verdict_for(scores(*values), Thresholds()) == expected


def test_custom_thresholds_use_the_zero_and_nonzero_rules() -> None:
    low_pass = Thresholds(pass_min=5, fail_max=1)
    assert verdict_for(scores(0, 2, 2, 2), low_pass) == "PARTIAL"  # zero caps at PARTIAL
    no_cap = Thresholds(pass_min=5, fail_max=1, zero_caps_at_partial=False)
    assert verdict_for(scores(2, 2, 2, 0), no_cap) == "PASS"  # D4 may be 0
    assert verdict_for(scores(0, 2, 2, 2), no_cap) == "PARTIAL"  # D1 may not
    assert verdict_for(scores(1, 0, 0, 0), no_cap) == "FAIL"


def test_thresholds_must_be_ordered_and_name_known_dimensions() -> None:
    with pytest.raises(ValueError, match="fail_max"):
        Thresholds(pass_min=4, fail_max=4)
    with pytest.raises(ValueError, match="unknown dimensions"):
        Thresholds(pass_requires_nonzero=("STYLE",))


def test_load_protocol_reports_bad_settings() -> None:
    with pytest.raises(ConfigError, match=r"p\.yaml"):
        load_protocol({"thresholds": {"pass_min": 3, "fail_max": 5}}, "p.yaml")
    assert load_protocol({"thresholds": {"pass_min": 8}}, "p").thresholds.pass_min == 8


def test_a_misspelt_protocol_key_is_named_first() -> None:
    """`dimension:` for `dimensions:` was reported first as `dimensions: Field required`."""
    settings = {"finer_rubric": {"aggregation": "min", "dimension": []}}
    with pytest.raises(ConfigError) as caught:
        load_protocol(settings, "p.yaml")
    assert str(caught.value).splitlines() == [
        "p.yaml: field 'finer_rubric.dimension': Extra inputs are not permitted",
        "error: p.yaml: field 'finer_rubric.dimensions': Field required",
    ]


def test_a_bad_item_of_a_one_item_list_is_one_problem_not_an_empty_list() -> None:
    """pydantic also reported the list as "at least 1 item after validation, not 0": a second
    error line about an empty list the file does not hold."""
    bad = {"key": "FORMAT_COMPLIANCE", "maps_to": "INSTRUCTION_COMPLIANCE", "description": "x"}
    with pytest.raises(ConfigError) as caught:
        load_protocol({"finer_rubric": {"dimensions": [bad]}}, "p.yaml")
    (line,) = str(caught.value).splitlines()
    assert line.startswith("p.yaml: field 'finer_rubric.dimensions[0]': key 'FORMAT_COMPLIANCE'")
    with pytest.raises(ConfigError, match=r"'finer_rubric.dimensions': Tuple should have at least"):
        load_protocol({"finer_rubric": {"dimensions": []}}, "p.yaml")  # empty as written


def eight_dimensions(aggregation: str = "min") -> FinerRubric:
    dims = [
        FineDimension(key=f"{key[:4]}_{j}", description="...", maps_to=key)
        for key in DIMENSION_KEYS
        for j in range(2)
    ]
    return FinerRubric(dimensions=tuple(dims), aggregation=aggregation)  # type: ignore[arg-type]


def test_finer_rubric_mapping() -> None:
    fine = {d.key: 2 for d in eight_dimensions().dimensions}
    fine["FORM_0"], fine["INST_1"] = 0, 1
    assert eight_dimensions("min").aggregate(fine) == scores(0, 1, 2, 2)
    assert eight_dimensions("round_mean").aggregate(fine) == scores(1, 2, 2, 2)  # 1.5 rounds up


def test_finer_rubric_must_cover_every_dimension() -> None:
    with pytest.raises(ValueError, match="no fine dimension maps onto"):
        FinerRubric(dimensions=(FineDimension(key="a", description="", maps_to=DIMENSION_KEYS[0]),))
    with pytest.raises(ValueError, match="maps_to"):
        FineDimension(key="a", description="", maps_to="D9")


def fine_rubric(first_key: str, first_maps_to: str) -> dict[str, object]:
    """The settings of a finer rubric whose first key and mapping are given, one fine
    dimension per D1-D4 dimension."""
    dims = [{"key": first_key, "maps_to": first_maps_to, "description": "x"}]
    dims += [
        {"key": f"FINE_{key}", "maps_to": key, "description": "x"}
        for key in DIMENSION_KEYS
        if key != first_maps_to
    ]
    return {"finer_rubric": {"dimensions": dims}}


def test_a_fine_key_named_like_another_dimension_is_refused() -> None:
    """Evidence names a dimension by a D1-D4 key or a fine key: FORMAT_COMPLIANCE mapped onto
    INSTRUCTION_COMPLIANCE would name both, and no reply could evidence D1 and D2 (every
    evaluation was invalid). Refused when the settings load, naming the entry and its key."""
    with pytest.raises(ConfigError) as caught:
        load_protocol(fine_rubric("FORMAT_COMPLIANCE", "INSTRUCTION_COMPLIANCE"), "p.yaml")
    assert str(caught.value).startswith(
        "p.yaml: field 'finer_rubric.dimensions[0]': key 'FORMAT_COMPLIANCE' is the name of a "
        "D1-D4 dimension but maps_to is 'INSTRUCTION_COMPLIANCE'"
    )


def test_a_fine_key_named_like_its_own_dimension_is_kept_and_judged_valid() -> None:
    protocol = load_protocol(fine_rubric("FORMAT_COMPLIANCE", "FORMAT_COMPLIANCE"), "p.yaml")
    body = valid_body()  # D1-D4 = 2, 1, 2, 1, evidence under the D1-D4 keys
    body["fine_scores"] = {
        "FORMAT_COMPLIANCE": 2,
        "FINE_INSTRUCTION_COMPLIANCE": 1,
        "FINE_SEMANTIC_FIDELITY": 2,
        "FINE_COMPLETENESS": 1,
    }
    outcome = classify(dumps(body), META, OUTPUT_TEXT, protocol)
    assert outcome.valid, outcome.problems()


def test_schema_describes_the_spec_format() -> None:
    schema = output_schema(Protocol())
    assert schema["required"] == ["meta", "scores", "verdict", "flags", "evidence"]
    assert schema["additionalProperties"] is False
    score_props = schema["properties"]["scores"]["properties"]
    assert set(score_props) == {*DIMENSION_KEYS, "overall_score"}
    assert score_props["COMPLETENESS"]["enum"] == [0, 1, 2]
    assert schema["properties"]["meta"]["properties"]["method"]["enum"] == [
        "cross_judge",
        "self_judge",
    ]
    assert schema["properties"]["evidence"]["minItems"] == 4
    fine = output_schema(Protocol(finer_rubric=eight_dimensions()))
    assert "fine_scores" in fine["required"]


def test_fingerprint_covers_thresholds_prompts_and_decoding() -> None:
    base = protocol_fingerprint(Protocol(), DecodingSettings(), PROMPT_TEMPLATES)
    assert base == protocol_fingerprint(Protocol(), DecodingSettings(), dict(PROMPT_TEMPLATES))
    changed = [
        protocol_fingerprint(
            Protocol(thresholds=Thresholds(pass_min=8)), DecodingSettings(), PROMPT_TEMPLATES
        ),
        protocol_fingerprint(Protocol(), DecodingSettings(max_tokens=100), PROMPT_TEMPLATES),
        protocol_fingerprint(Protocol(), DecodingSettings(temperature=0.5), PROMPT_TEMPLATES),
        protocol_fingerprint(Protocol(), DecodingSettings(), {**PROMPT_TEMPLATES, "user": "x"}),
        protocol_fingerprint(
            Protocol(finer_rubric=eight_dimensions()), DecodingSettings(), PROMPT_TEMPLATES
        ),
    ]
    assert base not in changed and len(set(changed)) == len(changed)


def test_example_protocol_file_loads() -> None:
    import yaml

    path = Path(__file__).resolve().parents[2] / "examples" / "judge" / "protocol_fine.yaml"
    protocol = load_protocol(yaml.safe_load(path.read_text()), str(path))
    assert protocol.finer_rubric is not None and len(protocol.fine_keys) == 8
    assert "fine_scores" in output_schema(protocol)["required"]
