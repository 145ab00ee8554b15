"""The learned model-free claim checker ``learned``: a logistic regression over IDF-weighted
lexical features of a claim against its evidence, with a calibration map.

No model is called. The evidence of a record is indexed once (:mod:`._align`: sentences,
document frequencies, postings). Each sentence of a claim is compared with all the evidence
(IDF-weighted recall, with a word's WordNet synonyms counting as found (:mod:`._synonyms`),
bigrams, missing numbers and names, the heaviest missing item, the claim's missing tail, its
heaviest words in one sentence; the names in :data:`FEATURE_NAMES`, computed by
:func:`claim_vectors`) and aligned to its best *window*
(one evidence sentence or two adjacent ones, the SummaC zero-shot way), which gives the
negation check, the supporting ids and the explanation. (Recall against the window alone ranked
as well but transferred worse between datasets: docs/learned-checker.md.) A logistic regression
whose weights ship in ``learned_weights.json`` (a few KB, loaded with :mod:`importlib.resources`)
and a Platt map turn them into ``p_supported``::

    z = bias + sum_i coef_i * (feature_i - mean_i) / scale_i
    p_supported = 1 / (1 + exp(-(a * z + b)))       (probability_source = "learned")

A claim of several sentences gets its weakest sentence's probability: appending true filler
to a false claim cannot raise it (the padding attack of arXiv 2411.16638).

Labels: ``p_supported >= upper`` is ``supported``, ``<= lower`` is ``unsupported``, and the band
in between (from the weights file) is ``uncertain``. Each check keeps the evidence window it
matched, the features that moved its score most and the claim's words the evidence lacks
(:attr:`ClaimCheck.evidence_window`, :attr:`ClaimCheck.deciding_features`,
:attr:`ClaimCheck.missing_words`).

The weights and the Platt map are trained by ``scripts/train_learned_checker.py`` on public
data in ``../shared/data`` only, deterministically; the probability speaks for a 50/50 prior
(classes are balanced in training). :data:`CHECKER_VERSION` names the feature definition and
weights, and runs record it.
"""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources

from ..types import Claim, ClaimCheck, ClaimLabel, Evidence
from ._align import EMPTY_WINDOW, EvidenceIndex, Window, evidence_index
from ._learned_text import (
    CAP,
    TextStats,
    claim_pieces,
    split_claim_sentences,
    surface_words,
    text_stats,
)
from ._scripts import unreadable_check
from ._synonyms import forms_in, synonym_in

# learned-1: whole-page greedy cover, no IDF, no calibration; learned-2: the features below
# with the first stemmer; learned-3: stems that meet across inflections (line/lines,
# take/taking), teens and tens as numbers, "two thousand" / "1.2 million" as one number;
# learned-4: the same, plus the heaviest item of a missing tail (missing_tail_max); learned-5:
# the same features, with demonyms read as their country and the discourse words of generated
# answers ("additionally", "crucial") read as stopwords; learned-6: the same, with a day and
# its month read as one number item ("May 19" = "19th of May" = ``#5/19``); learned-7: WordNet
# first-sense synonyms count as found in idf_recall_all and synonym_missing_max, and two
# features ask how much of a claim's end is missing and whether its words stand together;
# learned-8: the same, with synonyms counting as found in the missing tail too; learned-9: the
# same features, and each claim sentence also scored without the runs of it that one evidence
# window holds whole (true filler joined into a sentence is taken out again); learned-10: the
# same, but the sentence without its copied runs is scored only when what remains holds a name
# or a number (a generated answer's own framing around a copied source sentence is not judged).
CHECKER_VERSION = "learned-10"
WEIGHTS_FILE = "learned_weights.json"
FEATURE_NAMES: tuple[str, ...] = (
    "idf_recall_all",
    "bigram_recall_all",
    "numbers_missing_all_frac",
    "has_numbers",
    "names_missing_all_frac",
    "names_missing_all",
    "negation_mismatch",
    "missing_weight_max",
    "missing_tail_max",
    "synonym_missing_max",
    "missing_tail_count",
    "pairs_in_one_sentence",
)
PAIRED_ITEMS = 6  # pairs_in_one_sentence looks at the claim's heaviest found items only
DECIDING = 4  # features kept in a check's explanation
MISSING_SHOWN = 5  # missing claim words kept in a check's explanation, heaviest first
# A run of a claim sentence's pieces that one evidence window holds whole is left out when it
# has at least this many content items (a copied name or date stays: docs/learned-checker.md).
COPIED_RUN_ITEMS = 5
COPIED_SHOWN = 80  # characters of a left-out run quoted in a check's explanation


@dataclass(frozen=True)
class FeatureVector:
    """The features of one claim sentence against some evidence, and its best window."""

    values: tuple[float, ...]
    windows: tuple[Window, ...]  # the best window first, then those adding what it lacks
    # claim items the evidence has only as a synonym, each with the evidence's word for it
    synonyms: tuple[tuple[str, str], ...] = ()
    # claim items the evidence lacks even as a synonym, heaviest first (at most MISSING_SHOWN)
    missing: tuple[str, ...] = ()
    # the pieces left out of the sentence because one evidence window holds them whole
    copied_out: tuple[str, ...] = ()

    @property
    def window(self) -> Window:
        return self.windows[0] if self.windows else EMPTY_WINDOW

    @property
    def cover_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(i for w in self.windows for i in w.evidence_ids))


def claim_vectors(claim_text: str, evidence: Sequence[Evidence]) -> tuple[FeatureVector, ...]:
    """One :class:`FeatureVector` per sentence of ``claim_text`` (at least one), and one more for
    each sentence that holds a copied run (:func:`without_copied_runs`): the sentence without it,
    when that still names something (a name or a number). The weakest decides, so true filler
    joined into a sentence (", which ...", "(...)") cannot raise a false statement about a name or
    a number, as filler in a sentence of its own cannot raise any. A remainder without one is
    usually the answer's own framing around a copied source sentence ("Despite these efforts"),
    and judging it alone flagged grounded generated answers (docs/learned-checker.md, twelfth
    round)."""
    index = evidence_index(evidence)
    parts = [p for p in split_claim_sentences(claim_text) if text_stats(p).items] or [claim_text]
    vectors = [_vector(text_stats(p), index) for p in parts]
    for part in parts:
        pieces = claim_pieces(part)
        kept = without_copied_runs(pieces, index)
        rest = text_stats(" ".join(kept))
        if len(kept) < len(pieces) and _judged_alone(rest):
            copied = tuple(p for p in pieces if p not in kept)
            vectors.append(replace(_vector(rest, index), copied_out=copied))
    return tuple(vectors)


def without_copied_runs(pieces: Sequence[str], index: EvidenceIndex) -> list[str]:
    """``pieces`` without each longest run of consecutive pieces whose content items (or their
    synonyms) one window holds together (an evidence sentence, or two adjacent ones), where the
    run has at least :data:`COPIED_RUN_ITEMS` items. A claim is supported only if what remains
    is too.

    The run from each start is the longest one held; a later start's run reaches at least as
    far (fewer items are held wherever more are), so the search carries the held pieces over
    and tests only what lies beyond them: one window test per piece and start at most once,
    linear in the pieces, where growing every start afresh was quadratic (a run-on sentence of
    800 short copied clauses took about a second)."""
    items_of = [text_stats(p).items for p in pieces]
    kept: list[str] = []
    held: Counter[str] = Counter()  # items of pieces[start:end], which one window holds
    start = end = 0
    while start < len(pieces):
        items = frozenset(held)
        while end < len(pieces) and _one_window_holds(items | items_of[end], index):
            items |= items_of[end]
            held.update(items_of[end])
            end += 1
        if len(items) >= COPIED_RUN_ITEMS:
            start, held = end, Counter()  # a copied run: left out
            continue
        kept.append(pieces[start])
        if end > start:
            held.subtract(items_of[start])
            held = +held  # items no piece of the run has any more go
        start += 1
        end = max(end, start)
    return kept


def _judged_alone(rest: TextStats) -> bool:
    """Whether what remains of a sentence without its copied runs is scored on its own: when it
    names something (a name or a number), not when it is the answer's own framing."""
    return bool(rest.names or rest.numbers)


def _one_window_holds(items: frozenset[str], index: EvidenceIndex) -> bool:
    """Whether one window, an evidence sentence or two adjacent ones of the same evidence item,
    has every item or a synonym of it (filler may be two sentences run together)."""
    places: list[set[int]] = []  # per item, the sentences that have it or a synonym of it
    pairs: set[int] | None = None  # windows that may hold them all, by their first sentence
    for item in items:
        at = {p for t in forms_in(item, index.items) for p in index.postings[t]}
        covering = at | {p - 1 for p in at if p > 0}
        pairs = covering if pairs is None else pairs & covering
        if not pairs:
            return False
        places.append(at)
    if pairs is None:
        return True
    last = len(index.item_of) - 1
    # a start is a real pair only inside one evidence item; else its first sentence alone
    # must hold every item
    return any(
        (p < last and index.item_of[p] == index.item_of[p + 1]) or all(p in at for at in places)
        for p in pairs
    )


def claim_features(claim_text: str, evidence: Sequence[Evidence]) -> FeatureVector:
    """The features of ``claim_text`` taken whole (the training unit)."""
    return _vector(text_stats(claim_text), evidence_index(evidence))


def _vector(claim: TextStats, index: EvidenceIndex) -> FeatureVector:
    weights = index.weights(claim)
    windows = index.cover(weights)
    window = windows[0] if windows else EMPTY_WINDOW
    total = sum(weights.values())
    names_all = len(claim.names - index.items)
    missing = [w for t, w in weights.items() if t not in index.items]
    synonyms = _synonym_matches(weights, index)
    found = {t for t in weights if t in index.items or t in synonyms}
    missing_synonyms = [w for t, w in weights.items() if t not in found]
    heaviest_missing = sorted((t for t in weights if t not in found), key=lambda t: -weights[t])
    tail = _missing_tail(weights, found.__contains__)
    values = (
        _share(sum(w for t, w in weights.items() if t in found), total),
        _bigram_recall(claim, index.bigrams, index.items),
        _share(len(claim.numbers - index.items), len(claim.numbers), empty=0.0),
        float(bool(claim.numbers)),
        _share(names_all, len(claim.names), empty=0.0),
        min(CAP, float(names_all)),
        float((claim.negations % 2) != (window.negations % 2)),
        _share(max(missing, default=0.0), total, empty=0.0),
        _share(max(tail, default=0.0), total, empty=0.0),
        _share(max(missing_synonyms, default=0.0), total, empty=0.0),
        min(CAP, float(len(tail))),
        _pairs_in_one_sentence(weights, index),
    )
    return FeatureVector(
        values=values,
        windows=windows,
        synonyms=tuple((t, _evidence_word(index, s)) for t, s in synonyms.items()),
        missing=tuple(heaviest_missing[:MISSING_SHOWN]),
    )


def _evidence_word(index: EvidenceIndex, item: str) -> str:
    """The evidence's word for ``item``, as written in the first sentence that has it."""
    return surface_words(index.sentences[index.postings[item][0]].text).get(item, item)


def _synonym_matches(weights: dict[str, float], index: EvidenceIndex) -> dict[str, str]:
    """Claim item -> the synonym the evidence has, for each item found only through one."""
    matches = ((t, synonym_in(t, index.items)) for t in weights if t not in index.items)
    return {t: s for t, s in matches if s is not None}


def _pairs_in_one_sentence(weights: dict[str, float], index: EvidenceIndex) -> float:
    """Of the pairs among the claim's heaviest found items, the weighted share that some one
    evidence sentence holds together: on a long page every word of a partly supported claim may
    be found, but not in the same place (1.0 when fewer than two are found)."""
    found = sorted((t for t in weights if t in index.items), key=lambda t: -weights[t])
    heaviest = [(weights[t], set(index.postings[t])) for t in found[:PAIRED_ITEMS]]
    total = together = 0.0
    for (weight_a, sentences_a), (weight_b, sentences_b) in itertools.combinations(heaviest, 2):
        total += weight_a * weight_b
        together += weight_a * weight_b if sentences_a & sentences_b else 0.0
    return together / total if total else 1.0


def _missing_tail(weights: dict[str, float], found: Callable[[str], bool]) -> list[float]:
    """The weights of the claim's last items that the evidence lacks, even as a synonym (items
    in order of first appearance, the run that ends the claim). A claim that goes beyond its
    source often does so at the end, while a paraphrase misses words anywhere: on WiCE dev 40% of
    the error claims end in a missing item against 11% of the supported ones, though nearly all
    miss some item. The same run at the *start* of a claim carries no such signal
    (docs/learned-checker.md)."""
    tail: list[float] = []
    for token in reversed(list(weights)):  # weights keep the claim's order
        if found(token):
            break
        tail.append(weights[token])
    return tail


def _share(part: float, whole: float, empty: float = 1.0) -> float:
    return part / whole if whole else empty


def _bigram_recall(
    claim: TextStats, found: frozenset[tuple[str, str]], items: frozenset[str]
) -> float:
    if not claim.bigrams:  # a one-item claim: its item found or not
        return 1.0 if claim.items and claim.items <= items else 0.0
    return len(claim.bigrams & found) / len(claim.bigrams)


@dataclass(frozen=True)
class LearnedWeights:
    """A fitted logistic regression over standardized features, its Platt map and the band."""

    feature_names: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    bias: float
    platt_a: float = 1.0
    platt_b: float = 0.0
    lower: float = 0.4
    upper: float = 0.6

    def contributions(self, values: Sequence[float]) -> tuple[float, ...]:
        """Each feature's share of the logit (coefficient times standardized value)."""
        return tuple(
            c * (x - m) / s
            for x, m, s, c in zip(values, self.mean, self.scale, self.coef, strict=True)
        )

    def logit(self, values: Sequence[float]) -> float:
        return self.bias + sum(self.contributions(values))

    def p_supported(self, values: Sequence[float]) -> float:
        return _sigmoid(self.platt_a * self.logit(values) + self.platt_b)

    @classmethod
    def from_json(cls, data: dict[str, object]) -> LearnedWeights:
        """The model part of a weights file (other keys describe the training, for people)."""
        model = data["model"]
        if not isinstance(model, dict):
            raise ValueError("weights file: 'model' must be an object")
        names = tuple(str(n) for n in model["feature_names"])
        if names != FEATURE_NAMES:
            raise ValueError(
                f"weights file is for features {names}, this code computes {FEATURE_NAMES}"
            )
        platt = model.get("calibration", {"a": 1.0, "b": 0.0})
        return cls(
            feature_names=names,
            mean=tuple(float(v) for v in model["mean"]),
            scale=tuple(float(v) for v in model["scale"]),
            coef=tuple(float(v) for v in model["coef"]),
            bias=float(model["bias"]),
            platt_a=float(platt["a"]),
            platt_b=float(platt["b"]),
            lower=float(model["lower"]),
            upper=float(model["upper"]),
        )


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


@lru_cache(maxsize=1)
def shipped_weights() -> LearnedWeights:
    """The weights that ship in the package."""
    text = resources.files(__package__ or "assay.verify.checkers").joinpath(WEIGHTS_FILE)
    return LearnedWeights.from_json(json.loads(text.read_text(encoding="utf-8")))


class LearnedChecker:
    """Supported / unsupported / uncertain from a logistic regression over lexical features."""

    name = "learned"
    version = CHECKER_VERSION

    def __init__(self, weights: LearnedWeights | None = None) -> None:
        self.weights = weights or shipped_weights()

    async def check(self, claim: Claim, evidence: Sequence[Evidence]) -> ClaimCheck:
        return self.check_sync(claim, evidence)

    def check_sync(self, claim: Claim, evidence: Sequence[Evidence]) -> ClaimCheck:
        """The same verdict without the event loop (the checker does no I/O). A claim mostly
        in a script written without spaces between words is a failure, not a score: the
        checker compares words and cannot find them there."""
        if (failed := unreadable_check(claim, self.name)) is not None:
            return failed
        return self.verdict(claim, claim_vectors(claim.text, evidence))

    def verdict(self, claim: Claim, vectors: Sequence[FeatureVector]) -> ClaimCheck:
        """The check of ``claim`` from its sentences' features: the weakest sentence decides."""
        scored = [(self.weights.p_supported(v.values), v) for v in vectors]
        p, vector = min(scored, key=lambda pair: pair[0])
        label = self.label_of(p)
        supporting = vector.cover_ids if label == "supported" else ()
        deciding = self.deciding(vector)
        written = surface_words(claim.text)
        missing = tuple(written.get(t, t) for t in vector.missing)
        synonyms = tuple((written.get(t, t), word) for t, word in vector.synonyms)
        return ClaimCheck(
            claim=claim,
            label=label,
            p_supported=round(p, 6),
            probability_source="learned",
            supporting_ids=supporting,
            cited_supporting_ids=tuple(i for i in claim.cited_ids if i in supporting),
            checker=self.name,
            rationale=_rationale(vector, deciding, missing, synonyms, claim.text),
            evidence_window=" … ".join(w.text for w in vector.windows) or None,
            deciding_features=deciding,
            missing_words=missing,
        )

    def deciding(self, vector: FeatureVector) -> tuple[tuple[str, float], ...]:
        """The features that moved the logit most, with their signed contributions."""
        pairs = zip(FEATURE_NAMES, self.weights.contributions(vector.values), strict=True)
        ranked = sorted((p for p in pairs if p[1]), key=lambda p: -abs(p[1]))
        return tuple((name, round(value, 3)) for name, value in ranked[:DECIDING])

    def label_of(self, p_supported: float) -> ClaimLabel:
        if p_supported >= self.weights.upper:
            return "supported"
        if p_supported <= self.weights.lower:
            return "unsupported"
        return "uncertain"


def _rationale(
    vector: FeatureVector,
    deciding: Sequence[tuple[str, float]],
    missing: Sequence[str],
    synonyms: Sequence[tuple[str, str]],
    claim_text: str,
) -> str:
    """The check in words: how much of the claim the evidence holds, the claim's words it
    lacks (as the claim writes them), those it has only as a synonym, and what decided. A
    claim with no word to compare ("No.") says so: its score is the one the weights give
    an empty claim, not a finding."""
    values = dict(zip(FEATURE_NAMES, vector.values, strict=True))
    if text_stats(claim_text).items:
        found = f"{values['idf_recall_all']:.0%} of the claim's IDF weight found in the evidence"
        parts = [found + " (synonyms count)"]
    else:
        parts = [
            "no word to compare with the evidence (only stopwords, negations or punctuation): "
            "the score of an empty claim"
        ]
    if values["numbers_missing_all_frac"]:
        parts.append(f"{values['numbers_missing_all_frac']:.0%} of its numbers in no evidence")
    if values["names_missing_all"]:
        parts.append(f"{values['names_missing_all']:.0f} name(s) in no evidence")
    if values["negation_mismatch"]:
        parts.append("negation differs from the best window")
    if missing:
        parts.append("not in the evidence: " + ", ".join(f'"{word}"' for word in missing))
    if synonyms:
        parts.append("found as synonyms: " + ", ".join(f"{a} ~ {b}" for a, b in synonyms))
    if vector.copied_out:
        copied = " ".join(vector.copied_out)
        copied = copied if len(copied) <= COPIED_SHOWN else copied[: COPIED_SHOWN - 1] + "…"
        parts.append(f'scored without the part one evidence sentence holds whole: "{copied}"')
    if vector.cover_ids:
        parts.append("best window in " + ", ".join(vector.cover_ids))
    if deciding:
        parts.append("deciding: " + ", ".join(f"{n} {v:+.2f}" for n, v in deciding))
    return "; ".join(parts)
