"""The evidence sentence splitter shared by the model-free checkers ``lexical`` and ``learned``.

Both checkers match a claim against sentences of the evidence, so they cut evidence the same
way. The ``learned`` checker's shipped weights and the ``lexical`` checker's fitted weights
belong to this exact definition: a change here is a new version of both
(:data:`assay.verify.checkers.learned.CHECKER_VERSION`, a retraining, and
:data:`assay.verify.checkers.baseline.LEXICAL_VERSION`).

Other splitters do other jobs and stay apart: ``assay.verify.claims.split_sentences`` cuts
answer text and keeps citation markers with their sentence, ``_learned_text``'s
``split_claim_sentences`` cuts claims more eagerly, and ``assay.instructions.text`` follows
IFEval's counting rules.
"""

from __future__ import annotations

import re

# A break after a sentence mark and space before a capital or digit (an opening quote or
# bracket may come first), at a line break, or after a mark glued to a capital ("end.Next").
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|\n+|(?<=[a-z0-9)][.!?])(?=[A-Z])")


def split_evidence(text: str) -> list[str]:
    """Sentences of an evidence text (light: evidence only needs spans to match against)."""
    return [p.strip() for p in _SENTENCE.split(text) if p and p.strip()]
