"""Text statistics of the ``learned`` checker: content items (crude stems, numbers), names,
bigrams, negations, and the claim splitter (evidence is split by :mod:`._sentences`).

Shipped weights belong to one exact definition of these statistics: a change here is a new
checker version (:data:`assay.verify.checkers.learned.CHECKER_VERSION`) and a retraining.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

# The learned checker version that last changed these statistics. The single-pass relevance cut
# ranks evidence with them too, so its runs record it and are not resumed after a change.
STATISTICS_VERSION = "learned-6"
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
# Words a generated answer uses to connect, hedge and stress ("additionally", "particularly",
# "crucial") and a source has no reason to contain: counted as content, one of them missing
# outweighed the answer's real terms, since a word the evidence never uses weighs most.
DISCOURSE_WORDS = _words(
    """additionally furthermore moreover overall ultimately typically generally usually
    particularly especially specifically potentially essentially importantly notably primarily
    mainly mostly largely commonly frequently even well rather instead thereby hence indeed
    eventually finally respectively approximately nearly almost roughly likely possibly perhaps
    crucial essential important specific certain different possible necessary
    appropriate significant key main major"""
)
STOPWORDS |= DISCOURSE_WORDS
NEGATIONS = _words(
    "not no never none nobody nothing neither nor without cannot unable fail fails failed "
    "lack lacks lacked"
)
_CARDINALS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
_SCALES = {
    "hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9, "trillion": 10**12,
}  # fmt: skip
_NUMBER_WORDS = {
    **{word: str(value) for word, value in (_CARDINALS | _SCALES).items()},
    "first": "1", "second": "2", "third": "3", "fourth": "4", "fifth": "5", "twice": "2",
    "half": "0.5",
}  # fmt: skip
# A demonym is read as its country ("a British actor" against a page that says "Britain"): the
# suffix stemmer cannot join them, and claims restate nationality in the other form.
DEMONYMS = {
    "american": "america", "french": "france", "german": "germany", "british": "britain",
    "english": "england", "scottish": "scotland", "welsh": "wales", "irish": "ireland",
    "italian": "italy", "spanish": "spain", "portuguese": "portugal", "dutch": "netherlands",
    "belgian": "belgium", "swiss": "switzerland", "austrian": "austria", "swedish": "sweden",
    "norwegian": "norway", "danish": "denmark", "finnish": "finland", "polish": "poland",
    "russian": "russia", "ukrainian": "ukraine", "greek": "greece", "turkish": "turkey",
    "chinese": "china", "japanese": "japan", "korean": "korea", "indian": "india",
    "pakistani": "pakistan", "canadian": "canada", "mexican": "mexico", "brazilian": "brazil",
    "argentine": "argentina", "argentinian": "argentina", "australian": "australia",
    "egyptian": "egypt", "israeli": "israel", "iranian": "iran", "iraqi": "iraq",
    "syrian": "syria", "libyan": "libya", "nigerian": "nigeria", "kenyan": "kenya",
    "african": "africa", "european": "europe", "asian": "asia", "filipino": "philippines",
    "indonesian": "indonesia", "vietnamese": "vietnam", "thai": "thailand",
    "hungarian": "hungary", "romanian": "romania", "bulgarian": "bulgaria",
    "serbian": "serbia", "croatian": "croatia", "sudanese": "sudan", "cuban": "cuba",
    "chilean": "chile", "peruvian": "peru", "colombian": "colombia", "afghan": "afghanistan",
}  # fmt: skip
_MONTH_ORDER = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
_MONTHS = frozenset(_MONTH_ORDER)
_SUFFIXES = (
    "ations", "ation", "ments", "ment", "ness", "ings", "ing", "ions", "ion", "ies", "ied",
    "ers", "er", "ed", "es", "ly", "s",
)  # fmt: skip
_TOKEN = re.compile(r"\d[\d,]*(?:\.\d+)?|[^\W\d_](?:[\w'-]*\w)?")
_STEM_LENGTH = 6
_SCALE_ITEMS = frozenset(f"#{value}" for value in _SCALES.values())


@dataclass(frozen=True)
class TextStats:
    """What the features compare: content items (stems, numbers as ``#n``), names, bigrams."""

    sequence: tuple[str, ...]  # content items in text order
    items: frozenset[str]
    names: frozenset[str]
    numbers: frozenset[str]
    bigrams: frozenset[tuple[str, str]]
    negations: int


_Y_SUFFIXES = frozenset(("ies", "ied"))  # cities -> city, studied -> study
_DOUBLING_SUFFIXES = frozenset(("ing", "ings", "ed", "er", "ers"))  # stopped -> stop


def stem(word: str) -> str:
    """Lower case, possessive and one common suffix dropped, a final ``e`` dropped, cut to six
    letters. The inflections of one word meet on one stem: line/lines, take/taking/taken,
    fire/fired, city/cities, stop/stopped (the ``e`` and the doubled consonant are what a
    stripped suffix leaves behind or takes away)."""
    word = word.lower().replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    word = word.strip("'-")
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if suffix in _Y_SUFFIXES:
                word += "y"
            elif suffix in _DOUBLING_SUFFIXES and _doubled(word):
                word = word[:-1]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word[:_STEM_LENGTH]


def _doubled(word: str) -> bool:
    return len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz"


def _number(text: str) -> str:
    value = text.replace(",", "")
    if "." in value:
        value = value.rstrip("0").rstrip(".")
    return "#" + (value.lstrip("0") or "0")


def _plain_tokens(text: str) -> list[str]:
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).replace("’", "'"))


def _raw_tokens(text: str) -> list[str]:
    return _with_dates(_plain_tokens(text))


# A day and its month are one item: a long page holds the number 19 and the word "May"
# somewhere, but a claim's "May 19" is found only where the page gives that date.
_MONTH_NUMBERS = {month: number for number, month in enumerate(_MONTH_ORDER, start=1)}
_MONTH_NUMBERS |= {month[:3]: number for month, number in _MONTH_NUMBERS.items()}
_MONTH_NUMBERS["sept"] = 9
_ORDINAL_SUFFIXES = frozenset(("st", "nd", "rd", "th"))
# Every spelling the walk below reads as a month (a capital first letter, any case after it):
# a set test in C lets the many sentences without one skip the walk.
_MONTH_SPELLINGS = frozenset(
    word[0].upper() + "".join(letters)
    for word in _MONTH_NUMBERS
    for letters in itertools.product(*((c, c.upper()) for c in word[1:]))
)


def _with_dates(tokens: list[str]) -> list[str]:
    """The day number of "May 19", "May 19th", "19 May" or "19th of May" becomes the date
    ``5/19`` (a number item, so it weighs as one); the month word stays an item of its own,
    and the ordinal suffix and "of" go."""
    if _MONTH_SPELLINGS.isdisjoint(tokens):
        return tokens
    out = list(tokens)
    for index, token in enumerate(out):
        # capitalised only: "may" is a verb, "May" a month
        month = _MONTH_NUMBERS.get(token.lower()) if token[:1].isupper() else None
        if month is not None and not _date_after(out, month, index):
            _date_before(out, month, index)
    return [token for token in out if token]


def _date_after(tokens: list[str], month: int, index: int) -> bool:
    day = _day(tokens[index + 1]) if index + 1 < len(tokens) else None
    if day is None:
        return False
    tokens[index + 1] = f"{month}/{day}"
    if index + 2 < len(tokens) and tokens[index + 2].lower() in _ORDINAL_SUFFIXES:
        tokens[index + 2] = ""
    return True


def _date_before(tokens: list[str], month: int, index: int) -> None:
    at = index - 1
    skipped = []
    if at >= 0 and tokens[at].lower() == "of":
        skipped.append(at)
        at -= 1
    if at >= 0 and tokens[at].lower() in _ORDINAL_SUFFIXES:
        skipped.append(at)
        at -= 1
    day = _day(tokens[at]) if at >= 0 else None
    if day is None:
        return
    tokens[at] = f"{month}/{day}"
    for position in skipped:
        tokens[position] = ""


def _day(token: str) -> int | None:
    digits = token.rstrip(",")  # the tokenizer keeps a comma after a number: "May 19, 2016"
    return int(digits) if digits.isdigit() and 1 <= int(digits) <= 31 else None


def _scaled(previous: str, token: str) -> str | None:
    """The one number of a cardinal followed by a scale word ("two thousand" -> ``#2000``, "1.2
    million" -> ``#1200000``, as "1,200,000" already is), or None."""
    scale = _SCALES.get(token.lower())
    if scale is None:
        return None
    value = _cardinal(previous)
    return None if value is None else _number(f"{value * scale:f}")


def _cardinal(token: str) -> float | None:
    if not token[0].isdigit():
        return _CARDINALS.get(token.lower())
    try:
        return float(token.replace(",", ""))
    except ValueError:  # "1,2,3"
        return None


@lru_cache(maxsize=1 << 16)
def _token_info(token: str) -> tuple[str | None, bool, bool]:
    """(content item or None, is a negation, may be a name) of one token. Cached: a page
    repeats its words, and this is the inner loop of indexing evidence."""
    lower = token.lower()
    negation = lower in NEGATIONS or lower.endswith("n't")
    if token[0].isdigit():
        return _number(token), negation, False
    if lower in _NUMBER_WORDS:
        return "#" + _NUMBER_WORDS[lower], negation, False
    if lower in STOPWORDS or lower in NEGATIONS or len(lower) <= 1:
        return None, negation, False
    return stem(DEMONYMS.get(lower, token)), negation, token[0].isupper() and lower not in _MONTHS


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
        item, negation, name = _token_info(token)
        negations += negation
        if item is None:
            continue
        # a scale word after a cardinal joins it (the cardinal's item is the last one added)
        scaled = _scaled(raw[index - 1], token) if item in _SCALE_ITEMS and index else None
        if scaled is not None:
            sequence[-1] = scaled
            continue
        sequence.append(item)
        if name and (index > 0 or len(raw) == 1):
            names.add(item)
    return TextStats(
        sequence=tuple(sequence),
        items=frozenset(sequence),
        names=frozenset(names),
        numbers=frozenset(s for s in sequence if s.startswith("#")),
        bigrams=frozenset(itertools.pairwise(sequence)),
        negations=negations,
    )


def surface_words(text: str) -> dict[str, str]:
    """Content item -> the words of ``text`` that first gave it, as written (``#5/19`` ->
    "May 19", ``#2000000`` -> "2 million", ``britai`` -> "British"): explanations show a reader
    words, not stems. The walk is :func:`text_stats`'s, kept apart so that indexing a page pays
    nothing for it."""
    words: dict[str, str] = {}
    raw = _raw_tokens(text)
    for index, token in enumerate(raw):
        item = _token_info(token)[0]
        if item is None:
            continue
        scaled = _scaled(raw[index - 1], token) if item in _SCALE_ITEMS and index else None
        if scaled is not None:
            words.setdefault(scaled, f"{raw[index - 1]} {token}")
        else:
            words.setdefault(item, _as_written(token))
    return words


def _as_written(token: str) -> str:
    """A token as a reader wrote it: a date of :func:`_with_dates` (``5/19``) as its month and
    day, a number without the comma the tokenizer keeps after it ("2016," -> "2016")."""
    month, slash, day = token.partition("/")
    if slash and month.isdigit() and day.isdigit() and 1 <= int(month) <= len(_MONTH_ORDER):
        return f"{_MONTH_ORDER[int(month) - 1].capitalize()} {day}"
    return token.rstrip(",") if token[0].isdigit() else token


# A claim's sentences: any sentence-final mark followed by space ends one, whatever comes next
# (padding may start in lower case or with a bracket), except after an initial or a title.
# The word before the mark starts after a space: tried from inside a long run of non-space
# characters, "\S*" would scan the rest of the run again from every one of them.
_CLAIM_BREAK = re.compile(r"(?<!\S)(\S*)[.!?][\"'”’)\]]*\s+(?=\S)")
_NOT_AN_END = _words("mr mrs ms dr st jr sr vs no co inc etc e.g i.e")


# Where true filler can be joined into a claim sentence: a comma, semicolon, colon or bracket,
# a dash between spaces, or before a conjunction or relative word (", which ...", " and ...").
# Each joint's white space is taken from where it starts: "\s*" tried from each character of a
# long run of it rescanned the run every time (quadratic).
_PIECE_JOINT = re.compile(
    r"(?:(?<!\s)\s+)?[,;:()\[\]]\s*|(?<!\s)\s+[-\u2013\u2014]+\s+"
    r"|(?<!\s)\s+(?=(?:and|but|or|which|who|whom|whose|where|when|while|whereas|although"
    r"|though|because|since|including)\s)",
    re.IGNORECASE,
)


def claim_pieces(sentence: str) -> list[str]:
    """A claim sentence cut at every joint true filler could hide behind, in order."""
    return [piece.strip() for piece in _PIECE_JOINT.split(sentence) if piece.strip()]


def split_claim_sentences(text: str) -> list[str]:
    """The sentences of a claim, split more eagerly than evidence: a claim of two sentences is
    judged by its weaker one, so a missed split lets true filler hide a false sentence."""
    parts, start = [], 0
    for match in _CLAIM_BREAK.finditer(text):
        word = match.group(1).lstrip("\"'(“‘[")
        if (len(word) == 1 and word.isupper()) or word.lower() in _NOT_AN_END or "." in word:
            continue  # "J. Smith", "Dr. Who", "U.S. Army"
        parts.append(text[start : match.end()].strip())
        start = match.end()
    parts.append(text[start:].strip())
    return [p for p in parts if p]
