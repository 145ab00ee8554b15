"""What the model-free checkers cannot read: scripts written without spaces between words.

Both checkers compare words; in Chinese, Japanese, Thai, Lao, Burmese or Khmer text the
tokenizer reads a whole phrase as one word, so a true claim would score as false. Such a claim
is a failure with its reason, as a model's failed call is, not a score.
"""

from __future__ import annotations

import re

from ..types import Claim, ClaimCheck

_UNSEGMENTED = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]"
)


def unsegmented_share(text: str) -> float:
    """The share of ``text``'s letters in scripts written without spaces between words."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 0.0
    return sum(1 for c in letters if _UNSEGMENTED.match(c)) / len(letters)


def unreadable_check(claim: Claim, checker: str) -> ClaimCheck | None:
    """The failed check of a claim mostly in such a script, with its reason; None for a claim
    the checker can read."""
    text = claim.text
    if text.isascii() or unsegmented_share(text) <= 0.5:  # ASCII: one C-speed test per claim
        return None
    reason = (
        "not checked: the claim is mostly in a script written without spaces between words "
        f"(Chinese, Japanese, Thai, ...), which the {checker} checker cannot split into the "
        "words it compares; use a model verifier"
    )
    return ClaimCheck.failed(claim, checker, reason)
