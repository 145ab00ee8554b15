"""The critic's step of self-consistency: ask, parse, and turn findings into revision notes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ...model import CallFailure, GenerateConfig
from ..prompts import CRITIQUE_SCHEMA, critique_messages
from ..types import Claim, ClaimCheck, GroundedQARecord
from .base import Critique, PatternContext

_LISTS = ("contradictions", "missing_citations", "unsupported_claims")


def critique_config(
    context: PatternContext, *, n: int = 1, temperature: float = 0.0
) -> GenerateConfig:
    schema = CRITIQUE_SCHEMA if context.critic.backend.supports_json_schema else None
    return GenerateConfig(
        temperature=temperature,
        max_tokens=context.settings.critique_max_tokens,
        seed=context.settings.seed,
        n=n,
        json_schema=schema,
    )


async def critique(
    record: GroundedQARecord,
    samples: Sequence[str],
    selected: int,
    context: PatternContext,
    *,
    votes: int = 1,
) -> Critique:
    """``votes`` critiques (seeds ``seed..seed+votes-1``) merged: error probabilities averaged."""
    temperature = context.settings.temperature if votes > 1 else 0.0
    config = critique_config(context, n=votes, temperature=temperature)
    results = await context.critic.sample(critique_messages(record, samples, selected), config)
    parsed: list[Critique] = []
    failures: list[str] = []
    for result in results:
        outcome = (
            f"critique call: {result.describe()}"
            if isinstance(result, CallFailure)
            else parse_critique(result.text)
        )
        (failures if isinstance(outcome, str) else parsed).append(outcome)  # type: ignore[arg-type]
    return _merge(parsed, failures)


def parse_critique(text: str) -> Critique | str:
    """A critique from the critic's reply, or the reason the reply is unusable."""
    start, end = text.find("{"), text.rfind("}")
    if not 0 <= start < end:
        return "critique reply has no JSON object"
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError as error:
        return f"critique reply is not JSON ({error.msg})"
    if not isinstance(data, dict):
        return "critique reply is not a JSON object"
    probability = data.get("error_probability")
    if isinstance(probability, bool) or not isinstance(probability, int | float):
        return "critique reply has no numeric error_probability"
    if not 0.0 <= float(probability) <= 1.0:
        return f"critique error_probability {probability} is outside [0, 1]"
    return Critique(
        error_probability=float(probability),
        rationale=str(data.get("rationale", ""))[:2000],
        votes=1,
        **{key: _strings(data.get(key)) for key in _LISTS},
    )


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(str(item) for item in value if str(item).strip())


def _merge(parsed: list[Critique], failures: list[str]) -> Critique:
    if not parsed:
        return Critique(failures=tuple(failures))
    probabilities = [c.error_probability for c in parsed if c.error_probability is not None]
    first = parsed[0]
    return first.model_copy(
        update={
            "error_probability": round(sum(probabilities) / len(probabilities), 6),
            "votes": len(parsed),
            "failures": tuple(failures),
        }
    )


def critique_notes(found: Critique) -> list[ClaimCheck]:
    """The critique's findings in the form the revision prompt lists claim verdicts."""
    notes = [_note(text, "unsupported") for text in found.unsupported_claims]
    notes += [_note(text, "uncertain") for text in found.missing_citations]
    notes += [_note(text, "uncertain") for text in found.contradictions]
    return notes


def _note(text: str, label: str) -> ClaimCheck:
    return ClaimCheck.model_validate(
        {"claim": Claim(text=text), "label": label, "checker": "critique"}
    )
