"""Text features of the lexical checker: tokens, simple stems, numbers, names, negations."""

from __future__ import annotations

import re
from dataclasses import dataclass


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS = _wordset(
    """a an the and or but if then else of to in on at by for with from as into onto over under
    about above below between through during before after since until while than so such
    is are was were be been being am do does did doing have has had having will would shall
    should can could may might must it its it's this that these those there here their them they
    he she his her him we our us you your i me my who whom whose which what when where why how
    also very more most much many some any all each every both either other another same just
    only own too not no nor never none s t also which one ones well even still yet up down out
    off again further once per via upon within without across along among around because"""
)
NEGATIONS = _wordset(
    "not no never none nobody nothing neither nor without cannot can't won't isn't aren't "
    "wasn't weren't doesn't don't didn't hasn't haven't hadn't couldn't shouldn't wouldn't "
    "unable fail fails failed lack lacks lacked"
)
_NUMBER_WORDS = {  # cardinals only: ordinals ("first") and "once"/"half" are rarely numbers
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "twenty": "20", "thirty": "30", "hundred": "100", "thousand": "1000", "million": "1000000",
    "billion": "1000000000",
}  # fmt: skip
_MONTHS = _wordset(
    "january february march april may june july august september october november december"
)
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d[\d,]*(?:\.\d+)?")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_SUFFIXES = (
    "ational", "ization", "fulness", "ousness", "iveness", "ations", "ments", "ation", "ness",
    "ment", "ings", "ing", "ies", "ied", "ers", "ion", "ous", "ive", "ity", "ed", "es", "er",
    "ly", "al", "s",
)  # fmt: skip


@dataclass(frozen=True)
class TextFeatures:
    """What the checker compares: content stems, all stems, numbers, names, negation count."""

    content: frozenset[str]
    stems: frozenset[str]
    numbers: frozenset[str]
    names: frozenset[str]
    negations: int


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.replace("’", "'"))


def stem(word: str) -> str:
    """A crude suffix stripper: enough to match invent/invented/invention, city/cities."""
    word = word.lower().strip("'-")
    if word.endswith("'s"):
        word = word[:-2]
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("y") and len(word) > 3:
        word = word[:-1] + "i"
    return word[:7]


def normalize_number(text: str) -> str:
    value = text.replace(",", "")
    if "." in value:
        value = value.rstrip("0").rstrip(".")
    return value.lstrip("0") or "0"


def features(text: str) -> TextFeatures:
    words = tokens(text)
    stems = set()
    content = set()
    numbers = {normalize_number(n) for n in _NUMBER.findall(text)}
    names = set()
    negations = 0
    for index, word in enumerate(words):
        lower = word.lower()
        if lower in NEGATIONS or lower.endswith("n't"):
            negations += 1
        if word[0].isdigit():
            continue
        if lower in _NUMBER_WORDS:
            numbers.add(_NUMBER_WORDS[lower])
        stemmed = stem(word)
        stems.add(stemmed)
        if lower not in STOPWORDS and lower not in NEGATIONS and len(lower) > 1:
            content.add(stemmed)
            if word[0].isupper() and lower not in _MONTHS and (index > 0 or len(words) == 1):
                names.add(stemmed)
    return TextFeatures(
        content=frozenset(content),
        stems=frozenset(stems),
        numbers=frozenset(numbers),
        names=frozenset(names),
        negations=negations,
    )
