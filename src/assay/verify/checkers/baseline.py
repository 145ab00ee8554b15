"""The model-free baseline claim checker ``lexical``: overlap, numbers and names, negation.

For each evidence snippet, the claim is compared with every window of up to
:attr:`LexicalWeights.window` consecutive sentences. The best window gives

- ``recall``: the share of the claim's content stems and numbers found in the window (names
  and numbers count double),
- ``missing_numbers``: numbers of the claim (digits, number words, years) found in no evidence
  at all (a wrong number is the strongest single sign of an unsupported claim),
- ``missing_names``: capitalised names of the claim found in no evidence,
- ``negation_mismatch``: 1 when the claim and the window disagree on being negated.

The score is a logistic formula with fixed weights (fitted once on public development data:
WiCE dev, ExpertQA val, HaluEval; see docs/verify-data.md)::

    z = bias + w_recall * recall - w_number * missing_numbers - w_name * missing_names
        - w_negation * negation_mismatch
    p_supported = 1 / (1 + exp(-z))

``p_supported >= supported_above`` is ``supported``, ``<= unsupported_below`` is
``unsupported``, the band between is ``uncertain``. An evidence snippet whose own score is at
least ``supported_above`` is a supporting id. The probability is a heuristic
(``probability_source="heuristic"``): roughly calibrated on that data, not a model's belief.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..types import Claim, ClaimCheck, ClaimLabel, Evidence
from ._lexical import TextFeatures, features, split_sentences


@dataclass(frozen=True)
class LexicalWeights:
    """The documented formula's constants (see the module doc)."""

    bias: float = -4.0
    w_recall: float = 7.0
    w_number: float = 3.0
    w_name: float = 1.0
    w_negation: float = 1.0
    name_weight: float = 2.0
    window: int = 2
    supported_above: float = 0.6
    unsupported_below: float = 0.4


@dataclass(frozen=True)
class ClaimScore:
    """The features of a claim against one evidence window, and its score."""

    recall: float
    missing_numbers: int
    missing_names: int
    negation_mismatch: int
    p_supported: float
    window: str = ""


class LexicalChecker:
    """Supported / unsupported / uncertain from word overlap, numbers, names and negation."""

    name = "lexical"

    def __init__(self, weights: LexicalWeights | None = None) -> None:
        self.weights = weights or LexicalWeights()

    async def check(self, claim: Claim, evidence: Sequence[Evidence]) -> ClaimCheck:
        return self.check_sync(claim, evidence)

    def check_sync(self, claim: Claim, evidence: Sequence[Evidence]) -> ClaimCheck:
        """The same verdict without the event loop (the checker does no I/O)."""
        per_item = self.score_items(claim.text, evidence)
        best_id, best = max(per_item.items(), key=lambda kv: kv[1].p_supported)
        supporting = tuple(i for i, s in per_item.items() if s.p_supported >= self._above)
        label = self.label_of(best.p_supported)
        return ClaimCheck(
            claim=claim,
            label=label,
            p_supported=round(best.p_supported, 6),
            probability_source="heuristic",
            supporting_ids=supporting,
            cited_supporting_ids=tuple(i for i in claim.cited_ids if i in supporting),
            checker=self.name,
            rationale=_rationale(best_id, best),
        )

    def score_items(self, claim_text: str, evidence: Sequence[Evidence]) -> dict[str, ClaimScore]:
        """The best-window score of the claim in each evidence snippet."""
        claim = features(claim_text)
        everything = features(" ".join(e.text for e in evidence))
        missing_numbers = len(claim.numbers - everything.numbers)
        missing_names = len(claim.names - everything.stems)
        scores: dict[str, ClaimScore] = {}
        for item in evidence:
            best: ClaimScore | None = None
            for window in self._windows(item):
                score = self._score(claim, window, missing_numbers, missing_names)
                if best is None or score.p_supported > best.p_supported:
                    best = score
            scores[item.evidence_id] = best or self._score(claim, "", missing_numbers, 0)
        return scores

    def label_of(self, p_supported: float) -> ClaimLabel:
        if p_supported >= self._above:
            return "supported"
        if p_supported <= self.weights.unsupported_below:
            return "unsupported"
        return "uncertain"

    @property
    def _above(self) -> float:
        return self.weights.supported_above

    def _windows(self, item: Evidence) -> list[str]:
        text = f"{item.title}. {item.text}" if item.title else item.text
        sentences = split_sentences(text) or [text]
        size = max(1, self.weights.window)
        if len(sentences) <= size:
            return [" ".join(sentences)]
        return [" ".join(sentences[i : i + size]) for i in range(len(sentences) - size + 1)]

    def _score(
        self, claim: TextFeatures, window: str, missing_numbers: int, missing_names: int
    ) -> ClaimScore:
        seen = features(window)
        recall = _weighted_recall(claim, seen, self.weights.name_weight)
        mismatch = int((claim.negations % 2) != (seen.negations % 2))
        w = self.weights
        z = (
            w.bias
            + w.w_recall * recall
            - w.w_number * missing_numbers
            - w.w_name * missing_names
            - w.w_negation * mismatch
        )
        return ClaimScore(recall, missing_numbers, missing_names, mismatch, _sigmoid(z), window)


def _weighted_recall(claim: TextFeatures, seen: TextFeatures, name_weight: float) -> float:
    """Share of the claim's content stems and numbers in ``seen``; names and numbers weigh more."""
    total = found = 0.0
    for word in claim.content:
        weight = name_weight if word in claim.names else 1.0
        total += weight
        found += weight if word in seen.stems else 0.0
    for number in claim.numbers:
        total += name_weight
        found += name_weight if number in seen.numbers else 0.0
    return found / total if total else 1.0


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


def _rationale(evidence_id: str, score: ClaimScore) -> str:
    parts = [f"best evidence {evidence_id}: {score.recall:.0%} of content words found"]
    if score.missing_numbers:
        parts.append(f"{score.missing_numbers} number(s) not in any evidence")
    if score.missing_names:
        parts.append(f"{score.missing_names} name(s) not in any evidence")
    if score.negation_mismatch:
        parts.append("negation differs from the evidence")
    return "; ".join(parts)
