"""``assay.check_grounding``: the model-free grounding check as one Python call gives the
verdicts of ``assay bench run --pattern entailment --verifier learned``, takes a retrieval
library's documents as they come, applies a calibration ``bench calibrate`` fitted, and runs
inside an event loop."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.cli import main
from assay.errors import ConfigError
from assay.integrations.grounding import check_grounding
from assay.verify.calibration import read_calibration
from tests.helpers.bench_scores import LABELLED, learned_calibration

CANBERRA = "Canberra is the capital city of Australia."


def _records() -> list[dict[str, Any]]:
    lines = LABELLED.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def calibration(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return learned_calibration(tmp_path_factory.mktemp("grounding"))


@pytest.fixture(scope="module")
def dev_run(calibration: Path) -> Path:
    return calibration.parent / "dev_run"


def _results(run: Path) -> dict[str, dict[str, Any]]:
    lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return {row["id"]: row for row in map(json.loads, lines)}


def test_each_verdict_is_the_one_bench_run_gives_the_same_record(dev_run: Path) -> None:
    results = _results(dev_run)
    records = _records()
    assert len(records) == len(results) == 71
    for record in records:
        got = check_grounding(record["answer"], record["evidence"], question=record["question"])
        bench = results[record["id"]]
        assert got.raw_p_error == bench["verifier_score"], record["id"]
        assert got.grounded == bench["verifier_pass"], record["id"]
        checks = bench["candidates"][0]["score"]["claim_checks"]
        assert [c.text for c in got.claims] == [c["claim"]["text"] for c in checks]
        assert [c.label for c in got.claims] == [c["label"] for c in checks]


def test_the_top_level_name_is_the_same_function() -> None:
    assert assay.check_grounding is check_grounding
    result = assay.check_grounding("The capital of Australia is Sydney.", CANBERRA)
    assert result.grounded is False and result.p_error is not None and result.p_error > 0.5
    (claim,) = result.claims
    assert claim.label == "unsupported" and claim.missing_words == ("Sydney",)
    assert claim.evidence_window == CANBERRA
    assert result.explanation.startswith(f"p_error {result.p_error:.3f} (not grounded")


def test_a_retrieval_librarys_documents_are_taken_as_they_come() -> None:
    from haystack import Document as HaystackDocument
    from langchain_core.documents import Document as LangChainDocument
    from llama_index.core.schema import NodeWithScore, TextNode

    answer = "The Louvre is in Paris [cite:node-3]. Paris hosted the 1900 Olympics."
    texts = ["The Louvre is in Paris.", "Paris hosted the 1900 Olympics."]
    as_passages = check_grounding(answer, [{"id": "node-3", "text": texts[0]}, texts[1]])
    documents = [
        TextNode(id_="node-3", text=texts[0]),
        NodeWithScore(node=TextNode(text=texts[1]), score=0.8),
        LangChainDocument(page_content="The Seine flows through Paris."),
        HaystackDocument(content="Montmartre is a hill in Paris."),
    ]
    as_documents = check_grounding(answer, documents)
    assert as_documents.grounded is as_passages.grounded is True
    assert as_documents.claims[0].supporting_ids == ("node-3",)  # the node's own id, cited
    assert [c.p_supported for c in as_documents.claims] == [
        c.p_supported for c in as_passages.claims
    ]


def test_one_document_alone_and_a_retrievers_generator_are_taken_too() -> None:
    from langchain_core.documents import Document

    answer = "Canberra is the capital of Australia."
    as_list = check_grounding(answer, [CANBERRA])
    assert check_grounding(answer, Document(page_content=CANBERRA)) == as_list
    assert check_grounding(answer, {"text": CANBERRA}) == as_list
    assert check_grounding(answer, (text for text in [CANBERRA])) == as_list


def test_a_calibration_bench_calibrate_fitted_decides(calibration: Path) -> None:
    path = calibration
    fitted = read_calibration(path)
    for record in _records()[:12]:
        raw = check_grounding(record["answer"], record["evidence"])
        got = check_grounding(record["answer"], record["evidence"], calibration=path)
        assert got.raw_p_error == raw.p_error
        assert got.p_error == pytest.approx(float(fitted.apply([raw.p_error or 0.0])[0]))
        assert got.threshold == fitted.threshold
        assert got.grounded == (got.p_error is not None and got.p_error < fitted.threshold)
        assert got.calibration == fitted.fingerprint()
        if got.p_error is not None:
            assert "(calibrated; the checker's own" in got.explanation
        # the file read once by the caller gives the same
        assert check_grounding(record["answer"], record["evidence"], calibration=fitted) == got


def test_a_calibration_of_another_scorers_p_error_is_refused(tmp_path: Path) -> None:
    path = learned_calibration(tmp_path, "--verifier", "lexical")
    with pytest.raises(ConfigError, match="verifier lexical there, learned here"):
        check_grounding("Canberra is the capital.", CANBERRA, calibration=path)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"threshold": 1.5}, ValueError, "threshold must be between 0 and 1"),
        ({"threshold": float("nan")}, ValueError, "threshold must be between 0 and 1, got nan"),
        ({"threshold": "0.3"}, TypeError, "threshold: expected a number, got str"),
        ({"threshold": 0.3, "calibration": "c.json"}, ValueError, "not both"),
        ({"calibration": "no-such.json"}, ConfigError, "no-such.json: no such calibration"),
    ],
)
def test_an_operating_point_that_cannot_be_used_is_refused(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        check_grounding("Canberra is the capital.", CANBERRA, **options)


@pytest.mark.parametrize(
    ("evidence", "message"),
    [
        (None, "evidence: missing: the call gives no evidence passages"),
        ([], r"evidence: expected the evidence passages .* got an empty list$"),
        ([{"body": "x"}], r"evidence\[0\]\.text: expected a passage object"),
        ([3], r"evidence\[0\]: expected a string or an object"),
        (b"Canberra", r"evidence\[0\]: expected a string or an object .* got bytes"),
        (3, "evidence: expected the evidence passages .* got int"),
        ([{1: "a", "b": 2}], r"evidence\[0\]\.text: .* \(the object has: 1, b\)"),
    ],
)
def test_evidence_of_another_shape_is_refused_naming_the_item(
    evidence: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        check_grounding("Canberra is the capital.", evidence)


def test_an_answer_the_checker_cannot_score_gets_no_verdict() -> None:
    result = check_grounding("", CANBERRA)
    assert (result.grounded, result.p_error) == (None, None)
    assert result.failure == "the answer states no claim"
    with pytest.raises(TypeError, match="answer: expected a string, got NoneType"):
        check_grounding(None, CANBERRA)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="question: expected a string, got int"):
        check_grounding("Canberra is big.", CANBERRA, question=3)  # type: ignore[arg-type]


def test_it_runs_inside_an_event_loop_and_awaited() -> None:
    expected = check_grounding("Canberra is the capital of Australia.", CANBERRA)

    async def handler() -> tuple[assay.Grounding, assay.Grounding]:
        called = check_grounding("Canberra is the capital of Australia.", CANBERRA)
        awaited = await assay.acheck_grounding("Canberra is the capital of Australia.", CANBERRA)
        return called, awaited

    assert asyncio.run(handler()) == (expected, expected)


def test_a_calibration_file_is_read_again_when_it_changes(
    calibration: Path, tmp_path: Path
) -> None:
    path = tmp_path / "operating_point.json"
    path.write_bytes(calibration.read_bytes())
    first = check_grounding("Canberra is the capital of Australia.", CANBERRA, calibration=path)
    assert first.calibration == read_calibration(calibration).fingerprint()
    assert main(["bench", "calibrate", "--error-rate", "0.2", "--out", str(path)]) == 0
    second = check_grounding("Canberra is the capital of Australia.", CANBERRA, calibration=path)
    assert second.calibration == read_calibration(path).fingerprint() != first.calibration
