"""The judge protocol as data: rubric, scale, thresholds, verdict rule, output schema.

Everything here enters the protocol fingerprint (see :func:`protocol_fingerprint`), so an
experiment cycle cannot silently change its rubric or thresholds half way.

Verdict rule and how the overlapping threshold rules resolve
------------------------------------------------------------
The spec recommends ``PASS``: overall >= 7 and D1, D2 not 0; ``PARTIAL``: overall 4-6 or any
dimension 0; ``FAIL``: overall <= 3. The rules overlap, and assay applies them in this order:

1. ``FAIL`` if overall <= ``fail_max`` (default 3). FAIL wins over "any dimension 0" because on
   a 0-2 scale *every* total <= 3 has a zero dimension: if the zero rule won, FAIL could never
   happen.
2. ``PARTIAL`` if any dimension is 0 (when ``zero_caps_at_partial``, the default).
3. ``PASS`` if overall >= ``pass_min`` (default 7) and none of ``pass_requires_nonzero``
   (default D1, D2) is 0.
4. ``PARTIAL`` otherwise (overall 4-6, or a gap left by custom thresholds).

With the default thresholds steps 2 and the non-zero condition of step 3 never change an
outcome (a total >= 7 leaves no room for a 0); they matter for custom thresholds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)

from ..errors import ConfigError, describe_validation
from ..model import Seed
from ..runs import fingerprint

PROTOCOL_VERSION = 1

Verdict = Literal["PASS", "PARTIAL", "FAIL"]
VERDICTS: tuple[Verdict, ...] = ("PASS", "PARTIAL", "FAIL")
Method = Literal["cross_judge", "self_judge"]
METHODS: tuple[Method, ...] = ("cross_judge", "self_judge")

# The five flags of the spec, then assay's two documented additions.
PROTOCOL_VIOLATION = "PROTOCOL_VIOLATION"
UNPARSABLE_OUTPUT = "UNPARSABLE_OUTPUT"
INCOMPLETE_COVERAGE = "INCOMPLETE_COVERAGE"
JUDGE_REFUSAL_OR_EVASION = "JUDGE_REFUSAL_OR_EVASION"
INTERNAL_INCONSISTENCY = "INTERNAL_INCONSISTENCY"
EVIDENCE_NOT_FOUND = "EVIDENCE_NOT_FOUND"  # a quote that does not occur in the output
JUDGE_CALL_FAILED = "JUDGE_CALL_FAILED"  # the model call failed: there is no reply to judge
SPEC_FLAGS = (
    PROTOCOL_VIOLATION,
    UNPARSABLE_OUTPUT,
    INCOMPLETE_COVERAGE,
    JUDGE_REFUSAL_OR_EVASION,
    INTERNAL_INCONSISTENCY,
)
ALL_FLAGS = (*SPEC_FLAGS, EVIDENCE_NOT_FOUND, JUDGE_CALL_FAILED)

META_IDENTIFIERS = ("question_id", "prompt_variant", "target_model", "output_id")
#: The identifiers a blind judge sees only as opaque aliases.
BLIND_IDENTIFIERS = ("target_model", "output_id")

#: exact: the protocol-exact schema of each sample (judge/exact_schema.py); schema: the
#: structure-only schema (:func:`output_schema`); off: no constrained decoding.
DecodingMode = Literal["exact", "schema", "off"]
DECODING_MODES: tuple[DecodingMode, ...] = ("exact", "schema", "off")
#: The exact-schema generator (judge/exact_schema.py) and its bounds; they enter the protocol
#: fingerprint, so a run cannot mix replies decoded under different exact schemas.
EXACT_SCHEMA_SETTINGS: dict[str, str | int] = {
    "generator": "assay.judge.exact_schema/1",
    "reason_max_chars": 80,  # a brief reason: one short sentence
    "span_max_chars": 160,  # quote spans are capped at min(quote_max_chars, this)
    "max_spans": 256,  # the first this-many spans of a long output are offered
    "max_fine_alternatives": 729,  # a finer rubric with more score combinations: no exact
}


class Dimension(BaseModel):
    """One rubric dimension, scored 0-2."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str = Field(pattern=r"^[A-Z][A-Z0-9_]*$")
    label: str
    description: str


DIMENSIONS: tuple[Dimension, ...] = (
    Dimension(
        key="FORMAT_COMPLIANCE",
        label="D1 Structure / Format Compliance",
        description="Whether the output follows the required structure (e.g. Markdown/JSON "
        "template, sectioning, headings, required fields).",
    ),
    Dimension(
        key="INSTRUCTION_COMPLIANCE",
        label="D2 Instruction Compliance",
        description="Whether key constraints are followed (e.g. mandatory three-part "
        "structure, required fields, forbidden content, evidence requirements).",
    ),
    Dimension(
        key="SEMANTIC_FIDELITY",
        label="D3 Semantic Fidelity / Drift",
        description="Alignment with the task intent and prompt goal; whether task rewriting, "
        "off-topic responses, or generic advice occurs.",
    ),
    Dimension(
        key="COMPLETENESS",
        label="D4 Completeness",
        description="Whether all required components are present; missing sections, skipped "
        "items, or partial responses are penalized.",
    ),
)
DIMENSION_KEYS: tuple[str, ...] = tuple(d.key for d in DIMENSIONS)
D1, D2, D3, D4 = DIMENSION_KEYS

SCALE: dict[int, str] = {
    2: "Satisfied: clearly meets the requirement; minor flaws do not affect parsing or "
    "verification.",
    1: "Partially satisfied: noticeable deviation, but intent or partial structure remains "
    "recognizable.",
    0: "Not satisfied: the dimension fails (structure collapse, key constraints ignored, severe "
    "semantic drift, major omissions).",
}
SCORE_VALUES = (0, 1, 2)
MAX_OVERALL = 2 * len(DIMENSIONS)


class Thresholds(BaseModel):
    """Verdict thresholds, fixed for an experiment cycle (they enter the fingerprint)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    pass_min: StrictInt = Field(default=7, ge=0, le=MAX_OVERALL)
    pass_requires_nonzero: tuple[str, ...] = (D1, D2)
    fail_max: StrictInt = Field(default=3, ge=-1, le=MAX_OVERALL)
    zero_caps_at_partial: StrictBool = True

    @model_validator(mode="after")
    def _ordered(self) -> Thresholds:
        if self.fail_max >= self.pass_min:
            raise ValueError("fail_max must be below pass_min")
        unknown = set(self.pass_requires_nonzero) - set(DIMENSION_KEYS)
        if unknown:
            raise ValueError(f"pass_requires_nonzero names unknown dimensions: {sorted(unknown)}")
        return self


def verdict_for(scores: Mapping[str, int], thresholds: Thresholds) -> Verdict:
    """The verdict the thresholds give for four dimension scores (order in module docstring)."""
    overall = sum(scores[key] for key in DIMENSION_KEYS)
    if overall <= thresholds.fail_max:
        return "FAIL"
    if thresholds.zero_caps_at_partial and any(scores[key] == 0 for key in DIMENSION_KEYS):
        return "PARTIAL"
    required_nonzero = all(scores[key] != 0 for key in thresholds.pass_requires_nonzero)
    if overall >= thresholds.pass_min and required_nonzero:
        return "PASS"
    return "PARTIAL"


class FineDimension(BaseModel):
    """A dimension of a finer rubric and the D1-D4 dimension it aggregates into."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]*$")
    description: str
    maps_to: str

    @model_validator(mode="after")
    def _known_target(self) -> FineDimension:
        if self.maps_to not in DIMENSION_KEYS:
            raise ValueError(f"maps_to must be one of {list(DIMENSION_KEYS)}")
        # An evidence item names its dimension by a D1-D4 key or a fine key; a fine key spelled
        # like another D dimension would name two dimensions at once, and the reply could never
        # evidence both (every evaluation would be invalid).
        if self.key in DIMENSION_KEYS and self.key != self.maps_to:
            raise ValueError(
                f"key {self.key!r} is the name of a D1-D4 dimension but maps_to is "
                f"{self.maps_to!r}: evidence for {self.key!r} would mean both; give the fine "
                f"dimension a name of its own (or map it to {self.key})"
            )
        return self


class FinerRubric(BaseModel):
    """An optional finer rubric (e.g. 8 dimensions, each 0-2) with a declared mapping.

    The judge then also returns ``fine_scores``; each D1-D4 score must equal the aggregation
    (``min`` or ``round_mean``, halves rounded up) of the fine scores mapped onto it, or the
    evaluation is INTERNAL_INCONSISTENCY.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    dimensions: tuple[FineDimension, ...] = Field(min_length=1)
    aggregation: Literal["min", "round_mean"] = "min"

    @model_validator(mode="after")
    def _covers_every_dimension(self) -> FinerRubric:
        keys = [d.key for d in self.dimensions]
        if len(set(keys)) != len(keys):
            raise ValueError("fine dimension keys must be unique")
        missing = set(DIMENSION_KEYS) - {d.maps_to for d in self.dimensions}
        if missing:
            raise ValueError(f"no fine dimension maps onto {sorted(missing)}")
        return self

    def aggregate(self, fine_scores: Mapping[str, int]) -> dict[str, int]:
        """The D1-D4 scores that the fine scores give."""
        out: dict[str, int] = {}
        for key in DIMENSION_KEYS:
            values = [fine_scores[d.key] for d in self.dimensions if d.maps_to == key]
            if self.aggregation == "min":
                out[key] = min(values)
            else:
                out[key] = int(sum(values) / len(values) + 0.5)
        return out


class EvidencePolicy(BaseModel):
    """How evidence quotes are checked against the evaluated output.

    Both sides are normalised the same way before the search: Unicode NFKD, typographic quotes
    and dashes made plain, runs of whitespace collapsed to one space, and (``casefold``) case
    folded. An ellipsis ("..." or "…") inside a quote marks an elision: each piece must occur,
    in order.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    casefold: StrictBool = True
    unlocatable_invalidates: StrictBool = True
    long_quote_words: StrictInt = Field(default=60, ge=1)


class Protocol(BaseModel):
    """Everything that decides how a judgment is asked for and checked."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = PROTOCOL_VERSION
    thresholds: Thresholds = Thresholds()
    finer_rubric: FinerRubric | None = None
    evidence: EvidencePolicy = EvidencePolicy()
    max_evidence_items: StrictInt = Field(default=12, ge=4, le=64)
    quote_max_chars: StrictInt = Field(default=400, ge=20)
    # Blind judging: the prompt and meta carry opaque aliases of target_model and output_id.
    blind: StrictBool = True

    @property
    def fine_keys(self) -> tuple[str, ...]:
        return (
            () if self.finer_rubric is None else tuple(d.key for d in self.finer_rubric.dimensions)
        )


def load_protocol(
    data: Mapping[str, Any],
    source: str,
    line_of: Callable[[tuple[Any, ...]], int | None] | None = None,
) -> Protocol:
    """A protocol from parsed YAML/JSON settings, with a ConfigError naming the bad field
    (and its line, when ``line_of`` finds it in the settings file)."""
    try:
        return Protocol.model_validate(dict(data))
    except ValidationError as error:
        raise ConfigError(describe_validation(error, source, line_of)) from None


def output_schema(protocol: Protocol) -> dict[str, Any]:
    """The JSON schema of a judge reply (spec section 5), for constrained decoding.

    Only structure can be expressed here; the cross-field rules (overall = sum, verdict from
    thresholds, evidence per dimension, quotes that occur) are checked after decoding.
    """
    score = {"type": "integer", "enum": list(SCORE_VALUES)}
    scores_props: dict[str, Any] = {key: score for key in DIMENSION_KEYS}
    # An enum, not minimum/maximum: llama.cpp's grammar enforces enums but not numeric bounds,
    # and a weak judge otherwise writes totals like 1000000000000000.
    scores_props["overall_score"] = {"type": "integer", "enum": list(range(MAX_OVERALL + 1))}
    properties: dict[str, Any] = {
        "meta": _meta_schema(),
        "scores": _object(scores_props),
        "verdict": {"type": "string", "enum": list(VERDICTS)},
        # maxItems bounds the array in the grammar: without it a weak judge repeats one flag
        # until the token budget runs out.
        "flags": {
            "type": "array",
            "items": {"type": "string", "enum": list(SPEC_FLAGS)},
            "maxItems": len(SPEC_FLAGS),
        },
        "evidence": _evidence_schema(protocol),
        "notes": {"type": "string", "maxLength": 400},
    }
    if protocol.finer_rubric is not None:
        properties["fine_scores"] = _object({key: score for key in protocol.fine_keys})
    return _object(properties, optional=("notes",))


def _meta_schema() -> dict[str, Any]:
    props: dict[str, Any] = {key: {"type": "string"} for key in ("judge_model", *META_IDENTIFIERS)}
    props["method"] = {"type": "string", "enum": list(METHODS)}
    props["timestamp"] = {"type": "string", "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}
    return _object(props)


def _evidence_schema(protocol: Protocol) -> dict[str, Any]:
    item = _object(
        {
            "dimension": {"type": "string", "enum": list(DIMENSION_KEYS)},
            "quote": {"type": "string", "maxLength": protocol.quote_max_chars},
            "reason": {"type": "string", "maxLength": 300},
        }
    )
    return {
        "type": "array",
        "items": item,
        "minItems": len(DIMENSIONS),
        "maxItems": protocol.max_evidence_items,
    }


def _object(properties: dict[str, Any], optional: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": [key for key in properties if key not in optional],
        "additionalProperties": False,
    }


class DecodingSettings(BaseModel):
    """The judge's decoding parameters (they enter the fingerprint)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(default=1024, ge=16, le=32768)
    seed: Seed = 0
    constrained: DecodingMode = "exact"

    @field_validator("constrained", mode="before")
    @classmethod
    def _legacy_names(cls, value: Any) -> Any:
        # Runs made before exact decoding recorded "auto"/"on" for structure-only decoding.
        return "schema" if value in ("auto", "on") else value


def protocol_fingerprint(
    protocol: Protocol, decoding: DecodingSettings, prompt_templates: Mapping[str, str]
) -> str:
    """A hash of rubric, scale, thresholds, evidence policy, schema, prompts and decoding."""
    return fingerprint(
        {
            "protocol": protocol.model_dump(mode="json"),
            "rubric": [d.model_dump(mode="json") for d in DIMENSIONS],
            "scale": {str(k): v for k, v in SCALE.items()},
            "schema": output_schema(protocol),
            "exact_schema": EXACT_SCHEMA_SETTINGS,
            "prompts": dict(prompt_templates),
            "decoding": decoding.model_dump(mode="json"),
        }
    )
