"""A small, download-free language identifier: Unicode scripts first, then stop words.

IFEval labels languages with ``langdetect`` (character n-gram profiles of 55 languages). This
module does not reproduce that; it identifies the languages IFEval asks for from the script a
text is written in and, where several languages share a script, from their commonest words and
letters. It returns ISO 639-1 codes like langdetect, or ``None`` when it cannot tell.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

# Scripts written by exactly one of the languages we identify.
_SINGLE_LANGUAGE_SCRIPTS = {
    "HANGUL": "ko",
    "THAI": "th",
    "KANNADA": "kn",
    "TELUGU": "te",
    "TAMIL": "ta",
    "GUJARATI": "gu",
    "GURMUKHI": "pa",
    "BENGALI": "bn",
    "MALAYALAM": "ml",
    "GREEK": "el",
    "HEBREW": "he",
    "HIRAGANA": "ja",
    "KATAKANA": "ja",
    "CJK": "zh-cn",
    "GEORGIAN": "ka",
    "ARMENIAN": "hy",
}

_STOPWORDS: dict[str, frozenset[str]] = {
    lang: frozenset(words.split())
    for lang, words in {
        "en": "the and of to is in that it you for with are this be on as was have not or "
        "your can will an by from at they we i my our he she his her their what so if but "
        "about more when one has do there which would how into up out over all",
        "de": "der die und das ist nicht ich zu den mit sie es ein eine sich auf für von dem "
        "auch wir sind du wie im oder aber wenn in",
        "pt": "que não os um uma para com é por mais dos das você está são ao seu sua como "
        "também muito isso do da em na uma ele ela foi então havia",
        "it": "il di che la per un una non è sono del della con gli si da lo nel anche come "
        "questo questa ma più alla in sul nel nella sulla dei degli delle ai al",
        "es": "el la que y en los las es un una por con para no se del al lo más su está "
        "como pero muy",
        "fr": "le la les et est un une des du que en pour pas dans qui ce il vous sur au "
        "avec sont nous",
        "nl": "de het een en van is dat niet op te zijn voor met die ook maar in",
        "fi": "ja on ei se että hän oli ovat mutta kun niin myös kuin tai ole voi sinun tämä "
        "jos joka sekä ovat olla",
        "sw": "na ya wa kwa ni za katika kama hii cha kuwa yako au pia lakini sana hivyo watu "
        "wako hiyo",
        "vi": "và của là có không được những các cho một trong người với này để đã",
        "id": "dan yang di ini itu untuk dengan tidak dari dalam akan pada adalah",
        "tl": "ang ng sa mga na at ay si ko mo",
        "hi": "है के में की और का को से हैं यह एक पर लिए भी नहीं था आप",
        "mr": "आहे आणि या हे ला मध्ये आहेत तुम्ही व करा नाही हा ही त्या",
        "ne": "छ र मा हो गर्न छन् यो पनि लागि गर्ने हुन्छ भएको",
        "ru": "и в не на что с как это он по но из все так",
        "bg": "и в не на че с как това за се да от по са",
        "uk": "і в не на що з як це та до",
    }.items()
}

_VIETNAMESE_LETTERS = set("ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ")
# Split on spaces, digits and punctuation only: Indic vowel signs are not "word" characters
# for ``\w``, so a \w-based pattern would cut Hindi words apart.
_WORD = re.compile(r"[^\s\d.,;:!?()\[\]{}\"'“”‘’«»|/\\*#<>=+\-–—…।॥]+")


def script_of(char: str) -> str:
    """The first word of a letter's Unicode name (LATIN, CYRILLIC, DEVANAGARI, ...)."""
    try:
        name = unicodedata.name(char)
    except ValueError:
        return "UNKNOWN"
    return name.split(" ")[0]


def script_counts(text: str) -> Counter[str]:
    return Counter(script_of(c) for c in text if c.isalpha())


# An address is a word with an "@", or what follows a tag inside a word up to an "@". Both
# start where a scan is bounded (a word's start, a tag's end): "\S+@" tried from every character
# of a long run of non-space characters scanned the rest of the run again from each of them
# (seconds on a 20,000-character run).
_NOT_PROSE = re.compile(
    r"(?<!\S)\S+@\S+|(?<=>)[^\s@>]+@\S+|https?://\S+|www\.\S+"
    r"|(?<!<)</?[A-Za-z][^<>\n]*>(?!>)"
)


def detect_language(text: str) -> str | None:
    text = _NOT_PROSE.sub(" ", text)  # e-mail addresses, links and tags are not language
    scripts = script_counts(text)
    if not scripts:
        return None
    script, _ = scripts.most_common(1)[0]
    if script in _SINGLE_LANGUAGE_SCRIPTS:
        return _SINGLE_LANGUAGE_SCRIPTS[script]
    if script == "LATIN":
        return _latin_language(text)
    if script == "DEVANAGARI":
        return _devanagari_language(text)
    if script == "ARABIC":
        return _arabic_language(text)
    if script == "CYRILLIC":
        return _cyrillic_language(text)
    return None


def is_english(text: str) -> bool:
    return detect_language(text) == "en"


def _latin_language(text: str) -> str | None:
    letters = [c for c in text.lower() if c.isalpha()]
    vietnamese = sum(c in _VIETNAMESE_LETTERS for c in letters)
    if letters and vietnamese / len(letters) > 0.03:
        return "vi"
    latin_languages = ("en", "de", "pt", "it", "es", "fr", "nl", "fi", "sw", "id", "tl")
    # Text with no function word at all (a title, a list of names) stays undetermined: on one
    # to three words no detector is reliable, IFEval's langdetect included.
    return _best_by_stopwords(text, latin_languages)


def _best_by_stopwords(text: str, languages: tuple[str, ...]) -> str | None:
    words = Counter(w.lower() for w in _WORD.findall(text))
    scores = {lang: sum(n for w, n in words.items() if w in _STOPWORDS[lang]) for lang in languages}
    best = max(languages, key=lambda lang: scores[lang])
    return best if scores[best] > 0 else None


# Nepali writes its postpositions and plural onto the word ("होटलमा", "बिराटनगरको"); Hindi
# writes them apart ("होटल में"). Polite imperatives in -नुहोस् are Nepali too.
_NEPALI_SUFFIXES = ("नुहोस्", "हरू", "लाई", "को", "मा")
# Marathi writes its genitive and "in" onto the word too ("शहराच्या", "घरामध्ये"); Hindi writes
# "के", "में" apart.
_MARATHI_SUFFIXES = ("च्या", "मध्ये")


def _devanagari_language(text: str) -> str:
    words = [w for w in _WORD.findall(text)]
    nepali_suffixed = sum(
        1
        for w in words
        for suffix in _NEPALI_SUFFIXES
        if w.endswith(suffix) and len(w) > len(suffix) + 1
    )
    marathi_suffixed = sum(
        1
        for w in words
        for suffix in _MARATHI_SUFFIXES
        if w.endswith(suffix) and len(w) > len(suffix) + 1
    )
    scores = {lang: sum(w in _STOPWORDS[lang] for w in words) for lang in ("hi", "mr", "ne")}
    scores["ne"] += nepali_suffixed // 2
    scores["mr"] += marathi_suffixed // 2
    best = max(scores, key=lambda lang: scores[lang])
    return best if scores[best] > 0 else "hi"


def _arabic_language(text: str) -> str:
    urdu = sum(text.count(c) for c in "ےںٹڈڑھ")
    persian = sum(text.count(c) for c in "پچژگیک")
    arabic = sum(text.count(c) for c in "ةىيك")
    if urdu > 0.01 * len(text):
        return "ur"
    return "fa" if persian > arabic else "ar"


def _cyrillic_language(text: str) -> str:
    lowered = text.lower()
    ukrainian = sum(lowered.count(c) for c in "іїєґ")
    russian = sum(lowered.count(c) for c in "ыэё")
    if ukrainian > russian:
        return "uk"
    if russian == 0 and lowered.count("ъ") > 0:
        return "bg"
    return _best_by_stopwords(text, ("ru", "bg")) or "ru"
