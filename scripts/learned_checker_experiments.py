"""Held-out measurements of directions tried for the ``learned`` checker: those that did not
ship, and ablations of what did.

    python scripts/learned_checker_experiments.py                 # every variant (~17 minutes)
    python scripts/learned_checker_experiments.py --only number_merge keys_out_of_context
    python scripts/learned_checker_experiments.py --only shipped --seeds 0 1 2 3
    python scripts/learned_checker_experiments.py --in-domain wice --seeds 0 1 2 3   # ceiling
    python scripts/learned_checker_experiments.py --in-domain wice --pool --seeds 0 1 2 3
    python scripts/learned_checker_experiments.py --prior-sweep   # one more map on every file
    python scripts/learned_checker_experiments.py --criterion --only shipped without_missing_tail
    python scripts/learned_checker_experiments.py --flips --only shipped leading_names
    python scripts/learned_checker_experiments.py --tail-rates    # missing tails by label
    python scripts/learned_checker_experiments.py --em-prior      # label-free prior adaptation
    python scripts/learned_checker_experiments.py --covariate-platt   # record-dependent maps
    python scripts/learned_checker_experiments.py --covariate-platt --covariate-form shift

Each variant changes one thing in the shipped recipe (a text normalisation, an extra feature,
the calibration, the L2 choice) by patching the checker's modules in this process only, then
prints the LODO and grouped 5-fold table of ``scripts/train_learned_checker.py`` (the same
functions, the same data, held out exactly as there); ``--criterion`` prints instead the training
script's own selection criterion (transfer AUROC between training files), which never reads the
held-out file. The shipped checker is untouched; the
numbers are quoted in docs/learned-checker.md ("What was tried and did not win", "What won").
"Shipped" is the checker of the checkout: ``learned-10`` here; ``--only learned_9`` gives
``learned-9``'s numbers and ``--only learned_8`` ``learned-8``'s; ``--only leading_names`` is
the thirteenth round and ``key_share key_share_free key_weight_share key_count item_count
platt_key_share`` the fourteenth, on ``learned-10`` (the twelfth round: copied runs
left out; ``--only copied_run_items_N copied_runs_in_one_sentence`` were measured on
``learned-9``'s rule at commit 58d7587, and the split variants, ``split_*`` and
``segments_N``, on ``learned-8`` at commit 9a46333). At commit 9a46333 ``--only learned_7`` gives
``learned-7``'s numbers and ``--only learned_6`` ``learned-6``'s (the tenth round: synonyms, with
``--synonyms FILE`` for a table of more senses; its other rows were measured on ``learned-7`` at
commit e63d720). The eleventh round (other WordNet relations) is measured on ``learned-8`` with
``--synonyms FILE --only shipped`` and ``--relation-table FILE --only relation_missing_max
relation_recall relation_rescued``, the tables built by ``build_synonym_table.py
--relations``. The ninth round was measured on ``learned-6`` at commit edb5202, where ``--only
without_dates`` gave ``learned-5``. The seventh round's variants are defined on ``learned-4``'s
text statistics (at commit edb5202 ``--only without_word_tables`` gave ``learned-4``'s numbers
and ``--only without_missing_tail`` ``learned-3``'s); the sixth round was
measured on ``learned-4``, the fifth-round table of the docs at commit c59218a, where the
checker was ``learned-3``, the first four rounds before that on ``learned-3``, and
the second-round table at commit c691ab5, on ``learned-2``.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import math
import re
import sys
import unicodedata
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from assay.verify.checkers import _align, _learned_text, _synonyms, learned
from assay.verify.checkers._align import EvidenceIndex
from assay.verify.checkers._learned_text import TextStats

REPO = Path(__file__).resolve().parents[1]


def _load_training_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "train_learned_checker", REPO / "scripts" / "train_learned_checker.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["train_learned_checker"] = module
    spec.loader.exec_module(module)
    return module


tl = _load_training_script()
Feature = Callable[[TextStats, EvidenceIndex, dict[str, float]], float]
BASE_NAMES = tuple(learned.FEATURE_NAMES)
BASE_SIGNS = dict(tl.FEATURE_SIGNS)


# ------------------------------------------------------------------ patching, undone after use


@contextmanager
def patched(module: Any, **values: Any) -> Iterator[None]:
    old = {name: getattr(module, name) for name in values}
    for name, value in values.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in old.items():
            setattr(module, name, value)


def clear_caches() -> None:
    _learned_text._token_info.cache_clear()
    _learned_text.text_stats.cache_clear()
    _align._index.cache_clear()


@contextmanager
def extra_features(features: dict[str, tuple[int, Feature]]) -> Iterator[None]:
    """The shipped features plus ``features`` (name -> (sign, function of claim, index,
    weights)), appended to every vector, sign-constrained like the others."""
    original = learned._vector

    def vector(claim: TextStats, index: EvidenceIndex) -> learned.FeatureVector:
        base = original(claim, index)
        weights = index.weights(claim)
        more = tuple(f(claim, index, weights) for _, f in features.values())
        return learned.FeatureVector(values=base.values + more, windows=base.windows)

    names = BASE_NAMES + tuple(features)
    signs = {**BASE_SIGNS, **{n: s for n, (s, _) in features.items()}}
    with (
        patched(learned, _vector=vector, FEATURE_NAMES=names),
        patched(tl, FEATURE_NAMES=names, FEATURE_SIGNS=signs),
    ):
        yield


# ------------------------------------------------------------------ text normalisation variants

_BRITISH = (("isation", "ization"), ("ise", "ize"), ("ised", "ized"), ("ising", "izing"),
            ("yse", "yze"), ("our", "or"), ("ours", "ors"), ("tre", "ter"), ("tres", "ters"),
            ("logue", "log"), ("ence", "ense"))  # fmt: skip
_STRONG_SUFFIXES = (
    "isations", "izations", "isation", "ization", "ational", "fulness", "ousness", "iveness",
    "ations", "ation", "ments", "ment", "ness", "ings", "ing", "ions", "ion", "ities", "ity",
    "ives", "ive", "ously", "ous", "ically", "ical", "ally", "als", "al", "ies", "ied", "ers",
    "er", "ed", "es", "ly", "s",
)  # fmt: skip
_ORIGINAL_STEM = _learned_text.stem
_ORIGINAL_RAW = _learned_text._raw_tokens


def _american(word: str) -> str:
    for british, american in _BRITISH:
        if word.lower().endswith(british) and len(word) - len(british) >= 3:
            return word[: -len(british)] + american
    return word


def stem_strong(word: str) -> str:
    """British spellings to American, a longer suffix list, y -> i, doubled l/t undone."""
    word = _american(word.lower().replace("’", "'").removesuffix("'s").strip("'-"))
    for suffix in _STRONG_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("y") and len(word) > 3:
        word = word[:-1] + "i"
    if len(word) > 4 and word[-1] == word[-2] and word[-1] in "lt":
        word = word[:-1]
    return word[:6]


def stem_british(word: str) -> str:
    return _ORIGINAL_STEM(_american(word))


def raw_folded(text: str) -> list[str]:
    """Accents folded (é -> e) before tokenising."""
    decomposed = unicodedata.normalize("NFKD", text)
    return _ORIGINAL_RAW("".join(c for c in decomposed if not unicodedata.combining(c)))


_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9,
           "trillion": 10**12}  # fmt: skip
_SMALL = {w: float(n) for w, n in _learned_text._NUMBER_WORDS.items() if n.isdigit()}


def merge_numbers(tokens: list[str]) -> list[str]:
    """Number words and scales merged: "two thousand" -> 2000, "1.2 million" -> 1200000."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        base = _as_number(token) if token[0].isdigit() else _SMALL.get(token.lower())
        following = tokens[i + 1].lower() if i + 1 < len(tokens) else ""
        if base is not None and following in _SCALES:
            out.append(f"{base * _SCALES[following]:f}".rstrip("0").rstrip("."))
            i += 2
        else:
            out.append(token)
            i += 1
    return out


def _as_number(token: str) -> float | None:
    try:
        return float(token.replace(",", ""))
    except ValueError:
        return None


def raw_merged(text: str) -> list[str]:
    return merge_numbers(_ORIGINAL_RAW(text))


_NO_HYPHEN_TOKEN = re.compile(r"\d[\d,]*(?:\.\d+)?|[^\W\d_](?:[\w']*\w)?")


def raw_hyphen_split(text: str) -> list[str]:
    return _NO_HYPHEN_TOKEN.findall(unicodedata.normalize("NFKC", text).replace("’", "'"))


# ------------------------------------------------------------------ extra features


def _recall(weights: dict[str, float], found: Callable[[str], bool]) -> float:
    total = sum(weights.values())
    return sum(w for t, w in weights.items() if found(t)) / total if total else 1.0


def in_context(claim: TextStats, index: EvidenceIndex, span: int = 2) -> dict[str, bool]:
    """Claim item -> found in one evidence sentence together with a claim neighbour (within
    ``span`` items of it in the claim)."""
    sequence = claim.sequence
    postings = {t: set(index.postings.get(t, ())) for t in sequence}
    out: dict[str, bool] = {}
    for i, token in enumerate(sequence):
        near = {sequence[j] for j in range(max(0, i - span), min(len(sequence), i + span + 1))}
        near.discard(token)
        here = bool(postings[token]) and (
            not near or any(postings[token] & postings[n] for n in near)
        )
        out[token] = out.get(token, False) or here
    return out


def context_recall(claim: TextStats, index: EvidenceIndex, weights: dict[str, float]) -> float:
    found = in_context(claim, index)
    return _recall(weights, lambda t: found.get(t, False))


def keys_out_of_context(
    claim: TextStats, index: EvidenceIndex, weights: dict[str, float], numbers_only: bool = False
) -> float:
    found = in_context(claim, index)
    keys = [t for t in weights if t.startswith("#") or (not numbers_only and t in claim.names)]
    return sum(not found.get(t, False) for t in keys) / len(keys) if keys else 0.0


def top_sentences_recall(k: int) -> Feature:
    """IDF recall against the union of the ``k`` sentences that share most claim weight."""

    def feature(claim: TextStats, index: EvidenceIndex, weights: dict[str, float]) -> float:
        scores = index.sentence_scores(weights)
        top = sorted(scores, key=lambda p: (-scores[p], p))[:k]
        items = frozenset().union(*(index.sentences[p].stats.items for p in top))
        return _recall(weights, lambda t: t in items)

    return feature


_PREFIXES: weakref.WeakKeyDictionary[EvidenceIndex, dict[int, frozenset[str]]] = (
    weakref.WeakKeyDictionary()
)


def _evidence_prefixes(index: EvidenceIndex, length: int) -> frozenset[str]:
    by_length = _PREFIXES.setdefault(index, {})
    if length not in by_length:
        by_length[length] = frozenset(t[:length] for t in index.items if not t.startswith("#"))
    return by_length[length]


def _soft_found(index: EvidenceIndex, length: int) -> Callable[[str], bool]:
    """An item found, or (not a number, at least ``length`` letters) sharing its first
    ``length`` letters with an evidence item: ``elect`` ~ ``electi``, ``austra`` ~ ``austr``."""
    prefixes = _evidence_prefixes(index, length)
    return lambda t: (
        t in index.items or (not t.startswith("#") and len(t) >= length and t[:length] in prefixes)
    )


def soft_recall(length: int) -> Feature:
    def feature(claim: TextStats, index: EvidenceIndex, weights: dict[str, float]) -> float:
        return _recall(weights, _soft_found(index, length))

    return feature


def soft_missing_max(length: int) -> Feature:
    def feature(claim: TextStats, index: EvidenceIndex, weights: dict[str, float]) -> float:
        found = _soft_found(index, length)
        total = sum(weights.values())
        missing = [w for t, w in weights.items() if not found(t)]
        return max(missing, default=0.0) / total if total else 0.0

    return feature


_SHIPPED_VECTOR = learned._vector


def shipped_values(claim: TextStats, index: EvidenceIndex) -> tuple[float, ...]:
    return _SHIPPED_VECTOR(claim, index).values


_CLAUSE = re.compile(r"[,;:()]|\s(?:and|but|while|which|who|where|when|including)\s|\s[-–—]\s")


def clause_minimum(kind: str, texts: dict[TextStats, str]) -> Feature:
    """The weakest clause's recall (a claim cut at commas, "and", "which", ...): against its best
    window, in context, or against all the evidence."""

    def feature(claim: TextStats, index: EvidenceIndex, weights: dict[str, float]) -> float:
        text = texts.get(claim)
        parts = [_learned_text.text_stats(p) for p in _CLAUSE.split(text)] if text else []
        values = []
        for part in [p for p in parts if len(p.items) >= 2] or [claim]:
            w = index.weights(part)
            if kind == "window":
                items = index.best_window(w).items
                values.append(_recall(w, items.__contains__))
            elif kind == "context":
                values.append(_recall(w, _found_in(in_context(part, index))))
            else:
                values.append(_recall(w, lambda t: t in index.items))
        return min(values, default=1.0)

    return feature


def _found_in(found: dict[str, bool]) -> Callable[[str], bool]:
    """Whether an item is marked found (an item not in ``found`` is not)."""
    return lambda item: found.get(item, False)


@contextmanager
def remembering_texts() -> Iterator[dict[TextStats, str]]:
    """Map each claim's stats back to its text (the clause features split the text)."""
    texts: dict[TextStats, str] = {}
    # the name the checker calls (imported there, not re-exported), which the patch replaces
    original = learned.text_stats  # type: ignore[attr-defined]

    def text_stats(text: str) -> TextStats:
        stats = original(text)
        texts[stats] = text
        return stats

    with patched(learned, text_stats=text_stats):
        yield texts


def _records(datasets: Sequence[str]) -> Iterator[Any]:
    """The records of the named datasets, read from ../shared/data by assay's importers."""
    for name in datasets:
        relative, importer = tl.DATASET_FILES[name]
        yield from importer(tl.DEFAULT_DATA_DIR / relative).records


def frequency_prior(datasets: Sequence[str], top: int = 1000) -> dict[str, float]:
    """Prior weight in [0, 1] of the ``top`` most frequent items over the distinct evidence
    sets of ``datasets``: log(docs / df) / log(docs); items not in the table weigh 1."""
    df: dict[str, int] = {}
    seen: set[tuple[str, ...]] = set()
    for record in _records(datasets):
        key = tuple(e.text for e in record.evidence)
        if key in seen:
            continue
        seen.add(key)
        items = frozenset().union(*(_learned_text.text_stats(t).items for t in key))
        for item in items:
            df[item] = df.get(item, 0) + 1
    docs = len(seen)
    ranked = sorted(df, key=lambda t: (-df[t], t))[:top]
    return {t: max(0.0, math.log(docs / df[t]) / math.log(docs)) for t in ranked}


def answer_words(datasets: Sequence[str], min_count: int = 5, ratio: float = 4.0) -> frozenset[str]:
    """Lower-cased words that answers use far more than evidence does: in at least
    ``min_count`` answers of ``datasets``, and ``ratio`` times as often (per text) as in their
    evidence. The data-driven form of learned-5's hand-written discourse words."""
    in_answers: dict[str, int] = {}
    in_evidence: dict[str, int] = {}
    answers = evidence = 0
    for record in _records(datasets):
        answers += 1
        for word in {w.lower() for w in _ORIGINAL_RAW(record.answer or "")}:
            in_answers[word] = in_answers.get(word, 0) + 1
        for e in record.evidence:
            evidence += 1
            for word in {w.lower() for w in _ORIGINAL_RAW(e.text)}:
                in_evidence[word] = in_evidence.get(word, 0) + 1
    return frozenset(
        word
        for word, count in in_answers.items()
        if count >= min_count
        and not word[0].isdigit()
        and count / answers >= ratio * (in_evidence.get(word, 0) + 1) / evidence
    )


def prior_features(prior: dict[str, float]) -> dict[str, tuple[int, Feature]]:
    def pw(weights: dict[str, float], times_idf: bool) -> dict[str, float]:
        return {t: (w if times_idf else 1.0) * prior.get(t, 1.0) for t, w in weights.items()}

    def missing_frac(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return 1.0 - _recall(pw(w, False), lambda t: t in i.items)

    def idf_recall(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return _recall(pw(w, True), lambda t: t in i.items)

    def rare_missing(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return min(3.0, float(sum(t not in i.items and t not in prior for t in w)))

    def missing_max(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        total = sum(w.values())
        heaviest = max((x for t, x in pw(w, True).items() if t not in i.items), default=0.0)
        return heaviest / total if total else 0.0

    return {
        "prior_missing_frac": (-1, missing_frac),
        "prior_idf_recall": (1, idf_recall),
        "rare_missing": (-1, rare_missing),
        "prior_missing_max": (-1, missing_max),
    }


def simple_features() -> dict[str, tuple[int, Feature]]:
    def product(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        values = shipped_values(c, i)
        return values[0] * values[1]

    def all_found(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return float(all(t in i.items for t in w))

    def unfound_squared(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return (1.0 - shipped_values(c, i)[0]) ** 2

    def bigrams_missing(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return min(3.0, float(len(c.bigrams - i.bigrams)))

    return {
        "recall_product": (1, product),
        "all_found": (1, all_found),
        "unfound_squared": (-1, unfound_squared),
        "bigrams_missing": (-1, bigrams_missing),
    }


def third_round_features() -> dict[str, tuple[int, Feature]]:
    """Third round (2026-11-23): the page's size, and relations between claim items."""

    def log_sentences(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return math.log1p(len(i.sentences))

    def recall_by_page(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        # On a long page every word is found somewhere: recall means less there.
        return shipped_values(c, i)[0] * math.log1p(len(i.sentences))

    def best_window_share(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        # How much of the weight found anywhere the single best window holds: a supported
        # claim tends to sit in one place, a partial one to be gathered from all over.
        found = sum(v for t, v in w.items() if t in i.items)
        window = i.best_window(w)
        in_window = sum(v for t, v in w.items() if t in window.items)
        return in_window / found if found else 0.0

    def windows_to_cover(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return float(len(i.cover(w, size=3)))

    return {
        "best_window_share": (0, best_window_share),
        "windows_to_cover": (0, windows_to_cover),
        "log_sentences": (0, log_sentences),
        "recall_x_log_sentences": (0, recall_by_page),
        "pairs_together": (1, pairs_together(6, 1)),
        "pairs_together_sentence": (1, pairs_together(6, 0)),
        "heavy_pairs_together": (1, pairs_together(3, 1)),
    }


def pairs_together(heaviest: int, reach: int) -> Feature:
    """Weighted share of pairs among the claim's ``heaviest`` found items that occur within
    ``reach`` sentences of each other in one evidence item: the words are on the page, but do
    they stand together?"""

    def feature(claim: TextStats, index: EvidenceIndex, weights: dict[str, float]) -> float:
        found = [t for t in weights if t in index.items]
        found = sorted(found, key=lambda t: -weights[t])[:heaviest]
        if len(found) < 2:
            return 1.0

        def near(p: int) -> set[int]:  # sentence positions within reach, same evidence item
            return {
                q
                for q in range(max(0, p - reach), min(len(index.item_of), p + reach + 1))
                if index.item_of[q] == index.item_of[p]
            }

        total = together = 0.0
        for a, b in itertools.combinations(found, 2):
            weight = weights[a] * weights[b]
            total += weight
            if set().union(*map(near, index.postings[a])) & set(index.postings[b]):
                together += weight
        return together / total

    return feature


def fourth_round_features() -> dict[str, tuple[int, Feature]]:
    """Fourth round (2026-11-23): more ways of asking whether claim words stand together, and
    the missing share of the words that are neither names nor numbers."""

    def sentences_of(index: EvidenceIndex, token: str) -> set[int]:
        return set(index.postings.get(token, ()))

    def ordered(claim: TextStats, weights: dict[str, float]) -> list[str]:
        return [t for t in claim.sequence if t in weights]

    def together_share(pairs: Sequence[tuple[str, ...]], index: EvidenceIndex) -> float:
        if not pairs:
            return 1.0
        hits = sum(1 for p in pairs if set.intersection(*(sentences_of(index, t) for t in p)))
        return hits / len(pairs)

    def trigram_together(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        seq = ordered(c, w)  # three neighbouring claim items in one evidence sentence
        return together_share(list(zip(seq, seq[1:], seq[2:], strict=False)), i)

    def skip_bigram_together(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        seq = ordered(c, w)  # claim items two apart in one evidence sentence
        return together_share(list(zip(seq, seq[2:], strict=False)), i)

    def key_pairs_together(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        keys = [t for t in w if (t in c.names or t in c.numbers) and t in i.items]
        return together_share(list(itertools.combinations(keys, 2)), i)

    def common_missing_frac(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        common = {t: v for t, v in w.items() if t not in c.names and t not in c.numbers}
        total = sum(common.values())
        return sum(v for t, v in common.items() if t not in i.items) / total if total else 0.0

    return {
        "trigram_together": (1, trigram_together),
        "skip_bigram_together": (1, skip_bigram_together),
        "key_pairs_together": (1, key_pairs_together),
        "common_missing_frac": (-1, common_missing_frac),
    }


def fifth_round_features() -> dict[str, tuple[int, Feature]]:
    """Fifth round (2026-11-24): a whole phrase missing. A supported paraphrase misses scattered
    words (synonyms); a claim that goes beyond its source may miss a run of neighbouring words,
    often at its end: the heaviest run of two or more consecutive claim items missing from the
    evidence, the best window or the cover windows, and the claim's tail (items in the claim's
    order, which the weights keep)."""

    def runs(c: TextStats, w: dict[str, float], present: Callable[[str], bool]) -> list[float]:
        total = sum(w.values()) or 1.0
        out: list[float] = []
        run: list[str] = []
        for token in [*w, ""]:
            if token and not present(token):
                run.append(token)
                continue
            if len(run) >= 2:
                out.append(sum(w[t] for t in run) / total)
            run = []
        return out

    def tail_tokens(w: dict[str, float], present: Callable[[str], bool]) -> list[str]:
        return list(itertools.takewhile(lambda t: not present(t), reversed(list(w))))

    def tail(c: TextStats, w: dict[str, float], present: Callable[[str], bool]) -> float:
        return sum(w[t] for t in tail_tokens(w, present)) / (sum(w.values()) or 1.0)

    def in_all(i: EvidenceIndex) -> Callable[[str], bool]:
        return lambda t: t in i.items

    def in_window(i: EvidenceIndex, w: dict[str, float]) -> Callable[[str], bool]:
        items = i.best_window(w).items
        return lambda t: t in items

    def in_cover(i: EvidenceIndex, w: dict[str, float]) -> Callable[[str], bool]:
        items = frozenset().union(*(x.items for x in i.cover(w, size=3)))
        return lambda t: t in items

    def phrase_all(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return max(runs(c, w, in_all(i)), default=0.0)

    def phrase_window(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return max(runs(c, w, in_window(i, w)), default=0.0)

    def phrase_cover(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return max(runs(c, w, in_cover(i, w)), default=0.0)

    def phrases_window(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return float(min(len(runs(c, w, in_window(i, w))), 2))

    def tail_window(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return tail(c, w, in_window(i, w))

    def tail_all(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return tail(c, w, in_all(i))

    def head_all(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        missing = list(itertools.takewhile(lambda t: t not in i.items, w))
        return sum(w[t] for t in missing) / (sum(w.values()) or 1.0)

    def trailing(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> list[str]:
        return tail_tokens(w, in_all(i))

    def tail_count(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return float(min(len(trailing(c, i, w)), 3))

    def last_missing(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return float(bool(trailing(c, i, w)))

    def tail_max(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return max((w[t] for t in trailing(c, i, w)), default=0.0) / (sum(w.values()) or 1.0)

    def tail_half(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        # missing weight share among the claim's second half of items
        seq = list(w)
        half = seq[len(seq) // 2 :]
        total = sum(w[t] for t in half) or 1.0
        return sum(w[t] for t in half if t not in i.items) / total

    def last_weight(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        # the claim's last item, when the evidence lacks it, by its weight against the heaviest
        last = trailing(c, i, w)[:1]
        return w[last[0]] / max(w.values()) if last else 0.0

    def tail_count2(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return float(min(len(trailing(c, i, w)), 2))

    return {
        "last_item_missing_weight": (-1, last_weight),
        "missing_tail_count2": (-1, tail_count2),
        "missing_tail_count": (-1, tail_count),
        "last_item_missing": (-1, last_missing),
        "missing_tail_max": (-1, tail_max),
        "missing_second_half": (-1, tail_half),
        "missing_phrase_all": (-1, phrase_all),
        "missing_phrase_window": (-1, phrase_window),
        "missing_phrase_cover": (-1, phrase_cover),
        "missing_phrases_window": (-1, phrases_window),
        "missing_tail_window": (-1, tail_window),
        "missing_tail_all": (-1, tail_all),
        "missing_head_all": (-1, head_all),
    }


def sixth_round_features() -> dict[str, tuple[int, Feature]]:
    """Sixth round (2026-11-24), on ``learned-4``: a tail that is on the page, but elsewhere.
    The claim's last items missing from the best window (or the first cover window) although
    the evidence holds them: a detail the source gives about something else."""

    def displaced(c: TextStats, i: EvidenceIndex, w: dict[str, float], window: Any) -> float:
        total = sum(w.values()) or 1.0
        tail: list[float] = []
        for token in reversed(list(w)):
            if token in window.items:
                break
            if token in i.items:
                tail.append(w[token])
        return max(tail, default=0.0) / total

    def displaced_window(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return displaced(c, i, w, i.best_window(w))

    def displaced_share(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        window = i.best_window(w)
        total = sum(w.values()) or 1.0
        tail = list(itertools.takewhile(lambda t: t not in window.items, reversed(list(w))))
        return sum(w[t] for t in tail if t in i.items) / total

    def tail_items_apart(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        # the claim's last two found items never in one sentence together
        found = [t for t in w if t in i.items][-2:]
        if len(found) < 2:
            return 0.0
        together = set(i.postings[found[0]]) & set(i.postings[found[1]])
        return 0.0 if together else 1.0

    return {
        "displaced_tail_max": (-1, displaced_window),
        "displaced_tail_share": (-1, displaced_share),
        "last_found_pair_apart": (-1, tail_items_apart),
    }


def _lcs_pairs(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """The index pairs of one longest common subsequence of ``a`` and ``b``."""
    n, m = len(a), len(b)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for x in range(n - 1, -1, -1):
        for y in range(m - 1, -1, -1):
            table[x][y] = (
                table[x + 1][y + 1] + 1 if a[x] == b[y] else max(table[x + 1][y], table[x][y + 1])
            )
    pairs, x, y = [], 0, 0
    while x < n and y < m:
        if a[x] == b[y]:
            pairs.append((x, y))
            x, y = x + 1, y + 1
        elif table[x + 1][y] >= table[x][y + 1]:
            x += 1
        else:
            y += 1
    return pairs


def inserted_features() -> dict[str, tuple[int, Feature]]:
    """Seventh round (2026-11-24), on ``learned-5``: inserted or substituted? The claim is aligned
    to its best window in order (a longest common subsequence of content items). Between two
    aligned items, claim words the evidence lacks are a *substitution* when the window has words
    of its own in the same place (a paraphrase), an *insertion* when it has fewer there than the
    claim (a detail the source does not give)."""

    def inserted(c: TextStats, i: EvidenceIndex, w: dict[str, float], against: str) -> float:
        window = i.best_window(w)
        claim_items = [t for t in c.sequence if t in w]
        window_items = [t for s in window.sentences for t in s.stats.sequence]
        present = window.items if against == "window" else i.items
        anchors = [(-1, -1), *_lcs_pairs(claim_items, window_items)]
        anchors.append((len(claim_items), len(window_items)))
        weight = 0.0
        for (c0, w0), (c1, w1) in itertools.pairwise(anchors):
            missing = {t for t in claim_items[c0 + 1 : c1] if t not in present}
            if missing and w1 - w0 - 1 < c1 - c0 - 1:
                weight += sum(w[t] for t in missing)
        return weight / (sum(w.values()) or 1.0)

    def inserted_all(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return inserted(c, i, w, "all")

    def inserted_window(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
        return inserted(c, i, w, "window")

    return {
        "inserted_missing_all": (-1, inserted_all),
        "inserted_missing_window": (-1, inserted_window),
    }


_MONTH_ABBREVIATIONS = {
    "jan": "january", "feb": "february", "mar": "march", "apr": "april", "jun": "june",
    "jul": "july", "aug": "august", "sep": "september", "sept": "september", "oct": "october",
    "nov": "november", "dec": "december",
}  # fmt: skip


def stem_months(word: str) -> str:
    """Month abbreviations read as the month ("Sept." = "September")."""
    full = _MONTH_ABBREVIATIONS.get(word.lower().rstrip("."))
    return _ORIGINAL_STEM(full if full else word)


# Seventh round (2026-11-24): word forms a suffix stemmer cannot join. The words that most
# often go missing from supported WiCE claims include irregular past tenses ("began", "led",
# "took", "won", "became"), demonyms ("British", "Libyan") and, on ExpertQA, discourse words
# of generated answers ("additionally", "particularly") that a source has no reason to use.
_IRREGULAR = {
    "began": "begin", "begun": "begin", "became": "become", "led": "lead", "took": "take",
    "taken": "take", "won": "win", "made": "make", "gave": "give", "given": "give",
    "went": "go", "gone": "go", "came": "come", "wrote": "write", "written": "write",
    "held": "hold", "built": "build", "sold": "sell", "bought": "buy", "brought": "bring",
    "taught": "teach", "thought": "think", "fought": "fight", "caught": "catch", "ran": "run",
    "chose": "choose", "chosen": "choose", "drew": "draw", "drawn": "draw", "grew": "grow",
    "grown": "grow", "knew": "know", "known": "know", "threw": "throw", "thrown": "throw",
    "flew": "fly", "flown": "fly", "spoke": "speak", "spoken": "speak", "broke": "break",
    "broken": "break", "stole": "steal", "stolen": "steal", "rose": "rise", "risen": "rise",
    "fell": "fall", "fallen": "fall", "meant": "mean", "met": "meet", "paid": "pay",
    "sent": "send", "spent": "spend", "lost": "lose", "kept": "keep", "felt": "feel",
    "fled": "flee", "shot": "shoot", "sang": "sing", "sung": "sing", "struck": "strike",
    "wore": "wear", "worn": "wear", "hid": "hide", "hidden": "hide", "rode": "ride",
    "ridden": "ride", "shook": "shake", "shaken": "shake", "froze": "freeze",
    "frozen": "freeze", "sank": "sink", "sunk": "sink", "ate": "eat", "eaten": "eat",
    "stood": "stand", "understood": "understand", "withdrew": "withdraw",
    "withdrawn": "withdraw", "undertook": "undertake", "oversaw": "oversee", "saw": "see",
    "seen": "see", "told": "tell", "said": "say", "heard": "hear", "dealt": "deal",
    "sought": "seek", "laid": "lay", "fed": "feed", "bred": "breed", "spun": "spin",
    "stuck": "stick", "wound": "wind", "forgot": "forget", "forgotten": "forget",
    "rebuilt": "rebuild", "born": "birth", "died": "death", "dies": "death", "dying": "death",
    "dead": "death", "die": "death", "marriage": "marry",
}  # fmt: skip
_LIFE = frozenset(("birth", "death", "marry"))
# learned-5's discourse words are connectives and hedges plus these stress words
_GENERIC = _learned_text._words(
    """crucial essential important specific certain different possible necessary
    appropriate significant key main major"""
)
_LEARNED_4_STOPWORDS = _learned_text.STOPWORDS - _learned_text.DISCOURSE_WORDS


@contextmanager
def learned_4_text(
    demonyms: bool = False,
    stopwords: frozenset[str] = frozenset(),
    forms: dict[str, str] | None = None,
) -> Iterator[None]:
    """``learned-4``'s text statistics (no demonyms, no discourse stopwords), plus what the
    seventh round tried on it: the demonym table, more stopwords, a table of word forms."""
    with patched(
        _learned_text,
        _raw_tokens=_learned_text._plain_tokens,  # learned-6's dates
        DEMONYMS=_learned_text.DEMONYMS if demonyms else {},
        STOPWORDS=_LEARNED_4_STOPWORDS | stopwords,
        stem=stem_through(forms) if forms else _ORIGINAL_STEM,
    ):
        yield


def stem_through(table: dict[str, str]) -> Callable[[str], str]:
    """The shipped stemmer, after ``table`` maps a word form to the word it is a form of."""

    def stem(word: str) -> str:
        lower = word.lower().replace("’", "'")
        base = table.get(lower[:-2] if lower.endswith("'s") else lower)
        return _ORIGINAL_STEM(base if base else word)

    return stem


# Seventh round, on learned-5: more forms that differ between a claim and its source.
_ORDINAL_SUFFIX = frozenset(("st", "nd", "rd", "th", "s"))
_ORDINAL_WORDS = {
    "sixth": "6", "seventh": "7", "eighth": "8", "ninth": "9", "tenth": "10", "eleventh": "11",
    "twelfth": "12", "thirteenth": "13", "fourteenth": "14", "fifteenth": "15",
    "sixteenth": "16", "seventeenth": "17", "eighteenth": "18", "nineteenth": "19",
    "twentieth": "20", "thirtieth": "30", "fortieth": "40", "fiftieth": "50",
    "hundredth": "100",
}  # fmt: skip
_UNITS = {
    "km": "kilometre", "kilometer": "kilometre", "kilometers": "kilometre", "ft": "foot",
    "feet": "foot", "mi": "mile", "kg": "kilogram", "lb": "pound", "lbs": "pound",
    "meter": "metre", "meters": "metre", "cm": "centimetre", "mm": "millimetre",
    "sq": "square", "mph": "mile",
}  # fmt: skip


# time and cause connectives a claim adds while restating a source ("later", "due to")
_CONNECTIVES = _learned_text._words(
    """later prior due subsequently subsequent following previously formerly currently
    recently initially originally"""
)
# the verbs generated answers use to frame a point ("help", "ensure", "involve")
_ANSWER_VERBS = _learned_text._words(
    """help helps helping ensure ensures ensuring include includes involve involves involving
    contribute contributes contributing provide provides providing consider considered
    considering encourage encourages promote promotes promoting use used using based due like"""
)


def raw_ordinals(text: str) -> list[str]:
    """The number 20 for "20th" (not 20 and a word "th"), and for "twentieth"."""
    out: list[str] = []
    for token in _ORIGINAL_RAW(text):
        if out and out[-1][0].isdigit() and token.lower() in _ORDINAL_SUFFIX:
            continue
        out.append(_ORDINAL_WORDS.get(token.lower(), token))
    return out


_PERCENT = re.compile(r"%|\bper cent\b")


def raw_percent(text: str) -> list[str]:
    """One word for "%", "percent" and "per cent"."""
    return _ORIGINAL_RAW(_PERCENT.sub(" percent ", text))


# Ninth round (2026-11-24), on learned-6 (a day and its month are one item): the same for a
# month and its year, and for two capitalised words in a row.
def _month(token: str) -> int | None:
    return _learned_text._MONTH_NUMBERS.get(token.lower()) if token[:1].isupper() else None


def _year(token: str) -> int | None:
    digits = token.rstrip(",")
    return int(digits) if digits.isdigit() and len(digits) == 4 else None


def raw_month_years(text: str) -> list[str]:
    """A month followed by a year ("March 2011", "May 19, 2016") also adds
    the item ``3/2011`` after the year, which stays an item of its own."""
    out: list[str] = []
    tokens = _ORIGINAL_RAW(text)
    for i, token in enumerate(tokens):
        out.append(token)
        if _year(token) is None or i == 0:
            continue
        before = tokens[i - 1]
        month = _month(before) or (_month(tokens[i - 2]) if i >= 2 and "/" in before else None)
        if month is not None:
            out.append(f"{month}/{_year(token)}")
    return out


def _name_word(token: str) -> bool:
    lower = token.lower()
    return (
        token[:1].isupper()
        and lower not in _learned_text.STOPWORDS
        and lower not in _learned_text._MONTHS
        and len(lower) > 1
    )


def raw_name_pairs(text: str) -> list[str]:
    """Two capitalised words in a row ("Peter Kay") also add the item
    ``peter+kay``, a name of its own, after them (the words stay items)."""
    out: list[str] = []
    tokens = _ORIGINAL_RAW(text)
    for i, token in enumerate(tokens):
        out.append(token)
        if i >= 2 and _name_word(token) and _name_word(tokens[i - 1]):
            out.append("Z+" + _ORIGINAL_STEM(tokens[i - 1]) + "+" + _ORIGINAL_STEM(token))
    return out


_ORIGINAL_TOKEN_INFO = _learned_text._token_info


def token_info_with_phrases(token: str) -> tuple[str | None, bool, bool]:
    if token.startswith("Z+"):
        return token[2:], False, True
    return _ORIGINAL_TOKEN_INFO(token)


def product_feature(i: int, j: int) -> Feature:
    def feature(claim: TextStats, index: EvidenceIndex, weights: dict[str, float]) -> float:
        values = shipped_values(claim, index)
        return float(values[i] * values[j])

    return feature


def quadratic() -> Any:
    """The shipped features plus their pairwise products (unconstrained signs)."""
    features: dict[str, tuple[int, Feature]] = {
        f"{a}*{BASE_NAMES[j]}": (0, product_feature(i, j))
        for i, a in enumerate(BASE_NAMES)
        for j in range(i, len(BASE_NAMES))
    }
    return extra_features(features)


# ------------------------------------------------------------------ other recipe variants


_QUALIFIERS = _learned_text._words(
    "only first last largest sole currently still most best biggest highest lowest earliest "
    "oldest youngest longest shortest smallest greatest leading main major primary solely "
    "exclusively entire whole every all always never"
)
_RELATIONS = _learned_text._words(
    "under during before after since until between against without within"
)
_WORD = re.compile(r"[A-Za-z]+")


def _lower_words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


@contextmanager
def unmatched_words(name: str, vocabulary: frozenset[str]) -> Iterator[None]:
    """+ how many of the claim's words from ``vocabulary`` (stopwords to the checker: "only",
    "largest", "under", ...) its best window lacks, capped at 2: the qualifier or relation a
    partially supported claim adds to words that are all on the page."""
    with remembering_texts() as texts:

        def feature(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
            wanted = _lower_words(texts.get(c, "")) & vocabulary
            window = _lower_words(i.best_window(w).text) if wanted else set()
            return float(min(2, len(wanted - window)))

        with extra_features({name: (-1, feature)}):
            yield


@contextmanager
def evidence_items_adjacent() -> Iterator[None]:
    """Every evidence sentence of a record adjacent to the next, across evidence items. A WiCE
    record's evidence items are the consecutive sentences of one page, but the shipped index
    joins windows (and the pair features count neighbours) only inside one item, so on WiCE a
    window is one sentence."""
    original = _align.EvidenceIndex.__init__

    def init(self: EvidenceIndex, evidence: Sequence[_align.EvidenceKey]) -> None:
        original(self, evidence)
        self.item_of = [0] * len(self.item_of)

    with patched(_align.EvidenceIndex, __init__=init):
        yield


@contextmanager
def names_by_prefix(length: int) -> Iterator[None]:
    """A claim name counts as found when an evidence item shares its first ``length`` letters
    (surname forms, inflected or truncated names)."""
    original = learned._vector

    def vector(claim: TextStats, index: EvidenceIndex) -> learned.FeatureVector:
        base = original(claim, index)
        prefixes = {t[:length] for t in index.items}
        missing = sum(t not in index.items and t[:length] not in prefixes for t in claim.names)
        values = list(base.values)
        values[4] = missing / len(claim.names) if claim.names else 0.0
        values[5] = min(_learned_text.CAP, float(missing))
        return learned.FeatureVector(values=tuple(values), windows=base.windows)

    with patched(learned, _vector=vector):
        yield


@contextmanager
def recall_by_claim_type() -> Iterator[None]:
    """``idf_recall_all`` split in two monotone features: claims with numbers, claims without."""
    original = learned._vector

    def vector(claim: TextStats, index: EvidenceIndex) -> learned.FeatureVector:
        base = original(claim, index)
        values = list(base.values)
        numeric = values[3] > 0
        with_numbers = values[0] if numeric else 0.0
        values[0] = 0.0 if numeric else values[0]
        return learned.FeatureVector(values=(*values, with_numbers), windows=base.windows)

    names = (*BASE_NAMES, "idf_recall_numeric_claims")
    signs = {**BASE_SIGNS, "idf_recall_numeric_claims": 1}
    with (
        patched(learned, _vector=vector, FEATURE_NAMES=names),
        patched(tl, FEATURE_NAMES=names, FEATURE_SIGNS=signs),
    ):
        yield


_SHIPPED_TRAIN = tl.train_weights


def train_cross_fitted(examples: Sequence[Any], config: Any) -> Any:
    """The Platt map fitted on cross-fitted logits: each training dataset scored by the
    regression trained on the other training datasets (transfer, not in-sample, sharpness)."""
    full = _SHIPPED_TRAIN(examples, config)
    datasets = sorted({e.dataset for e in examples})
    if len(datasets) < 2:
        return full
    logits, labels, kept = [], [], []
    for held in datasets:
        train = [e for e in examples if e.dataset != held]
        test = [e for e in examples if e.dataset == held]
        raw = replace(_SHIPPED_TRAIN(train, config), platt_a=1.0, platt_b=0.0)
        for example, p_error in zip(test, tl.learned_scores(test, raw), strict=True):
            if p_error is not None:
                q = min(max(1.0 - p_error, 1e-9), 1.0 - 1e-9)
                logits.append(math.log(q / (1.0 - q)))
                labels.append(1.0 if example.supported else 0.0)
                kept.append(example)
    coef, bias = tl.fit_logistic(
        np.array(logits)[:, None],
        np.array(labels),
        tl.sample_weights(kept),
        replace(config, l2=1e-3),
    )
    return replace(full, platt_a=round(float(coef[0]), 8), platt_b=round(bias, 8))


_LEARNED_2_SUFFIXES = _learned_text._SUFFIXES


def stem_learned_2(word: str) -> str:
    """``learned-2``'s stemmer: one suffix dropped, nothing restored, cut to six letters."""
    word = word.lower().replace("’", "'").removesuffix("'s").strip("'-")
    for suffix in _LEARNED_2_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:6]


def gated(feature: Feature, neutral: float, gate: Callable[[TextStats], bool]) -> Feature:
    """``feature`` where ``gate`` holds for the claim, else the ``neutral`` value."""

    def value(claim: TextStats, index: EvidenceIndex, weights: dict[str, float]) -> float:
        return feature(claim, index, weights) if gate(claim) else neutral

    return value


def _named(claim: TextStats) -> bool:
    return bool(claim.names or claim.numbers)


@contextmanager
def question_as_evidence() -> Iterator[None]:
    """The record's question joins its evidence (one more snippet) for training and scoring: an
    answer that restates the question is not adding unsupported words."""
    original = tl._example

    def example(record: Any, dataset: str) -> Any:
        if not record.question.strip():
            return original(record, dataset)
        from assay.verify.types import Evidence

        question = Evidence(evidence_id="question", text=record.question)
        return original(
            record.model_copy(update={"evidence": (*record.evidence, question)}), dataset
        )

    with patched(tl, _example=example):
        yield


@contextmanager
def train_on_weakest_sentence() -> Iterator[None]:
    """Train on each answer's weakest sentence (the lowest IDF recall against all evidence)
    instead of the whole answer: the benchmark scores the weakest sentence, and features about
    where in a sentence words are missing (its tail, its pairs) mean something else for a
    paragraph."""
    original = tl._example

    def example(record: Any, dataset: str) -> Any:
        built = original(record, dataset)
        vectors = [v for unit in built.units for v in unit.against_all]
        if not vectors:
            return built
        weakest = min(vectors, key=lambda v: v.values[0])
        return replace(built, features=weakest.values)

    with patched(tl, _example=example):
        yield


def fixed_l2(value: float) -> Any:
    return patched(tl, select_l2=lambda corpus, config: (value, {}))


# ------------------------------------------------------------------ the variants and the table


@contextmanager
def nothing() -> Iterator[None]:
    yield


@contextmanager
def without_feature(name: str) -> Iterator[None]:
    """The shipped checker with one feature left out (``missing_tail_max`` on ``learned-4``'s
    text statistics: ``learned-3``)."""
    original = learned._vector
    drop = BASE_NAMES.index(name)
    names = BASE_NAMES[:drop] + BASE_NAMES[drop + 1 :]

    def vector(claim: TextStats, index: EvidenceIndex) -> learned.FeatureVector:
        base = original(claim, index)
        values = base.values[:drop] + base.values[drop + 1 :]
        return learned.FeatureVector(values=values, windows=base.windows)

    with (
        patched(learned, _vector=vector, FEATURE_NAMES=names),
        patched(tl, FEATURE_NAMES=names),
    ):
        yield


@contextmanager
def with_texts(kind: str) -> Iterator[None]:
    with remembering_texts() as texts:
        feature = clause_minimum(kind, texts)
        with extra_features({f"clause_{kind}_min": (1, feature)}):
            yield


@contextmanager
def with_prior(name: str) -> Iterator[None]:
    with extra_features({name: prior_features(frequency_prior(tuple(tl.DATASET_FILES)))[name]}):
        yield


@contextmanager
def prior_max_instead() -> Iterator[None]:
    """``prior_missing_max`` in place of ``missing_weight_max``."""
    feature = prior_features(frequency_prior(tuple(tl.DATASET_FILES)))["prior_missing_max"][1]
    original = learned._vector

    def vector(claim: TextStats, index: EvidenceIndex) -> learned.FeatureVector:
        base = original(claim, index)
        values = list(base.values)
        values[BASE_NAMES.index("missing_weight_max")] = feature(claim, index, index.weights(claim))
        return learned.FeatureVector(values=tuple(values), windows=base.windows)

    with patched(learned, _vector=vector):
        yield


@contextmanager
def both(*managers: Callable[[], Any]) -> Iterator[None]:
    if not managers:
        yield
        return
    with managers[0](), both(*managers[1:]):
        yield


def _share_of_keys(claim: TextStats) -> float:
    """The share of the claim's content items that are names or numbers: a claim dense with
    specifics has more to get wrong."""
    return len(claim.names | claim.numbers) / max(1, len(claim.items))


def _key_weight_share(claim: TextStats, weights: dict[str, float]) -> float:
    """The share of the claim's IDF weight on its names and numbers."""
    keys = claim.names | claim.numbers
    return sum(v for k, v in weights.items() if k in keys) / (sum(weights.values()) or 1.0)


@dataclass(frozen=True)
class _KeyShiftedWeights(learned.LearnedWeights):
    """Weights whose Platt map is shifted by the last value of the vector, the claim's key
    share, standardized: ``p = sigmoid(a * logit + c * x + b)``."""

    key_c: float = 0.0

    def p_supported(self, values: Sequence[float]) -> float:
        x = (values[-1] - self.mean[-1]) / self.scale[-1]
        return learned._sigmoid(self.platt_a * self.logit(values) + self.key_c * x + self.platt_b)


@contextmanager
def platt_key_share() -> Iterator[None]:
    """Fourteenth round: the claim's key share shifts the Platt map instead of entering the
    regression. The regression is fitted on the shipped features (the key share's coefficient
    is 0); the map ``sigmoid(a z + c x + b)`` is fitted on the training answers' logits ``z``
    with ``x`` the whole answer's key share, and applied to each scored sentence with its own."""
    with extra_features({"key_share": (0, lambda c, i, w: _share_of_keys(c))}):

        def train(examples: Sequence[Any], config: Any) -> Any:
            x = np.array([e.features for e in examples], dtype=np.float64)
            y = np.array([1.0 if e.supported else 0.0 for e in examples])
            mean, scale = x.mean(axis=0), x.std(axis=0)
            scale[scale < 1e-9] = 1.0
            with patched(tl, FEATURE_NAMES=BASE_NAMES):
                coef, bias = tl.fit_signed(
                    ((x - mean) / scale)[:, :-1], y, tl.sample_weights(examples), config
                )
            raw = _KeyShiftedWeights(
                feature_names=learned.FEATURE_NAMES,
                mean=tl._rounded(mean),
                scale=tl._rounded(scale),
                coef=tl._rounded(np.append(coef, 0.0)),
                bias=round(bias, tl.DIGITS),
                lower=config.lower,
                upper=config.upper,
            )
            kept = [
                (e, q) for e, q in zip(examples, tl.learned_scores(examples, raw), strict=True)
                if q is not None
            ]  # fmt: skip
            p_ok = np.clip(np.array([1.0 - q for _, q in kept]), 1e-9, 1 - 1e-9)
            z = np.log(p_ok / (1.0 - p_ok))
            share = (np.array([e.features[-1] for e, _ in kept]) - mean[-1]) / scale[-1]
            labels = np.array([1.0 if e.supported else 0.0 for e, _ in kept])
            (a, c), b = tl.fit_logistic(
                np.stack([z, share], 1), labels, tl.sample_weights([e for e, _ in kept]),
                replace(config, l2=1e-3),
            )  # fmt: skip
            return replace(raw, platt_a=float(a), platt_b=float(b), key_c=float(c))

        with patched(tl, train_weights=train):
            yield


def _feature(name: str, sign: int, f: Feature) -> Callable[[], Any]:
    return lambda: extra_features({name: (sign, f)})


def _keys_numbers(c: TextStats, i: EvidenceIndex, w: dict[str, float]) -> float:
    return keys_out_of_context(c, i, w, numbers_only=True)


# Tenth round (learned-7): WordNet synonyms, and the eighth round's two features.
LEARNED_6_NAMES = BASE_NAMES[:9]


def _no_synonym(item: str, items: frozenset[str]) -> None:
    return None  # every synonym lookup misses: the checker reads the claim's own words only


def _no_forms(item: str, items: frozenset[str]) -> list[str]:
    return [item] if item in items else []


@contextmanager
def learned_6_features(synonyms: bool = False) -> Iterator[None]:
    """``learned-6``'s nine features (with ``synonyms``, WordNet synonyms counting as found in
    its IDF recall and missing tail, as in ``learned-8``)."""
    original = learned._vector

    def vector(claim: TextStats, index: EvidenceIndex) -> learned.FeatureVector:
        base = original(claim, index)
        return learned.FeatureVector(values=base.values[:9], windows=base.windows)

    with (
        patched(learned, _vector=vector, FEATURE_NAMES=LEARNED_6_NAMES),
        patched(tl, FEATURE_NAMES=LEARNED_6_NAMES),
        nothing() if synonyms else patched(learned, synonym_in=_no_synonym),
    ):
        yield


@contextmanager
def literal_tail() -> Iterator[None]:
    """``learned-7``'s missing tail: a claim item the page has only as a synonym is missing
    there (``learned-8`` counts it as found, as the IDF recall does)."""
    original = learned._vector

    def vector(claim: TextStats, index: EvidenceIndex) -> learned.FeatureVector:
        base = original(claim, index)
        weights = index.weights(claim)
        total = sum(weights.values())
        values = list(base.values)
        _set_tail(values, learned._missing_tail(weights, index.items.__contains__), total)
        return replace(base, values=tuple(values))

    with patched(learned, _vector=vector):
        yield


def synonyms_from(path: Path) -> Callable[[], dict[str, tuple[str, ...]]]:
    """A synonym table read from ``path`` (``build_synonym_table.py --senses N --out PATH``)."""
    table = _synonyms.parse_synonym_table(path.read_text(encoding="utf-8"))
    return lambda: table


def _synonym_bigram_recall(claim: TextStats, index: EvidenceIndex) -> float:
    if not claim.bigrams:
        return 1.0 if claim.items and claim.items <= index.items else 0.0
    hits = sum(
        any(
            (x, y) in index.bigrams
            for x, y in itertools.product(
                _synonyms.forms_in(a, index.items), _synonyms.forms_in(b, index.items)
            )
        )
        for a, b in claim.bigrams
    )
    return hits / len(claim.bigrams)


def _set_tail(values: list[float], tail: list[float], total: float) -> None:
    """Write a missing tail's two features (its heaviest item's share, its length) into
    ``values``, a vector of the shipped features."""
    values[BASE_NAMES.index("missing_tail_max")] = max(tail, default=0.0) / total if total else 0.0
    values[BASE_NAMES.index("missing_tail_count")] = min(_learned_text.CAP, float(len(tail)))


def _synonym_pairs(weights: dict[str, float], index: EvidenceIndex) -> float:
    found = _synonyms.found_with_synonyms(index.items)
    heaviest = sorted((t for t in weights if found(t)), key=lambda t: -weights[t])[:6]
    places = [
        (weights[t], set().union(*(index.postings[a] for a in _synonyms.forms_in(t, index.items))))
        for t in heaviest
    ]
    total = together = 0.0
    for (weight_a, at_a), (weight_b, at_b) in itertools.combinations(places, 2):
        total += weight_a * weight_b
        together += weight_a * weight_b if at_a & at_b else 0.0
    return together / total if total else 1.0


@contextmanager
def synonyms_in(*features: str) -> Iterator[None]:
    """``learned-7`` with synonyms counting as found in more of its features: the bigram recall
    (a bigram of synonyms), the missing tail (``missing_tail_max`` and ``missing_tail_count``)
    and the pairs in one sentence (a word's sentences are its synonyms' too)."""
    original = learned._vector
    names = learned.FEATURE_NAMES

    def vector(claim: TextStats, index: EvidenceIndex) -> learned.FeatureVector:
        base = original(claim, index)
        values = list(base.values)
        weights = index.weights(claim)
        total = sum(weights.values())
        if "bigrams" in features:
            values[names.index("bigram_recall_all")] = _synonym_bigram_recall(claim, index)
        if "tail" in features:
            found = _synonyms.found_with_synonyms(index.items)
            _set_tail(values, learned._missing_tail(weights, found), total)
        if "pairs" in features:
            values[names.index("pairs_in_one_sentence")] = _synonym_pairs(weights, index)
        return replace(base, values=tuple(values))

    with patched(learned, _vector=vector):
        yield


# Eleventh round (learned-8): other WordNet relations, as their own features. A table of
# ``build_synonym_table.py --relations ...`` (``--relation-table FILE``) joins more words than
# the shipped synonyms; instead of counting those joins as found, these features let the model
# weigh them apart.
RELATION_TABLE: dict[str, tuple[str, ...]] = {}


def _relation_in(item: str, items: frozenset[str]) -> bool:
    return any(r in items for r in RELATION_TABLE.get(item, ()))


def _relation_rescued(claim: TextStats, index: EvidenceIndex, weights: dict[str, float]) -> float:
    """Weight share of the claim items missing even as synonyms that the page has through the
    relation table (0.0 when nothing is missing)."""
    total = sum(weights.values())
    found = _synonyms.found_with_synonyms(index.items)
    rescued = sum(w for t, w in weights.items() if not found(t) and _relation_in(t, index.items))
    return rescued / total if total else 0.0


def _relation_recall(claim: TextStats, index: EvidenceIndex, weights: dict[str, float]) -> float:
    """The IDF recall with relation-table joins counted as found too."""
    total = sum(weights.values())
    found = _synonyms.found_with_synonyms(index.items)
    hit = sum(w for t, w in weights.items() if found(t) or _relation_in(t, index.items))
    return hit / total if total else 1.0


def _relation_missing_max(
    claim: TextStats, index: EvidenceIndex, weights: dict[str, float]
) -> float:
    """The heaviest item missing even through synonyms and the relation table."""
    total = sum(weights.values())
    found = _synonyms.found_with_synonyms(index.items)
    gone = [w for t, w in weights.items() if not found(t) and not _relation_in(t, index.items)]
    return max(gone, default=0.0) / total if total else 0.0


# Padding inside one sentence: true filler joined by "; ", ", and" or in parentheses escapes the
# weakest-sentence rule, which splits at sentence ends only. These variants split a claim's
# sentences further, for that rule alone (the weights, trained on whole answers, are the same).
_SEMICOLON = re.compile(r";\s+")
_CONJUNCTION = re.compile(r"[,;]\s+(?=(?:and|but|while|whereas|although|though|yet)\s)", re.I)
_PARENTHESIS = re.compile(r"\s*[(\[]([^()\[\]]*)[)\]]")


def clause_splitter(*joins: str) -> Callable[[str], list[str]]:
    """``split_claim_sentences`` with each sentence split again at ``joins``: "semicolon",
    "conjunction" (a comma or semicolon before and, but, while, ...), "parenthesis" (the
    bracketed text a part of its own)."""
    original = _learned_text.split_claim_sentences

    def split(text: str) -> list[str]:
        parts: list[str] = []
        for sentence in original(text):
            inner: list[str] = []
            if "parenthesis" in joins:
                inner += [m.group(1) for m in _PARENTHESIS.finditer(sentence)]
                sentence = _PARENTHESIS.sub("", sentence)
            pieces = [sentence]
            for join, pattern in (("semicolon", _SEMICOLON), ("conjunction", _CONJUNCTION)):
                if join in joins:
                    pieces = [q for piece in pieces for q in pattern.split(piece)]
            parts += [q.strip() for q in pieces + inner if q.strip()]
        return parts or [text]

    return split


def split_clauses(*joins: str) -> Any:
    return patched(learned, split_claim_sentences=clause_splitter(*joins))


_JOINT = re.compile(
    r"\s*;\s+|\s+[-\u2013\u2014]+\s+|,\s+(?=(?:and|but|or|which|who|whom|whose|where|when|while"
    r"|whereas|although|though|yet|so|as|because|since|including)\s)",
    re.I,
)


def split_segments(min_items: int) -> Any:
    return patched(learned, split_claim_sentences=segment_splitter(min_items))


def segment_splitter(min_items: int) -> Callable[[str], list[str]]:
    """Each sentence whole, and besides it each of its segments (split at semicolons, dashes,
    a comma before a conjunction or relative word, brackets: the joints filler can hide
    behind) that holds at least ``min_items`` content items: the weakest of all decides."""
    original = _learned_text.split_claim_sentences

    def split(text: str) -> list[str]:
        parts: list[str] = []
        for sentence in original(text):
            parts.append(sentence)
            inner = [m.group(1) for m in _PARENTHESIS.finditer(sentence)]
            pieces = _JOINT.split(_PARENTHESIS.sub("", sentence)) + inner
            if len(pieces) > 1:
                parts += [
                    q.strip()
                    for q in pieces
                    if len(_learned_text.text_stats(q.strip()).items) >= min_items
                ]
        return parts or [text]

    return split


def _one_sentence_holds(items: frozenset[str], index: EvidenceIndex) -> bool:
    """``learned._one_window_holds`` with windows of one evidence sentence only."""
    places = [{p for t in _synonyms.forms_in(i, index.items) for p in index.postings[t]}
              for i in items]  # fmt: skip
    return not places or bool(set.intersection(*places))


@contextmanager
def leading_names() -> Iterator[None]:
    """Thirteenth round: a remainder is also judged alone when its first word is capitalised and
    the evidence writes that word as a name (not only at a sentence start), or when it holds a
    name that stood inside the whole sentence. ``claim_vectors`` calls
    ``without_copied_runs(pieces, index)`` just before ``_judged_alone``; the wrapper keeps the
    sentence, the remainder and the index for the predicate."""
    seen: dict[str, Any] = {}
    original_runs = learned.without_copied_runs

    def runs(pieces: Sequence[str], index: EvidenceIndex) -> list[str]:
        kept = original_runs(pieces, index)
        seen.update(sentence=" ".join(pieces), rest=" ".join(kept), index=index)
        return kept

    def judged(rest: TextStats) -> bool:
        sentence_names = _learned_text.text_stats(seen["sentence"]).names
        if rest.names or rest.numbers or sentence_names & rest.items:
            return True
        lead = _leading_name(seen["rest"])
        index: EvidenceIndex = seen["index"]
        return lead is not None and any(
            lead in index.sentences[p].stats.names for p in index.postings.get(lead, ())
        )

    with patched(learned, without_copied_runs=runs, _judged_alone=judged):
        yield


def _leading_name(text: str) -> str | None:
    """The item of ``text``'s first word when it is capitalised (``text_stats`` never counts a
    sentence's first word as a name)."""
    raw = _learned_text._raw_tokens(text)
    if not raw:
        return None
    item, _, capitalised = _learned_text._token_info(raw[0])
    return item if capitalised else None


VARIANTS: dict[str, Callable[[], Any]] = {
    "shipped": nothing,
    "learned_6": learned_6_features,
    "learned_6+synonym_recall": lambda: both(
        literal_tail, lambda: learned_6_features(synonyms=True)
    ),
    "learned_7": literal_tail,
    "without_synonyms": lambda: patched(learned, synonym_in=_no_synonym, forms_in=_no_forms),
    "relation_rescued": _feature("relation_rescued", 1, _relation_rescued),
    "split_semicolons": lambda: split_clauses("semicolon"),
    "split_conjunctions": lambda: split_clauses("semicolon", "conjunction"),
    "split_parentheses": lambda: split_clauses("parenthesis"),
    "split_clauses": lambda: split_clauses("semicolon", "conjunction", "parenthesis"),
    **{f"segments_{n}": partial(split_segments, n) for n in (1, 3, 5, 8)},
    "learned_8": lambda: patched(learned, COPIED_RUN_ITEMS=10**9),  # no run is left out
    "copied_runs_in_one_sentence": lambda: patched(learned, _one_window_holds=_one_sentence_holds),
    # learned-9: the sentence without its copied runs judged whatever remains
    "learned_9": lambda: patched(learned, _judged_alone=lambda rest: bool(rest.items)),
    "leading_names": leading_names,
    "key_share": _feature("key_share", -1, lambda c, i, w: _share_of_keys(c)),
    "key_share_free": _feature("key_share", 0, lambda c, i, w: _share_of_keys(c)),
    "platt_key_share": platt_key_share,
    "key_count": _feature("key_count", -1, lambda c, i, w: min(4, len(c.names | c.numbers)) / 4),
    "item_count": _feature("item_count", 0, lambda c, i, w: min(20, len(c.items)) / 20),
    "key_weight_share": _feature("key_weight_share", -1, lambda c, i, w: _key_weight_share(c, w)),
    **{
        f"copied_run_items_{n}": partial(patched, learned, COPIED_RUN_ITEMS=n)
        for n in (3, 4, 6, 7, 10)
    },
    "relation_recall": _feature("relation_recall", 1, _relation_recall),
    "relation_missing_max": _feature("relation_missing_max", -1, _relation_missing_max),
    "without_synonym_missing_max": lambda: without_feature("synonym_missing_max"),
    "without_missing_tail_count": lambda: without_feature("missing_tail_count"),
    "without_pairs_in_one_sentence": lambda: without_feature("pairs_in_one_sentence"),
    "synonyms_in_bigrams": lambda: synonyms_in("bigrams"),
    "synonyms_in_tail": lambda: synonyms_in("tail"),
    "synonyms_in_pairs": lambda: synonyms_in("pairs"),
    "synonyms_everywhere": lambda: synonyms_in("bigrams", "tail", "pairs"),
    "without_missing_tail": lambda: both(  # learned-3
        learned_4_text, lambda: without_feature("missing_tail_max")
    ),
    # ablations of learned-3's text statistics
    "learned-2_stemmer": lambda: patched(_learned_text, stem=stem_learned_2),
    "no_scale_merge": lambda: patched(_learned_text, _SCALE_ITEMS=frozenset()),
    "learned-2_text": lambda: both(
        lambda: patched(_learned_text, stem=stem_learned_2),
        lambda: patched(_learned_text, _SCALE_ITEMS=frozenset()),
    ),
    **{f"stem_length_{n}": partial(patched, _learned_text, _STEM_LENGTH=n) for n in (5, 7, 8)},
    "strong_stemmer": lambda: patched(_learned_text, stem=stem_strong),
    "british_to_american": lambda: patched(_learned_text, stem=stem_british),
    "accents_folded": lambda: patched(_learned_text, _raw_tokens=raw_folded),
    "number_merge": lambda: patched(_learned_text, _raw_tokens=raw_merged),
    "hyphen_split": lambda: patched(_learned_text, _raw_tokens=raw_hyphen_split),
    "context_recall": _feature("context_recall", 1, context_recall),
    "keys_out_of_context": _feature("keys_out_of_context", -1, keys_out_of_context),
    "numbers_out_of_context": _feature("numbers_out_of_context", -1, _keys_numbers),
    "number_merge+keys_out_of_context": lambda: both(
        lambda: patched(_learned_text, _raw_tokens=raw_merged),
        _feature("keys_out_of_context", -1, keys_out_of_context),
    ),
    **{
        f"top{k}_sentences_recall": _feature(f"top{k}_recall", 1, top_sentences_recall(k))
        for k in (5, 10, 20)
    },
    **{name: _feature(name, s, f) for name, (s, f) in simple_features().items()},
    **{f"clause_{kind}_min": partial(with_texts, kind) for kind in ("window", "context", "all")},
    **{
        f"{name} (table from all evidence)": partial(with_prior, name)
        for name in ("prior_missing_frac", "prior_idf_recall", "rare_missing", "prior_missing_max")
    },
    "prior_missing_max instead of missing_weight_max": prior_max_instead,
    "names_by_prefix4": lambda: names_by_prefix(4),
    "names_by_prefix5": lambda: names_by_prefix(5),
    "idf_recall_by_claim_type": recall_by_claim_type,
    **{
        f"soft_prefix{n}_recall": _feature(f"soft_prefix{n}_recall", 1, soft_recall(n))
        for n in (4, 5)
    },
    **{
        f"soft_prefix{n}_missing_max": _feature(f"soft{n}_missing_max", -1, soft_missing_max(n))
        for n in (4, 5)
    },
    **{name: _feature(name, s, f) for name, (s, f) in third_round_features().items()},
    **{name: _feature(name, s, f) for name, (s, f) in fourth_round_features().items()},
    **{name: _feature(name, s, f) for name, (s, f) in fifth_round_features().items()},
    **{name: _feature(name, s, f) for name, (s, f) in sixth_round_features().items()},
    **{name: _feature(name, s, f) for name, (s, f) in inserted_features().items()},
    "missing_tail_max+last_item_missing": lambda: extra_features(
        {n: fifth_round_features()[n] for n in ("missing_tail_max", "last_item_missing")}
    ),
    "missing_tail_all+last_item_missing": lambda: extra_features(
        {n: fifth_round_features()[n] for n in ("missing_tail_all", "last_item_missing")}
    ),
    "quadratic": quadratic,
    "month_abbreviations": lambda: patched(_learned_text, stem=stem_months),
    # seventh round: on learned-4's text; learned-5 is demonyms+discourse_generic_stopwords
    "without_word_tables": learned_4_text,  # learned-4
    "irregular_forms": lambda: learned_4_text(forms=_IRREGULAR),
    "irregular_verbs_only": lambda: learned_4_text(
        forms={k: v for k, v in _IRREGULAR.items() if v not in _LIFE}
    ),
    "birth_death_marriage_only": lambda: learned_4_text(
        forms={k: v for k, v in _IRREGULAR.items() if v in _LIFE}
    ),
    "demonyms": lambda: learned_4_text(demonyms=True),
    "irregular_forms+demonyms": lambda: learned_4_text(demonyms=True, forms=_IRREGULAR),
    "discourse_stopwords": lambda: learned_4_text(
        stopwords=_learned_text.DISCOURSE_WORDS - _GENERIC
    ),
    "discourse_generic_stopwords": lambda: learned_4_text(stopwords=_learned_text.DISCOURSE_WORDS),
    "demonyms+discourse_generic_stopwords": lambda: learned_4_text(
        demonyms=True, stopwords=_learned_text.DISCOURSE_WORDS
    ),
    "ordinals": lambda: patched(_learned_text, _raw_tokens=raw_ordinals),
    # ninth round: learned-6 is learned-5 with dates as units
    "without_dates": lambda: patched(_learned_text, _raw_tokens=_learned_text._plain_tokens),
    "month_years": lambda: patched(_learned_text, _raw_tokens=raw_month_years),
    "name_pairs": lambda: patched(
        _learned_text, _raw_tokens=raw_name_pairs, _token_info=token_info_with_phrases
    ),
    "answer_words_stopwords (table from all three files)": lambda: patched(
        _learned_text,
        STOPWORDS=_learned_text.STOPWORDS | answer_words(("expertqa", "wice", "halueval")),
    ),
    # on learned-5: the closest earlier candidates together
    "missing_tail_count+pairs_together_sentence": lambda: extra_features(
        {
            "missing_tail_count": fifth_round_features()["missing_tail_count"],
            "pairs_together_sentence": third_round_features()["pairs_together_sentence"],
        }
    ),
    "missing_tail_count+keys_out_of_context": lambda: extra_features(
        {
            "missing_tail_count": fifth_round_features()["missing_tail_count"],
            "keys_out_of_context": (-1, keys_out_of_context),
        }
    ),
    "evidence_items_adjacent+pairs_together+missing_tail_count": lambda: both(
        evidence_items_adjacent,
        lambda: extra_features(
            {
                "pairs_together": third_round_features()["pairs_together"],
                "missing_tail_count": fifth_round_features()["missing_tail_count"],
            }
        ),
    ),
    "missing_tail_count+pairs_together_sentence+fixed_l2_1000": lambda: both(
        lambda: fixed_l2(1000.0),
        VARIANTS["missing_tail_count+pairs_together_sentence"],
    ),
    "pairs_together_sentence+fixed_l2_1000 (on learned-5)": lambda: both(
        lambda: fixed_l2(1000.0),
        VARIANTS["pairs_together_sentence"],
    ),
    "missing_tail_count2+pairs_together_sentence": lambda: extra_features(
        {
            "missing_tail_count2": fifth_round_features()["missing_tail_count2"],
            "pairs_together_sentence": third_round_features()["pairs_together_sentence"],
        }
    ),
    "missing_tail_all+pairs_together_sentence": lambda: extra_features(
        {
            "missing_tail_all": fifth_round_features()["missing_tail_all"],
            "pairs_together_sentence": third_round_features()["pairs_together_sentence"],
        }
    ),
    "named_claims_only:missing_tail_count+pairs_together_sentence": lambda: extra_features(
        {
            "missing_tail_count_named": (
                -1,
                gated(fifth_round_features()["missing_tail_count"][1], 0.0, _named),
            ),
            "pairs_together_sentence_named": (1, gated(pairs_together(6, 0), 1.0, _named)),
        }
    ),
    "question_as_evidence": question_as_evidence,
    "train_on_weakest_sentence": train_on_weakest_sentence,
    "train_on_weakest_sentence+missing_tail_count+pairs_together_sentence": lambda: both(
        lambda: extra_features(
            {
                "missing_tail_count": fifth_round_features()["missing_tail_count"],
                "pairs_together_sentence": third_round_features()["pairs_together_sentence"],
            }
        ),
        train_on_weakest_sentence,
    ),
    "connective_stopwords": lambda: patched(
        _learned_text, STOPWORDS=_learned_text.STOPWORDS | _CONNECTIVES
    ),
    "answer_verbs_stopwords": lambda: patched(
        _learned_text, STOPWORDS=_learned_text.STOPWORDS | _ANSWER_VERBS
    ),
    "percent": lambda: patched(_learned_text, _raw_tokens=raw_percent),
    "units": lambda: patched(_learned_text, stem=stem_through(_UNITS)),
    "evidence_items_adjacent": evidence_items_adjacent,
    "qualifiers_unmatched": lambda: unmatched_words("qualifiers_unmatched", _QUALIFIERS),
    "relations_unmatched": lambda: unmatched_words("relations_unmatched", _RELATIONS),
    "evidence_items_adjacent+pairs_together": lambda: both(
        evidence_items_adjacent, _feature("pairs_together", 1, pairs_together(6, 1))
    ),
    "pairs_together_sentence+fixed_l2_1000": lambda: both(
        lambda: fixed_l2(1000.0),
        _feature("pairs_together_sentence", 1, pairs_together(6, 0)),
    ),
    "cross_fitted_platt": lambda: patched(tl, train_weights=train_cross_fitted),
    **{f"fixed_l2_{int(v)}": partial(fixed_l2, v) for v in (1e3, 3e3, 1e4, 1e5)},
    "l2_grid_to_1e5": lambda: patched(tl, L2_GRID=(1.0, 10.0, 100.0, 1e3, 1e4, 1e5)),
    "fixed_l2_1000+number_merge": lambda: both(
        lambda: fixed_l2(1000.0), lambda: patched(_learned_text, _raw_tokens=raw_merged)
    ),
}


def feature_pool() -> dict[str, tuple[int, Feature]]:
    """The extra features of the rounds above that read only the claim and the index (21; not
    the frequency prior's, the clause minima or the unmatched words), each free to take either
    sign."""
    pool: dict[str, tuple[int, Feature]] = {
        **simple_features(),
        **third_round_features(),
        **fourth_round_features(),
        "context_recall": (1, context_recall),
        "keys_out_of_context": (-1, keys_out_of_context),
        "top5_recall": (1, top_sentences_recall(5)),
        "top20_recall": (1, top_sentences_recall(20)),
        "soft4_recall": (1, soft_recall(4)),
        "soft5_missing_max": (-1, soft_missing_max(5)),
    }
    return {name: (0, f) for name, (_, f) in pool.items()}


def in_domain_ceiling(dataset: str, seeds: Sequence[int], pool: bool) -> list[str]:
    """Grouped 5-fold inside ``dataset`` with the *other* datasets left out of training: how
    far the shipped features (with ``pool``, every extra feature too) go when the weights see
    only this kind of data (each L2 of the grid; held out by folds, but the best row is chosen
    on the evaluated file)."""
    clear_caches()
    with extra_features(feature_pool()) if pool else nothing():
        return _in_domain_table(dataset, seeds)


def _in_domain_table(dataset: str, seeds: Sequence[int]) -> list[str]:
    # The training script's grouped folds on a corpus of this one file: nothing else to train on.
    corpus = tl.load_corpus(tl.DEFAULT_DATA_DIR, [dataset])
    examples = corpus.examples[dataset]
    lines = [
        f"## in-domain {dataset}, {len(tl.FEATURE_NAMES)} features "
        "(trained on its own other folds only)"
    ]
    for l2 in tl.L2_GRID:
        config = tl.TrainConfig(train_on=(dataset,), l2=l2)
        cells = [
            f"5f/s{seed} "
            + tl._triple(
                tl.score(examples, tl.grouped_cross_validation(corpus, config, 5, seed)[dataset])
            )
            for seed in seeds
        ]
        lines.append(f"L2 {l2:<7g} " + " | ".join(cells))
    return lines


PRIOR_SHIFTS = (-0.4, -0.2, 0.0, 0.2, 0.4, 0.6)
PRIOR_SLOPES = (0.7, 1.0, 1.3)
# learned-1's ECE, the issue's "today" (WiCE held out, the others in its fit)
TODAY_ECE = {"expertqa": 0.296, "wice": 0.076, "halueval": 0.226}
FINE_SHIFTS = tuple(round(-1.0 + 0.05 * k, 2) for k in range(41))  # -1 .. +1
FINE_SLOPES = tuple(round(0.3 + 0.05 * k, 2) for k in range(55))  # 0.3 .. 3


def shifted(p_error: Sequence[float | None], shift: float, slope: float) -> list[float | None]:
    """``p_error`` through ``sigmoid(slope * logit(p) + shift)``: another Platt map on top."""
    out: list[float | None] = []
    for p in p_error:
        if p is None:
            out.append(None)
            continue
        q = min(max(p, 1e-9), 1.0 - 1e-9)
        out.append(1.0 / (1.0 + math.exp(-(slope * math.log(q / (1.0 - q)) + shift))))
    return out


def prior_sweep() -> list[str]:
    """BAcc / ECE of every dataset under a shifted and rescaled map (LODO, grouped 5-fold and
    the shipped fit): can any one map bring WiCE's ECE down without raising another file's?"""
    clear_caches()
    corpus = tl.load_corpus(tl.DEFAULT_DATA_DIR)
    config = tl.TrainConfig()
    l2, _ = tl.select_l2(corpus, config)
    config = tl._with(config, config.train_on, l2)
    runs = {
        "shipped (in fit)": {
            n: tl.learned_scores(ex, tl.train_weights(corpus.select(config.train_on), config))
            for n, ex in corpus.examples.items()
        },
        "LODO": tl.leave_one_dataset_out(corpus, config),
        "5-fold": tl.grouped_cross_validation(corpus, config, 5, 0),
    }
    lines = ["| scores | shift | slope | " + " | ".join(corpus.examples) + " |"]
    for run, scores in runs.items():
        for shift, slope in itertools.product(PRIOR_SHIFTS, PRIOR_SLOPES):
            cells = []
            for name, examples in corpus.examples.items():
                result = tl.score(examples, shifted(scores[name], shift, slope))
                cells.append(f"{100 * result.balanced_accuracy:.1f} / {result.ece:.3f}")
            lines.append(f"| {run} | {shift:+.1f} | {slope} | " + " | ".join(cells) + " |")
    for run, scores in runs.items():
        lines.append(f"{run}: {_maps_meeting_today(corpus, scores)}")
    return lines


def _maps_meeting_today(corpus: Any, scores: dict[str, list[float | None]]) -> str:
    """How many maps of a fine grid keep every file's ECE at or under learned-1's."""
    meeting = 0
    for shift, slope in itertools.product(FINE_SHIFTS, FINE_SLOPES):
        meeting += all(
            tl.score(examples, shifted(scores[name], shift, slope)).ece <= TODAY_ECE[name]
            for name, examples in corpus.examples.items()
        )
    return (
        f"{meeting} of {len(FINE_SHIFTS) * len(FINE_SLOPES)} maps (shift -1..+1 by 0.05, slope "
        "0.3..3 by 0.05) keep every file's ECE at or under learned-1's"
    )


def table(name: str, seeds: Sequence[int]) -> list[str]:
    """LODO and grouped 5-fold of one variant, the training script's recipe and scoring."""
    clear_caches()
    with VARIANTS[name]():
        corpus = tl.load_corpus(tl.DEFAULT_DATA_DIR)
        config = tl.TrainConfig()
        lodo = tl.leave_one_dataset_out(corpus, config)
        l2, _ = tl.select_l2(corpus, config)
        config = tl._with(config, config.train_on, l2)
        folds = {s: tl.grouped_cross_validation(corpus, config, 5, s) for s in seeds}
    lines = [f"## {name}"]
    for dataset, examples in corpus.examples.items():
        cells = [f"LODO {tl._triple(tl.score(examples, lodo[dataset]))}"]
        cells += [f"5f/s{s} {tl._triple(tl.score(examples, f[dataset]))}" for s, f in folds.items()]
        lines.append(f"{dataset:9s} " + " | ".join(cells))
    return lines


def em_prior(p_error: Sequence[float], iterations: int = 500) -> tuple[float, list[float]]:
    """The error rate of unlabelled scores by EM (Saerens, Latinne and Decaestecker, "Adjusting
    the outputs of a classifier to new a priori probabilities", 2002), from the training prior
    0.5 the Platt map speaks for, and the scores moved to it. Reads no label."""
    clipped = [min(max(p, 1e-6), 1.0 - 1e-6) for p in p_error]
    prior, adjusted = 0.5, clipped
    for _ in range(iterations):
        up, down = prior / 0.5, (1.0 - prior) / 0.5
        adjusted = [p * up / (p * up + (1.0 - p) * down) for p in clipped]
        new = sum(adjusted) / len(adjusted)
        if abs(new - prior) < 1e-9:
            break
        prior = new
    return prior, adjusted


def label_free_prior() -> list[str]:
    """Each held-out file's scores moved to the error rate EM estimates from them (no labels):
    could a run adapt its own prior and lower ECE everywhere?"""
    clear_caches()
    corpus = tl.load_corpus(tl.DEFAULT_DATA_DIR)
    config = tl.TrainConfig()
    l2, _ = tl.select_l2(corpus, config)
    runs = {
        "LODO": tl.leave_one_dataset_out(corpus, config),
        "5-fold": tl.grouped_cross_validation(corpus, tl._with(config, config.train_on, l2), 5, 0),
    }
    lines = [
        "| scores | dataset | error rate | EM estimate | BAcc before -> after "
        "| ECE before -> after |",
        "|---|---|---:|---:|---|---|",
    ]
    for run, scores in runs.items():
        for name, examples in corpus.examples.items():
            kept = [i for i, p in enumerate(scores[name]) if p is not None]
            prior, adjusted = em_prior([scores[name][i] for i in kept])
            moved = list(scores[name])
            for i, p in zip(kept, adjusted, strict=True):
                moved[i] = p
            before, after = tl.score(examples, scores[name]), tl.score(examples, moved)
            rate = sum(not e.supported for e in examples) / len(examples)
            lines.append(
                f"| {run} | {name} | {rate:.3f} | {prior:.3f} | "
                f"{100 * before.balanced_accuracy:.1f} -> {100 * after.balanced_accuracy:.1f} | "
                f"{before.ece:.3f} -> {after.ece:.3f} |"
            )
    return lines


def tail_rates() -> list[str]:
    """How often a whole answer ends in a missing tail (``learned-4``'s ninth feature is not 0),
    and how often it misses any item at all, by dataset and label."""
    clear_caches()
    corpus = tl.load_corpus(tl.DEFAULT_DATA_DIR)
    position = tl.FEATURE_NAMES.index("missing_tail_max")
    lines = [
        "| dataset | label | n | missing tail | any item missing |",
        "|---|---|---:|---:|---:|",
    ]
    for name, examples in corpus.examples.items():
        for supported in (True, False):
            chosen = [e for e in examples if e.supported is supported]
            tail = sum(e.features[position] > 0 for e in chosen) / len(chosen)
            missing = sum(e.features[0] < 1 for e in chosen) / len(chosen)
            label = "grounded" if supported else "error"
            lines.append(f"| {name} | {label} | {len(chosen)} | {tail:.2f} | {missing:.2f} |")
    return lines


def criterion(name: str) -> list[str]:
    """The training script's own model-selection criterion for one variant: the best mean
    transfer AUROC between training files (fit on one, score each other one) over the L2 grid,
    for every set of training files. It never looks at a held-out file, so a variant it prefers
    is not chosen on the evaluated data."""
    clear_caches()
    with VARIANTS[name]():
        corpus = tl.load_corpus(tl.DEFAULT_DATA_DIR)
        names = tuple(corpus.examples)
        cells = []
        for train_on in [names, *itertools.combinations(names, 2)]:
            _, by_l2 = tl.select_l2(corpus, tl._with(tl.TrainConfig(), tuple(train_on), 1.0))
            cells.append(f"{'+'.join(train_on)} {max(by_l2.values()):.4f}")
    return [f"## criterion {name}: " + " | ".join(cells)]


def padding_flips(name: str) -> list[str]:
    """``bench_checker.py``'s padding attack on one variant, with the weights the shipped recipe
    fits under it (all three files; for ``shipped`` the shipped weights): of the unsupported
    answers the checker does not call supported, the share that filler appended as sentences of
    their own, or joined into the answer's sentence, turns supported."""
    bench = _bench_checker()
    clear_caches()
    cells = []
    with VARIANTS[name]():
        weights = tl.train_shipped(tl.DEFAULT_DATA_DIR).weights
        for dataset, relative in bench.FILES.items():
            records = tl.DATASET_FILES[dataset][1](tl.DEFAULT_DATA_DIR / relative).records
            quality = bench._quality(learned.LearnedChecker(weights), records)
            (appended, total), (joined, _) = quality["padding"], quality["joined"]
            cells.append(f"{dataset} appended {appended}/{total} joined {joined}/{total} "
                         f"({100 * joined / total:.1f}%)")  # fmt: skip
    clear_caches()
    return [f"## flips {name}: " + " | ".join(cells)]


def _bench_checker() -> ModuleType:
    benchmarks = Path(__file__).resolve().parents[1] / "benchmarks"
    # bench_checker imports its sibling _git_source by bare name, as when run as a script
    if str(benchmarks) not in sys.path:
        sys.path.insert(0, str(benchmarks))
    spec = importlib.util.spec_from_file_location("bench_checker", benchmarks / "bench_checker.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PLATT_COVARIATES: dict[str, Callable[[Any], float]] = {
    "claims": lambda e: math.log(1 + len(e.units)),
    "answer_chars": lambda e: math.log(1 + len(e.record.answer or "")),
    "evidence_chars": lambda e: math.log(1 + sum(len(x.text) for x in e.record.evidence)),
    "key_share": lambda e: _key_share(e.record.answer or ""),
    "keys_missing": lambda e: float(_keys_missing(e.record.answer or "", e.record.evidence)),
}


def _key_share(answer: str) -> float:
    """The share of the answer's content items that are names or numbers."""
    stats = _learned_text.text_stats(answer)
    return len(stats.names | stats.numbers) / max(1, len(stats.items))


def _keys_missing(answer: str, evidence: Any) -> int:
    """How many of the answer's names and numbers the evidence lacks (capped at 3)."""
    stats = _learned_text.text_stats(answer)
    index = _align.evidence_index(evidence)
    return min(3, len((stats.names | stats.numbers) - index.items))


def _logits(examples: Sequence[Any], weights: Any) -> Any:
    """logit(p_error) of each answer; NaN where the checker gave no score."""
    p = np.array([np.nan if q is None else q for q in tl.learned_scores(examples, weights)])
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return np.log(p / (1 - p))


COVARIATE_FORMS: dict[str, tuple[Callable[[Any, Any], Any], ...]] = {
    "full": (lambda z, x: z, lambda z, x: z * x, lambda z, x: x),  # a z + b z x + c x + d
    "shift": (lambda z, x: z, lambda z, x: x),  # a z + c x + d
    "slope": (lambda z, x: z, lambda z, x: z * x),  # a z + b z x + d
}


def covariate_platt(form: str = "full") -> list[str]:
    """LODO with one more map whose slope and shift depend on a property of the record (how
    many claims, how long the answer or the evidence, how much of it names something), fitted
    on the training files only: ``p = sigmoid(a * z + b * z * x + c * x + d)`` (``form``
    "shift" drops ``b``, "slope" drops ``c``). Can the kind of data set the prior?"""
    columns = COVARIATE_FORMS[form]
    clear_caches()
    corpus = tl.load_corpus(tl.DEFAULT_DATA_DIR)
    names = tuple(corpus.examples)
    lines = ["| covariate | " + " | ".join(f"{n} LODO" for n in names) + " |"]
    for label, covariate in [("none", None), *PLATT_COVARIATES.items()]:
        cells = []
        for held in names:
            train = tuple(n for n in names if n != held)
            l2, _ = tl.select_l2(corpus, tl._with(tl.TrainConfig(), train))
            config = tl._with(tl.TrainConfig(), train, l2)
            train_examples, examples = corpus.select(train), corpus.examples[held]
            weights = tl.train_weights(train_examples, config)
            z_train, z = _logits(train_examples, weights), _logits(examples, weights)
            if covariate is None:
                p = 1 / (1 + np.exp(-z))
            else:
                x_train = np.array([covariate(e) for e in train_examples])
                x = np.array([covariate(e) for e in examples])
                mu, sd = x_train.mean(), x_train.std() or 1.0
                x_train, x = (x_train - mu) / sd, (x - mu) / sd
                error = np.array([0.0 if e.supported else 1.0 for e in train_examples])
                scored = ~np.isnan(z_train)
                coef, bias = tl.fit_logistic(
                    np.stack([f(z_train, x_train) for f in columns], 1)[scored],
                    error[scored],
                    tl.sample_weights(train_examples)[scored],
                    replace(config, l2=1e-3),
                )
                p = 1 / (1 + np.exp(-(np.stack([f(z, x) for f in columns], 1) @ coef + bias)))
            scores = [None if np.isnan(v) else float(v) for v in p]
            cells.append(tl._triple(tl.score(examples, scores)))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--only", nargs="*", choices=sorted(VARIANTS), default=None)
    parser.add_argument("--seeds", type=int, nargs="*", default=[0], help="fold salts")
    parser.add_argument(
        "--in-domain", choices=sorted(tl.DATASET_FILES), help="train and test inside one file"
    )
    parser.add_argument("--pool", action="store_true", help="--in-domain with every extra feature")
    parser.add_argument("--prior-sweep", action="store_true", help="shifted calibration maps")
    parser.add_argument(
        "--criterion", action="store_true", help="the training script's transfer criterion only"
    )
    parser.add_argument(
        "--flips", action="store_true", help="padding flip rates (shipped weights) only"
    )
    parser.add_argument("--tail-rates", action="store_true", help="missing tails by label")
    parser.add_argument("--em-prior", action="store_true", help="label-free prior adaptation")
    parser.add_argument("--covariate-platt", action="store_true", help="record-dependent maps")
    parser.add_argument("--covariate-form", choices=sorted(COVARIATE_FORMS), default="full")
    parser.add_argument(
        "--synonyms", type=Path, help="another synonym table (build_synonym_table.py --senses N)"
    )
    parser.add_argument(
        "--relation-table", type=Path, help="a table for the relation_* variants (--relations)"
    )
    args = parser.parse_args(argv)
    if args.relation_table:
        RELATION_TABLE.update(
            _synonyms.parse_synonym_table(args.relation_table.read_text(encoding="utf-8"))
        )
    if args.synonyms:
        _synonyms.synonym_table = synonyms_from(args.synonyms)  # type: ignore[assignment]
    if args.covariate_platt:
        print("\n".join(covariate_platt(args.covariate_form)))
        return 0
    if args.em_prior:
        print("\n".join(label_free_prior()))
        return 0
    if args.tail_rates:
        print("\n".join(tail_rates()))
        return 0
    if args.in_domain:
        print("\n".join(in_domain_ceiling(args.in_domain, args.seeds, args.pool)))
        return 0
    if args.prior_sweep:
        print("\n".join(prior_sweep()))
        return 0
    # the relation_* variants mean nothing without a relation table: asked for, they need one;
    # in the every-variant run they are skipped
    names = args.only or [
        n for n in VARIANTS if args.relation_table or not n.startswith("relation_")
    ]
    if not args.relation_table and any(n.startswith("relation_") for n in names):
        parser.error("the relation_* variants need --relation-table FILE")
    for name in names:
        if args.flips:
            lines = padding_flips(name)
        else:
            lines = criterion(name) if args.criterion else table(name, args.seeds)
        print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
