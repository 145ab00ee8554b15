"""Every reply can be archived and read back (issue 14 #1, #2): a fuzz over the archive writer,
the deep-nesting bound, and quarantine of a record file that cannot be read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.json_safe import model_json
from assay.judge.archive import (
    QUARANTINE_DIR,
    Archive,
    ArchiveLayout,
    EvaluationRecord,
    iter_archive,
)
from assay.judge.protocol import DecodingSettings, Protocol
from assay.judge.run import protocol_state

from .helpers import dumps, valid_body
from .test_archive import make_record

# Any text a model may send: every code point, lone surrogates included, and JSON-looking text.
ANY_TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=200)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ANY_TEXT, inner, max_size=3),
    max_leaves=20,
)


LAYOUTS = pytest.mark.parametrize("layout", ["shards", "files"])


def _archive(tmp_path: Path, layout: ArchiveLayout = "files") -> Archive:
    state = protocol_state(Protocol(), DecodingSettings(), layout=layout)
    return Archive.open(tmp_path / "run", state)


def _read_back(archive: Archive) -> list[EvaluationRecord]:
    archive.close()
    return [item.record for item in iter_archive(archive.run_dir) if item.record is not None]


@LAYOUTS
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(reply=ANY_TEXT | JSONISH.map(lambda v: json.dumps(v, ensure_ascii=False)))
def test_every_reply_round_trips_through_the_archive(
    tmp_path_factory: pytest.TempPathFactory, reply: str, layout: ArchiveLayout
) -> None:
    archive = _archive(tmp_path_factory.mktemp("fuzz"), layout)
    record = make_record(archive.state.fingerprint, reply)
    archive.add(record)
    [again] = _read_back(archive)
    assert again == record and again.raw_reply == reply


@LAYOUTS
def test_a_lone_surrogate_in_a_parsed_key_reads_back_exactly(
    tmp_path: Path, layout: ArchiveLayout
) -> None:
    # pydantic's JSON dump writes a surrogate key as U+FFFD without raising (found by the fuzz)
    archive = _archive(tmp_path, layout)
    record = make_record(archive.state.fingerprint, '{"\ud800": null}')
    assert record.classification.parsed == {"\ud800": None}
    archive.add(record)
    [again] = _read_back(archive)
    assert again == record and again.classification.parsed == {"\ud800": None}


def test_model_json_escapes_only_what_utf8_cannot_hold() -> None:
    record = make_record("f" * 16, "café \ud800")
    text = model_json(record)
    assert "\\ud800" in text and text.isascii()
    plain = model_json(make_record("f" * 16, "café"))
    assert "café" in plain  # readable as ever when nothing needs escaping


@LAYOUTS
def test_a_deeply_nested_reply_is_invalid_with_its_raw_text_kept(
    tmp_path: Path, layout: ArchiveLayout
) -> None:
    archive = _archive(tmp_path, layout)
    deep = '{"a":' * 300 + "1" + "}" * 300
    record = make_record(archive.state.fingerprint, deep)
    assert not record.valid and record.classification.parsed is None
    failed = {c.name for c in record.classification.failed_checks}
    assert "nesting_depth" in failed
    archive.add(record)
    assert [again.raw_reply for again in _read_back(archive)] == [deep]


def test_a_moderately_nested_valid_reply_stays_valid(tmp_path: Path) -> None:
    archive = _archive(tmp_path)
    record = make_record(archive.state.fingerprint, dumps(valid_body()))
    assert record.valid
    assert archive.add(record).exists()


def test_unreadable_record_files_are_quarantined_not_counted(tmp_path: Path) -> None:
    archive = _archive(tmp_path)
    good = archive.add(make_record(archive.state.fingerprint, dumps(valid_body())))
    broken = good.with_name("broken.a1.0123456789.json")
    broken.write_text('{"schema_version": 1, "torn', encoding="utf-8")
    assert [item.record is None for item in iter_archive(archive.run_dir)].count(True) == 1
    moved = archive.quarantine_unreadable()
    assert (
        len(moved) == 1
        and moved[0].parts[-len(good.relative_to(archive.run_dir).parts) - 1] == QUARANTINE_DIR
    ) or QUARANTINE_DIR in moved[0].parts
    assert not broken.exists() and moved[0].read_text().startswith('{"schema_version"')
    assert all(item.record is not None for item in iter_archive(archive.run_dir))
