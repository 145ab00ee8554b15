"""A claim checker that asks a model: ``model:<name>``.

The prompt (system message tagged ``[assay:claim_check]``) gives the claim and the evidence,
cited snippets first, and asks for JSON ``{"label": "supported"|"unsupported",
"supporting_ids": [...], "rationale": "..."}`` (constrained by a JSON schema when the backend
supports one). The model answers in two labels; ``uncertain`` comes from the probability band.

``p_supported`` (probability the claim is supported), by ``ModelCheckerConfig.probability``:

- ``logprobs`` (first choice of ``auto`` when the backend returns logprobs): at the token where
  the label's value starts, the top alternatives are read. An alternative counts for
  ``supported`` when, after the part of the token that precedes the value (e.g. a quote), its
  letters begin the word ``supported`` or begin with it; likewise for ``unsupported``.
  ``p = m_sup / (m_sup + m_uns)`` with ``m`` the summed probabilities of those alternatives.
  When only one label shows up among the top alternatives, the other's mass is at most that of
  the least likely listed alternative, ``m_min``, and that bound is used (``p = m_sup / (m_sup
  + m_min)``, or ``m_min / (m_min + m_uns)``): the least confident value the logprobs allow.
  The top alternatives of llama.cpp are taken before a schema grammar is applied, which is why
  the ratio, not the raw mass, is the probability.
- ``votes`` (``auto`` without logprobs and ``votes > 1``): ``votes`` samples (seed + i, at
  ``vote_temperature``); ``p`` = share of parsed votes saying ``supported``.
- ``stated``: no probability (``p_supported=None``), the stated label is kept.

A failed call or an unparsable reply is ``label="uncertain"`` with ``failure`` set: recorded,
never turned into supported or unsupported.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ...model import (
    CallFailure,
    ChatMessage,
    Completion,
    GenerateConfig,
    JsonSchema,
    Model,
    TokenLogprob,
    system,
    user,
)
from ..reply_object import reply_object
from ..types import Claim, ClaimCheck, ClaimLabel, Evidence, band_label

CLAIM_CHECK_TAG = "[assay:claim_check]"
BINARY_LABELS = ("supported", "unsupported")


def claim_check_schema(evidence_ids: Sequence[str]) -> JsonSchema:
    """The reply schema; supporting ids are limited to the record's evidence ids, so a
    constrained decoder cannot loop on invented ids."""
    ids: dict[str, object] = {"type": "string"}
    if evidence_ids:
        ids["enum"] = list(evidence_ids)
    return JsonSchema(
        name="claim_check",
        schema={
            "type": "object",
            "properties": {
                "label": {"type": "string", "enum": list(BINARY_LABELS)},
                "supporting_ids": {"type": "array", "items": ids, "maxItems": len(evidence_ids)},
                "rationale": {"type": "string", "maxLength": 200},
            },
            "required": ["label", "supporting_ids", "rationale"],
            "additionalProperties": False,
        },
    )


SYSTEM_PROMPT = (
    f"{CLAIM_CHECK_TAG} You check one claim against evidence snippets. The claim is "
    '"supported" only if the evidence states it or directly implies it, including every '
    'number, name and date; otherwise it is "unsupported". List the ids of the snippets that '
    "support it. Reply with JSON only: "
    '{"label": "supported" or "unsupported", "supporting_ids": ["id", ...], '
    '"rationale": "one short sentence"}'
)

_LABEL_VALUE = re.compile(r'"label"\s*:\s*"')


@dataclass(frozen=True)
class ModelCheckerConfig:
    """How the model checker asks and how it turns replies into a probability."""

    probability: Literal["auto", "logprobs", "votes", "stated"] = "auto"
    max_tokens: int = 200
    seed: int = 0
    vote_temperature: float = 0.7
    top_logprobs: int = 5
    max_evidence_chars: int = 6000
    supported_above: float = 0.6
    unsupported_below: float = 0.4


class ClaimVerdict(BaseModel):
    """One parsed reply."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: Literal["supported", "unsupported"]
    supporting_ids: tuple[str, ...] = ()
    rationale: str = ""


class ModelChecker:
    """Asks ``model`` whether each claim is supported (see the module doc)."""

    def __init__(
        self, model: Model, *, votes: int = 1, config: ModelCheckerConfig | None = None
    ) -> None:
        if votes < 1:
            raise ValueError("votes must be at least 1")
        self.model = model
        self.votes = votes
        self.config = config or ModelCheckerConfig()
        self.name = f"model:{model.name}"

    async def check(self, claim: Claim, evidence: Sequence[Evidence]) -> ClaimCheck:
        messages = claim_check_messages(claim, evidence, self.config.max_evidence_chars)
        known = [e.evidence_id for e in evidence]
        if self._mode() == "votes":
            return await self._check_by_votes(claim, messages, known)
        return await self._check_once(claim, messages, known)

    def _mode(self) -> str:
        mode = self.config.probability
        if mode != "auto":
            return mode
        if self.model.backend.supports_logprobs:
            return "logprobs"
        return "votes" if self.votes > 1 else "stated"

    def _generate_config(
        self, known: list[str], *, logprobs: bool, temperature: float
    ) -> GenerateConfig:
        schema = claim_check_schema(known) if self.model.backend.supports_json_schema else None
        return GenerateConfig(
            temperature=temperature,
            max_tokens=self.config.max_tokens,
            seed=self.config.seed,
            n=self.votes,
            logprobs=logprobs,
            top_logprobs=self.config.top_logprobs if logprobs else 0,
            json_schema=schema,
        )

    async def _check_once(
        self, claim: Claim, messages: list[ChatMessage], known: list[str]
    ) -> ClaimCheck:
        use_logprobs = self._mode() == "logprobs"
        config = self._generate_config(known, logprobs=use_logprobs, temperature=0.0)
        result = await self.model.generate(messages, config)
        if isinstance(result, CallFailure):
            return self._failed(claim, f"call failed: {result.describe()}")
        verdict = parse_completion(result)
        if isinstance(verdict, str):
            return self._failed(claim, f"unparsable reply: {verdict}")
        if not use_logprobs:
            return self._verdict(claim, verdict, known, None, "stated")
        p = label_probability(result)
        if p is None:
            failure = "no logprobs at the label token; the stated label is kept"
            return self._verdict(claim, verdict, known, None, "stated", note=failure)
        return self._verdict(claim, verdict, known, p, "logprobs")

    async def _check_by_votes(
        self, claim: Claim, messages: list[ChatMessage], known: list[str]
    ) -> ClaimCheck:
        config = self._generate_config(
            known, logprobs=False, temperature=self.config.vote_temperature
        )
        results = await self.model.sample(messages, config)
        verdicts: list[ClaimVerdict] = []
        problems: list[str] = []
        for result in results:
            if isinstance(result, CallFailure):
                problems.append(f"call failed: {result.describe()}")
                continue
            verdict = parse_completion(result)
            if isinstance(verdict, str):
                problems.append(f"unparsable reply: {verdict}")
            else:
                verdicts.append(verdict)
        if not verdicts:
            return self._failed(claim, f"no usable vote of {len(results)}: {problems[0]}")
        p = sum(v.label == "supported" for v in verdicts) / len(verdicts)
        majority = _majority(verdicts, p)
        note = f"{len(problems)} of {len(results)} votes failed" if problems else ""
        return self._verdict(claim, majority, known, p, "votes", note=note)

    def _verdict(
        self,
        claim: Claim,
        verdict: ClaimVerdict,
        known: list[str],
        p: float | None,
        source: str,
        *,
        note: str = "",
    ) -> ClaimCheck:
        supporting = tuple(i for i in verdict.supporting_ids if i in known)
        if verdict.label == "unsupported":
            supporting = ()
        rationale = verdict.rationale if not note else f"{verdict.rationale} [{note}]".strip()
        return ClaimCheck(
            claim=claim,
            label=verdict.label if p is None else self._band(p),
            p_supported=None if p is None else round(p, 6),
            probability_source=source if p is not None else "stated",
            supporting_ids=supporting,
            cited_supporting_ids=tuple(i for i in claim.cited_ids if i in supporting),
            checker=self.name,
            rationale=rationale,
        )

    def _band(self, p: float) -> ClaimLabel:
        return band_label(p, self.config.supported_above, self.config.unsupported_below)

    def _failed(self, claim: Claim, reason: str) -> ClaimCheck:
        return ClaimCheck.failed(claim, self.name, reason)


def claim_check_messages(
    claim: Claim, evidence: Sequence[Evidence], max_chars: int = 6000
) -> list[ChatMessage]:
    """The prompt: the claim, then the cited snippets, then the others (one line each)."""
    cited = [e for e in evidence if e.evidence_id in claim.cited_ids]
    others = [e for e in evidence if e.evidence_id not in claim.cited_ids]
    lines: list[str] = []
    budget = max_chars
    for item in (*cited, *others):
        line = _evidence_line(item, item in cited)[: max(budget, 0)]
        if not line:
            break
        lines.append(line)
        budget -= len(line)
    body = f"Claim: {claim.text}\n\nEvidence:\n" + "\n".join(lines)
    return [system(SYSTEM_PROMPT), user(body)]


def _evidence_line(item: Evidence, cited: bool) -> str:
    title = f"{item.title}: " if item.title else ""
    text = " ".join(f"{title}{item.text}".split())
    return f"[{item.evidence_id}]{' (cited)' if cited else ''} {text}"


def parse_completion(completion: Completion) -> ClaimVerdict | str:
    """A verdict from a completion; a reply cut at ``max_tokens`` keeps its label when the
    label was written in full (and says so in the rationale)."""
    verdict = parse_verdict(completion.text)
    if not isinstance(verdict, str) or completion.finish_reason != "length":
        return verdict
    match = re.search(r'"label"\s*:\s*"(supported|unsupported)"', completion.text)
    if match is None:
        return f"{verdict}; reply cut at max_tokens before its label"
    ids = re.search(r'"supporting_ids"\s*:\s*\[([^\]]*)\]', completion.text)
    supporting = tuple(re.findall(r'"([^"]+)"', ids.group(1))) if ids else ()
    return ClaimVerdict(
        label="supported" if match.group(1) == "supported" else "unsupported",
        supporting_ids=supporting,
        rationale="(reply cut at max_tokens; label read from the partial JSON)",
    )


def parse_verdict(text: str) -> ClaimVerdict | str:
    """A verdict from a reply, or the reason it cannot be read."""
    data = reply_object(text)
    if isinstance(data, str):
        return f"reply {data}"
    label = str(data.get("label", "")).strip().lower()
    if label not in BINARY_LABELS:
        return f"label {data.get('label')!r} is not supported/unsupported"
    ids = data.get("supporting_ids")
    supporting = tuple(str(i) for i in ids) if isinstance(ids, list) else ()
    rationale = data.get("rationale")
    return ClaimVerdict(
        label="supported" if label == "supported" else "unsupported",
        supporting_ids=supporting,
        rationale=rationale if isinstance(rationale, str) else "",
    )


def label_probability(completion: Completion) -> float | None:
    """P(supported) from the alternatives at the label's first token (see the module doc)."""
    if not completion.logprobs:
        return None
    located = _label_token(completion.logprobs)
    if located is None:
        return None
    token, prefix = located
    # the alternatives at that position, or the chosen token alone when none were returned
    pairs = [(a.token, a.logprob) for a in token.top] or [(token.token, token.logprob)]
    masses = {"supported": 0.0, "unsupported": 0.0}
    for text, logprob in pairs:
        label = _label_of_token(text, prefix)
        if label is not None:
            masses[label] += math.exp(logprob)
    floor = math.exp(min(logprob for _, logprob in pairs))
    return _p_from_masses(masses["supported"], masses["unsupported"], floor)


def _label_token(tokens: Sequence[TokenLogprob]) -> tuple[TokenLogprob, str] | None:
    """The token where the label's value starts, and its part before the value (a quote).

    Works on the concatenated token texts, so it does not rely on offsets into the reply."""
    seen = ""
    for token in tokens:
        start = len(seen)
        seen += token.token
        match = _LABEL_VALUE.search(seen)
        if match is not None and match.end() < len(seen):
            if match.end() < start:
                return None  # the value began in an earlier token: no alternatives for it
            return token, seen[start : match.end()]
    return None


def _label_of_token(token: str, prefix: str) -> str | None:
    if not token.startswith(prefix):
        return None
    letters = re.match(r"[a-z]*", token[len(prefix) :].lower())
    rest = letters.group(0) if letters else ""
    if not rest:
        return None
    for label in ("unsupported", "supported"):
        if label.startswith(rest) or rest.startswith(label):
            return label
    return None


def _p_from_masses(supported: float, unsupported: float, floor: float) -> float | None:
    """Both labels seen: their ratio. One seen: the other label was not among the top
    alternatives, so its mass is at most ``floor`` (the smallest listed); use that bound."""
    if supported <= 0 and unsupported <= 0:
        return None
    return (
        supported / (supported + unsupported)
        if supported and unsupported
        else (supported / (supported + floor) if supported else floor / (floor + unsupported))
    )


def _majority(verdicts: list[ClaimVerdict], p: float) -> ClaimVerdict:
    label = "supported" if p >= 0.5 else "unsupported"
    return next(v for v in verdicts if v.label == label)
