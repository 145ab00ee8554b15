"""The question, contexts and answers the integrations' tests share (ragas, LlamaIndex,
Haystack), and what ``assay bench run --verifier learned`` gives the answers."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tests.helpers.bench_scores import learned_p_errors

QUESTION = "When was the Eiffel Tower completed, and where is it?"
CONTEXTS = [
    "The Eiffel Tower is a wrought-iron lattice tower in Paris, France.",
    "The tower is 330 metres tall and was completed in 1889.",
]
# answers the checker scores: grounded, a wrong city and year, and one citing the second passage
SCORED_ANSWERS = {
    "grounded": "The Eiffel Tower is in Paris. It was completed in 1889.",
    "ungrounded": "The Eiffel Tower is in Lyon. It was completed in 1925.",
    "cited": "It was completed in 1889 [cite:2].",
}


def bench_p_errors(tmp_path: Path, answers: Mapping[str, str]) -> dict[str, float | None]:
    """``p_error`` of ``bench run --verifier learned`` for each answer, the contexts numbered
    ``1``, ``2``, ... as the integrations number them."""
    evidence = [{"evidence_id": str(n), "text": text} for n, text in enumerate(CONTEXTS, 1)]
    return learned_p_errors(tmp_path, evidence, dict.fromkeys(answers, QUESTION), answers)
