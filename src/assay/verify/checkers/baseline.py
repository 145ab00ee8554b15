"""The model-free baseline claim checker ``lexical``: overlap, numbers and names, negation.

The evidence is cut into sentences (a snippet's title counts as one) by the splitter the
``learned`` checker uses too (:mod:`._sentences`: the model-free checkers share one evidence
splitter, so they match a claim against the same spans). A greedy cover picks up
to :attr:`LexicalWeights.max_sentences` sentences, from any snippets, that together contain the
most of the claim (support is often spread over two or three sentences). Features:

- ``coverage``: the share of the claim's content stems and numbers found in the chosen
  sentences (capitalised names and numbers weigh :attr:`LexicalWeights.name_weight`; stems
  are crude suffix-stripped words, so "opened"/"opens" and "city"/"cities" match),
- ``missing_numbers``: numbers of the claim (digits, number words) found in no evidence at all,
- ``missing_names``: capitalised names of the claim found in no evidence at all,
- ``negation_mismatch``: 1 when the claim and the chosen sentences differ in negation parity,
- ``log_length``: ``log(1 + number of content words of the claim)``; long claims are less
  often fully supported at the same coverage.

The score is a logistic formula::

    z = bias + w_coverage * coverage - w_number * missing_numbers - w_name * missing_names
        - w_negation * negation_mismatch - w_length * log_length
    p_supported = 1 / (1 + exp(-z))

The weights were fitted once (logistic regression, each dataset and class weighted equally) on
public development data, WiCE dev and HaluEval QA; ExpertQA val was held out
(docs/verify-data.md gives the balanced accuracy reached on each).
``p_supported >= supported_above`` is ``supported``, ``<= unsupported_below`` is
``unsupported``, and the band between is ``uncertain``. The probability is a heuristic
(``probability_source="heuristic"``), roughly calibrated on that data.
``supporting_ids`` are the snippets of the chosen sentences when the claim is supported.

:data:`LEXICAL_VERSION` names the checker's behaviour; a bench run records it in its protocol,
so a run directory never mixes verdicts of two versions. ``lexical-2`` took the shared
splitter (``lexical-1`` had a near-copy of its own, which split 32 of the 43,408 evidence texts
of the imported ExpertQA, WiCE and HaluEval files differently), with the same weights.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..types import Claim, ClaimCheck, ClaimLabel, Evidence, band_label
from ._lexical import TextFeatures, features
from ._scripts import unreadable_check
from ._sentences import split_evidence

LEXICAL_VERSION = "lexical-2"


@dataclass(frozen=True)
class LexicalWeights:
    """The documented formula's constants (see the module doc)."""

    bias: float = -1.09
    w_coverage: float = 3.16
    w_number: float = 2.31
    w_name: float = 1.23
    w_negation: float = 0.25  # set by hand: the data has too few negation flips to fit it
    w_length: float = 0.39
    name_weight: float = 2.0
    max_sentences: int = 3
    supported_above: float = 0.6
    unsupported_below: float = 0.4


@dataclass(frozen=True)
class ClaimScore:
    """The features of a claim against the evidence, and its score."""

    coverage: float
    missing_numbers: int
    missing_names: int
    negation_mismatch: int
    log_length: float
    p_supported: float
    evidence_ids: tuple[str, ...]  # snippets of the covering sentences, best first


@dataclass(frozen=True)
class _Sentence:
    evidence_id: str
    features: TextFeatures


class LexicalChecker:
    """Supported / unsupported / uncertain from word overlap, numbers, names and negation."""

    name = "lexical"
    version = LEXICAL_VERSION

    def __init__(self, weights: LexicalWeights | None = None) -> None:
        self.weights = weights or LexicalWeights()

    async def check(self, claim: Claim, evidence: Sequence[Evidence]) -> ClaimCheck:
        return self.check_sync(claim, evidence)

    def check_sync(self, claim: Claim, evidence: Sequence[Evidence]) -> ClaimCheck:
        """The same verdict without the event loop (the checker does no I/O); a claim it
        cannot read (:mod:`._scripts`) is a failure with its reason."""
        if (failed := unreadable_check(claim, self.name)) is not None:
            return failed
        score = self.score(claim.text, evidence)
        label = self.label_of(score.p_supported)
        supporting = score.evidence_ids if label == "supported" else ()
        return ClaimCheck(
            claim=claim,
            label=label,
            p_supported=round(score.p_supported, 6),
            probability_source="heuristic",
            supporting_ids=supporting,
            cited_supporting_ids=tuple(i for i in claim.cited_ids if i in supporting),
            checker=self.name,
            rationale=_rationale(score),
        )

    def score(self, claim_text: str, evidence: Sequence[Evidence]) -> ClaimScore:
        claim = features(claim_text)
        sentences = _sentences(evidence)
        everything = features(" ".join(e.text for e in evidence))
        chosen, coverage = self._cover(claim, sentences)
        # the sentence that covers most of the claim decides (parity over several is noise)
        negations = sentences[chosen[0]].features.negations if chosen else 0
        w = self.weights
        missing_numbers = len(claim.numbers - everything.numbers)
        missing_names = len(claim.names - everything.stems)
        mismatch = int(claim.negations % 2 != negations % 2)
        log_length = math.log1p(len(claim.content))
        z = (
            w.bias
            + w.w_coverage * coverage
            - w.w_number * missing_numbers
            - w.w_name * missing_names
            - w.w_negation * mismatch
            - w.w_length * log_length
        )
        ids = tuple(dict.fromkeys(sentences[i].evidence_id for i in chosen))
        return ClaimScore(
            coverage, missing_numbers, missing_names, mismatch, log_length, _sigmoid(z), ids
        )

    def label_of(self, p_supported: float) -> ClaimLabel:
        return band_label(p_supported, self.weights.supported_above, self.weights.unsupported_below)

    def _cover(self, claim: TextFeatures, sentences: list[_Sentence]) -> tuple[list[int], float]:
        """Greedy: add the sentence that raises coverage most, while it still does."""
        chosen: list[int] = []
        stems: frozenset[str] = frozenset()
        numbers: frozenset[str] = frozenset()
        coverage = _coverage(claim, stems, numbers, self.weights.name_weight)
        for _ in range(self.weights.max_sentences):
            best, best_value = -1, coverage
            for index, sentence in enumerate(sentences):
                if index in chosen:
                    continue
                value = _coverage(
                    claim,
                    stems | sentence.features.stems,
                    numbers | sentence.features.numbers,
                    self.weights.name_weight,
                )
                if value > best_value + 1e-12:
                    best, best_value = index, value
            if best < 0:
                break
            chosen.append(best)
            stems |= sentences[best].features.stems
            numbers |= sentences[best].features.numbers
            coverage = best_value
        return chosen, coverage


def _sentences(evidence: Sequence[Evidence]) -> list[_Sentence]:
    out: list[_Sentence] = []
    for item in evidence:
        texts = ([item.title] if item.title else []) + (split_evidence(item.text) or [item.text])
        out.extend(_Sentence(item.evidence_id, features(t)) for t in texts)
    return out


def _coverage(
    claim: TextFeatures, stems: frozenset[str], numbers: frozenset[str], name_weight: float
) -> float:
    """Share of the claim's content stems and numbers present; names and numbers weigh more."""
    total = found = 0.0
    for word in claim.content:
        weight = name_weight if word in claim.names else 1.0
        total += weight
        found += weight if word in stems else 0.0
    for number in claim.numbers:
        total += name_weight
        found += name_weight if number in numbers else 0.0
    return found / total if total else 1.0


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


def _rationale(score: ClaimScore) -> str:
    where = ", ".join(score.evidence_ids) or "no evidence"
    parts = [f"{score.coverage:.0%} of the claim's content words found in {where}"]
    if score.missing_numbers:
        parts.append(f"{score.missing_numbers} number(s) not in any evidence")
    if score.missing_names:
        parts.append(f"{score.missing_names} name(s) not in any evidence")
    if score.negation_mismatch:
        parts.append("negation differs from the evidence")
    return "; ".join(parts)
