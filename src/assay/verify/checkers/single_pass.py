"""The single-pass claim check: p(supported) from one forward pass, no generated JSON.

The verifier is asked a label question ("is the claim supported? Yes or No") and answers with
one token. Its next-token distribution at that position gives the probability:

    p(supported) = P(yes) / (P(yes) + P(no))

where ``P(label)`` sums the probabilities of the listed alternatives whose text, stripped of
spaces and casefolded, is the label word (``Yes``, `` yes``, ``YES`` all count for yes).
Renormalising over the label set discards the mass on other tokens ("The", "1", ...), which a
small model spends freely.

How the probability was formed is recorded per claim (``probability_source``):

- ``next_token``: both labels were among the returned alternatives.
- ``next_token_bounded``: one label was missing (an OpenAI-compatible server returns at most
  20 alternatives). Its mass is at most that of the least likely listed alternative, and that
  bound is used: the least confident value the returned list allows.
- neither label listed: no probability; the claim is ``uncertain`` with ``failure`` saying so.

The embedded llama.cpp backend evaluates the prompt once and reports, besides the top 20, every
vocabulary token spelling a label (``logprob_tokens``), so its probability is the one of the
full next-token distribution. OpenAI-compatible servers get ``max_tokens=1, logprobs=true,
top_logprobs=20``, and the label spellings among those 20 are summed.

The prompt template and label words are a :class:`LabelTemplate`; ``assay`` is the default,
``minicheck`` is the format of Bespoke-MiniCheck-7B ("Document: ...\\nClaim: ..." answered
with one Yes/No token). Templates put the evidence before the claim, so that the claims of one
answer share a prompt prefix that an in-process backend keeps in its KV cache.

Evidence longer than ``max_evidence_chars`` is cut. ``evidence_cut="page_order"`` (the default)
keeps the snippets in record order up to the budget: the same text for every claim of a record.
``"relevance"`` keeps, for each claim, the snippets with the most IDF-weighted overlap with it
that fit (shown in record order): on WiCE's long pages it holds every annotated supporting
sentence for 83% of claims against 64% (docs/benchmarks.md), at the cost of that shared prefix.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal

from ...model import CallFailure, ChatMessage, Completion, GenerateConfig, Model, system, user
from ..types import Claim, ClaimCheck, ClaimLabel, Evidence, band_label
from ._align import evidence_index
from ._learned_text import STATISTICS_VERSION, text_stats

SINGLE_PASS_TAG = "[assay:claim_label]"
TOP_LOGPROBS = 20  # the most OpenAI-compatible servers return


@dataclass(frozen=True)
class LabelTemplate:
    """A label question: prompt texts with ``{evidence}`` and ``{claim}``, and its two labels."""

    name: str
    system: str  # empty: no system message
    user: str
    supported: str
    unsupported: str

    def messages(self, claim: Claim, evidence_text: str) -> list[ChatMessage]:
        body = self.user.format(evidence=evidence_text, claim=claim.text)
        return [system(self.system), user(body)] if self.system else [user(body)]


TEMPLATES: dict[str, LabelTemplate] = {
    "assay": LabelTemplate(
        name="assay",
        system=(
            f"{SINGLE_PASS_TAG} You check whether evidence supports a claim. Answer Yes only "
            "if the evidence states the claim or directly implies it, including every number, "
            "name and date; otherwise answer No. Answer with one word: Yes or No."
        ),
        user="Evidence:\n{evidence}\n\nClaim: {claim}\n\nIs the claim supported by the evidence?",
        supported="Yes",
        unsupported="No",
    ),
    # Bespoke-MiniCheck-7B's own format (its model card): no system prompt, Yes/No.
    "minicheck": LabelTemplate(
        name="minicheck",
        system="",
        user="Document: {evidence}\nClaim: {claim}",
        supported="Yes",
        unsupported="No",
    ),
}


EvidenceCut = Literal["page_order", "relevance"]


@dataclass(frozen=True)
class SinglePassConfig:
    template: str = "assay"
    seed: int = 0
    max_evidence_chars: int = 6000
    supported_above: float = 0.6
    unsupported_below: float = 0.4
    evidence_cut: EvidenceCut = "page_order"

    def describe(self) -> dict[str, object]:
        """Everything that decides a result, for the run's fingerprint. The default cut is left
        out, so that runs made before the option existed keep their fingerprint and resume; the
        relevance cut ranks snippets with the learned checker's text statistics, so their
        version is part of it."""
        described = {**asdict(self), "template_text": asdict(TEMPLATES[self.template])}
        if self.evidence_cut == "page_order":
            del described["evidence_cut"]
        else:
            described["relevance_statistics"] = STATISTICS_VERSION
        return described


def evidence_text(
    evidence: Sequence[Evidence],
    max_chars: int,
    claim: str = "",
    cut: EvidenceCut = "page_order",
) -> str:
    """The evidence in record order, one snippet per line, at most ``max_chars``.

    Record order (not cited-first) keeps the prompt prefix the same for every claim of a record.
    Over the budget, ``page_order`` cuts the page where the budget ends; ``relevance`` keeps
    the snippets most relevant to ``claim`` that fit whole.
    """
    if cut == "relevance":
        lines = [_evidence_line(item) for item in evidence]
        if sum(len(line) + 1 for line in lines) - 1 > max_chars:
            lines = _most_relevant(evidence, lines, max_chars, claim)
        return "\n".join(lines)
    kept: list[str] = []
    budget = max_chars
    for item in evidence:  # page order: only the lines that fit are written
        line = _evidence_line(item)[: max(budget, 0)]
        if not line:
            break
        kept.append(line)
        budget -= len(line) + 1
    return "\n".join(kept)


def _evidence_line(item: Evidence) -> str:
    title = f"{item.title}: " if item.title else ""
    return f"[{item.evidence_id}] " + " ".join(f"{title}{item.text}".split())


def _most_relevant(
    evidence: Sequence[Evidence], lines: Sequence[str], max_chars: int, claim: str
) -> list[str]:
    """The lines of the snippets with the most claim weight (the learned checker's IDF overlap
    of their best sentence) that fit in ``max_chars``, in record order. When not even the most
    relevant snippet fits, it is cut at the budget: something is always shown."""
    index = evidence_index(evidence)
    relevance: dict[str, float] = {}
    for position, score in index.sentence_scores(index.weights(text_stats(claim))).items():
        evidence_id = index.sentences[position].evidence_id
        relevance[evidence_id] = max(relevance.get(evidence_id, 0.0), score)
    ranked = sorted(range(len(lines)), key=lambda i: -relevance.get(evidence[i].evidence_id, 0.0))
    chosen: set[int] = set()
    budget = max_chars
    for i in ranked:
        cost = len(lines[i]) + (1 if chosen else 0)  # the newline before every line but the first
        if cost <= budget:
            budget -= cost
            chosen.add(i)
    if not chosen and ranked:
        return [lines[ranked[0]][:max_chars]]
    return [lines[i] for i in sorted(chosen)]


def label_mass(completion: Completion, label: str) -> tuple[float, float]:
    """(mass of ``label`` among the first token's alternatives, smallest listed probability)."""
    if not completion.logprobs:
        return 0.0, 0.0
    first = completion.logprobs[0]
    pairs = [(a.token, a.logprob) for a in first.top] or [(first.token, first.logprob)]
    wanted = label.strip().casefold()
    mass = sum(math.exp(lp) for text, lp in pairs if text.strip().casefold() == wanted)
    return mass, math.exp(min(lp for _, lp in pairs))


def next_token_probability(
    completion: Completion, supported: str, unsupported: str
) -> tuple[float | None, str]:
    """p(supported) and how it was formed (see the module doc)."""
    yes, floor = label_mass(completion, supported)
    no, _ = label_mass(completion, unsupported)
    if yes > 0 and no > 0:
        return yes / (yes + no), "next_token"
    if yes > 0:
        return yes / (yes + floor), "next_token_bounded"
    if no > 0:
        return floor / (floor + no), "next_token_bounded"
    return None, "neither label token among the returned alternatives"


class SinglePassChecker:
    """Asks ``model`` a label question per claim and reads p(supported) from one token."""

    def __init__(self, model: Model, config: SinglePassConfig | None = None) -> None:
        self.model = model
        self.config = config or SinglePassConfig()
        self.template = TEMPLATES[self.config.template]
        self.name = f"model:{model.name}"

    def generate_config(self) -> GenerateConfig:
        return GenerateConfig(
            temperature=0.0,
            max_tokens=1,
            seed=self.config.seed,
            logprobs=True,
            top_logprobs=TOP_LOGPROBS,
            logprob_tokens=(self.template.supported, self.template.unsupported),
        )

    async def check(self, claim: Claim, evidence: Sequence[Evidence]) -> ClaimCheck:
        text = evidence_text(
            evidence, self.config.max_evidence_chars, claim.text, self.config.evidence_cut
        )
        messages = self.template.messages(claim, text)
        result = await self.model.generate(messages, self.generate_config())
        if isinstance(result, CallFailure):
            return self._failed(claim, f"call failed: {result.describe()}")
        p, source = next_token_probability(
            result, self.template.supported, self.template.unsupported
        )
        if p is None:
            return self._failed(claim, f"no probability: {source} (replied {result.text!r})")
        label = self._band(p)
        # One token names no evidence: support is attributed to the snippets the claim cites.
        supporting = claim.cited_ids if label == "supported" else ()
        return ClaimCheck(
            claim=claim,
            label=label,
            p_supported=round(p, 6),
            probability_source=source,
            supporting_ids=supporting,
            cited_supporting_ids=supporting,
            checker=self.name,
            rationale=f"next token {result.text!r}; {self.template.name} template",
        )

    def _band(self, p: float) -> ClaimLabel:
        return band_label(p, self.config.supported_above, self.config.unsupported_below)

    def _failed(self, claim: Claim, reason: str) -> ClaimCheck:
        return ClaimCheck.failed(claim, self.name, reason)
