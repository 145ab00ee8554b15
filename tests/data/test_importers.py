"""Importers on the real files in ../shared/data: counts, labels, spot-checked records, shape
errors, and that every imported record loads back through the project's loader."""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from assay.cli import main
from assay.data.grounded import load_records
from assay.data.importers import IMPORTERS, GroundedImport
from assay.errors import InputError
from assay.verify.types import GroundedQARecord

from ..conftest import SHARED_DATA

SPLITS = {
    "expertqa": "expertqa/domain_val.jsonl",
    "wice": "wice/claim_dev.jsonl",
    "halueval": "halueval/qa_one-turn_data.json",
}


@cache
def imported(name: str) -> GroundedImport:
    """Each dataset is imported once per test session (the files are read-only)."""
    return IMPORTERS[name].convert(SHARED_DATA / SPLITS[name])


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
    again = {r.id: r for r in IMPORTERS[name].convert(split).records}
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
        IMPORTERS[name].convert(source)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(source), 1, field)
    assert f"does not look like a {name} file" in str(error)


def test_a_bad_row_in_the_middle_is_located(tmp_path: Path) -> None:
    good = (SHARED_DATA / SPLITS["wice"]).read_text(encoding="utf-8").splitlines()[0]
    row = json.loads(good)
    row["supporting_sentences"] = [[0, 9999]]
    path = tmp_path / "dev.jsonl"
    path.write_text(f"{good}\n\n{json.dumps(row)}\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        IMPORTERS["wice"].convert(path)
    assert (caught.value.line, caught.value.field) == (3, "supporting_sentences[0][1]")


def test_unknown_labels_are_errors_not_guesses(tmp_path: Path) -> None:
    row = json.loads((SHARED_DATA / SPLITS["expertqa"]).read_text(encoding="utf-8").split("\n")[0])
    system = next(iter(row["answers"]))
    row["answers"][system]["claims"][0]["support"] = "Mostly"
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        IMPORTERS["expertqa"].convert(path)
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
        IMPORTERS["halueval"].convert(path)


def test_a_repeated_question_keeps_ids_unique(tmp_path: Path) -> None:
    line = (SHARED_DATA / SPLITS["halueval"]).read_text(encoding="utf-8").splitlines()[0]
    path = tmp_path / "qa.json"
    path.write_text(f"{line}\n{line}\n", encoding="utf-8")
    ids = [r.id for r in IMPORTERS["halueval"].convert(path).records]
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


@pytest.mark.parametrize(("name", "phrase"), [("wice", "partially_supported"), ("expertqa", "N/A")])
def test_help_states_the_label_convention(
    name: str, phrase: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["import", name, "--help"])
    assert phrase in capsys.readouterr().out
