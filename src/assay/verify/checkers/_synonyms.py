"""The ``learned`` checker's synonym table: WordNet first-sense synonyms, as stems.

A claim that says "movie" where its source says "film" has lost nothing, yet by words alone the
claim's heaviest item is missing. The table (built by ``scripts/build_synonym_table.py`` from the
WordNet 3.1 database, whose license is at the top of the file) maps a stem to the stems of the
other words in its most frequent sense; a claim stem counts as found when it or one of these is
in the evidence. It ships in the package, so the check stays free of models and downloads.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from importlib import resources

SYNONYMS_FILE = "wordnet_synonyms.tsv"


@lru_cache(maxsize=1)
def synonym_table() -> dict[str, tuple[str, ...]]:
    """Stem -> the stems of its first-sense synonyms (loaded once: 23,154 lines, 22-34 ms)."""
    text = resources.files(__package__ or "assay.verify.checkers").joinpath(SYNONYMS_FILE)
    return parse_synonym_table(text.read_text(encoding="utf-8"))


def parse_synonym_table(text: str) -> dict[str, tuple[str, ...]]:
    """The table of a synonym file: ``stem<TAB>stem stem ...`` lines, ``#`` lines skipped."""
    table: dict[str, tuple[str, ...]] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, related = line.partition("\t")
            table[key] = tuple(related.split())
    return table


def found_with_synonyms(items: frozenset[str]) -> Callable[[str], bool]:
    """A test of whether a claim item, or one of its synonyms, is among ``items``."""
    return lambda item: item in items or synonym_in(item, items) is not None


def synonym_in(item: str, items: frozenset[str]) -> str | None:
    """The first synonym of ``item`` among ``items`` (stems, in the table's order), if any."""
    return next((s for s in synonym_table().get(item, ()) if s in items), None)


def forms_in(item: str, items: frozenset[str]) -> list[str]:
    """``item`` and those of its synonyms that are among ``items`` (stems)."""
    return [s for s in (item, *synonym_table().get(item, ())) if s in items]
