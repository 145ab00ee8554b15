"""Error injection: every bucket is what it claims, seeded, skips counted; the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from assay.cli import main
from assay.data.citations import cited_ids, strip_citations
from assay.data.grounded import load_records
from assay.verify.checkers._lexical import features
from assay.verify.perturb import BUCKETS, PerturbStats, perturb_records
from assay.verify.types import Evidence, GoldCitation, GroundedQARecord

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "grounded_qa.jsonl"
LABELLED = EXAMPLES.with_name("grounded_qa_labelled.jsonl")


@pytest.fixture(scope="module")
def source() -> dict[str, GroundedQARecord]:
    return {r.id: r for r in load_records(EXAMPLES).records}


@pytest.fixture(scope="module")
def injected(source: dict[str, GroundedQARecord]) -> list[GroundedQARecord]:
    return list(perturb_records(source.values(), seed=0))


def _words(text: str) -> list[str]:
    return re.findall(r"[\w,.]+", strip_citations(text).lower())


def test_labels_ids_and_groups_follow_the_bucket(
    injected: list[GroundedQARecord], source: dict[str, GroundedQARecord]
) -> None:
    assert {r.error_type for r in injected} == set(BUCKETS)
    for record in injected:
        origin = source[record.group or ""]
        assert record.id == f"{origin.id}::{record.error_type}"
        assert record.gold_error is (record.error_type != "grounded")
        assert record.citations == cited_ids(record.answer or "")
        assert record.evidence == origin.evidence and record.question == origin.question
        if record.error_type == "grounded":
            assert record.answer == origin.gold_answer
        else:
            assert record.answer != origin.gold_answer


def _by_bucket(injected: list[GroundedQARecord], bucket: str) -> list[GroundedQARecord]:
    found = [r for r in injected if r.error_type == bucket]
    assert found, f"no {bucket} answers were made"
    return found


def test_contradiction_changes_a_number_or_adds_a_negation(
    injected: list[GroundedQARecord], source: dict[str, GroundedQARecord]
) -> None:
    for record in _by_bucket(injected, "contradiction"):
        gold, new = features(source[record.cluster].gold_answer), features(record.answer or "")
        evidence_numbers = features(" ".join(e.text for e in record.evidence)).numbers
        new_numbers = new.numbers - gold.numbers
        assert (new_numbers and not new_numbers & evidence_numbers) or (
            new.negations == gold.negations + 1
        ), record.answer


def test_wrong_citation_cites_an_id_outside_the_gold_citations(
    injected: list[GroundedQARecord], source: dict[str, GroundedQARecord]
) -> None:
    for record in _by_bucket(injected, "wrong_citation"):
        gold_ids = {g.evidence_id for g in record.gold_citations}
        assert set(record.citations or ()) - gold_ids, record.answer
        assert strip_citations(record.answer or "") == strip_citations(
            source[record.cluster].gold_answer
        )


def test_unsupported_claim_adds_a_sentence_with_a_year_and_name_not_in_evidence(
    injected: list[GroundedQARecord], source: dict[str, GroundedQARecord]
) -> None:
    for record in _by_bucket(injected, "unsupported_claim"):
        gold, new = _words(source[record.cluster].gold_answer), _words(record.answer or "")
        added = [w for w in new if w not in gold]
        evidence = features(" ".join(e.text for e in record.evidence))
        years = [w.strip(".,") for w in added if re.fullmatch(r"\d{4}[.,]?", w)]
        assert years and all(y not in evidence.numbers for y in years), record.answer


def test_overgeneralization_broadens_and_omission_drops_support(
    injected: list[GroundedQARecord], source: dict[str, GroundedQARecord]
) -> None:
    broad = {"all", "always", "will", "entirely", "every"}
    for record in _by_bucket(injected, "overgeneralization"):
        added = set(_words(record.answer or "")) - set(_words(source[record.cluster].gold_answer))
        assert added & broad, record.answer
    for record in _by_bucket(injected, "evidence_omission"):
        gold = source[record.cluster].gold_answer
        shorter = len(strip_citations(record.answer or "")) < len(strip_citations(gold))
        uncited = not record.citations
        assert shorter or uncited, record.answer


def test_seeded_and_independent_of_record_order(source: dict[str, GroundedQARecord]) -> None:
    forward = list(perturb_records(source.values(), seed=3))
    backward = list(perturb_records(reversed(list(source.values())), seed=3))
    assert sorted(r.model_dump_json() for r in forward) == sorted(
        r.model_dump_json() for r in backward
    )
    assert [r.answer for r in perturb_records(source.values(), seed=4)] != [
        r.answer for r in forward
    ]


def test_unbuildable_buckets_are_skipped_and_counted() -> None:
    bare = GroundedQARecord(
        id="bare",
        question="q",
        gold_answer="Water boils at 100 degrees [cite:a].",
        evidence=(Evidence(evidence_id="a", text="Water boils at 100 degrees at sea level."),),
        gold_citations=(GoldCitation(evidence_id="a"),),
    )
    no_gold = bare.model_copy(update={"id": "nogold", "gold_citations": ()})
    stats = PerturbStats()
    made = list(perturb_records([bare, no_gold], stats=stats))
    assert stats.records == 2 and stats.records_skipped == 1
    assert "wrong_citation" in stats.skipped  # the only evidence is the gold one
    assert sum(stats.made.values()) == len(made)
    assert {r.error_type for r in made} >= {"grounded", "unsupported_claim", "contradiction"}


def test_cli_writes_the_committed_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "labelled.jsonl"
    assert main(["perturb", "--data", str(EXAMPLES), "--out", str(out), "--seed", "0"]) == 0
    assert out.read_text(encoding="utf-8") == LABELLED.read_text(encoding="utf-8")
    assert "labelled answers" in capsys.readouterr().out
    assert load_records(out).records  # the output is valid input


def test_cli_bucket_subset_and_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "few.jsonl"
    args = ["perturb", "--data", str(EXAMPLES), "--out", str(out), "--buckets", "grounded"]
    assert main(args) == 0
    assert {json.loads(line)["error_type"] for line in out.open()} == {"grounded"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text(EXAMPLES.read_text(encoding="utf-8").splitlines()[0] + "\n{nope\n")
    capsys.readouterr()
    assert main(["perturb", "--data", str(bad), "--out", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"{bad}:2" in err and "invalid JSON" in err
    assert not (tmp_path / "x.jsonl").exists()
    assert main(["perturb", "--data", str(EXAMPLES), "--out", str(out), "--buckets", "nope"]) == 2


def test_records_whose_gold_answer_is_an_error_are_not_used() -> None:
    claim = "The bridge opened in 1932."
    evidence = (
        Evidence(evidence_id="0", text="The bridge opened in 1932 after six years."),
        Evidence(evidence_id="1", text="Ferries still cross the bay every hour."),
    )
    record = GroundedQARecord(
        id="w1", question="", gold_answer=claim, evidence=evidence,
        gold_citations=(GoldCitation(evidence_id="0"),), answer=claim, gold_error=True,
    )  # fmt: skip
    stats = PerturbStats()
    assert list(perturb_records([record], stats=stats)) == []
    assert stats.record_reasons == {"the gold answer itself is labelled as a grounding error": 1}
    # the same claim labelled grounded is used; its gold citations become a marker
    made = {
        r.error_type: r for r in perturb_records([record.model_copy(update={"gold_error": False})])
    }
    assert made["grounded"].answer == "The bridge opened in 1932 [cite:0]."
    assert made["wrong_citation"].citations == ("1",)


def test_a_repeated_bucket_is_refused_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """grounded,grounded wrote 24 records with 12 ids, which bench run refused."""
    out = tmp_path / "p.jsonl"
    args = ["perturb", "--data", str(EXAMPLES), "--out", str(out), "--buckets", "grounded,grounded"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--buckets" in err and "grounded" in err and "Traceback" not in err
    assert not out.exists()
