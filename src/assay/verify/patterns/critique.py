"""The critic's step of self-consistency: ask, parse, turn findings into claim findings
(for the grounding metrics) and into revision notes.

Claim findings (:func:`finding_checks`): the answer is split into claims by the rules, and
each finding of the critique (an unsupported claim, a contradiction, a missing citation) is
matched to the claim it names: the claim sharing the largest part of its words with the
finding, at least :data:`MATCH_SHARE` of the shorter of the two. A claim named by an
unsupported claim or a contradiction is ``unsupported``; every other claim is ``supported``
(the critic raised nothing against it) and its citations count as supporting. Findings that
name no claim are kept in ``Critique.unmatched_findings``. These checks carry no probability
(``probability_source = "critique"``): the answer's ``p_error`` stays the critic's stated
``error_probability``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ...data.citations import cited_ids, strip_citations
from ...model import CallFailure, GenerateConfig
from ..claims import split_claims
from ..prompts import CRITIQUE_SCHEMA, critique_messages
from ..reply_object import reply_object
from ..types import Claim, ClaimCheck, GroundedQARecord
from .base import Critique, PatternContext


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
    data = reply_object(text)
    if isinstance(data, str):
        return f"critique reply {data}"
    probability = data.get("error_probability")
    if isinstance(probability, bool) or not isinstance(probability, int | float):
        return "critique reply has no numeric error_probability"
    if not 0.0 <= float(probability) <= 1.0:
        return f"critique error_probability {probability} is outside [0, 1]"
    return Critique(
        error_probability=float(probability),
        rationale=str(data.get("rationale", ""))[:2000],
        votes=1,
        contradictions=_strings(data.get("contradictions")),
        missing_citations=_strings(data.get("missing_citations")),
        unsupported_claims=_strings(data.get("unsupported_claims")),
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


MATCH_SHARE = 0.6
_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        "a an the of in on at to for and or but is are was were be by with as that this it "
        "its from has have had",
    )
)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(strip_citations(text).lower())) - _STOPWORDS


def _match(finding: str, claims: Sequence[Claim]) -> int | None:
    """The index of the claim ``finding`` names, or None."""
    found = _words(finding)
    best, best_share = None, 0.0
    for index, claim in enumerate(claims):
        words = _words(claim.text)
        if not words or not found:
            continue
        share = len(words & found) / min(len(words), len(found))
        if share > best_share:
            best, best_share = index, share
    return best if best_share >= MATCH_SHARE else None


def finding_checks(
    claims: Sequence[Claim], found: Critique, evidence_ids: Sequence[str]
) -> tuple[tuple[ClaimCheck, ...], tuple[str, ...]]:
    """The claims labelled by the critique's findings, and the findings naming no claim."""
    against: dict[int, list[str]] = {}
    uncited: dict[int, list[str]] = {}
    unmatched: list[str] = []
    findings = [(t, against) for t in (*found.unsupported_claims, *found.contradictions)]
    findings += [(t, uncited) for t in found.missing_citations]
    for text, target in findings:
        index = _match(text, claims)
        if index is None:
            unmatched.append(text)
        else:
            target.setdefault(index, []).append(text)
    known = set(evidence_ids)
    checks = tuple(
        _finding_check(claim, against.get(i, []), uncited.get(i, []), known)
        for i, claim in enumerate(claims)
    )
    return checks, tuple(unmatched)


def _finding_check(
    claim: Claim, against: list[str], uncited: list[str], known: set[str]
) -> ClaimCheck:
    supported = not against
    cited = tuple(i for i in claim.cited_ids if i in known) if supported else ()
    notes = [f"critique: {text}" for text in (*against, *uncited)]
    return ClaimCheck(
        claim=claim,
        label="supported" if supported else "unsupported",
        probability_source="critique",
        supporting_ids=cited,
        cited_supporting_ids=cited,
        checker="critique",
        rationale="; ".join(notes) or "critique raised nothing against this claim",
    )


def answer_claims(answer: str, listed: Sequence[str]) -> list[Claim]:
    """The answer's claims by the rules (a structured citation list applies to claims that
    carry no marker of their own)."""
    claims = split_claims(answer)
    if not claims and strip_citations(answer).strip():
        claims = [Claim(text=strip_citations(answer).strip(), cited_ids=cited_ids(answer))]
    return [
        c if c.cited_ids or not listed else c.model_copy(update={"cited_ids": tuple(listed)})
        for c in claims
    ]
