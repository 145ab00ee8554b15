"""Importers on the real files in ../shared/data: counts, labels, spot-checked records, shape
errors, and that every imported record loads back through the project's loader."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.data.grounded import load_records
from assay.data.importers import (
    IMPORTERS,
    GroundedImport,
    GroundedImporter,
    IFEvalImport,
    IFEvalSources,
    JudgeSetImporter,
    import_grounded,
)
from assay.data.importers.ifeval_labels import load_ifeval_labels
from assay.data.questions import load_outputs, load_questions
from assay.errors import ConfigError, InputError
from assay.judge.evalset import build_eval_set
from assay.verify.types import GroundedQARecord

from ..conftest import SHARED_DATA

SPLITS = {
    "expertqa": "expertqa/domain_val.jsonl",
    "wice": "wice/claim_dev.jsonl",
    "halueval": "halueval/qa_one-turn_data.json",
}
IFEVAL = SHARED_DATA / "ifeval"
IFEVAL_RESPONSES = IFEVAL / "input_response_data_gpt4_20231107_145030.jsonl"


@cache
def imported(name: str) -> GroundedImport:
    """Each dataset is imported once per test session (the files are read-only)."""
    return import_grounded(name, SHARED_DATA / SPLITS[name])


def grounded(name: str) -> GroundedImporter:
    importer = IMPORTERS[name]
    assert isinstance(importer, GroundedImporter)
    return importer


def by_id(name: str) -> dict[str, GroundedQARecord]:
    return {record.id: record for record in imported(name).records}


# ---------------------------------------------------------------- counts and labels


def test_expertqa_counts_match_the_data_readme(shared_data: Path) -> None:
    report = imported("expertqa").report
    assert report.source == str(shared_data / SPLITS["expertqa"])
    assert report.units == {"questions": 206, "answers": 206, "claims": 1174}
    assert report.kept + sum(report.skipped.values()) == 1174
    assert report.skipped == {
        "evidence is only URLs, no passage text": 270,
        "no evidence": 200,
        "support N/A": 27,
    }
    assert report.kept == 677
    assert report.labels == {"error": 189, "grounded": 488}
    assert report.error_types == {"Incomplete": 144, "Partial": 45}


def test_wice_counts_and_label_balance(shared_data: Path) -> None:
    report = imported("wice").report
    assert report.units == {"claims": 349}
    assert report.kept == 349 and report.skipped == {}
    assert report.labels == {"error": 234, "grounded": 115}
    assert report.error_types == {"not_supported": 43, "partially_supported": 191}


def test_halueval_gives_a_right_and_a_hallucinated_answer_per_question(shared_data: Path) -> None:
    result = imported("halueval")
    assert result.report.units == {"questions": 500, "answers": 1000}
    assert result.report.kept == 1000 and result.report.labels == {"error": 500, "grounded": 500}
    groups: dict[str, list[GroundedQARecord]] = {}
    for record in result.records:
        groups.setdefault(record.cluster, []).append(record)
    assert len(groups) == 500
    for pair in groups.values():
        assert sorted(bool(r.gold_error) for r in pair) == [False, True]
        assert pair[0].question == pair[1].question and pair[0].evidence == pair[1].evidence


@pytest.mark.parametrize("name", list(SPLITS))
def test_records_are_verify_only_with_unique_ids_and_labels(name: str, shared_data: Path) -> None:
    records = imported(name).records
    assert len({r.id for r in records}) == len(records)
    assert all(r.answer and r.gold_error is not None and r.group for r in records)
    assert all((r.error_type is None) == (not r.gold_error) for r in records)
    known = [{e.evidence_id for e in r.evidence} for r in records]
    assert all(
        {c.evidence_id for c in r.gold_citations} <= ids
        for r, ids in zip(records, known, strict=True)
    )


def test_expertqa_groups_by_question(shared_data: Path) -> None:
    records = imported("expertqa").records
    questions_by_group: dict[str, set[str]] = {}
    for record in records:
        questions_by_group.setdefault(record.cluster, set()).add(record.question)
    assert all(len(questions) == 1 for questions in questions_by_group.values())
    assert len(questions_by_group) == len({r.question for r in records}) == 134
    assert max(Counter(r.cluster for r in records).values()) > 1


# ---------------------------------------------------------------- spot checks


def test_expertqa_spot_checks(shared_data: Path) -> None:
    records = by_id("expertqa")
    first = records["expertqa-707e446599-post_hoc_sphere_gpt4-c00"]
    assert first.gold_error is False and first.error_type is None
    assert first.answer is not None and first.answer.endswith("on the world of work[cite:1].")
    assert first.evidence[0].evidence_id == "1"
    assert (
        first.evidence[0].source == "https://www.atthatpoint.co.za/saipa-newsroom/archives/08-2019"
    )
    assert first.evidence[0].text.startswith("Home - At That Point Will 4IR technologies")
    assert [c.evidence_id for c in first.gold_citations] == ["1"]
    assert first.group == "expertqa-707e446599"

    partial = records["expertqa-2b568f821d-rr_sphere_gpt4-c01"]
    assert partial.gold_error is True and partial.error_type == "Partial"
    assert partial.gold_citations == ()  # the expert found the cited evidence insufficient

    multi = records["expertqa-dd8969a522-rr_sphere_gpt4-c00"]
    assert multi.answer is not None and multi.answer.endswith("[cite:1][cite:3][cite:5].")
    assert [e.evidence_id for e in multi.evidence] == ["1", "3", "5"]


def test_wice_spot_checks(shared_data: Path) -> None:
    records = by_id("wice")
    record = records["wice-dev02986"]
    assert record.question == ""
    assert record.answer == record.gold_answer
    assert record.answer is not None and record.answer.startswith(
        "Arnold is currently the publisher"
    )
    assert record.gold_error is True and record.error_type == "partially_supported"
    assert [c.evidence_id for c in record.gold_citations] == ["5", "15", "17"]
    assert record.evidence_by_id()["5"].text == (
        "Media Play News is the voice of the home entertainment industry."
    )
    assert record.group == "wice-article:Roger Hedgecock"
    unsupported = records["wice-dev02563"]
    assert unsupported.error_type == "not_supported" and unsupported.gold_citations == ()


def test_halueval_spot_checks(shared_data: Path) -> None:
    records = by_id("halueval")
    right = records["halueval-6adb2db106-right"]
    wrong = records["halueval-6adb2db106-hallucinated"]
    assert (
        right.question == "Which magazine was started first Arthur's Magazine or First for Women?"
    )
    assert right.answer == right.gold_answer == wrong.gold_answer == "Arthur's Magazine"
    assert wrong.answer == "First for Women was started first."
    assert (right.gold_error, wrong.gold_error, wrong.error_type) == (False, True, "hallucinated")
    assert right.evidence[0].evidence_id == "knowledge"
    assert right.evidence[0].text.startswith("Arthur's Magazine (1844–1846)")


# ---------------------------------------------------------------- other splits, wrong shapes


@pytest.mark.parametrize("name", list(SPLITS))
def test_another_split_imports_with_the_same_ids(name: str, tmp_path: Path) -> None:
    """A subset of the rows in another file (another 'split'): same records, same ids."""
    lines = (SHARED_DATA / SPLITS[name]).read_text(encoding="utf-8").splitlines()
    split = tmp_path / "some_other_split.jsonl"
    split.write_text("\n".join(reversed(lines[-25:])) + "\n", encoding="utf-8")
    again = {r.id: r for r in grounded(name).convert(split).records}
    assert again and again.items() <= by_id(name).items()


@pytest.mark.parametrize(
    ("name", "wrong", "field"),
    [
        ("halueval", "wice", "knowledge"),
        ("wice", "halueval", "claim"),
        ("expertqa", "wice", "question"),
        ("wice", "expertqa", "claim"),
        ("expertqa", "halueval", "answers"),
    ],
)
def test_a_file_of_another_dataset_gives_one_located_error(
    name: str, wrong: str, field: str, shared_data: Path
) -> None:
    source = shared_data / SPLITS[wrong]
    with pytest.raises(InputError) as caught:
        grounded(name).convert(source)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(source), 1, field)
    article = "an" if name[0] in "aeiou" else "a"
    assert f"does not look like {article} {name} file" in str(error)


def test_a_bad_row_in_the_middle_is_located(tmp_path: Path) -> None:
    good = (SHARED_DATA / SPLITS["wice"]).read_text(encoding="utf-8").splitlines()[0]
    row = json.loads(good)
    row["supporting_sentences"] = [[0, 9999]]
    path = tmp_path / "dev.jsonl"
    path.write_text(f"{good}\n\n{json.dumps(row)}\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        grounded("wice").convert(path)
    assert (caught.value.line, caught.value.field) == (3, "supporting_sentences[0][1]")
    assert "9999 is not a sentence index" in str(caught.value)
    assert "does not look like" not in str(caught.value)  # right file, bad value
    row["evidence"], row["supporting_sentences"] = row["evidence"][:1], [[3]]
    path.write_text(f"{json.dumps(row)}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"3 is not a sentence index \(the page has 1 sentence\)"):
        grounded("wice").convert(path)


def test_unknown_labels_are_errors_not_guesses(tmp_path: Path) -> None:
    row = json.loads((SHARED_DATA / SPLITS["expertqa"]).read_text(encoding="utf-8").split("\n")[0])
    system = next(iter(row["answers"]))
    row["answers"][system]["claims"][0]["support"] = "Mostly"
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        grounded("expertqa").convert(path)
    assert caught.value.field == f"answers.{system}.claims[0].support"
    assert "'Mostly'" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[{"question": "q"}]\n', "not one JSON array"),
        ("not json\n", "invalid JSON"),
        ("\n\n", "file is empty"),
        ('"a string"\n', "must be a JSON object"),
    ],
)
def test_unreadable_files(text: str, expected: str, tmp_path: Path) -> None:
    path = tmp_path / "data.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=expected):
        grounded("halueval").convert(path)


def test_a_repeated_question_keeps_ids_unique(tmp_path: Path) -> None:
    line = (SHARED_DATA / SPLITS["halueval"]).read_text(encoding="utf-8").splitlines()[0]
    path = tmp_path / "qa.json"
    path.write_text(f"{line}\n{line}\n", encoding="utf-8")
    ids = [r.id for r in grounded("halueval").convert(path).records]
    assert ids == [
        "halueval-6adb2db106-right",
        "halueval-6adb2db106-hallucinated",
        "halueval-6adb2db106-right-L2",
        "halueval-6adb2db106-hallucinated-L2",
    ]


# ---------------------------------------------------------------- the command


@pytest.mark.parametrize("name", list(SPLITS))
def test_cli_writes_records_that_load_back(
    name: str, tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out" / f"{name}.jsonl"
    argv = ["import", name, str(shared_data / SPLITS[name]), "--out", str(out)]
    assert main(argv) == 0
    assert main(argv) == 0  # a rerun replaces the file, never appends
    printed = capsys.readouterr().out
    assert f"kept {imported(name).report.kept} records" in printed and "labels:" in printed
    loaded = load_records(out)
    assert loaded.skipped == ()
    assert loaded.records == imported(name).records


def test_cli_wrong_shape_is_one_line_exit_2(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "x.jsonl"
    assert main(["import", "halueval", str(shared_data / SPLITS["wice"]), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ":1 field 'knowledge'" in err
    assert not out.exists()


def test_import_grounded_refuses_other_importers() -> None:
    with pytest.raises(ConfigError, match="choose from expertqa, wice, halueval"):
        import_grounded("ifeval", IFEVAL / "input_data.jsonl")


@pytest.mark.parametrize(("name", "phrase"), [("wice", "partially_supported"), ("expertqa", "N/A")])
def test_help_states_the_label_convention(
    name: str, phrase: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["import", name, "--help"])
    assert phrase in capsys.readouterr().out


# ---------------------------------------------------------------- IFEval (judge data)


def ifeval_sources(**changes: Any) -> IFEvalSources:
    sources = IFEvalSources(
        prompts=IFEVAL / "input_data.jsonl",
        responses=IFEVAL_RESPONSES,
        labels=IFEVAL / "eval_results_strict.jsonl",
        loose_labels=IFEVAL / "eval_results_loose.jsonl",
    )
    return replace(sources, **changes)


@cache
def ifeval_imported() -> IFEvalImport:
    importer = IMPORTERS["ifeval"]
    assert isinstance(importer, JudgeSetImporter)
    return importer.convert(ifeval_sources())


def test_ifeval_counts(shared_data: Path) -> None:
    result = ifeval_imported()
    report = result.report
    assert report.units == {"prompts": 541, "responses": 541}
    assert report.kept == len(result.questions) == len(result.outputs) == len(result.labels) == 540
    # key 2785's prompt was reworded after the GPT-4 responses were collected
    assert report.skipped == {"prompt without a response": 1, "response to a prompt not in SRC": 1}
    assert "ifeval-2785" not in {q.question_id for q in result.questions}
    assert report.labels["instructions"] == 832
    assert report.labels["all instructions followed (strict)"] == 415


def test_ifeval_ground_truth_per_dimension(shared_data: Path) -> None:
    labels = {label.question_id: label for label in ifeval_imported().labels}
    first = labels["ifeval-1000"]
    assert [(i.instruction_id, i.format, i.followed_strict) for i in first.instructions] == [
        ("punctuation:no_comma", True, True),
        ("detectable_format:number_highlighted_sections", True, True),
        ("length_constraints:number_words", True, False),
    ]
    assert first.instructions[2].kwargs == {"relation": "at least", "num_words": 300}
    compliance = first.truth("INSTRUCTION_COMPLIANCE")
    assert compliance is not None and (compliance.followed, compliance.score) == (2, 1)
    # keywords:* is not a format instruction: a prompt with only such has no format truth
    only_content = [
        label for label in labels.values() if not any(i.format for i in label.instructions)
    ]
    assert only_content and all(lbl.truth("FORMAT_COMPLIANCE") is None for lbl in only_content)
    truths = [label.truth("INSTRUCTION_COMPLIANCE") for label in labels.values()]
    assert Counter(t.score for t in truths if t is not None) == {2: 415, 1: 74, 0: 51}


def test_ifeval_files_load_through_the_judge_loaders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "import", "ifeval", str(IFEVAL / "input_data.jsonl"),
        "--responses", str(IFEVAL_RESPONSES),
        "--labels", str(IFEVAL / "eval_results_strict.jsonl"),
        "--out", str(tmp_path / "ifeval"),
    ]  # fmt: skip
    assert main(argv) == 0
    assert "wrote 540 outputs" in capsys.readouterr().out
    questions = load_questions(tmp_path / "ifeval" / "questions.jsonl")
    outputs = load_outputs(tmp_path / "ifeval")
    evalset = build_eval_set(questions, outputs)
    assert evalset.coverage.complete and len(evalset.samples) == 540
    sample = next(s for s in evalset.samples if s.question_id == "ifeval-1000")
    assert sample.target_model == "gpt4_20231107_145030"
    assert sample.output_id == "input_response_data_gpt4_20231107_145030.jsonl:1"
    assert sample.output_text.startswith("Raymond III was the Count of Tripoli")
    assert "detectable_format:number_highlighted_sections (num_highlights=3)" in sample.constraints
    labels = list(load_ifeval_labels(tmp_path / "ifeval" / "labels.jsonl"))
    assert [label.question_id for label in labels] == [s.question_id for s in evalset.samples]
    assert all(i.followed_loose is None for label in labels for i in label.instructions)
    assert labels[0].truth("INSTRUCTION_COMPLIANCE", "loose") is None


def test_ifeval_wrong_files_give_located_errors(tmp_path: Path) -> None:
    importer = IMPORTERS["ifeval"]
    assert isinstance(importer, JudgeSetImporter)
    with pytest.raises(InputError) as caught:
        importer.convert(ifeval_sources(prompts=IFEVAL_RESPONSES))
    assert (caught.value.path, caught.value.line, caught.value.field) == (
        str(IFEVAL_RESPONSES),
        1,
        "key",
    )
    rows = (IFEVAL / "eval_results_strict.jsonl").read_text(encoding="utf-8").splitlines()
    changed = json.loads(rows[3])
    changed["response"] += " (edited)"
    labels = tmp_path / "eval_results_strict.jsonl"
    labels.write_text("\n".join([*rows[:3], json.dumps(changed)]) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        importer.convert(ifeval_sources(labels=labels))
    assert (caught.value.line, caught.value.field) == (4, "response")
    assert "another response" in str(caught.value)
