"""The synonym table: built by scripts/build_synonym_table.py from a WordNet database (here a
small one in WordNet's own file format), shipped with its license, loaded by the checker."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from assay.verify.checkers._learned_text import stem
from assay.verify.checkers._synonyms import SYNONYMS_FILE, found_with_synonyms, synonym_table

from ..conftest import REPO_ROOT

LICENSE = ["  1 Tiny WordNet license.  ", "  2 Keep this notice.  "]
# offset lex_filenum ss_type w_cnt word lex_id ... p_cnt | gloss (the fields the builder reads)
DATA = {
    "noun": [
        "00000001 10 n 03 movie 0 film 0 flick 0 001 ~ 00000006 n 0000 | a motion picture",
        "00000002 06 n 02 film 1 photographic_film 0 000 | a coating",
        "00000003 06 n 02 coat 0 coating 0 000 | an outer layer",
        "00000006 10 n 01 talkie 0 001 @ 00000001 n 0000 | a film with sound",
        "00000007 26 n 01 death 0 001 + 00000004 v 0101 | the end of life",
    ],
    # a lexical pointer: lemma 1 of this synset (die) to lemma 1 of the target (death)
    "verb": ["00000004 30 v 02 die 0 decease 0 001 + 00000007 n 0101 | stop living"],
    "adj": ["00000005 00 a 02 big(a) 0 large 0 000 | of size"],
    "adv": [],
}
# lemma pos synset_cnt p_cnt [ptr]... sense_cnt tagsense_cnt offsets (first sense first)
INDEX = {
    "noun": [
        "coat n 1 0 1 0 00000003",
        "coating n 2 0 2 0 00000002 00000003",
        "death n 1 1 + 1 0 00000007",
        "film n 2 1 @ 2 0 00000001 00000002",
        "flick n 1 0 1 0 00000001",
        "movie n 1 1 ~ 1 0 00000001",
        "talkie n 1 1 @ 1 0 00000006",
    ],
    "verb": ["decease v 1 0 1 0 00000004", "die v 1 0 1 0 00000004"],
    "adj": ["big a 1 0 1 0 00000005", "large a 1 0 1 0 00000005"],
    "adv": [],
}


@pytest.fixture(scope="module")
def builder() -> ModuleType:
    path = REPO_ROOT / "scripts" / "build_synonym_table.py"
    spec = importlib.util.spec_from_file_location("build_synonym_table", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def wordnet(tmp_path: Path) -> Path:
    for part in ("noun", "verb", "adj", "adv"):
        (tmp_path / f"data.{part}").write_text("\n".join(LICENSE + DATA[part]) + "\n")
        (tmp_path / f"index.{part}").write_text("\n".join(LICENSE + INDEX[part]) + "\n")
    return tmp_path


def test_only_the_first_sense_joins_words(builder: ModuleType, wordnet: Path) -> None:
    table = builder.synonym_table(wordnet)
    assert table[stem("movie")] == {stem("film"), stem("flick")}
    assert table[stem("film")] == {stem("movie"), stem("flick")}  # its first sense only
    assert stem("coating") not in table[stem("film")]  # a second sense joins nothing
    assert stem("photographic_film") not in table.get(stem("film"), set())  # not one word
    assert table[stem("coating")] == {stem("film")}  # coating's own first sense
    assert table[stem("die")] == {stem("decease")}
    assert table[stem("big")] == {stem("large")}  # the adjective marker "(a)" is dropped


def test_relations_join_more_words_only_when_asked(builder: ModuleType, wordnet: Path) -> None:
    assert stem("talkie") not in builder.synonym_table(wordnet)[stem("movie")]
    hyponyms = builder.synonym_table(wordnet, relations=("hyponym",))
    assert stem("talkie") in hyponyms[stem("movie")]  # a semantic pointer: the whole synset
    assert stem("movie") not in hyponyms.get(stem("talkie"), set())  # one direction only
    derived = builder.synonym_table(wordnet, relations=("derivation",))
    assert derived[stem("die")] == {stem("decease"), stem("death")}
    assert derived[stem("decease")] == {stem("die")}  # a lexical pointer: die's alone


def test_the_table_carries_the_license_and_check_compares(
    builder: ModuleType, wordnet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "table.tsv"
    assert builder.main(["--wordnet", str(wordnet), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "# Tiny WordNet license." in text and "# Keep this notice." in text
    assert f"{stem('movie')}\t{stem('film')} {stem('flick')}" in text.splitlines()
    assert builder.main(["--wordnet", str(wordnet), "--out", str(out), "--check"]) == 0
    out.write_text(text.replace("flick", "flock"), encoding="utf-8")
    assert builder.main(["--wordnet", str(wordnet), "--out", str(out), "--check"]) == 1
    assert builder.main(["--wordnet", str(tmp_path / "nowhere")]) == 2
    assert "DIFFERS" in capsys.readouterr().out


def test_the_shipped_table_has_the_wordnet_license_and_joins_synonyms() -> None:
    path = REPO_ROOT / "src" / "assay" / "verify" / "checkers" / SYNONYMS_FILE
    head = path.read_text(encoding="utf-8").splitlines()[:40]
    assert any("WordNet 3.1 Copyright 2011 by Princeton University" in line for line in head)
    table = synonym_table()
    assert len(table) > 10_000
    assert stem("film") in table[stem("movie")]
    found = found_with_synonyms(frozenset({stem("film")}))
    assert found(stem("movie")) and found(stem("film")) and not found(stem("opera"))
