"""The evaluation archive of a run directory.

Every judge reply (and every failed judge call) is stored once, never rewritten, in exactly
one of ``valid_evaluations/`` and ``invalid_evaluations/``, in one of two layouts:

- ``shards`` (new runs): one line per attempt in append-only JSONL shards,
  ``<archive>/<method>/<judge>/<target>/part-NNNNN.jsonl``, with repeated texts stored once
  in ``archive_blobs.jsonl`` (see :mod:`.archive_shards`);
- ``files`` (runs made before the shards, or ``--archive-layout files``): one JSON file per
  attempt, ``<archive>/<method>/<judge>/<target>/<question>__<variant>.a<attempt>.<hash>.json``,
  written atomically.

Readers take both. Every path part is sanitised, so ids from user data cannot leave the run
directory. ``protocol.json`` holds the protocol, its fingerprint and the layout; an archive
refuses records made under another fingerprint.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticSerializationError

from ..data.questions import model_dir_name
from ..errors import RunError, shown
from ..json_safe import load_model, model_json
from ..model import ChatMessage, describe_failure
from ..runs import fingerprint, inside, read_state_file, safe_filename, utc_now, write_atomic
from ..runs.id_set import IdentitySet
from .archive_shards import (
    OUTPUT_CHARS,
    BlobStore,
    ShardStore,
    decode_record,
    decode_summary,
    encode_record,
    remove_line,
    repair_shards,
    shard_dir,
    shard_files,
    shard_lines,
)
from .findings import Check
from .judged import Judged, output_fingerprint
from .protocol import (
    ALL_FLAGS,
    JUDGE_CALL_FAILED,
    UNPARSABLE_OUTPUT,
    DecodingMode,
    DecodingSettings,
    Method,
    Protocol,
)
from .validate import Classification, classify

VALID_DIR = "valid_evaluations"
INVALID_DIR = "invalid_evaluations"
PROTOCOL_FILE = "protocol.json"
QUARANTINE_DIR = "quarantine"  # unreadable records (files or shard lines), moved out
RECORD_SCHEMA_VERSION = 1
ArchiveLayout = Literal["files", "shards"]

INVALID_README = """\
# invalid_evaluations/

This directory holds every judge reply that failed validation under the judge protocol, and
every judge call that failed (no reply at all), one record per attempt, in the layout named
in `../protocol.json` (`layout`):

- `shards`: one JSON line per attempt in `<method>/<judge model>/<target model>/part-NNNNN.jsonl`;
  texts that repeat (prompt lines, the list of checks) are stored once in
  `../archive_blobs.jsonl` and referenced by hash (`assay export RUN --format files` writes
  the per-file layout);
- `files`: one JSON file per attempt,
  `<method>/<judge model>/<target model>/<question>__<variant>.a<attempt>.<hash>.json`
  (the hash covers every identifier, output_id included).

`/` in model names becomes `--`.

**Invalid is not FAIL.** An invalid evaluation says nothing about the quality of the evaluated
output: the *judge* did not produce a usable judgment. Invalid evaluations never enter score
statistics; they are counted, by flag, as the invalid-evaluation rate.

Each record keeps the raw reply (`raw_reply`), the prompt sent (`messages`), the evaluated
output, and the classification: `flags` (every flag that applies) and `classification.checks`
(each check with `passed`, the `flag` a failure carries and a `detail`). When a JSON object could
be salvaged from a reply that broke the protocol it is kept in `classification.parsed`, but the
evaluation stays invalid.

Flags:

- `PROTOCOL_VIOLATION`: text outside the single JSON object, code fences, several objects,
  duplicate keys, altered rubric or scale (unknown dimensions, scores outside 0-2, unknown
  verdict or method, unknown fields), a dimension without evidence, or an evidence item
  whose reason is blank or only the format example's placeholder ("<why they support this
  score>").
- `UNPARSABLE_OUTPUT`: JSON syntax errors, missing fields, wrong types.
- `INCOMPLETE_COVERAGE`: meta identifiers (judge_model, question_id, prompt_variant,
  target_model, output_id) missing or not matching the sample; method not matching whether the
  judge is the target; a timestamp other than the date the request carried.
- `JUDGE_REFUSAL_OR_EVASION`: refusal language, empty reply, no scores, an object about
  something else.
- `INTERNAL_INCONSISTENCY`: overall_score != sum of the four dimensions; verdict not what the
  fixed thresholds give; fine scores that do not aggregate to the dimension scores.
- `EVIDENCE_NOT_FOUND` (assay): an evidence quote that does not occur in the evaluated output
  after normalisation (NFKD, plain quotes/dashes, whitespace, case).
- `JUDGE_CALL_FAILED` (assay): the model call failed after its retries; `call_failure` says why.

`assay judge validate <run dir>` re-checks every record offline.
"""


class CallInfo(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    finish_reason: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    reported_model: str = ""
    # the server's system_fingerprint for this reply ("" when it gives none): which backend
    # configuration served it, so an audit can tie each judgment to it, not only the run's counts
    system_fingerprint: str = ""


class FailureInfo(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    message: str
    attempts: int

    def describe(self) -> str:
        """The failure in the words of :meth:`assay.model.CallFailure.describe`."""
        return describe_failure(self.kind, self.attempts, self.message)


class EvaluationRecord(BaseModel):
    """One judge attempt on one sample, as archived."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = RECORD_SCHEMA_VERSION
    fingerprint: str
    question_id: str
    prompt_variant: str
    target_model: str
    output_id: str
    judge_model: str
    method: Method
    attempt: int = Field(ge=1)
    created_at: str = Field(default_factory=utc_now)
    valid: bool
    flags: tuple[str, ...]
    classification: Classification
    raw_reply: str | None
    call: CallInfo | None = None
    call_failure: FailureInfo | None = None
    constrained: bool
    messages: tuple[ChatMessage, ...]
    evaluated_output: str
    # How the reply was decoded: exact | schema | off (None: made before the field existed),
    # why it fell back from the run's setting, and the token budget the call had.
    decoding_mode: DecodingMode | None = None
    decoding_note: str | None = None
    reply_budget: int | None = None
    # Blind judging: the aliases the judge saw for target_model and output_id (None: not blind).
    aliases: dict[str, str] | None = None
    # The date the request carried for meta.timestamp (None: archived before the field existed,
    # when the reply's date was checked for its form only).
    request_date: str | None = None
    # the sample's own fields from the question set and the manifest (not the reply's `meta`)
    sample_meta: dict[str, Any] | None = None
    # fingerprints of the output text and the task judged: a resumed run refuses inputs that
    # changed under the same ids (None: archived before the fingerprints existed)
    judged: Judged | None = None

    @model_validator(mode="after")
    def _mirrors_classification(self) -> EvaluationRecord:
        if self.valid != self.classification.valid or self.flags != self.classification.flags:
            raise ValueError("valid/flags must mirror the classification")
        return self

    @property
    def work_key(self) -> tuple[str, str, str, str, str]:
        """The sample and judge; attempts of the same work share it."""
        return (
            self.question_id,
            self.prompt_variant,
            self.target_model,
            self.output_id,
            self.judge_model,
        )


class ProtocolState(BaseModel):
    """protocol.json: what every record of this archive was made under."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    fingerprint: str
    protocol: Protocol
    decoding: DecodingSettings
    prompt_templates: dict[str, str]
    output_schema: dict[str, Any]
    created_at: str = Field(default_factory=utc_now)
    # how records are stored; not part of the fingerprint (protocol.json files written
    # before the sharded layout have no field: they are per-file)
    layout: ArchiveLayout = "files"


def record_path(run_dir: Path, record: EvaluationRecord) -> Path:
    """Where the per-file layout keeps a record."""
    archive = run_dir / (VALID_DIR if record.valid else INVALID_DIR)
    readable = safe_filename(f"{record.question_id}__{record.prompt_variant}", max_length=40)
    digest = fingerprint(list(record.work_key), length=10)  # tells outputs and ids apart
    name = f"{readable}.a{record.attempt}.{digest}.json"
    judge, target = model_dir_name(record.judge_model), model_dir_name(record.target_model)
    return inside(archive, record.method, judge, target, name)


def record_shard_dir(run_dir: Path, record: EvaluationRecord) -> Path:
    """Where the sharded layout keeps a record: the shard directory of its method x judge x
    target, in the archive its validity puts it in."""
    archive = run_dir / (VALID_DIR if record.valid else INVALID_DIR)
    judge, target = model_dir_name(record.judge_model), model_dir_name(record.target_model)
    return shard_dir(archive, record.method, judge, target)


def _identity(record: EvaluationRecord) -> int:
    """64 bits of the attempt's ids: a set of millions of them stays small."""
    return int(fingerprint([*record.work_key, record.attempt], length=16), 16)


def refuse_other_fingerprint(run_dir: Path, state: ProtocolState) -> ProtocolState | None:
    """The protocol state archived in ``run_dir`` (None: none yet); refuses another fingerprint."""
    existing = read_protocol_state(run_dir)
    if existing is not None and existing.fingerprint != state.fingerprint:
        raise RunError(
            f"{run_dir} holds evaluations made under protocol fingerprint "
            f"{existing.fingerprint}; this run's fingerprint is {state.fingerprint} "
            "(rubric, thresholds, prompts, schema or decoding parameters differ)",
            hint="use a new --out directory, or the settings of the existing run",
        )
    return existing


class Archive:
    """The valid/invalid archives of one run directory, under one fingerprint."""

    def __init__(self, run_dir: Path, state: ProtocolState) -> None:
        self.run_dir = run_dir
        self.state = state
        self._blobs: BlobStore | None = None
        self._shards = ShardStore()
        self._seen: IdentitySet | None = None  # identities archived (sharded layout)

    @property
    def sharded(self) -> bool:
        return self.state.layout == "shards"

    @classmethod
    def open(cls, run_dir: Path, state: ProtocolState) -> Archive:
        """Open or create; refuses a directory whose records used another fingerprint.

        An existing archive keeps its layout; a new one takes ``state.layout``.
        """
        existing = refuse_other_fingerprint(run_dir, state)
        run_dir.mkdir(parents=True, exist_ok=True)
        if existing is None:
            write_atomic(run_dir / PROTOCOL_FILE, state.model_dump_json(indent=2))
        (run_dir / VALID_DIR).mkdir(exist_ok=True)
        (run_dir / INVALID_DIR).mkdir(exist_ok=True)
        write_atomic(run_dir / INVALID_DIR / "README.md", INVALID_README)
        archive = cls(run_dir, existing or state)
        if archive.sharded:
            repair_shards(run_dir, (VALID_DIR, INVALID_DIR))  # lines a crash cut short
        return archive

    def existing_records(self) -> Iterator[EvaluationRecord]:
        """The readable records already archived (and, sharded, noted as archived)."""
        seen = IdentitySet()
        for item in iter_archive(self.run_dir):
            if item.record is not None:
                seen.add(_identity(item.record))
                yield item.record
        self._seen = seen

    def add(self, record: EvaluationRecord) -> Path:
        """Archive one record; returns the file that holds it."""
        if record.fingerprint != self.state.fingerprint:
            raise RunError(
                f"refusing a record made under fingerprint {record.fingerprint} in an archive "
                f"of fingerprint {self.state.fingerprint}"
            )
        if self.sharded:
            return self._add_to_shard(record)
        path = record_path(self.run_dir, record)
        if path.exists() or _other_archive(self.run_dir, path).exists():
            raise RunError(f"an evaluation for this attempt is already archived: {path}")
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, model_json(record, indent=2))
        if (problem := _read_back_problem(path, record)) is None:
            return path
        # Never count a record that cannot be read back: it would be finished work that no
        # later run, validate or analyze could see. Keep an invalid record with the reply
        # escaped instead, and say why.
        path.unlink()
        fallback = _unarchivable(record, problem)
        path = record_path(self.run_dir, fallback)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, model_json(fallback, indent=2))
        return path

    def _add_to_shard(self, record: EvaluationRecord) -> Path:
        if self._seen is None:
            for _ in self.existing_records():
                pass
        assert self._seen is not None
        identity = _identity(record)
        if identity in self._seen:
            raise RunError(
                "an evaluation for this attempt is already archived: "
                f"{record.work_key} attempt {record.attempt}"
            )
        blobs = self._blob_store()
        line, problem = _shard_line(record, blobs)
        if problem is not None:  # as in the per-file layout: keep an invalid, escaped record
            line, _ = _shard_line(_unarchivable(record, problem), blobs)
            record = _unarchivable(record, problem)
        blobs.forget_recent()
        path = self._shards.append(record_shard_dir(self.run_dir, record), line)
        self._seen.add(identity)
        return path

    def _blob_store(self) -> BlobStore:
        if self._blobs is None:
            self._blobs = BlobStore(self.run_dir, keep_texts=False)
        return self._blobs

    def close(self) -> None:
        self._shards.close()
        if self._blobs is not None:
            self._blobs.close()

    def quarantine_unreadable(self) -> list[Path]:
        """Move records that cannot be read out of the archives, so the run redoes them.

        A file a crash or a bug left unreadable would otherwise stop every later run ("already
        archived") and be skipped by analyze. Returns where each one went.
        """
        moved = []
        unreadable = [item for item in iter_archive(self.run_dir) if item.record is None]
        for item in reversed(unreadable):  # later lines first: line numbers stay right
            relative = item.path.relative_to(self.run_dir).parts
            target = inside(self.run_dir, QUARANTINE_DIR, *relative)
            target.parent.mkdir(parents=True, exist_ok=True)
            if item.line is None:
                os.replace(item.path, target)
            else:
                remove_line(item.path, item.line, target)
            moved.append(target)
        self._seen = None
        return moved


def _shard_line(record: EvaluationRecord, blobs: BlobStore) -> tuple[str, str | None]:
    """The record as a shard line, and why it would not read back (None: it does)."""
    try:
        # python mode keeps surrogate keys; defaults are filled in again on reading
        data = record.model_dump(exclude_defaults=True)
        # explicit whatever the defaults: the format's version, and the time (a default made
        # by a factory would be made again, differently, on reading)
        data["schema_version"] = record.schema_version
        data["created_at"] = record.created_at
        line = encode_record(data, blobs)
        again = _record_from_line(line, blobs)
    except (
        PydanticSerializationError,
        ValidationError,
        ValueError,
        KeyError,
        TypeError,
        RecursionError,
    ) as error:
        return "", f"the archived record does not read back: {type(error).__name__}: {error}"[:500]
    return line, None if again == record else "the archived record reads back different"


def _record_from_line(line: str, blobs: BlobStore) -> EvaluationRecord:
    return EvaluationRecord.model_validate(decode_record(line, blobs))


def _read_back_problem(path: Path, record: EvaluationRecord) -> str | None:
    try:
        again = load_model(EvaluationRecord, path.read_text(encoding="utf-8"))
    except (ValidationError, ValueError, RecursionError, OSError) as error:
        return f"the archived record does not read back: {type(error).__name__}: {error}"[:500]
    return None if again == record else "the archived record reads back different"


def _unarchivable(record: EvaluationRecord, problem: str) -> EvaluationRecord:
    """The record with its reply escaped and only what of its classification can be held: every
    flag and failed check the reply got (an invalid reply keeps why it is invalid), then the
    ``archivable`` check; the parsed object, scores and evidence, which held what could not
    be stored, are left out."""
    check = Check(name="archivable", passed=False, flag=UNPARSABLE_OUTPUT, detail=problem)
    failed = tuple(_escaped(c) for c in record.classification.failed_checks)
    raised = {*record.classification.flags, UNPARSABLE_OUTPUT}
    classification = Classification(
        valid=False,
        flags=tuple(flag for flag in ALL_FLAGS if flag in raised),
        checks=(*failed, check),
        parse="none",
    )
    raw = None if record.raw_reply is None else ascii(record.raw_reply)
    return record.model_copy(
        update={
            "valid": False,
            "flags": classification.flags,
            "classification": classification,
            "raw_reply": raw,
        }
    )


def _escaped(check: Check) -> Check:
    detail = check.detail.encode("ascii", "backslashreplace").decode("ascii")
    return check.model_copy(update={"detail": detail})


def _other_archive(run_dir: Path, path: Path) -> Path:
    relative = path.relative_to(run_dir)
    other = INVALID_DIR if relative.parts[0] == VALID_DIR else VALID_DIR
    return run_dir.joinpath(other, *relative.parts[1:])


def read_protocol_state(run_dir: Path) -> ProtocolState | None:
    path = run_dir / PROTOCOL_FILE
    return read_state_file(
        path, ProtocolState, "the judge protocol file", "not a judge protocol file"
    )


class ArchivedFile(BaseModel):
    """A stored record and where it sits (``record`` is None when unreadable).

    ``line`` is the line of a shard (sharded layout); None for a per-file record.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: Path
    in_valid_archive: bool
    record: EvaluationRecord | None
    error: str | None = None
    line: int | None = None
    # the evaluated output's length in characters (a summary read keeps no text, only this)
    output_chars: int | None = None

    @property
    def where(self) -> str:
        return str(self.path) if self.line is None else f"{self.path}:{self.line}"


def iter_archive(run_dir: Path, *, summary_only: bool = False) -> Iterator[ArchivedFile]:
    """Every stored record of both archives, in a stable order; reads both layouts.

    ``summary_only``: records of the sharded layout come without their texts (prompt,
    evaluated output, raw reply, checks, parsed reply, evidence); ids, validity, flags,
    scores, verdict, call and meta are all there. Statistics over millions of evaluations
    read this way several times faster.
    """
    blobs: BlobStore | None = None
    for directory, is_valid in ((VALID_DIR, True), (INVALID_DIR, False)):
        archive = run_dir / directory
        for path in sorted(archive.rglob("*.json")):
            yield _read_record(path, is_valid)
        for shard in shard_files(archive):
            # a summary read keeps no text, but still refuses a record whose text is lost
            blobs = blobs or BlobStore(run_dir, keep_texts=not summary_only)
            source = functools.partial(decode_summary, blobs=blobs) if summary_only else blobs
            for number, line in shard_lines(shard):
                yield _read_shard_line(shard, number, line, is_valid, source)


def _read_shard_line(
    path: Path,
    number: int,
    line: str,
    in_valid: bool,
    source: BlobStore | Callable[[str], dict[str, Any]],
) -> ArchivedFile:
    try:
        if isinstance(source, BlobStore):
            record = _record_from_line(line, source)
            chars = len(record.evaluated_output)
        else:
            data = source(line)
            chars = data.pop(OUTPUT_CHARS, None)
            record = EvaluationRecord.model_validate(data)
    except (ValidationError, ValueError, KeyError, TypeError, RecursionError) as error:
        return ArchivedFile(
            path=path, line=number, in_valid_archive=in_valid, record=None, error=str(error)
        )
    return ArchivedFile(
        path=path, line=number, in_valid_archive=in_valid, record=record, output_chars=chars
    )


def _read_record(path: Path, in_valid: bool) -> ArchivedFile:
    try:
        record = load_model(EvaluationRecord, path.read_text(encoding="utf-8"))
    except (ValidationError, OSError, ValueError, RecursionError) as error:
        return ArchivedFile(path=path, in_valid_archive=in_valid, record=None, error=str(error))
    chars = len(record.evaluated_output)
    return ArchivedFile(path=path, in_valid_archive=in_valid, record=record, output_chars=chars)


def read_archived(run_dir: Path, items: Sequence[ArchivedFile]) -> Iterator[ArchivedFile]:
    """The given items read again whole (texts included), in the given order, one at a time.

    For a reader that chose some items from a summary read (``iter_archive(summary_only=
    True)``): a run of consecutive items from one shard costs one pass over that shard.
    """
    blobs: BlobStore | None = None
    for path, group in itertools.groupby(items, key=lambda item: item.path):
        run = list(group)
        if run[0].line is None:  # the per-file layout: the file is the item
            yield from (_read_record(item.path, item.in_valid_archive) for item in run)
            continue
        blobs = blobs or BlobStore(run_dir)
        yield from _reread_lines(path, run, blobs)


def _reread_lines(path: Path, run: list[ArchivedFile], blobs: BlobStore) -> Iterator[ArchivedFile]:
    """Items of one shard, read in one pass. Items in line order are handed on as they are
    found (nothing is held); others wait for the end of the pass."""
    lines = [item.line or 0 for item in run]
    valid = run[0].in_valid_archive  # a shard lies in one of the two archives
    if any(a >= b for a, b in itertools.pairwise(lines)):
        wanted = set(lines)
        found = {
            number: _read_shard_line(path, number, text, valid, blobs)
            for number, text in shard_lines(path)
            if number in wanted
        }
        yield from (found.get(item.line or 0) or _gone(item) for item in run)
        return
    pending = iter(run)
    item: ArchivedFile | None = next(pending, None)
    for number, text in shard_lines(path):
        while item is not None and (item.line or 0) < number:  # its line is gone
            yield _gone(item)
            item = next(pending, None)
        if item is None:
            return
        if item.line == number:
            yield _read_shard_line(path, number, text, valid, blobs)
            item = next(pending, None)
    if item is not None:
        yield _gone(item)
    yield from (_gone(rest) for rest in pending)


def _gone(item: ArchivedFile) -> ArchivedFile:
    return item.model_copy(update={"record": None, "error": "no longer in the archive"})


def load_records(run_dir: Path) -> list[EvaluationRecord]:
    """The readable records of both archives."""
    return [item.record for item in iter_archive(run_dir) if item.record is not None]


def export_per_file(run_dir: Path, out_dir: Path) -> int:
    """Write every record of ``run_dir`` (either layout) to ``out_dir`` in the per-file
    layout, with protocol.json and the README; returns the number of records written."""
    state = read_protocol_state(run_dir)
    if state is None:
        raise RunError(f"{run_dir} is not a judge run directory (no {PROTOCOL_FILE})")
    if out_dir.exists() and any(out_dir.iterdir()):
        raise RunError(f"{out_dir} is not empty", hint="give a new or empty directory")
    archive = Archive.open(out_dir, state.model_copy(update={"layout": "files"}))
    count = 0
    for item in iter_archive(run_dir):
        if item.record is None:
            raise RunError(f"unreadable record {item.where}: {(item.error or '')[:200]}")
        path = record_path(archive.run_dir, item.record)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, model_json(item.record, indent=2))
        count += 1
    return count


# ---------------------------------------------------------------- offline re-check


class RecheckReport(BaseModel):
    """What ``assay judge validate`` finds; ``consistent`` when nothing needs attention."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_dir: str
    fingerprint: str
    files: int
    valid: int
    invalid: int
    flag_counts: dict[str, int]
    unreadable: tuple[str, ...] = ()
    misfiled: tuple[str, ...] = ()
    reclassified: tuple[str, ...] = ()
    other_fingerprint: tuple[str, ...] = ()
    duplicated_attempts: tuple[str, ...] = ()
    readme_present: bool = True

    @property
    def consistent(self) -> bool:
        problems = (
            self.unreadable,
            self.misfiled,
            self.reclassified,
            self.other_fingerprint,
            self.duplicated_attempts,
        )
        return self.readme_present and not any(problems)


def recheck_archive(run_dir: Path) -> RecheckReport:
    """Re-validate every archived reply offline (no model call) against protocol.json."""
    state = read_protocol_state(run_dir)
    if state is None:
        raise RunError(f"{run_dir} is not a judge run directory (no {PROTOCOL_FILE})")
    found: dict[str, list[str]] = {
        key: [] for key in ("unreadable", "misfiled", "reclassified", "other_fingerprint", "dup")
    }
    flag_counts: dict[str, int] = {}
    seen: dict[int, str] = {}  # an attempt's identity -> where its first copy is
    counts = {"files": 0, "valid": 0, "invalid": 0}
    for item in iter_archive(run_dir):
        counts["files"] += 1
        record = item.record
        if record is None:
            found["unreadable"].append(f"{item.where}: {(item.error or '')[:200]}")
            continue
        counts["valid" if record.valid else "invalid"] += 1
        for flag in record.flags:
            flag_counts[flag] = flag_counts.get(flag, 0) + 1
        for problem, detail in _record_problems(item, record, state, seen):
            found[problem].append(item.where if detail is None else f"{item.where} {detail}")
    return RecheckReport(
        run_dir=str(run_dir),
        fingerprint=state.fingerprint,
        flag_counts=flag_counts,
        unreadable=tuple(found["unreadable"]),
        misfiled=tuple(found["misfiled"]),
        reclassified=tuple(found["reclassified"]),
        other_fingerprint=tuple(found["other_fingerprint"]),
        duplicated_attempts=tuple(found["dup"]),
        readme_present=(run_dir / INVALID_DIR / "README.md").is_file(),
        **counts,
    )


def _record_problems(
    item: ArchivedFile,
    record: EvaluationRecord,
    state: ProtocolState,
    seen: dict[int, str],
) -> list[tuple[str, str | None]]:
    """The problems of one record, each with a detail to print after its place (or None)."""
    problems: list[tuple[str, str | None]] = []
    if record.valid != item.in_valid_archive:
        problems.append(("misfiled", None))
    if record.fingerprint != state.fingerprint:
        problems.append(("other_fingerprint", None))
    identity = _identity(record)
    if identity in seen:  # both copies named: either may be the one to remove
        problems.append(("dup", f"(the same attempt as {seen[identity]})"))
    seen.setdefault(identity, item.where)
    changed = _rederived_differences(record, state.protocol)
    if changed:
        problems.append(("reclassified", changed))
    return problems


def _rederived_differences(record: EvaluationRecord, protocol: Protocol) -> str | None:
    """What in the stored classification the stored reply does not give again, or None.

    Everything in ``classification`` (validity, flags, checks, scores, overall score, verdict,
    evidence, ...) is derived from the reply, the sample's ids and the evaluated output, all of
    which the record keeps; so a hand edit of any derived field, or a validator that now
    decides differently, shows as a difference, named by its field.
    """
    if record.judged is not None:
        evaluated = output_fingerprint(record.evaluated_output)
        if record.judged.output != evaluated:
            return (
                f"field 'judged.output': stored {record.judged.output!r}, the evaluated_output "
                f"gives {evaluated!r}"
            )
    if record.raw_reply is None:
        return _call_failure_difference(record)
    if _is_unarchivable_fallback(record.classification):
        return None  # the reply is stored escaped: its classification says why, not what
    fresh = classify(record.raw_reply, expected_meta(record), record.evaluated_output, protocol)
    found = _differences("classification", record.classification.model_dump(), fresh.model_dump())
    return _describe_differences(found)


def _call_failure_difference(record: EvaluationRecord) -> str | None:
    """A record without a reply is a failed call: invalid, flagged JUDGE_CALL_FAILED only,
    and scored nothing."""
    if record.call_failure is None:
        return "field 'raw_reply': no reply and no call_failure"
    if record.flags != (JUDGE_CALL_FAILED,):
        return f"field 'flags': {list(record.flags)} for a failed call (only JUDGE_CALL_FAILED)"
    scored = [
        name
        for name in ("scores", "fine_scores", "overall_score", "verdict")
        if getattr(record.classification, name) is not None
    ]
    return f"field 'classification.{scored[0]}': a failed call has none" if scored else None


def _is_unarchivable_fallback(classification: Classification) -> bool:
    """The record :func:`_unarchivable` made for a reply the archive could not hold as is."""
    checks = classification.checks
    return (
        not classification.valid
        and UNPARSABLE_OUTPUT in classification.flags
        and bool(checks)
        and checks[-1].name == "archivable"
        and all(not check.passed for check in checks)
    )


_ABSENT = object()
_DIFFERENCES_SHOWN = 3


def _differences(path: str, stored: Any, fresh: Any) -> list[tuple[str, Any, Any]]:
    """Every leaf where ``stored`` and ``fresh`` differ: (field path, stored, fresh)."""
    if isinstance(stored, dict) and isinstance(fresh, dict):
        keys = [*stored, *(key for key in fresh if key not in stored)]
        return [
            found
            for key in keys
            for found in _differences(
                f"{path}.{key}", stored.get(key, _ABSENT), fresh.get(key, _ABSENT)
            )
        ]
    sequences = (list, tuple)
    if isinstance(stored, sequences) and isinstance(fresh, sequences) and len(stored) == len(fresh):
        return [
            found
            for index, (a, b) in enumerate(zip(stored, fresh, strict=True))
            for found in _differences(f"{path}[{index}]", a, b)
        ]
    return [] if _same(stored, fresh) else [(path, stored, fresh)]


def _same(a: Any, b: Any) -> bool:
    # a NaN the reply held is not equal to itself, yet it is the same value read twice
    both_nan = isinstance(a, float) and isinstance(b, float) and a != a and b != b
    return bool(a == b) or both_nan


def _describe_differences(found: list[tuple[str, Any, Any]]) -> str | None:
    if not found:
        return None
    parts = [
        f"field '{path}': stored {_shown(stored)}, the reply gives {_shown(fresh)}"
        for path, stored, fresh in found[:_DIFFERENCES_SHOWN]
    ]
    more = len(found) - _DIFFERENCES_SHOWN
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _shown(value: Any) -> str:
    return "nothing" if value is _ABSENT else shown(value)


def expected_meta(record: EvaluationRecord) -> dict[str, str]:
    """The meta identifiers the judge was asked to copy for this record (aliases if blind)."""
    meta = {
        "judge_model": record.judge_model,
        "target_model": record.target_model,
        "question_id": record.question_id,
        "prompt_variant": record.prompt_variant,
        "output_id": record.output_id,
        "method": record.method,
    }
    meta.update(record.aliases or {})
    if record.request_date is not None:
        meta["timestamp"] = record.request_date
    return meta
