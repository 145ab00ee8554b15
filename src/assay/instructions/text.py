"""Counting words, sentences and capitalised words the way IFEval's labels count them.

IFEval counts with NLTK (a ``\\w+`` word tokenizer, the Punkt sentence splitter and the Treebank
word tokenizer). assay does not depend on NLTK; these are small rules written to give the same
counts on ordinary prose, with the differences documented in docs/instructions.md.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")

# Tokens ending in "." that do not end a sentence when followed by a name (titles).
_TITLES = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "st",
        "jr",
        "sr",
        "gen",
        "col",
        "lt",
        "sen",
        "rep",
        "messrs",
        "ft",
    ]
)
# Tokens ending in "." that usually do not end a sentence; followed by a capitalised function
# word (_SENTENCE_STARTERS) they still do. Only abbreviations that NLTK's English Punkt model
# (IFEval's sentence splitter) knows: after "e.g.", "etc.", "fig." or "no." Punkt ends the
# sentence as after any other word.
_ABBREVIATIONS = _TITLES | frozenset(
    [
        "vs",
        "inc",
        "ltd",
        "co",
        "corp",
        "jan",
        "feb",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "wed",
        "fri",
        "a.m",
        "p.m",
        "u.s",
        "u.k",
        "u.n",
        "u.s.a",
        "d.c",
        "ph.d",
        "a.d",
    ]
)
# Dotted letters are abbreviations ("U.S.", "J.K."), except these, which Punkt does not know
_NOT_ABBR = frozenset(["e.g", "i.e", "p.s", "p.p.s"])
# Capitalised words that start a new sentence after an abbreviation ("... in the U.S. The
# next ..."): function words, not names.
_STARTER_WORDS = (
    "a an the this that these those it its he she they we you i my our your his her their "
    "there here in on at for from with by as if when while since after before but and or "
    "so yet nor however moreover meanwhile thus also still then although though because "
    "many most some all both each every no not one even according among despite instead "
    "indeed similarly nonetheless nevertheless separately under what who how why where to now"
)
_SENTENCE_STARTERS = frozenset(w.capitalize() for w in _STARTER_WORDS.split(" "))
# A sentence end: terminal punctuation, optional closing quotes or brackets, then whitespace
# and the next token; or, as in Punkt, terminal punctuation directly followed by a quote,
# bracket, "*", ":", ";", "@", "?" or "!" (a JSON string's '."', "a thing?), but").
_BOUNDARY = re.compile(
    r"(?<![.?!])(?P<end>[.?!]++)"
    r"(?:(?P<closers>[\"'”’)\]}*]*+)(?P<space>\s+)(?=(?P<next>\S+))"
    r"|(?=[)\";}\]*:@'({\[‘’“”«»]))"
)
_LATER_END = re.compile(r"\S*?[.?!](?:[)\";}\]*:@'({\[‘’“”«»?!]|\s+\S)")
# What Punkt gives back to the sentence before: one run of closing quotes or brackets (not
# "*": "**Go.**" at the end is two sentences there)
_CLOSERS_TO_END = re.compile(r"\s*+[\"'”’)\]}]*+\s*+\Z")


def count_words(text: str) -> int:
    return len(_WORD.findall(text))


def split_sentences(text: str) -> list[str]:
    """Sentences in the sense of a Punkt-like splitter: ends at . ? ! before whitespace or
    before a quote or bracket, not at line breaks alone, not after known abbreviations, initials
    or list numbers before a lowercase word."""
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        if _is_break(text, match):
            sentences.append(text[start : match.end("closers" if match["space"] else "end")])
            start = match.end()
    tail = text[start:]
    if tail.strip():
        sentences.append(tail)
    return [s.strip() for s in sentences if s.strip()]


def count_sentences(text: str) -> int:
    return len(split_sentences(text))


def _is_break(text: str, match: re.Match[str]) -> bool:
    punctuation, next_token = match["end"], match["next"]
    if _CLOSERS_TO_END.match(text, match.end("end")):
        return False  # the last sentence, with its closing quotes or brackets
    if next_token is None and _LATER_END.match(text, match.end("end")):
        return False  # Punkt takes the last end of a run without spaces ("etc.).")
    if "?" in punctuation or "!" in punctuation:
        return True
    token_start = _token_start(text, match.start("end"))
    token = text[token_start : match.start("end")].lstrip("\"'“‘([{*").lower()
    if next_token is None:  # a quote or bracket right after: an ordinary word or number ends
        return len(punctuation) == 1 and not (_is_initial(token) or _is_abbreviation(token))
    starts_lower = next_token[:1].islower()
    if len(punctuation) > 1:  # an ellipsis ends a sentence only before a capital
        return not starts_lower
    if token in _TITLES:
        return False
    if _is_initial(token):
        # after a capitalised word an initial is part of a name ("George W. Bush", "J. R. R.
        # Tolkien"); elsewhere ("point B. It", a list label "A.") it ends a sentence before a
        # capital
        if re.match(r"[^\W\d_]\.", next_token):  # a run of initials
            return False
        return not starts_lower and not _follows_name(text, token_start)
    if _is_abbreviation(token):
        # "the U.S. Department", "J.K. Rowling": a capitalised name does not end the sentence
        # after an abbreviation; a capitalised function word ("... in the U.S. The ...") does
        return _first_word(next_token) in _SENTENCE_STARTERS
    if token.isdigit():
        return not starts_lower
    return True


def _token_start(text: str, index: int) -> int:
    """Where the run of non-space characters ending at ``index`` starts."""
    start = index
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    return start


def _is_abbreviation(token: str) -> bool:
    return token in _ABBREVIATIONS or (_is_dotted_abbreviation(token) and token not in _NOT_ABBR)


def _follows_name(text: str, index: int) -> bool:
    """Whether the word before ``index`` on its line is capitalised (``George W.``, ``J. R.``)."""
    end = index
    while end > 0 and text[end - 1] in " \t":
        end -= 1
    if end == 0 or text[end - 1].isspace():  # a list label "A." starts its line
        return False
    word = text[_token_start(text, end) : end]
    return word.lstrip("\"'“‘([{*")[:1].isupper()


def _first_word(token: str) -> str:
    word = re.match(r"[\"'“‘(\[*]*([^\W\d_]+)", token)
    return word.group(1).capitalize() if word and word.group(1)[:1].isupper() else ""


def _is_initial(token: str) -> bool:
    return len(token) == 1 and token.isalpha()


def _is_dotted_abbreviation(token: str) -> bool:
    parts = token.split(".")
    return len(parts) > 1 and all(len(p) == 1 and p.isalpha() for p in parts)


# Treebank-like word tokens, as NLTK's word_tokenize (IFEval's) splits them: at white space and
# at punctuation that stands apart (brackets, quotes, dashes, "*", "&", "#", "?", "!", and "," or
# ":" not before a digit); "/", "_", "+", "-", "." and an apostrophe inside a word keep a token
# whole ("AI/ML", "FOO_BAR", "COVID-19", "U.S.", "O'NEAL"). Contractions are split off ("I'M" ->
# "I", "'M"; "DON'T" -> "DO", "N'T"; "GONNA" -> "GON", "NA").
_CASE_SPLIT = re.compile(r"[\s;@#$%&?!()\[\]{}<>\"“”‘’`—–*]+|[,:](?!\d)|\.\.\.|--")
_CONTRACTION = re.compile(
    r"(?i)^(.*[^'])('s|'m|'d|'ll|'re|'ve|n't|')$"
    r"|^(can)(not)$|^(gim)(me)$|^(gon)(na)$|^(got)(ta)$|^(lem)(me)$|^(wan)(na)$"
)


def _case_tokens(text: str) -> list[str]:
    tokens: list[str] = []
    for piece in _CASE_SPLIT.split(text):
        match = _CONTRACTION.match(piece)
        if match:
            tokens.extend(part for part in match.groups() if part)
        else:
            tokens.append(piece)
    return tokens


def capitalized_words(text: str) -> list[str]:
    """Words written entirely in capitals (letters upper-case, at least one cased letter)."""
    return [t for t in _case_tokens(text) if t.isupper()]


def split_paragraphs_blank_line(text: str) -> list[str]:
    return re.split(r"\n\s*\n", text)
