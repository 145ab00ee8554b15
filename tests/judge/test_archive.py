"""Archive layout, sanitised paths, fingerprint refusal and the offline re-check."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assay.errors import RunError
from assay.judge.archive import (
    INVALID_DIR,
    VALID_DIR,
    Archive,
    EvaluationRecord,
    FailureInfo,
    iter_archive,
    recheck_archive,
    record_path,
)
from assay.judge.archive_shards import BLOBS_FILE, BlobStore
from assay.judge.findings import Check
from assay.judge.protocol import (
    INCOMPLETE_COVERAGE,
    JUDGE_CALL_FAILED,
    DecodingSettings,
    Protocol,
    Thresholds,
)
from assay.judge.run import protocol_state
from assay.judge.validate import Classification, classify
from assay.model import system, user

from .helpers import META, OUTPUT_TEXT, dumps, valid_body


def make_record(
    fingerprint: str, reply: str, *, dated: bool = True, **ids: str
) -> EvaluationRecord:
    """A record as a run archives it; ``dated=False``: as one archived before records kept
    the request's date, when the reply's date was checked for its form only."""
    meta = {**META, **ids}
    if not dated:
        meta.pop("timestamp")
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
        request_date=meta.get("timestamp"),
    )


@pytest.fixture(params=["shards", "files"])
def archive(tmp_path: Path, request: pytest.FixtureRequest) -> Archive:
    state = protocol_state(Protocol(), DecodingSettings(), layout=request.param)
    return Archive.open(tmp_path / "run", state)


def with_question(question_id: str) -> dict[str, object]:
    body = valid_body()
    body["meta"] = {**body["meta"], "question_id": question_id}
    return body


def stored_lines(path: Path) -> list[dict[str, Any]]:
    """The raw stored JSON: one object per file, or one per line of a shard."""
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text().splitlines()]
    return [json.loads(path.read_text())]


def test_valid_and_invalid_land_in_their_archive(archive: Archive) -> None:
    good = archive.add(make_record(archive.state.fingerprint, dumps(valid_body())))
    bad = archive.add(
        make_record(archive.state.fingerprint, "no json", question_id="Q2", output_id="o2")
    )
    assert good.relative_to(archive.run_dir).parts[0] == VALID_DIR
    assert bad.relative_to(archive.run_dir).parts[0] == INVALID_DIR
    readme = (archive.run_dir / INVALID_DIR / "README.md").read_text()
    assert "Invalid is not FAIL" in readme and "JUDGE_CALL_FAILED" in readme
    [stored] = stored_lines(bad)  # what a person reading invalid_evaluations/ sees
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


def test_recheck_finds_misfiled_tampered_and_duplicates(tmp_path: Path) -> None:
    state = protocol_state(Protocol(), DecodingSettings(), layout="files")
    archive = Archive.open(tmp_path / "run", state)
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
    assert any(entry.startswith(f"{good} field 'classification.") for entry in report.reclassified)
    assert str(moved) in report.misfiled
    assert report.duplicated_attempts == (f"{moved} (the same attempt as {good})",)
    assert len(report.unreadable) == 1


def _edit_stored(path: Path, line: int, edit: Callable[[dict[str, Any]], None]) -> None:
    """Change one stored record (a file, or a line of a shard) in place, as a hand edit."""
    lines = [path.read_text()] if path.suffix == ".json" else path.read_text().splitlines()
    data = json.loads(lines[line - 1])
    edit(data)
    lines[line - 1] = json.dumps(data)
    path.write_text("\n".join(lines) + "\n")


def test_recheck_finds_edited_scores_under_an_untouched_reply(archive: Archive) -> None:
    """The reply says INSTRUCTION_COMPLIANCE 1 and overall 6; the stored classification is
    edited to 2 and 7, valid and flags left as they were: validate names both fields."""
    where = archive.add(make_record(archive.state.fingerprint, dumps(valid_body())))
    archive.close()
    assert recheck_archive(archive.run_dir).consistent

    def edit(data: dict[str, Any]) -> None:
        data["classification"]["scores"]["INSTRUCTION_COMPLIANCE"] = 2
        data["classification"]["overall_score"] = 7

    _edit_stored(where, 1, edit)
    report = recheck_archive(archive.run_dir)
    assert not report.consistent and (report.valid, report.invalid) == (1, 0)
    place = f"{where}:1" if archive.sharded else str(where)
    assert report.reclassified == (
        f"{place} field 'classification.scores.INSTRUCTION_COMPLIANCE': stored 2, the reply "
        "gives 1; field 'classification.overall_score': stored 7, the reply gives 6",
    )


def test_a_reply_dated_another_day_is_invalid_and_rechecks_as_archived(archive: Archive) -> None:
    """The judge was given 2026-01-02 and wrote 2026-01-03: the identifier was not copied.
    A record archived before records kept the request's date rechecks as it was archived;
    an edited request date is found."""
    other_day = valid_body()
    other_day["meta"]["timestamp"] = "2026-01-03"
    new = make_record(archive.state.fingerprint, dumps(other_day))
    assert (new.valid, new.flags) == (False, (INCOMPLETE_COVERAGE,))
    [check] = [c for c in new.classification.checks if c.name == "timestamp_matches"]
    assert check.detail == "timestamp 2026-01-03 but the request carried 2026-01-02"
    other_day["meta"]["output_id"] = "o2"
    old = make_record(archive.state.fingerprint, dumps(other_day), dated=False, output_id="o2")
    assert old.valid and old.request_date is None
    where = archive.add(new)
    archive.add(old)
    archive.close()
    assert recheck_archive(archive.run_dir).consistent

    _edit_stored(where, 1, lambda data: data.__setitem__("request_date", "2026-01-03"))
    [entry] = recheck_archive(archive.run_dir).reclassified
    assert "field 'classification.valid': stored False, the reply gives True" in entry


def test_recheck_finds_an_edited_verdict_and_evidence(archive: Archive) -> None:
    where = archive.add(make_record(archive.state.fingerprint, dumps(valid_body())))
    archive.close()

    def edit(data: dict[str, Any]) -> None:
        data["classification"]["verdict"] = "PASS"
        data.get("_stored", {}).pop("evidence_located", None)  # the shard's compact form
        evidence = [dict(item, located=True) for item in valid_body()["evidence"]]
        evidence[0]["quote"] = "not what the reply quoted"
        data["classification"]["evidence"] = evidence

    _edit_stored(where, 1, edit)
    [entry] = recheck_archive(archive.run_dir).reclassified
    assert "field 'classification.verdict': stored 'PASS', the reply gives 'PARTIAL'" in entry
    assert "field 'classification.evidence[0].quote': stored 'not what the reply quoted'" in entry


def test_recheck_takes_a_reply_stored_escaped(tmp_path: Path) -> None:
    """A reply the per-file archive cannot hold as is (an infinity in its JSON) is stored
    escaped with an 'archivable' check after the reply's own failed checks: its classification
    says why, and is not re-derived."""
    state = protocol_state(Protocol(), DecodingSettings(), layout="files")
    archive = Archive.open(tmp_path / "run", state)
    archive.add(make_record(archive.state.fingerprint, '{"scores": {"x": 1e999}}'))
    [item] = iter_archive(archive.run_dir)
    assert item.record is not None
    checks = item.record.classification.checks
    assert checks[-1].name == "archivable" and "required_fields" in [c.name for c in checks]
    assert recheck_archive(archive.run_dir).consistent


def test_recheck_finds_a_failed_call_given_scores(archive: Archive) -> None:
    record = make_record(archive.state.fingerprint, "")
    failed = Classification(
        valid=False,
        flags=(JUDGE_CALL_FAILED,),
        checks=(Check(name="model_call", passed=False, flag=JUDGE_CALL_FAILED, detail="timeout"),),
        parse="none",
    )
    record = record.model_copy(
        update={
            "raw_reply": None,
            "flags": failed.flags,
            "classification": failed,
            "call_failure": FailureInfo(kind="timeout", message="timed out", attempts=3),
        }
    )
    where = archive.add(record)
    archive.close()
    assert recheck_archive(archive.run_dir).consistent
    _edit_stored(where, 1, lambda data: data["classification"].update(overall_score=8))
    [entry] = recheck_archive(archive.run_dir).reclassified
    assert entry.endswith("field 'classification.overall_score': a failed call has none")


def test_recheck_needs_a_run_dir(tmp_path: Path) -> None:
    with pytest.raises(RunError, match=r"protocol\.json"):
        recheck_archive(tmp_path)


def test_recheck_finds_tampered_and_unreadable_shard_lines(tmp_path: Path) -> None:
    state = protocol_state(Protocol(), DecodingSettings(), layout="shards")
    archive = Archive.open(tmp_path / "run", state)
    fp = archive.state.fingerprint
    shard = archive.add(make_record(fp, dumps(valid_body())))
    archive.add(make_record(fp, dumps(with_question("Q2")), question_id="Q2"))
    archive.close()
    assert recheck_archive(archive.run_dir).consistent
    first, second = shard.read_text().splitlines()
    data = json.loads(first)
    data["_stored"].pop("raw_reply", None)
    data["raw_reply"] = "Sure! " + json.dumps(data["classification"]["parsed"])
    shard.write_text(json.dumps(data) + "\n" + "{not json\n" + second + "\n")
    report = recheck_archive(archive.run_dir)
    [entry] = report.reclassified
    assert entry.startswith(f"{shard}:1 field 'classification.")
    assert len(report.unreadable) == 1 and report.unreadable[0].startswith(f"{shard}:2: ")
    assert (report.valid, report.files) == (2, 3)


def test_shards_store_repeated_text_once_and_read_back_exactly(tmp_path: Path) -> None:
    state = protocol_state(Protocol(), DecodingSettings(), layout="shards")
    archive = Archive.open(tmp_path / "run", state)
    fp = archive.state.fingerprint
    long_prompt = "The same system prompt, long enough to be stored once by hash.\n" * 20
    records = []
    for index in range(30):
        qid = f"Q{index}"
        record = make_record(fp, dumps(with_question(qid)), question_id=qid)
        record = record.model_copy(
            update={"messages": (system(long_prompt), user(f"task\n\n{OUTPUT_TEXT}\n\nend"))}
        )
        archive.add(record)
        records.append(record)
    archive.close()
    assert [item.record for item in iter_archive(archive.run_dir)] == records
    blobs = (archive.run_dir / "archive_blobs.jsonl").read_text().splitlines()
    assert [json.loads(line)["t"] for line in blobs].count(long_prompt) == 1
    shards = list((archive.run_dir / VALID_DIR).rglob("part-*.jsonl"))
    assert len(shards) == 1 and len(shards[0].read_text().splitlines()) == 30
    assert long_prompt[:60] not in shards[0].read_text()


def test_a_line_cut_by_a_crash_is_never_read_and_is_cut_on_open(tmp_path: Path) -> None:
    state = protocol_state(Protocol(), DecodingSettings(), layout="shards")
    archive = Archive.open(tmp_path / "run", state)
    fp = archive.state.fingerprint
    shard = archive.add(make_record(fp, dumps(valid_body())))
    archive.close()
    whole = shard.read_bytes()
    shard.write_bytes(whole + whole[: len(whole) // 2])  # a second line, cut mid-write
    assert len(list(iter_archive(archive.run_dir))) == 1
    reopened = Archive.open(archive.run_dir, state)
    assert shard.read_bytes() == whole
    reopened.add(make_record(fp, dumps(with_question("Q2")), question_id="Q2"))
    reopened.close()
    assert recheck_archive(archive.run_dir).consistent


def test_an_unreadable_shard_line_is_quarantined_and_the_rest_kept(tmp_path: Path) -> None:
    state = protocol_state(Protocol(), DecodingSettings(), layout="shards")
    archive = Archive.open(tmp_path / "run", state)
    fp = archive.state.fingerprint
    shard = archive.add(make_record(fp, dumps(valid_body())))
    archive.close()
    shard.write_text("[1, 2]\n" + shard.read_text())
    moved = Archive.open(archive.run_dir, state).quarantine_unreadable()
    assert len(moved) == 1 and moved[0].read_text() == "[1, 2]\n"
    assert [item.record is not None for item in iter_archive(archive.run_dir)] == [True]


def test_a_shard_line_keeps_its_time_and_version(tmp_path: Path) -> None:
    state = protocol_state(Protocol(), DecodingSettings(), layout="shards")
    archive = Archive.open(tmp_path / "run", state)
    record = make_record(archive.state.fingerprint, dumps(valid_body()))  # made now
    shard = archive.add(record)
    archive.close()
    [line] = stored_lines(shard)  # stored, not made again (differently) when read later
    assert line["created_at"] == record.created_at and line["schema_version"] == 1
    assert [item.record for item in iter_archive(archive.run_dir)] == [record]


def test_the_summary_read_gives_the_statistics_the_full_read_gives(tmp_path: Path) -> None:
    from assay.judge.evaluations import Evaluation

    state = protocol_state(Protocol(), DecodingSettings(), layout="shards")
    archive = Archive.open(tmp_path / "run", state)
    fp = archive.state.fingerprint
    archive.add(make_record(fp, dumps(valid_body())))
    archive.add(make_record(fp, dumps(with_question("Q2")), question_id="Q2"))
    archive.add(make_record(fp, "no json", question_id="Q3"))
    archive.close()
    full = [Evaluation.of(i.record) for i in iter_archive(archive.run_dir) if i.record]
    # a summary read leaves the output out and keeps its length beside the record
    summary = [
        Evaluation.of(i.record, i.output_chars)
        for i in iter_archive(archive.run_dir, summary_only=True)
        if i.record
    ]
    assert summary == full and len(full) == 3 and full[0].scores is not None
    assert full[0].output_chars == len(OUTPUT_TEXT) > 0


def test_items_chosen_from_a_summary_read_are_read_again_whole(tmp_path: Path) -> None:
    from assay.judge.archive import read_archived

    state = protocol_state(Protocol(), DecodingSettings(), layout="shards")
    archive = Archive.open(tmp_path / "run", state)
    fp = archive.state.fingerprint
    records = [
        make_record(fp, dumps(with_question(f"Q{i}")), question_id=f"Q{i}") for i in range(4)
    ]
    for record in records:
        archive.add(record)
    archive.close()
    summaries = list(iter_archive(archive.run_dir, summary_only=True))
    assert all(s.record is not None and s.record.raw_reply is None for s in summaries)
    chosen = [summaries[3], summaries[1]]
    gone = summaries[0].model_copy(update={"line": 99})
    whole = list(read_archived(archive.run_dir, [*chosen, gone]))
    assert [w.record for w in whole[:2]] == [records[3], records[1]]  # texts and order back
    assert whole[2].record is None and whole[2].error == "no longer in the archive"
    # in line order (nothing held back), with a line gone in the middle
    shard = summaries[1].path
    lines = shard.read_text().splitlines(keepends=True)
    shard.write_text("".join([lines[0], "\n", *lines[2:]]))
    ordered = list(read_archived(archive.run_dir, summaries[:3]))
    assert [o.record for o in ordered] == [records[0], None, records[2]]


def test_blob_writer_keeps_hash_identities_across_reopening(tmp_path: Path) -> None:
    """A writer stores each text once, also after reopening the run (the hashes it knows are
    8-byte identities read back from the file); a damaged blob line is skipped."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    writer = BlobStore(run_dir, keep_texts=False)
    keys = [writer.put(f"text {i}") for i in range(300)] + [writer.put("text 7")]
    writer.close()
    with (run_dir / BLOBS_FILE).open("a") as handle:
        handle.write('{"h": "not-hex-at-all", "t": "x"}\n{"h": 5, "t": "y"}\n')
    again = BlobStore(run_dir, keep_texts=False)
    assert len(again.known) == 300
    assert again.put("text 3") == keys[3] and again.put("new text")
    again.close()
    lines = (run_dir / BLOBS_FILE).read_text().splitlines()
    texts = [json.loads(line)["t"] for line in lines]
    assert len(lines) == 303 and texts.count("text 3") == 1 and texts.count("new text") == 1
    reader = BlobStore(run_dir)
    assert reader.get(keys[299]) == "text 299"


def test_a_damaged_text_line_is_named_by_the_records_that_need_it(tmp_path: Path) -> None:
    """A record whose text sat on a damaged line of archive_blobs.jsonl is unreadable, and its
    error names that line, so the user knows which file and line to restore."""
    state = protocol_state(Protocol(), DecodingSettings(), layout="shards")
    archive = Archive.open(tmp_path / "run", state)
    archive.add(make_record(archive.state.fingerprint, dumps(valid_body())))
    archive.close()
    blobs = archive.run_dir / BLOBS_FILE
    lines = blobs.read_text().splitlines(keepends=True)
    lines[0] = lines[0][:30] + "#damaged\n"
    blobs.write_text("".join(lines))
    report = recheck_archive(archive.run_dir)
    assert not report.consistent
    problems = " ".join(report.unreadable)
    assert f"(lines of {blobs} that cannot be read: 1)" in problems


def test_a_summary_read_refuses_a_record_whose_text_is_lost_as_a_full_read_does(
    tmp_path: Path,
) -> None:
    """Statistics read records without their texts; a record whose text is gone from
    archive_blobs.jsonl is still unreadable there, so analyze counts what validate counts."""
    state = protocol_state(Protocol(), DecodingSettings(), layout="shards")
    archive = Archive.open(tmp_path / "run", state)
    for index in range(3):
        archive.add(
            make_record(archive.state.fingerprint, dumps(valid_body()), question_id=f"Q{index}")
        )
    archive.close()
    blobs = archive.run_dir / BLOBS_FILE
    assert all(item.record for item in iter_archive(archive.run_dir, summary_only=True))
    lines = blobs.read_text().splitlines(keepends=True)
    lost = json.loads(lines[-1])["h"]
    blobs.write_text("".join(lines[:-1]))  # its last text lost
    whole = [(i.line, i.error) for i in iter_archive(archive.run_dir) if i.record is None]
    fast = [
        (i.line, i.error)
        for i in iter_archive(archive.run_dir, summary_only=True)
        if i.record is None
    ]
    assert whole == fast and whole
    assert all(f"has no text {lost}" in str(error) for _, error in fast)
