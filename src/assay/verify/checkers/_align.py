"""The evidence side of the ``learned`` checker: one index per evidence set, and the claim's
best evidence window found through it.

An :class:`EvidenceIndex` is built once per evidence set (one pass over the evidence: sentence
statistics, document frequencies, an inverted index from content item to sentences) and cached,
so the claims of a record, which share their evidence, pay for it once. A claim then touches only
the sentences that share one of its items (the postings of its items), never the whole page:
for a claim of ``c`` items and a page of ``n`` sentences the work is ``O(c * n)`` set lookups in
the worst case (every claim item in every sentence), and claims are capped at
:data:`MAX_CLAIM_ITEMS` items.

A *window* is one evidence sentence or two adjacent sentences of the same evidence item, as
SummaC's zero-shot variant aligns a summary sentence to its best document sentence; the best
window is the one with the highest IDF-weighted recall of the claim's items.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..types import Evidence
from ._learned_text import KEY_WEIGHT, TextStats, text_stats
from ._sentences import split_evidence

EvidenceKey = tuple[str, str | None, str]  # evidence id, title, text
MAX_CLAIM_ITEMS = 64  # a "claim" longer than this is a paragraph; its tail adds little
TOP_SENTENCES = 3  # windows are grown around the best few sentences only


@dataclass(frozen=True)
class Sentence:
    evidence_id: str
    text: str
    stats: TextStats


@dataclass(frozen=True)
class Window:
    """One sentence, or two adjacent sentences of one evidence item, and their union stats."""

    sentences: tuple[Sentence, ...]
    items: frozenset[str]
    bigrams: frozenset[tuple[str, str]]
    negations: int

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.sentences)

    @property
    def evidence_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.evidence_id for s in self.sentences))


EMPTY_WINDOW = Window((), frozenset(), frozenset(), 0)


class EvidenceIndex:
    """Sentences, document frequencies and postings of one evidence set."""

    def __init__(self, evidence: Sequence[EvidenceKey]) -> None:
        self.sentences: list[Sentence] = []
        self.item_of: list[int] = []  # evidence item number of each sentence
        for number, (evidence_id, title, body) in enumerate(evidence):
            text = f"{title}. {body}" if title else body
            for part in split_evidence(text) or [text]:
                self.sentences.append(Sentence(evidence_id, part, text_stats(part)))
                self.item_of.append(number)
        self.postings: dict[str, list[int]] = {}
        bigrams: set[tuple[str, str]] = set()
        for position, sentence in enumerate(self.sentences):
            for token in sentence.stats.items:
                self.postings.setdefault(token, []).append(position)
            bigrams |= sentence.stats.bigrams
        self.items = frozenset(self.postings)
        self.bigrams = frozenset(bigrams)
        self._count = len(self.sentences)

    def idf(self, token: str) -> float:
        """Smoothed inverse sentence frequency; an item the evidence lacks weighs the most."""
        df = len(self.postings.get(token, ()))
        return math.log(1.0 + (self._count + 1.0) / (df + 0.5))

    def weights(self, claim: TextStats) -> dict[str, float]:
        """The claim items' weights, in order of first appearance: IDF, doubled for names and
        numbers."""
        # in order of first appearance (sorting by sequence.index was quadratic in the claim)
        items = list(dict.fromkeys(claim.sequence))[:MAX_CLAIM_ITEMS]
        return {
            token: self.idf(token) * (KEY_WEIGHT if _is_key(token, claim) else 1.0)
            for token in items
        }

    def sentence_scores(self, weights: dict[str, float]) -> dict[int, float]:
        """Sentence position -> the claim weight it holds, for the sentences sharing an item."""
        scores: dict[int, float] = {}
        for token, weight in weights.items():
            for position in self.postings.get(token, ()):
                scores[position] = scores.get(position, 0.0) + weight
        return scores

    def best_window(self, weights: dict[str, float]) -> Window:
        """The window with the highest weighted recall of the claim (shorter on ties)."""
        scores = self.sentence_scores(weights)
        if not scores:
            return EMPTY_WINDOW
        top = sorted(scores, key=lambda p: (-scores[p], p))[:TOP_SENTENCES]
        best, best_score = EMPTY_WINDOW, -1.0
        for position in top:
            for window in self._windows_around(position):
                value = sum(w for t, w in weights.items() if t in window.items)
                if value > best_score + 1e-12:
                    best, best_score = window, value
        return best

    def cover(self, weights: dict[str, float], size: int = 3) -> tuple[Window, ...]:
        """Up to ``size`` windows, each the best for the claim weight not yet found: a claim
        that draws on two snippets names both."""
        windows: list[Window] = []
        remaining = dict(weights)
        while remaining and len(windows) < size:
            window = self.best_window(remaining)
            if window is EMPTY_WINDOW:
                break
            windows.append(window)
            remaining = {t: w for t, w in remaining.items() if t not in window.items}
        return tuple(windows)

    def _windows_around(self, position: int) -> list[Window]:
        out = [self._window((position,))]
        for other in (position - 1, position + 1):
            if 0 <= other < self._count and self.item_of[other] == self.item_of[position]:
                out.append(self._window(tuple(sorted((position, other)))))
        return out

    def _window(self, positions: tuple[int, ...]) -> Window:
        sentences = tuple(self.sentences[p] for p in positions)
        return Window(
            sentences=sentences,
            items=frozenset().union(*(s.stats.items for s in sentences)),
            bigrams=frozenset().union(*(s.stats.bigrams for s in sentences)),
            negations=sum(s.stats.negations for s in sentences),
        )


def _is_key(token: str, claim: TextStats) -> bool:
    return token in claim.names or token.startswith("#")


# The claims of a record share one evidence tuple (and its cited subsets): a small cache spans a
# record; the key is the evidence values themselves, so equal evidence is indexed once.
@lru_cache(maxsize=32)
def _index(key: tuple[EvidenceKey, ...]) -> EvidenceIndex:
    return EvidenceIndex(key)


def evidence_index(evidence: Sequence[Evidence]) -> EvidenceIndex:
    """The (cached) index of ``evidence``."""
    return _index(tuple((e.evidence_id, e.title, e.text) for e in evidence))
