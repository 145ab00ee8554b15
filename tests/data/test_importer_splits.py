"""Importers on the splits and files of each dataset that are not in ../shared/data (WiCE's test
and sub-claim files, ExpertQA's other files, HaluEval's other task files, other IFEval response
files), through the real command. The rows are hand-made in each file's published format (the
field names, value types and label vocabularies of the public repositories); their text is
made up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.data.grounded import load_records
from assay.verify.types import GroundedQARecord


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def run_import(name: str, source: Path, out: Path) -> tuple[GroundedQARecord, ...]:
    assert main(["import", name, str(source), "--out", str(out)]) == 0
    loaded = load_records(out)
    assert loaded.skipped == ()
    return loaded.records


# ---------------------------------------------------------------- WiCE

PAGE = [
    "(meta data) TITLE: Harbour town notes",
    "The harbour town was founded in 1820 by fishermen.",
    "Its lighthouse was built in 1871.",
    "",
    "The lighthouse stands 30 metres tall.",
]


def wice_row(claim_id: str, label: str, supporting: list[list[int]], claim: str) -> dict[str, Any]:
    meta = {
        "id": claim_id,
        "claim_title": "Harbour Town",
        "claim_section": "History.",
        "claim_context": "Earlier text of the article.",
    }
    return {
        "label": label,
        "supporting_sentences": supporting,
        "claim": claim,
        "evidence": PAGE,
        "meta": meta,
    }


def test_wice_subclaim_split_keeps_ids_and_labels(tmp_path: Path) -> None:
    """Sub-claim files (``subclaim/test.jsonl``) number sub-claims ``<claim id>-<n>``."""
    source = write_rows(
        tmp_path / "subclaim_test.jsonl",
        [
            wice_row("test00001-1", "supported", [[1]], "The town was founded in 1820."),
            wice_row("test00001-2", "partially_supported", [[2]], "The navy built it in 1871."),
            wice_row("test00002-1", "not_supported", [[]], "The town has an airport."),
        ],
    )
    records = run_import("wice", source, tmp_path / "out.jsonl")
    assert [(r.id, r.gold_error, r.error_type) for r in records] == [
        ("wice-test00001-1", False, None),
        ("wice-test00001-2", True, "partially_supported"),
        ("wice-test00002-1", True, "not_supported"),
    ]
    assert {r.group for r in records} == {"wice-article:Harbour Town"}
    assert [e.evidence_id for e in records[0].evidence] == ["0", "1", "2", "4"]  # blank left out


def test_wice_token_annotation_file_imports_its_claims(tmp_path: Path) -> None:
    """``non_supported_tokens/*.jsonl`` rows are sub-claim rows plus token fields."""
    row = wice_row("dev00009-2", "partially_supported", [[2]], "The navy built the lighthouse.")
    row |= {"claim_tokens": ["The", "navy"], "non_supported_spans": [False, True]}
    (record,) = run_import("wice", write_rows(tmp_path / "dev.jsonl", [row]), tmp_path / "o.jsonl")
    assert (record.id, record.error_type) == ("wice-dev00009-2", "partially_supported")


# ---------------------------------------------------------------- ExpertQA


def expertqa_claim(text: str, evidence: list[str] | None, support: str | None) -> dict[str, Any]:
    """A claim with the optional fields null, as ExpertQA's data loader allows."""
    empty = (
        "reason_missing_support",
        "informativeness",
        "worthiness",
        "correctness",
        "reliability",
        "revised_claim",
        "revised_evidence",
    )
    return {"claim_string": text, "evidence": evidence, "support": support} | dict.fromkeys(empty)


def expertqa_answer(claims: list[dict[str, Any]] | None) -> dict[str, Any]:
    return {
        "answer_string": "An answer.",
        "attribution": None,
        "claims": claims,
        "revised_answer_string": None,
        "usefulness": None,
        "annotation_time": None,
        "annotator_id": None,
    }


def test_expertqa_several_answers_per_question_and_null_fields(tmp_path: Path) -> None:
    evidence = ["[1] https://example.org/museum\n\nThe museum opened in 1901."]
    row = {
        "question": "When did the city museum open?",
        "annotator_id": "1",
        "answers": {
            "gpt4": expertqa_answer(
                [
                    expertqa_claim("It opened in 1901 [1].", evidence, "Complete"),
                    expertqa_claim("It opened in spring [1].", evidence, None),
                ]
            ),
            "bing_chat": expertqa_answer([expertqa_claim("It is old [1].", evidence, "Partial")]),
            "rr_gs_gpt4": expertqa_answer(None),
        },
        "metadata": None,
    }
    source = write_rows(tmp_path / "rand_test.jsonl", [row])
    records = run_import("expertqa", source, tmp_path / "out.jsonl")
    assert [(r.id.split("-", 2)[2], r.gold_error, r.meta) for r in records] == [
        ("gpt4-c00", False, {"system": "gpt4"}),
        ("bing_chat-c00", True, {"system": "bing_chat"}),
    ]
    assert len({r.group for r in records}) == 1  # the answers of one question


def test_a_file_without_labelled_answers_is_refused_not_written_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ExpertQA's stage-1 question list has the row shape of the answer files, with
    ``answers: {}``: an import of it keeps nothing, which is an error, not an empty file."""
    row = {
        "question": "Why is the sky blue?",
        "annotator_id": "7",
        "answers": {},
        "metadata": {"question_type": "x", "field": "Physics", "specific_field": "optics"},
    }
    source = write_rows(tmp_path / "r1_data_anon.jsonl", [row])
    out = tmp_path / "out.jsonl"
    assert main(["import", "expertqa", str(source), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{source}: nothing to import" in err
    assert "(1 questions, 0 answers, 0 claims)" in err
    assert not out.exists()


# ---------------------------------------------------------------- HaluEval


def test_halueval_dialogue_and_summarization_files_import(tmp_path: Path) -> None:
    dialogue = {
        "knowledge": "Ocean Song is directed by Ana Reyes. Ocean Song stars Tom Hale",
        "dialogue_history": "[Human]: Do you know Ocean Song? [Assistant]: Yes. [Human]: Who "
        "directed it?",
        "right_response": "Ana Reyes directed it.",
        "hallucinated_response": "Tom Hale directed it in 1999.",
    }
    summary = {
        "document": "The council approved a new park on Tuesday. Work starts in May.",
        "right_summary": "A new park was approved; work begins in May.",
        "hallucinated_summary": "A new stadium was approved; work begins in June.",
    }
    talk = run_import(
        "halueval",
        write_rows(tmp_path / "dialogue_data.json", [dialogue]),
        tmp_path / "dialogue.jsonl",
    )
    assert [(r.answer, r.gold_error, r.meta) for r in talk] == [
        (
            "Ana Reyes directed it.",
            False,
            {"task": "dialogue", "source": "opendialkg", "answer": "right"},
        ),
        (
            "Tom Hale directed it in 1999.",
            True,
            {"task": "dialogue", "source": "opendialkg", "answer": "hallucinated"},
        ),
    ]
    assert talk[0].question == dialogue["dialogue_history"]
    assert [(e.evidence_id, e.text) for e in talk[0].evidence] == [
        ("knowledge", dialogue["knowledge"])
    ]
    assert talk[0].id.startswith("halueval-dialogue-") and talk[0].group == talk[1].group
    summaries = run_import(
        "halueval",
        write_rows(tmp_path / "summarization_data.json", [summary]),
        tmp_path / "summaries.jsonl",
    )
    assert [(r.question, r.gold_error, r.error_type) for r in summaries] == [
        ("", False, None),
        ("", True, "hallucinated"),
    ]
    assert summaries[0].evidence[0].evidence_id == "document"
    assert summaries[1].id.startswith("halueval-summarization-")


def test_halueval_general_query_file_is_refused_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = {
        "ID": "1",
        "user_query": "Name three rivers.",
        "chatgpt_response": "Nile, Amazon.",
        "hallucination_label": "no",
    }
    source = write_rows(tmp_path / "general_data.json", [row])
    assert main(["import", "halueval", str(source), "--out", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert f"{source}:1 field 'chatgpt_response'" in err and "general-query file" in err


# ---------------------------------------------------------------- IFEval

PROMPTS = [
    {
        "key": 1,
        "prompt": "Write a haiku about rain. Do not use any commas.",
        "instruction_id_list": ["punctuation:no_comma"],
        "kwargs": [{}],
    },
    {
        "key": 2,
        "prompt": "Describe a cat in all lowercase letters.",
        "instruction_id_list": ["change_case:english_lowercase"],
        "kwargs": [{}],
    },
]


def ifeval_files(tmp_path: Path, responses: list[Any]) -> list[str]:
    """input_data, a responses file and its strict results, as IFEval's evaluation writes them."""
    answered = [(p, r) for p, r in zip(PROMPTS, responses, strict=True)]
    results = [
        {
            "follow_all_instructions": False,
            "follow_instruction_list": [False],
            "instruction_id_list": p["instruction_id_list"],
            "prompt": p["prompt"],
            "response": r or "",
        }
        for p, r in answered
    ]
    return [
        str(write_rows(tmp_path / "input_data.jsonl", PROMPTS)),
        "--responses",
        str(
            write_rows(
                tmp_path / "input_response_data_other.jsonl",
                [{"prompt": p["prompt"], "response": r} for p, r in answered],
            )
        ),
        "--labels",
        str(write_rows(tmp_path / "eval_results_strict.jsonl", results)),
    ]


def test_ifeval_null_response_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = ifeval_files(tmp_path, ["Rain falls soft", None])
    assert main(["import", "ifeval", *files, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "input_response_data_other.jsonl:2 field 'response': null" in err
    assert not (tmp_path / "out").exists()


def test_ifeval_responses_to_other_prompts_are_refused_not_written_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = ifeval_files(tmp_path, ["Rain falls soft", "a cat sleeps"])
    other = write_rows(tmp_path / "other.jsonl", [{"prompt": "Another prompt.", "response": "x"}])
    files[2] = str(other)
    assert main(["import", "ifeval", *files, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "nothing to import" in err and "prompt without a response 2" in err
    assert not (tmp_path / "out").exists()
