"""Grounding metrics: hand-computed values, pooled counts equal to the functions, empty input."""

from __future__ import annotations

import pytest

from assay.metrics.grounding import (
    GroundingCounts,
    citation_coverage,
    citation_precision,
    failure_rate,
    gold_citation_scores,
    supported_claim_rate,
    uncertain_rate,
)
from assay.verify.types import Claim, ClaimCheck, ClaimLabel


def _check(
    label: ClaimLabel,
    cited: tuple[str, ...],
    supporting: tuple[str, ...],
    failure: str | None = None,
) -> ClaimCheck:
    return ClaimCheck(
        claim=Claim(text="x", cited_ids=cited),
        label=label,
        supporting_ids=supporting,
        cited_supporting_ids=tuple(i for i in cited if i in supporting),
        failure=failure,
    )


CHECKS = [
    _check("supported", ("e1",), ("e1", "e2")),  # 1 citation, supports
    _check("supported", ("e1", "e3"), ("e3",)),  # 2 citations, 1 supports
    _check("unsupported", (), ()),  # no citation
    _check("uncertain", ("e2",), (), failure="call failed"),  # 1 citation, no support
]


def test_rates_match_hand_counts() -> None:
    assert citation_coverage(CHECKS) == 3 / 4
    assert supported_claim_rate(CHECKS) == 2 / 4
    assert uncertain_rate(CHECKS) == 1 / 4
    assert failure_rate(CHECKS) == 1 / 4
    assert citation_precision(CHECKS) == 2 / 4


def test_gold_citation_precision_and_recall_pool_over_answers() -> None:
    score = gold_citation_scores([(["e1", "e2"], ["e1"]), (["e3"], ["e4", "e5"]), ([], ["e6"])])
    assert (score.hits, score.cited, score.gold) == (1, 3, 4)
    assert score.precision == 1 / 3 and score.recall == 1 / 4


def test_counts_agree_with_the_functions_and_allow_undefined() -> None:
    counts = GroundingCounts()
    counts.add_checks(CHECKS[:2])
    counts.add_checks(CHECKS[2:])
    counts.add_gold(["e1", "e2"], ["e1"])
    rates = counts.rates()
    assert rates["citation_coverage"] == citation_coverage(CHECKS)
    assert rates["citation_precision"] == citation_precision(CHECKS)
    assert rates["uncertain_rate"] == uncertain_rate(CHECKS)
    assert rates["gold_citation_precision"] == 0.5 and rates["gold_citation_recall"] == 1.0
    assert GroundingCounts().rates()["supported_claim_rate"] is None


def test_empty_inputs_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="no claims"):
        citation_coverage([])
    with pytest.raises(ValueError, match="no citations"):
        citation_precision([_check("supported", (), ())])
    with pytest.raises(ValueError, match="no gold citations"):
        gold_citation_scores([(["e1"], [])])
