"""Archive layout, sanitised paths, fingerprint refusal and the offline re-check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import RunError
from assay.judge.archive import (
    INVALID_DIR,
    VALID_DIR,
    Archive,
    EvaluationRecord,
    iter_archive,
    recheck_archive,
    record_path,
)
from assay.judge.protocol import DecodingSettings, Protocol, Thresholds
from assay.judge.run import protocol_state
from assay.judge.validate import classify
from assay.model import user

from .helpers import META, OUTPUT_TEXT, dumps, valid_body


def make_record(fingerprint: str, reply: str, **ids: str) -> EvaluationRecord:
    meta = {**META, **ids}
    classification = classify(reply, meta, OUTPUT_TEXT, Protocol())
    return EvaluationRecord(
        fingerprint=fingerprint,
        question_id=meta["question_id"],
        prompt_variant=meta["prompt_variant"],
        target_model=meta["target_model"],
        output_id=meta["output_id"],
        judge_model=meta["judge_model"],
        method="cross_judge",
        attempt=1,
        valid=classification.valid,
        flags=classification.flags,
        classification=classification,
        raw_reply=reply,
        constrained=False,
        messages=(user("prompt"),),
        evaluated_output=OUTPUT_TEXT,
    )


@pytest.fixture
def archive(tmp_path: Path) -> Archive:
    return Archive.open(tmp_path / "run", protocol_state(Protocol(), DecodingSettings()))


def test_valid_and_invalid_land_in_their_archive(archive: Archive) -> None:
    good = archive.add(make_record(archive.state.fingerprint, dumps(valid_body())))
    bad = archive.add(
        make_record(archive.state.fingerprint, "no json", question_id="Q2", output_id="o2")
    )
    assert good.relative_to(archive.run_dir).parts[0] == VALID_DIR
    assert bad.relative_to(archive.run_dir).parts[0] == INVALID_DIR
    readme = (archive.run_dir / INVALID_DIR / "README.md").read_text()
    assert "Invalid is not FAIL" in readme and "JUDGE_CALL_FAILED" in readme
    stored = json.loads(bad.read_text())
    assert stored["raw_reply"] == "no json" and stored["flags"] == [
        "UNPARSABLE_OUTPUT",
        "JUDGE_REFUSAL_OR_EVASION",
    ]
    assert [c["name"] for c in stored["classification"]["checks"] if not c["passed"]] == [
        "json_syntax",
        "has_scores",
    ]


@pytest.mark.parametrize(
    "hostile",
    ["../../x", "/etc/passwd", "..", "a/../../../b", "C:\\windows\\x", "\x00evil", "." * 300],
)
def test_ids_cannot_write_outside_the_run_dir(archive: Archive, hostile: str) -> None:
    record = make_record(
        archive.state.fingerprint,
        "{}",
        question_id=hostile,
        prompt_variant=hostile,
        output_id=hostile,
        target_model=hostile,
        judge_model=hostile,
    )
    path = archive.add(record)
    assert path.resolve().is_relative_to((archive.run_dir / INVALID_DIR).resolve())
    assert path.exists()
    assert [f.record for f in iter_archive(archive.run_dir)] == [record]


def test_distinct_ids_never_share_a_file(archive: Archive) -> None:
    fp = archive.state.fingerprint
    paths = {
        record_path(archive.run_dir, make_record(fp, "x", question_id=q, output_id=o))
        for q in ("a/b", "a_b", "a?b")
        for o in ("1", "2")
    }
    assert len(paths) == 6


def test_other_fingerprint_is_refused(archive: Archive) -> None:
    other = protocol_state(Protocol(thresholds=Thresholds(pass_min=8)), DecodingSettings())
    with pytest.raises(RunError, match="fingerprint") as caught:
        Archive.open(archive.run_dir, other)
    assert caught.value.hint is not None and "--out" in caught.value.hint
    with pytest.raises(RunError, match="refusing a record"):
        archive.add(make_record(other.fingerprint, dumps(valid_body())))


def test_an_attempt_is_archived_once(archive: Archive) -> None:
    record = make_record(archive.state.fingerprint, dumps(valid_body()))
    archive.add(record)
    with pytest.raises(RunError, match="already archived"):
        archive.add(record)


def test_recheck_finds_misfiled_tampered_and_duplicates(archive: Archive) -> None:
    fp = archive.state.fingerprint
    good = archive.add(make_record(fp, dumps(valid_body())))
    archive.add(make_record(fp, "```nope```", question_id="Q2"))
    report = recheck_archive(archive.run_dir)
    assert report.consistent and (report.valid, report.invalid) == (1, 1)
    assert report.flag_counts == {
        "PROTOCOL_VIOLATION": 1,  # a code fence
        "UNPARSABLE_OUTPUT": 1,  # no JSON
        "JUDGE_REFUSAL_OR_EVASION": 1,  # no scores at all
    }

    data = json.loads(good.read_text())  # a hand edit: valid record, reply now broken
    data["raw_reply"] = "Sure! " + data["raw_reply"]
    good.write_text(json.dumps(data))
    moved = archive.run_dir / INVALID_DIR / "moved.json"
    moved.write_text(json.dumps(data))
    (archive.run_dir / VALID_DIR / "garbage.json").write_text("{")
    report = recheck_archive(archive.run_dir)
    assert not report.consistent
    assert str(good) in report.reclassified
    assert str(moved) in report.misfiled and str(moved) in report.duplicated_attempts
    assert len(report.unreadable) == 1


def test_recheck_needs_a_run_dir(tmp_path: Path) -> None:
    with pytest.raises(RunError, match=r"protocol\.json"):
        recheck_archive(tmp_path)
