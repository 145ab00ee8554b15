"""Defaults the CLI shows without importing the benchmark."""

from __future__ import annotations

from ..model import DEFAULT_MODEL

# The learned checker decides and the embedded model's single-pass probabilities are kept beside
# it as a second opinion: the model alone is near chance as a claim checker (README, quick start).
DEFAULT_VERIFIER = f"learned+{DEFAULT_MODEL}"

# The checkers that need no model; ``<checker>+<model>`` lets one decide with a model's second
# opinion beside it.
MODEL_FREE_CHECKERS = ("lexical", "learned")
