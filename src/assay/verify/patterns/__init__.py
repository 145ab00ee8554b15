"""Verifier patterns: one module each, one shared interface (:mod:`.base`)."""

from __future__ import annotations

from .base import (
    PATTERN_NAMES,
    AnswerScore,
    Candidate,
    Critique,
    Pattern,
    PatternContext,
    PatternName,
    PatternOutcome,
    PatternSettings,
    Revision,
)
from .best_of_n import BestOfN
from .entailment import Entailment
from .self_consistency import SelfConsistency


def get_pattern(name: PatternName) -> Pattern:
    """The pattern called ``name`` (one of :data:`PATTERN_NAMES`)."""
    patterns: dict[str, type[Pattern]] = {
        "best_of_n": BestOfN,
        "entailment": Entailment,
        "self_consistency": SelfConsistency,
    }
    return patterns[name]()


__all__ = [
    "PATTERN_NAMES",
    "AnswerScore",
    "BestOfN",
    "Candidate",
    "Critique",
    "Entailment",
    "Pattern",
    "PatternContext",
    "PatternName",
    "PatternOutcome",
    "PatternSettings",
    "Revision",
    "SelfConsistency",
    "get_pattern",
]
