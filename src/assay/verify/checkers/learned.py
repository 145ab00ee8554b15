"""The learned model-free claim checker ``learned``: a logistic regression over lexical features.

No model is called: the claim and the evidence are compared with word, bigram, character and
number statistics (:func:`claim_features`, the names in :data:`FEATURE_NAMES`), and a logistic
regression whose weights ship in ``learned_weights.json`` (a few KB, loaded with
:mod:`importlib.resources`) turns them into ``p_supported``::

    z = bias + sum_i coef_i * (feature_i - mean_i) / scale_i
    p_supported = 1 / (1 + exp(-z))            (probability_source = "learned")

Labels: ``p_supported >= upper`` is ``supported``, ``p_supported <= lower`` is ``unsupported``,
and the band in between (``lower``/``upper`` from the weights file, 0.4 / 0.6 as shipped) is
``uncertain``: too close to 0.5 to call either way. When the claim is supported, the supporting
ids are the evidence items of the (at most three) sentences that together cover most of the
claim's words; otherwise there are none.

The weights are trained by ``scripts/train_learned_checker.py`` on public data in
``../shared/data`` only, with numpy (Newton's method, L2 penalty), deterministically; the
training set, the split and held-out numbers are in ``docs/learned-checker.md``. The
probability is fitted with balanced classes: it is "calibrated" for a 50/50 prior, not for a
dataset where most claims are errors.

The features are computed here, not imported from the lexical baseline, on purpose: shipped
weights belong to one exact feature definition, and the baseline is tuned on its own schedule.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from ..types import Claim, ClaimCheck, ClaimLabel, Evidence

WEIGHTS_FILE = "learned_weights.json"
FEATURE_NAMES: tuple[str, ...] = (
    "recall_best_sentence",
    "recall_cover2",
    "recall_cover3",
    "recall_all",
    "bigram_recall_cover",
    "bigram_recall_all",
    "char4_recall_cover",
    "longest_run",
    "numbers_missing",
    "numbers_missing_frac",
    "has_numbers",
    "names_missing",
    "names_missing_frac",
    "negation_mismatch",
)
COVER_SIZE = 3  # sentences a claim may draw on (WiCE support sets are rarely larger)
KEY_WEIGHT = 2.0  # names and numbers weigh double in recall: a wrong one is a wrong claim
CAP = 3.0  # counts are capped: the third missing name says little the second did not


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS = _words(
    """a an the and or but if then of to in on at by for with from as into onto over under about
    above below between through during before after since until while than so such is are was
    were be been being am do does did have has had having will would shall should can could may
    might must it its this that these those there here their them they he she his her him we our
    us you your i me my who whom whose which what when where why how also very more most much
    many some any all each every both either other another same just only own too s t up down
    out off again further once per via upon within across along among around because several
    various often however thus therefore although though yet whether according including"""
)
NEGATIONS = _words(
    "not no never none nobody nothing neither nor without cannot unable fail fails failed "
    "lack lacks lacked"
)
_NUMBER_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "twenty": "20", "thirty": "30", "forty": "40", "fifty": "50", "hundred": "100",
    "thousand": "1000", "million": "1000000", "billion": "1000000000", "first": "1",
    "second": "2", "third": "3", "fourth": "4", "fifth": "5", "twice": "2", "half": "0.5",
}  # fmt: skip
_MONTHS = _words(
    "january february march april may june july august september october november december"
)
_SUFFIXES = (
    "ations", "ation", "ments", "ment", "ness", "ings", "ing", "ions", "ion", "ies", "ied",
    "ers", "er", "ed", "es", "ly", "s",
)  # fmt: skip
_TOKEN = re.compile(r"\d[\d,]*(?:\.\d+)?|[^\W\d_](?:[\w'-]*\w)?")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|\n+|(?<=[a-z0-9)][.!?])(?=[A-Z])")
_STEM_LENGTH = 6


@dataclass(frozen=True)
class TextStats:
    """What the features compare: content items (stems, numbers as ``#n``), names, bigrams."""

    sequence: tuple[str, ...]  # content items in text order
    items: frozenset[str]
    names: frozenset[str]
    numbers: frozenset[str]
    bigrams: frozenset[tuple[str, str]]
    negations: int


@dataclass(frozen=True)
class FeatureVector:
    """The features of one claim against some evidence, and the ids its best cover uses."""

    values: tuple[float, ...]
    cover_ids: tuple[str, ...]


def stem(word: str) -> str:
    """Lower case, possessive and one common suffix dropped, cut to six letters."""
    word = word.lower().replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    word = word.strip("'-")
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:_STEM_LENGTH]


def _number(text: str) -> str:
    value = text.replace(",", "")
    if "." in value:
        value = value.rstrip("0").rstrip(".")
    return "#" + (value.lstrip("0") or "0")


def _raw_tokens(text: str) -> list[str]:
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).replace("’", "'"))


# Bounded: a benchmark process checks many records; the cache only has to span one record
# (its claims, the re-check against cited snippets), and WiCE pages reach ~1,100 sentences.
@lru_cache(maxsize=8192)
def text_stats(text: str) -> TextStats:
    """Content items, names, numbers, bigrams and negations of ``text``."""
    sequence: list[str] = []
    names: set[str] = set()
    negations = 0
    raw = _raw_tokens(text)
    for index, token in enumerate(raw):
        lower = token.lower()
        if lower in NEGATIONS or lower.endswith("n't"):
            negations += 1
        if token[0].isdigit():
            sequence.append(_number(token))
        elif lower in _NUMBER_WORDS:
            sequence.append("#" + _NUMBER_WORDS[lower])
        elif lower not in STOPWORDS and lower not in NEGATIONS and len(lower) > 1:
            sequence.append(stem(token))
            if token[0].isupper() and lower not in _MONTHS and (index > 0 or len(raw) == 1):
                names.add(sequence[-1])
    return TextStats(
        sequence=tuple(sequence),
        items=frozenset(sequence),
        names=frozenset(names),
        numbers=frozenset(s for s in sequence if s.startswith("#")),
        bigrams=frozenset(itertools.pairwise(sequence)),
        negations=negations,
    )


def char4(text: str) -> frozenset[str]:
    """Character 4-grams of the words of ``text`` (computed only for a claim and its cover)."""
    grams: set[str] = set()
    for token in _raw_tokens(text):
        word = f" {token.lower()} "
        grams.update(word[i : i + 4] for i in range(max(1, len(word) - 3)))
    return frozenset(grams)


def split_sentences(text: str) -> list[str]:
    """Sentences of an evidence text (light: evidence only needs spans to match against)."""
    return [p.strip() for p in _SENTENCE.split(text) if p and p.strip()]


@dataclass(frozen=True)
class _Sentence:
    evidence_id: str
    text: str
    stats: TextStats


def _sentences(evidence: Sequence[Evidence]) -> list[_Sentence]:
    out: list[_Sentence] = []
    for item in evidence:
        text = f"{item.title}. {item.text}" if item.title else item.text
        for sentence in split_sentences(text) or [text]:
            out.append(_Sentence(item.evidence_id, sentence, text_stats(sentence)))
    return out


def _weight(item: str, claim: TextStats) -> float:
    return KEY_WEIGHT if item in claim.names or item.startswith("#") else 1.0


def _recall(claim: TextStats, found: frozenset[str] | set[str]) -> float:
    total = sum(_weight(i, claim) for i in claim.items)
    if not total:
        return 1.0
    return sum(_weight(i, claim) for i in claim.items if i in found) / total


def _greedy_cover(claim: TextStats, sentences: list[_Sentence]) -> list[_Sentence]:
    """Up to :data:`COVER_SIZE` sentences, each adding the most claim weight not yet found."""
    matched = [(s, claim.items & s.stats.items) for s in sentences]
    matched = [(s, m) for s, m in matched if m]
    found: set[str] = set()
    cover: list[_Sentence] = []
    for _ in range(COVER_SIZE):
        best, gain = None, 0.0
        for sentence, items in matched:
            new = sum(_weight(i, claim) for i in items - found)
            if new > gain:
                best, gain = sentence, new
        if best is None:
            break
        cover.append(best)
        found |= best.stats.items
    return cover


def _union(sentences: Sequence[_Sentence]) -> set[str]:
    out: set[str] = set()
    for sentence in sentences:
        out |= sentence.stats.items
    return out


def _longest_run(claim: tuple[str, ...], other: tuple[str, ...]) -> int:
    """The longest run of consecutive claim items that also occurs consecutively in ``other``."""
    best = 0
    previous = [0] * (len(other) + 1)
    for a in claim:
        current = [0] * (len(other) + 1)
        for j, b in enumerate(other, start=1):
            if a == b:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def _fraction(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def claim_features(claim_text: str, evidence: Sequence[Evidence]) -> FeatureVector:
    """The :data:`FEATURE_NAMES` values of ``claim_text`` against ``evidence``."""
    claim = text_stats(claim_text)
    sentences = _sentences(evidence)
    cover = _greedy_cover(claim, sentences)
    everything = _union(sentences)
    best = cover[0].stats if cover else text_stats("")
    cover_bigrams = frozenset().union(*(s.stats.bigrams for s in cover))
    all_bigrams = frozenset().union(*(s.stats.bigrams for s in sentences))
    claim_char4 = char4(claim_text)
    cover_char4 = frozenset().union(*(char4(s.text) for s in cover))
    missing_numbers = len(claim.numbers - everything)
    missing_names = len(claim.names - everything)
    run = max((_longest_run(claim.sequence, s.stats.sequence) for s in cover), default=0)
    values = (
        _recall(claim, best.items),
        _recall(claim, _union(cover[:2])),
        _recall(claim, _union(cover)),
        _recall(claim, everything),
        _bigram_recall(claim, cover_bigrams),
        _bigram_recall(claim, all_bigrams),
        _fraction(len(claim_char4 & cover_char4), len(claim_char4)),
        _fraction(run, len(claim.sequence)),
        min(CAP, missing_numbers),
        _fraction(missing_numbers, len(claim.numbers)),
        float(bool(claim.numbers)),
        min(CAP, missing_names),
        _fraction(missing_names, len(claim.names)),
        float((claim.negations % 2) != (best.negations % 2)),
    )
    return FeatureVector(
        values=values, cover_ids=tuple(dict.fromkeys(s.evidence_id for s in cover))
    )


def _bigram_recall(claim: TextStats, found: frozenset[tuple[str, str]]) -> float:
    if not claim.bigrams:
        return 1.0 if claim.items and claim.items <= _flatten(found) else 0.0
    return len(claim.bigrams & found) / len(claim.bigrams)


def _flatten(bigrams: frozenset[tuple[str, str]]) -> set[str]:
    return {word for pair in bigrams for word in pair}


@dataclass(frozen=True)
class LearnedWeights:
    """A fitted logistic regression over standardized features, and the uncertain band."""

    feature_names: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    bias: float
    lower: float = 0.4
    upper: float = 0.6

    def p_supported(self, values: Sequence[float]) -> float:
        z = self.bias
        for x, m, s, c in zip(values, self.mean, self.scale, self.coef, strict=True):
            z += c * (x - m) / s
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))

    @classmethod
    def from_json(cls, data: dict[str, object]) -> LearnedWeights:
        """The model part of a weights file (other keys describe the training and are kept
        for people, not read)."""
        model = data["model"]
        if not isinstance(model, dict):
            raise ValueError("weights file: 'model' must be an object")
        names = tuple(str(n) for n in model["feature_names"])
        if names != FEATURE_NAMES:
            raise ValueError(
                f"weights file is for features {names}, this code computes {FEATURE_NAMES}"
            )
        return cls(
            feature_names=names,
            mean=tuple(float(v) for v in model["mean"]),
            scale=tuple(float(v) for v in model["scale"]),
            coef=tuple(float(v) for v in model["coef"]),
            bias=float(model["bias"]),
            lower=float(model["lower"]),
            upper=float(model["upper"]),
        )


@lru_cache(maxsize=1)
def shipped_weights() -> LearnedWeights:
    """The weights that ship in the package."""
    text = resources.files(__package__ or "assay.verify.checkers").joinpath(WEIGHTS_FILE)
    return LearnedWeights.from_json(json.loads(text.read_text(encoding="utf-8")))


class LearnedChecker:
    """Supported / unsupported / uncertain from a logistic regression over lexical features."""

    name = "learned"

    def __init__(self, weights: LearnedWeights | None = None) -> None:
        self.weights = weights or shipped_weights()

    async def check(self, claim: Claim, evidence: Sequence[Evidence]) -> ClaimCheck:
        return self.check_sync(claim, evidence)

    def check_sync(self, claim: Claim, evidence: Sequence[Evidence]) -> ClaimCheck:
        """The same verdict without the event loop (the checker does no I/O)."""
        return self.verdict(claim, claim_features(claim.text, evidence))

    def verdict(self, claim: Claim, vector: FeatureVector) -> ClaimCheck:
        """The check of ``claim`` from its features (lets training score features once)."""
        p = self.weights.p_supported(vector.values)
        label = self.label_of(p)
        supporting = vector.cover_ids if label == "supported" else ()
        return ClaimCheck(
            claim=claim,
            label=label,
            p_supported=round(p, 6),
            probability_source="learned",
            supporting_ids=supporting,
            cited_supporting_ids=tuple(i for i in claim.cited_ids if i in supporting),
            checker=self.name,
            rationale=_rationale(vector),
        )

    def label_of(self, p_supported: float) -> ClaimLabel:
        if p_supported >= self.weights.upper:
            return "supported"
        if p_supported <= self.weights.lower:
            return "unsupported"
        return "uncertain"


def _rationale(vector: FeatureVector) -> str:
    values = dict(zip(FEATURE_NAMES, vector.values, strict=True))
    parts = [f"{values['recall_cover3']:.0%} of content words found in the best sentences"]
    parts.append(f"bigrams {values['bigram_recall_cover']:.0%}")
    if values["numbers_missing"]:
        parts.append(f"{values['numbers_missing']:.0f} number(s) not in any evidence")
    if values["names_missing"]:
        parts.append(f"{values['names_missing']:.0f} name(s) not in any evidence")
    if values["negation_mismatch"]:
        parts.append("negation differs from the best sentence")
    if vector.cover_ids:
        parts.append("best evidence " + ", ".join(vector.cover_ids))
    return "; ".join(parts)
