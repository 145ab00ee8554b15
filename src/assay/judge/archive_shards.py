"""The sharded archive layout: evaluations in append-only JSONL shards, repeated texts once.

``<archive>/<method>/<judge>/<target>/part-NNNNN.jsonl`` holds one evaluation per line, in the
archive its validity puts it in (``valid_evaluations/`` or ``invalid_evaluations/``). A shard
rolls over to the next part at :data:`SHARD_MAX_BYTES`, so the number of files is bounded by
method x judge x target, not by the number of samples.

Texts that repeat across evaluations are written once to ``archive_blobs.jsonl`` and referenced
by the SHA-256 of their text: prompt lines (the system prompt, the task, the template's
fixed lines) and the list of checks a reply passed (the same for most valid replies). The
evaluated output is referenced inside the prompt rather than stored twice, and the parsed
reply is re-read from the raw reply when it is exactly that reply's JSON. A stored line reads
back as exactly the record that was written; the writer checks that before it counts it.

Crash safety: a line is one ``write`` on an ``O_APPEND`` descriptor, blobs before the line
that uses them; a line a crash cut short has no newline, is never read, and is cut on the
next open (a whole line that lacks only its newline is read, and gets it on the next open).
Nothing is rewritten except by :meth:`ShardStore.quarantine_line`, which moves an unreadable
line out of its shard.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..data.jsonl import complete_line
from ..runs import atomic_temp, inside, repair_partial_tail
from ..runs.id_set import IdentitySet

BLOBS_FILE = "archive_blobs.jsonl"
SHARD_PREFIX = "part-"
SHARD_MAX_BYTES = 256 * 2**20
MIN_BLOB_CHARS = 48  # shorter pieces are kept inline: a reference would not save anything
OUTPUT_REF = "@"  # the record's evaluated output
BLOB_MARK = "#"
OUTPUT_CHARS = "_output_chars"  # a summary read's length of the output it leaves out
TEXT_MARK = "="
_PARAGRAPH_END = re.compile(r"(?<=\n\n)")
_LINE_END = re.compile(r"(?<=\n)")
META_REF = "^"  # json.dumps of the parsed reply's "meta" (the identifiers the prompt gave)
# Paragraphs that name one sample (its identifiers, its fence code) gain nothing from a blob.
# (the fence line is the judge prompt's, see prompts.USER_TEMPLATE)
_UNIQUE_TO_SAMPLE = re.compile(r'"output_id"|<<<(?:BEGIN|END) OUTPUT ')


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def _blob_id(key: str) -> int:
    return int(key[:16], 16)


def _blob_id_or_none(key: str) -> int | None:
    try:
        return _blob_id(key)
    except ValueError:  # not a hash: no text has it
        return None


def _json_line(value: Any) -> str:
    """Compact JSON that UTF-8 can encode (lone surrogates are escaped)."""
    line = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return line


def _append(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _append_line(fd: int, line: bytes) -> None:
    """One line, in one write, its newline added when it has none."""
    _append(fd, line if line.endswith(b"\n") else line + b"\n")


def _blob_entry(line: str) -> tuple[str, str] | None:
    """A blob line's key and text; None for a line that holds no readable text."""
    try:
        entry = json.loads(line)
        key, text = entry["h"], entry["t"]
        _blob_id(key)
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    return key, text


class BlobStore:
    """``archive_blobs.jsonl``: texts by hash, appended once each.

    A reader keeps every text; a writer keeps only the first 64 bits of the hashes it has
    seen, in an :class:`IdentitySet` (8 bytes each: a set of hex strings took about 100 bytes
    per text, and every sample's output is a new text), and the texts of the record being
    written, which :meth:`get` needs to read that record back. Two texts whose hashes agree in
    those 64 bits would store the second's text under the first's check; among a million texts
    the odds are about 1 in 30 million, as for the archive's other identities.
    """

    def __init__(self, run_dir: Path, *, keep_texts: bool = True) -> None:
        self.path = run_dir / BLOBS_FILE
        self.texts: dict[str, str] = {}
        self.known = IdentitySet()
        self._recent: dict[str, str] = {}
        self._present: set[str] = set()  # keys check_references found in the file
        self._fd: int | None = None
        self.damaged: list[int] = []  # numbers of lines that hold no readable text
        for number, line in enumerate(_complete_lines(self.path), start=1):
            entry = _blob_entry(line)
            if entry is None:
                # records that need the text read as unreadable, and say where it was lost
                self.damaged.append(number)
                continue
            key, text = entry
            self.known.add(_blob_id(key))
            if keep_texts:
                self.texts[key] = text

    def put(self, text: str) -> str:
        key = text_hash(text)
        self._recent[key] = text
        if _blob_id(key) not in self.known:
            self._append_line(_json_line({"h": key, "t": text}).encode("utf-8"))
            self.known.add(_blob_id(key))
        return key

    def copy_missing(self, run_dir: Path) -> int:
        """Append the lines of ``run_dir``'s blob file whose texts this one lacks, as they
        are (a line that cannot be read is left out: no readable record refers to it));
        returns how many."""
        copied = 0
        for line in _complete_lines(run_dir / BLOBS_FILE):
            entry = _blob_entry(line)
            if entry is None:
                continue
            blob_id = _blob_id(entry[0])
            if blob_id not in self.known:
                self._append_line(line.encode("utf-8", "surrogateescape"))
                self.known.add(blob_id)
                copied += 1
        return copied

    def _append_line(self, line: bytes) -> None:
        if self._fd is None:
            repair_partial_tail(self.path)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        _append_line(self._fd, line)

    def get(self, key: str) -> str:
        text = self.texts.get(key) if self.texts else None
        if text is None:
            text = self._recent.get(key)
        if text is None:
            raise ValueError(f"{BLOBS_FILE} has no text {key}{self._damage_note()}")
        return text

    def check_references(self, keys: Iterable[str]) -> None:
        """A ValueError naming the first of ``keys`` the file does not hold (as :meth:`get`
        would raise reading it), without keeping any text."""
        for key in keys:
            if key in self._present:  # most records share their few texts: checked once
                continue
            blob_id = _blob_id_or_none(key)
            if key not in self._recent and (blob_id is None or blob_id not in self.known):
                raise ValueError(f"{BLOBS_FILE} has no text {key}{self._damage_note()}")
            self._present.add(key)

    def _damage_note(self) -> str:
        if not self.damaged:
            return ""
        shown = ", ".join(str(number) for number in self.damaged[:5])
        more = f" and {len(self.damaged) - 5} more" if len(self.damaged) > 5 else ""
        return f" (lines of {self.path} that cannot be read: {shown}{more})"

    def forget_recent(self) -> None:
        """Drop the texts kept for reading back the last record (writer side)."""
        self._recent.clear()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


# ---------------------------------------------------------------- the stored form of a record


def encode_record(data: dict[str, Any], blobs: BlobStore) -> str:
    """A record's dict as one shard line (``data`` is changed in place); fields at their
    defaults may be left out of ``data``, and are filled in again on reading.

    What was moved out is said under ``_stored``: ``checks`` (the blob of the check list),
    ``raw_reply: "parsed"`` (the reply is ``json.dumps`` of the parsed object) or
    ``parsed: "raw_reply"`` (the parsed object is ``json.loads`` of the reply).
    """
    classification = data["classification"]
    known = _known_texts(data)
    data["messages"] = [
        {"role": m["role"], "parts": _encode_text(m["content"], known, blobs)}
        for m in data["messages"]
    ]
    stored: dict[str, Any] = {}  # (scores stay inline: statistics read them without texts)
    checks = _json_line(classification["checks"])
    # The checks of an invalid reply say why it failed: kept inline, where people read them.
    if classification["valid"] and len(checks) >= MIN_BLOB_CHARS:
        stored["checks"] = blobs.put(checks)
        del classification["checks"]
    _store_evidence(classification, stored)  # before "parsed" may go: it reads it
    parsed, raw = classification.get("parsed"), data.get("raw_reply")
    if parsed is not None and isinstance(raw, str):
        if raw == json.dumps(parsed):
            stored["raw_reply"] = "parsed"
            del data["raw_reply"]
        elif parsed == _strict_json(raw):
            stored["parsed"] = "raw_reply"
            del classification["parsed"]
    data["_stored"] = stored
    return _json_line(data)


def _store_evidence(classification: dict[str, Any], stored: dict[str, Any]) -> None:
    """Evidence items that are the parsed reply's items plus ``located`` keep only that."""
    evidence = classification.get("evidence")
    if evidence and _reply_evidence(classification) == [
        {k: v for k, v in item.items() if k != "located"} for item in evidence
    ]:
        stored["evidence_located"] = [item["located"] for item in evidence]
        del classification["evidence"]


def _reply_evidence(classification: dict[str, Any]) -> Any:
    parsed = classification.get("parsed")
    if not isinstance(parsed, dict):
        return None
    items = parsed.get("evidence")
    if not isinstance(items, list):
        return None
    keys = ("dimension", "quote", "reason")
    return [{k: item.get(k) for k in keys} if isinstance(item, dict) else None for item in items]


def decode_summary(line: str, blobs: BlobStore | None = None) -> dict[str, Any]:
    """The record dict of a shard line without its texts: no prompt, output, reply, checks,
    parsed reply or evidence (what statistics over millions of evaluations need, fast), with
    the evaluated output's length under :data:`OUTPUT_CHARS` (the reader takes it out).
    ``blobs`` (a store that need not keep texts): a line referencing a text the blob file does
    not hold raises ValueError, as reading it whole would, so that a summary read counts the
    same readable records as a full one."""
    data = json.loads(line)
    if not isinstance(data, dict):
        raise ValueError("a shard line is not a JSON object")
    if blobs is not None:
        blobs.check_references(_blob_references(data))
    data.pop("_stored", None)
    output = data.get("evaluated_output")
    data[OUTPUT_CHARS] = len(output) if isinstance(output, str) else None
    data.update(messages=[], evaluated_output="", raw_reply=None)
    data["classification"].update(checks=[], parsed=None, evidence=[])
    return data


def _blob_references(data: dict[str, Any]) -> Iterator[str]:
    """The blob keys a stored record's texts are made of."""
    stored = data.get("_stored")
    if isinstance(stored, dict) and isinstance(stored.get("checks"), str):
        yield stored["checks"]
    for message in data.get("messages") or ():
        parts = message.get("parts") if isinstance(message, dict) else None
        for part in parts or ():
            if part[:1] == BLOB_MARK:  # a part that is not text fails the full read, not this
                yield part[1:]


def decode_record(line: str, blobs: BlobStore) -> dict[str, Any]:
    """The record dict a shard line stands for (raises ValueError when it cannot)."""
    data = json.loads(line)
    if not isinstance(data, dict):
        raise ValueError("a shard line is not a JSON object")
    stored = data.pop("_stored", {})
    classification = data["classification"]
    if "checks" in stored:
        classification["checks"] = json.loads(blobs.get(stored["checks"]))
    if stored.get("raw_reply") == "parsed":
        data["raw_reply"] = json.dumps(classification["parsed"])
    if stored.get("parsed") == "raw_reply":
        classification["parsed"] = _strict_json(data.get("raw_reply"))
    if "evidence_located" in stored:
        items = classification["parsed"]["evidence"]
        classification["evidence"] = [
            {"dimension": i["dimension"], "quote": i["quote"], "reason": i["reason"], "located": f}
            for i, f in zip(items, stored["evidence_located"], strict=True)
        ]
    known = _known_texts(data)
    data["messages"] = [
        {"role": m["role"], "content": _decode_text(m["parts"], known, blobs)}
        for m in data["messages"]
    ]
    return data


def _known_texts(data: dict[str, Any]) -> dict[str, str]:
    """Texts a stored record holds anyway, which its messages reference instead of repeating."""
    known = {OUTPUT_REF: data.get("evaluated_output") or ""}
    parsed = data["classification"].get("parsed")
    if isinstance(parsed, dict) and isinstance(parsed.get("meta"), dict):
        known[META_REF] = json.dumps(parsed["meta"])
    return known


def _strict_json(text: object) -> Any:
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _encode_text(text: str, known: dict[str, str], blobs: BlobStore) -> list[str]:
    """Parts whose concatenation is ``text``: inline pieces (``=``), blob references (``#``),
    and references to texts the record holds anyway (``known``: ``@`` the evaluated output,
    ``^`` the identifiers the reply copied).

    A message without the output (the system prompt) is one blob. A message with it is cut
    at paragraphs, so the parts shared with other samples (the task, the template's fixed
    paragraphs and lines) become blobs and the per-sample ones (identifiers, fence lines)
    stay inline.
    """
    output = known.get(OUTPUT_REF, "")
    if not output or output not in text:
        return _encode_pieces([text], blobs, per_sample=False)
    return _encode_known(text, list(known.items()), blobs)


def _encode_known(text: str, known: list[tuple[str, str]], blobs: BlobStore) -> list[str]:
    for index, (mark, value) in enumerate(known):
        if value and value in text:
            before, after = text.split(value, 1)
            rest = known[index + 1 :]
            return [*_encode_known(before, rest, blobs), mark, *_encode_known(after, rest, blobs)]
    return _encode_pieces(_PARAGRAPH_END.split(text), blobs)


def _encode_pieces(pieces: list[str], blobs: BlobStore, *, per_sample: bool = True) -> list[str]:
    parts: list[str] = []
    inline = ""
    for piece in pieces:
        unique = per_sample and _UNIQUE_TO_SAMPLE.search(piece) is not None
        if unique and "\n" in piece.rstrip("\n"):  # a per-sample paragraph: its lines
            lines = _LINE_END.split(piece)
            parts, inline = _flush(parts, inline)
            parts += _encode_pieces(lines, blobs)
            continue
        if len(piece) < MIN_BLOB_CHARS or unique:
            inline += piece
            continue
        parts, inline = _flush(parts, inline)
        parts.append(BLOB_MARK + blobs.put(piece))
    return _flush(parts, inline)[0]


def _flush(parts: list[str], inline: str) -> tuple[list[str], str]:
    return ([*parts, TEXT_MARK + inline] if inline else parts), ""


def _decode_text(parts: list[str], known: dict[str, str], blobs: BlobStore) -> str:
    pieces = []
    for part in parts:
        if part in known:
            pieces.append(known[part])
        elif part.startswith(BLOB_MARK):
            pieces.append(blobs.get(part[1:]))
        elif part.startswith(TEXT_MARK):
            pieces.append(part[1:])
        else:
            raise ValueError(f"unknown message part {part[:20]!r}")
    return "".join(pieces)


# ---------------------------------------------------------------- shard files


@lru_cache(maxsize=4096)
def shard_dir(archive: Path, method: str, judge_dir: str, target_dir: str) -> Path:
    # cached: resolving the path to check it stays inside the archive takes two realpath
    # calls, and every record of a shard asks for the same directory
    return inside(archive, method, judge_dir, target_dir)


def shard_files(archive: Path) -> list[Path]:
    """Every shard under one archive directory, in a stable order."""
    return sorted(archive.rglob(f"{SHARD_PREFIX}*.jsonl")) if archive.is_dir() else []


def _complete_lines(path: Path) -> Iterator[str]:
    """Lines that end in a newline, and a last line without one that holds a whole record
    (a crash between the line and its newline); a line a crash cut short is not read."""
    if not path.is_file():
        return
    with path.open("r", encoding="utf-8", errors="surrogateescape", newline="\n") as handle:
        for line in handle:
            if complete_line(line):
                yield line


def shard_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of every complete line of a shard."""
    for number, line in enumerate(_complete_lines(path), start=1):
        if line.strip():
            yield number, line


class ShardStore:
    """The open shards of one run directory: one descriptor per shard directory."""

    def __init__(self) -> None:
        self._open: dict[Path, tuple[Path, int]] = {}

    def append(self, directory: Path, line: str) -> Path:
        """Append one line to the current part in ``directory``; returns the part's path."""
        return self.append_raw(directory, line.encode("utf-8"))

    def append_raw(self, directory: Path, line: bytes) -> Path:
        """:meth:`append` of a line's bytes (its newline added when it has none)."""
        path, fd = self._current(directory)
        _append_line(fd, line)
        if os.fstat(fd).st_size >= SHARD_MAX_BYTES:
            os.close(fd)
            del self._open[directory]
        return path

    def _current(self, directory: Path) -> tuple[Path, int]:
        if directory in self._open:
            return self._open[directory]
        directory.mkdir(parents=True, exist_ok=True)
        parts = sorted(directory.glob(f"{SHARD_PREFIX}*.jsonl"))
        path = parts[-1] if parts else directory / f"{SHARD_PREFIX}00000.jsonl"
        if path.exists() and path.stat().st_size >= SHARD_MAX_BYTES:
            path = directory / f"{SHARD_PREFIX}{len(parts):05d}.jsonl"
        repair_partial_tail(path)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._open[directory] = (path, fd)
        return path, fd

    def close(self) -> None:
        for _, fd in self._open.values():
            os.close(fd)
        self._open.clear()


def repair_shards(run_dir: Path, archives: tuple[str, ...]) -> int:
    """Cut crash-cut last lines of every shard and of the blob file; returns bytes cut."""
    cut = repair_partial_tail(run_dir / BLOBS_FILE)
    for name in archives:
        for path in shard_files(run_dir / name):
            cut += repair_partial_tail(path)
    return cut


def remove_line(path: Path, number: int, quarantine: Path) -> None:
    """Move line ``number`` of a shard to ``quarantine`` (appended) and rewrite the shard."""
    lines = path.read_bytes().splitlines(keepends=True)
    moved = lines.pop(number - 1)
    quarantine.parent.mkdir(parents=True, exist_ok=True)
    with quarantine.open("ab") as handle:
        handle.write(moved if moved.endswith(b"\n") else moved + b"\n")
    tmp = atomic_temp(path)
    tmp.write_bytes(b"".join(lines))
    os.replace(tmp, path)
