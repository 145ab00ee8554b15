"""Small prompt changes that keep every verifiable instruction of a prompt checkable.

A model that follows instructions should follow them whatever the wording around them: a typo,
the case of the letters, where the lines break, a sentence before or after the request. Each
change here is a function ``(prompt, protected spans, rng) -> str | None``; None means it does
not apply to the prompt (it would change nothing, or change what an instruction asks).

The strings the instructions' arguments name (a keyword, a forbidden word, the end phrase, the
section splitter ``SECTION``, the request to repeat, ``P.S.``) are protected wherever the prompt
holds them, in any case, and so are web addresses: no change touches them, so each checker
checks the same thing under every variant. Changes that add text around the prompt do not apply
to a prompt that asks for itself to be repeated (``combination:repeat_prompt``), since the
added text would be part of "the request".
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

REPEAT_PROMPT = "combination:repeat_prompt"
TYPO_SHARE = 0.1  # of the eligible words; at least one
PREAMBLE = "Here is a request for you.\n\n"
REMINDER = "\n\nMake sure you follow every instruction above."

Span = tuple[int, int]
Change = Callable[[str, Sequence[Span], random.Random], str | None]

_WORD = re.compile(r"[A-Za-z]{4,}")
_URL = re.compile(r"(?:https?://|www\.)\S+")
_SENTENCE_GAP = re.compile(r"(?<=[.?!]) +(?=[A-Z])")


@dataclass(frozen=True)
class VariantKind:
    """One kind of small change: its name (the prompt variant's label) and what it does."""

    name: str
    description: str
    change: Change
    adds_text: bool  # adds text around the prompt: not for a prompt that asks to be repeated


def protected_spans(prompt: str, kwargs: Iterable[Mapping[str, Any]]) -> list[Span]:
    """Where the prompt holds a string an instruction's arguments name (any case), or a web
    address."""
    spans = [
        match.span()
        for value in _argument_strings(kwargs)
        if value
        for match in re.finditer(re.escape(value), prompt, re.IGNORECASE)
    ]
    # an address names a page: a typo or another case would name another one
    spans += [match.span() for match in _URL.finditer(prompt)]
    return sorted(spans)


def _argument_strings(kwargs: Iterable[Mapping[str, Any]]) -> Iterable[str]:
    for arguments in kwargs:
        for value in arguments.values():
            if isinstance(value, str):
                yield value.strip()
            elif isinstance(value, list):
                yield from (item.strip() for item in value if isinstance(item, str))


def _free(start: int, end: int, spans: Sequence[Span]) -> bool:
    return all(end <= low or start >= high for low, high in spans)


def _outside_spans(prompt: str, spans: Sequence[Span], edit: Callable[[str], str]) -> str:
    """``edit`` applied to each stretch of the prompt between protected spans."""
    pieces, position = [], 0
    for low, high in _merged(spans):
        pieces += [edit(prompt[position:low]), prompt[low:high]]
        position = max(position, high)
    pieces.append(edit(prompt[position:]))
    return "".join(pieces)


def _merged(spans: Sequence[Span]) -> list[Span]:
    merged: list[Span] = []
    for low, high in sorted(spans):
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


def typos(prompt: str, spans: Sequence[Span], rng: random.Random) -> str | None:
    """Two adjacent inner letters swapped in a tenth of the words of four letters or more."""
    words = [
        m for m in _WORD.finditer(prompt) if _free(m.start(), m.end(), spans) and _swappable(m[0])
    ]
    if not words:
        return None
    chosen = sorted(rng.sample(words, max(1, round(TYPO_SHARE * len(words)))), key=_start)
    pieces, position = [], 0
    for match in chosen:
        pieces += [prompt[position : match.start()], _swap_inner(match[0], rng)]
        position = match.end()
    pieces.append(prompt[position:])
    return "".join(pieces)


def _start(match: re.Match[str]) -> int:
    return match.start()


def _swappable(word: str) -> bool:
    return any(a != b for a, b in itertools.pairwise(word[1:-1]))


def _swap_inner(word: str, rng: random.Random) -> str:
    """The word with two adjacent, different letters swapped; first and last letters kept."""
    positions = [i for i in range(1, len(word) - 2) if word[i] != word[i + 1]]
    i = rng.choice(positions)
    return word[:i] + word[i + 1] + word[i] + word[i + 2 :]


def lowercase(prompt: str, spans: Sequence[Span], rng: random.Random) -> str | None:
    """Every letter in lower case."""
    changed = _outside_spans(prompt, spans, str.lower)
    return changed if changed != prompt else None


def line_per_sentence(prompt: str, spans: Sequence[Span], rng: random.Random) -> str | None:
    """A line break in place of the space after each sentence."""
    changed = _outside_spans(prompt, spans, lambda text: _SENTENCE_GAP.sub("\n", text))
    return changed if changed != prompt else None


def preamble(prompt: str, spans: Sequence[Span], rng: random.Random) -> str | None:
    """A neutral sentence before the prompt."""
    return PREAMBLE + prompt


def reminder(prompt: str, spans: Sequence[Span], rng: random.Random) -> str | None:
    """A reminder to follow the instructions after the prompt."""
    return prompt + REMINDER


VARIANT_KINDS: dict[str, VariantKind] = {
    kind.name: kind
    for kind in (
        VariantKind("typos", typos.__doc__ or "", typos, adds_text=False),
        VariantKind("lowercase", lowercase.__doc__ or "", lowercase, adds_text=False),
        VariantKind("line-per-sentence", line_per_sentence.__doc__ or "", line_per_sentence, False),
        VariantKind("preamble", preamble.__doc__ or "", preamble, adds_text=True),
        VariantKind("reminder", reminder.__doc__ or "", reminder, adds_text=True),
    )
}


def prompt_variants(
    prompt: str,
    instruction_ids: Sequence[str],
    kwargs: Sequence[Mapping[str, Any]],
    kinds: Sequence[str],
    *,
    seed: int,
    key: str,
) -> dict[str, str | None]:
    """Each kind's variant of ``prompt`` (None where it does not apply).

    Deterministic: the random choices (which words get a typo) depend only on ``seed``,
    ``key`` (the prompt's identity) and the kind, not on the other prompts or kinds asked for.
    """
    spans = protected_spans(prompt, kwargs)
    repeats_itself = REPEAT_PROMPT in instruction_ids
    variants: dict[str, str | None] = {}
    for name in kinds:
        kind = VARIANT_KINDS[name]
        if kind.adds_text and repeats_itself:
            variants[name] = None
            continue
        variants[name] = kind.change(prompt, spans, random.Random(f"{seed}:{key}:{name}"))
    return variants
