"""Claim checkers: the lexical baseline, and the model checker (stub, embedded model)."""

from __future__ import annotations

import asyncio

from assay.verify.checkers.baseline import LexicalChecker
from assay.verify.types import Claim, Evidence

EVIDENCE = (
    Evidence(
        evidence_id="e1",
        title="Harbour Bridge",
        text="The Harbour Bridge opened to traffic in 1932. Its main span is 503 metres long.",
    ),
    Evidence(evidence_id="e2", text="The bridge was designed by John Bradfield and is not tolled."),
    Evidence(evidence_id="e3", text="Ferries cross the harbour every twenty minutes."),
)


def _check(text: str, cited: tuple[str, ...] = ()) -> tuple[str, float, tuple[str, ...]]:
    result = LexicalChecker().check_sync(Claim(text=text, cited_ids=cited), EVIDENCE)
    assert result.checker == "lexical" and result.probability_source == "heuristic"
    assert result.p_supported is not None
    return result.label, result.p_supported, result.supporting_ids


def test_paraphrase_of_evidence_is_supported_with_its_ids() -> None:
    label, p, ids = _check("The Harbour Bridge was opened in 1932.")
    assert label == "supported" and p > 0.6
    assert ids == ("e1",)


def test_wrong_number_is_unsupported() -> None:
    right = _check("The main span of the bridge is 503 metres long.")
    wrong = _check("The main span of the bridge is 803 metres long.")
    assert right[0] == "supported"
    assert wrong[0] == "unsupported" and wrong[1] < right[1]


def test_unknown_name_lowers_support() -> None:
    right = _check("The bridge was designed by John Bradfield.")
    wrong = _check("The bridge was designed by Gustave Eiffel.")
    assert right[0] == "supported" and wrong[0] != "supported"


def test_negation_mismatch_lowers_support() -> None:
    plain = _check("Ferries cross the harbour every twenty minutes.")
    negated = _check("Ferries do not cross the harbour every twenty minutes.")
    assert negated[1] < plain[1]


def test_unrelated_claim_is_unsupported() -> None:
    label, p, ids = _check("Penguins live mostly in the southern hemisphere.")
    assert label == "unsupported" and p < 0.4 and ids == ()


def test_cited_supporting_ids_are_the_cited_ids_that_support() -> None:
    claim = Claim(text="The Harbour Bridge opened in 1932.", cited_ids=("e3", "e1"))
    result = asyncio.run(LexicalChecker().check(claim, EVIDENCE))
    assert result.cited_supporting_ids == ("e1",)


def test_labels_follow_the_documented_bands() -> None:
    checker = LexicalChecker()
    assert checker.label_of(0.9) == "supported"
    assert checker.label_of(0.5) == "uncertain"
    assert checker.label_of(0.1) == "unsupported"
