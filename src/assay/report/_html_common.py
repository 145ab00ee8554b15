"""Pieces every run kind shares: reading a run directory, reproducibility facts, plots, headline
metrics read from summary.json by path, and locating a quote or a claim inside a text."""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import InputError, describe_problem, validation_problems
from ..json_safe import load_model
from ..runs import read_jsonl
from ..runs.prices import in_process_note, session_usage
from ..verify.results import ResultRecord
from ._html_model import Cell, Column, Detail, Fact, Mark, MarkClass, Metric, Plot, RunSection
from ._html_page import png_data_uri

T = TypeVar("T")
TRUNCATION_MARK = "… [cut: {n} more characters]"


@dataclass(frozen=True)
class ExampleSource:
    """An example table before encoding: rows now, details built on demand with a text cap
    (the cap is chosen later so the whole file fits its size budget)."""

    title: str
    source: str
    columns: list[Column]
    rows: list[list[Cell]]
    detail: Callable[[int, int | None], dict[str, Any]]


M = TypeVar("M", bound=BaseModel)


class PackedRecords(Mapping[str, M]):
    """Records a report keeps, held as compressed JSON lines and read back one at a time.

    A page of a huge run keeps thousands of examples; as objects each costs tens of KB, as a
    compressed line one or two. Details are drawn one example after another, so only the
    one being drawn is ever whole."""

    def __init__(self, model: type[M]) -> None:
        self._model = model
        self._index: dict[str, int] = {}
        self._lines: list[bytes] = []

    def add(self, key: str, line: str) -> None:
        """Keep ``line`` (what :func:`~assay.json_safe.model_json` wrote) under ``key``."""
        self._index[key] = len(self._lines)
        self._lines.append(zlib.compress(line.encode("utf-8"), 1))

    def at(self, index: int) -> M:
        return load_model(self._model, zlib.decompress(self._lines[index]).decode("utf-8"))

    def __getitem__(self, key: str) -> M:
        return self.at(self._index[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._lines)


@dataclass
class RunContent:
    section: RunSection
    sources: list[ExampleSource] = field(default_factory=list)
    # the shown results by id, for cross-run views
    bench_results: PackedRecords[ResultRecord] | None = None


def compact(detail: Detail) -> dict[str, Any]:
    """The JSON of a detail without null values (at 50,000 examples every byte counts); facts
    without a value are left out."""
    facts = [f for f in detail.facts if f.value is not None and f.value != ""]
    return detail.model_copy(update={"facts": facts}).model_dump(mode="json", exclude_none=True)


def read_json_file(path: Path) -> dict[str, Any]:
    """A JSON object from ``path``; a broken file is an InputError naming it."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"cannot read {path.name}: {error}", path=path) from error
    if not isinstance(value, dict):
        raise InputError("expected a JSON object", path=path)
    return value


def readable_slices(
    folder: Path, model: type[M], notes: list[str], rewrite: str
) -> Iterator[tuple[Path, str, dict[str, M]]]:
    """Each slices file of ``folder`` (``--by meta.KEY``) as (path, its key, summary per
    value). A damaged one costs its table, not the report: it becomes a note naming the file
    and the problem, and ``rewrite`` the command that writes it again."""
    for path in sorted(folder.glob("*.json")):
        try:
            by, summaries = read_slices(path, model)
        except InputError as error:
            notes.append(f"slice table left out: {error}; {rewrite} writes it again")
            continue
        yield path, by, summaries


def read_slices(path: Path, model: type[M]) -> tuple[str, dict[str, M]]:
    """A slices file: ``{"by": "meta.KEY", "slices": {value: summary}}``."""
    data = read_json_file(path)
    by, slices = data.get("by"), data.get("slices")
    if not isinstance(by, str) or not isinstance(slices, dict):
        raise InputError("expected an object with 'by' and 'slices'", path=path)
    return by, {str(value): _slice_summary(path, value, s, model) for value, s in slices.items()}


def _slice_summary(path: Path, value: str, summary: Any, model: type[M]) -> M:
    try:
        return model.model_validate(summary)
    except ValidationError as error:
        first = validation_problems(error)[0]
        field = ".".join(["slices", value, *map(str, first["loc"])])
        raise InputError(describe_problem(first), path=path, field=field) from None


def read_optional_json(path: Path, notes: list[str]) -> dict[str, Any]:
    if not path.exists():
        notes.append(f"{path.name} is missing: the run has not finished or was not analysed.")
        return {}
    return read_json_file(path)


def reproducibility(run: dict[str, Any], run_dir: Path) -> list[Fact]:
    """The facts of run.json a reader needs to reproduce the run, first screen of the report."""
    status = run.get("status")
    badge = {"success": "good", "error": "bad", "cancelled": "warn"}.get(str(status), "warn")
    facts = [
        Fact(label="status", value=_cell(status), badge=badge),  # type: ignore[arg-type]
        Fact(label="protocol fingerprint", value=_cell(run.get("fingerprint"))),
        Fact(label="started", value=_cell(run.get("started_at"))),
        Fact(label="ended", value=_cell(run.get("ended_at"))),
        Fact(label="samples finished", value=_progress(run)),
        Fact(label="assay version", value=_cell(run.get("assay_version"))),
        Fact(label="python / platform", value=f"{run.get('python')} / {run.get('platform')}"),
        Fact(label="tool access", value=_cell(run.get("tool_access"))),
    ]
    for role, model in sorted(_dict(run.get("models")).items()):
        facts.append(Fact(label=f"model: {role}", value=_describe(model)))
    for name, served in sorted(_dict(run.get("served")).items()):
        # a model name or fingerprint that changed mid-run: the replies may not reproduce
        changed = isinstance(served, dict) and "warning" in served
        facts.append(
            Fact(
                label=f"served: {name}", value=_describe(served), badge="warn" if changed else None
            )
        )
    if run.get("decoding"):
        facts.append(Fact(label="decoding", value=_describe(run["decoding"])))
    if run.get("usage"):
        facts.append(Fact(label="usage, last session", value=_describe(run["usage"])))
    sessions = _session_usage(run_dir)
    if sessions:
        facts.append(Fact(label="usage, all sessions (counts)", value=_describe(sessions)))
    if run.get("error"):
        facts.append(Fact(label="error", value=str(run["error"]), badge="bad"))
    facts += _shard_facts(run)
    facts.append(Fact(label="command", value=" ".join(map(str, run.get("command") or []))))
    if run.get("config"):
        facts.append(Fact(label="configuration", value=_describe(run["config"])))
    return facts


def _session_usage(run_dir: Path) -> dict[str, dict[str, int]]:
    """Each model's counts summed over the finished sessions of ``run_log.jsonl`` (a rerun of
    finished work makes no call, and run.json's usage is that session's alone)."""
    log = run_dir / "run_log.jsonl"
    try:
        return session_usage(read_jsonl(log)) if log.is_file() else {}
    except InputError:  # a damaged log costs this fact, not the report
        return {}


def _shard_facts(run: dict[str, Any]) -> list[Fact]:
    """Which shard a run holds (``--shard``), or the shards a merged run was made of."""
    shard = _dict(run.get("shard"))
    facts = []
    if shard:
        value = f"{shard.get('index')}/{shard.get('count')} of {shard.get('total_items')} records"
        facts.append(Fact(label="shard", value=value))
    for origin in run.get("merged_from") or []:
        origin = _dict(origin)
        value = (
            f"{origin.get('run_dir')}: {origin.get('finished')} of {origin.get('items')} "
            "finished, "
            f"{origin.get('started_at')} to {origin.get('ended_at')} on {origin.get('platform')}"
        )
        facts.append(Fact(label=f"merged: shard {origin.get('shard')}", value=value))
    return facts


def _progress(run: dict[str, Any]) -> str:
    return f"{run.get('finished_count', '?')} of {run.get('sample_count', '?')}"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _cell(value: Any) -> Cell:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _describe(value: Any) -> str:
    """A compact one-line form of a settings value: empty parts left out, numbers rounded."""
    if isinstance(value, dict):
        parts = [(k, _describe(v)) for k, v in value.items()]
        return ", ".join(f"{k}={v}" if "=" not in v else f"{k}: ({v})" for k, v in parts if v)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_describe(v) for v in value) + "]" if value else ""
    if isinstance(value, float):
        return format_number(value)
    return "" if value is None else str(value)


def money_note(money: Mapping[str, Any]) -> str | None:
    """The report's note on a summary's money: why it is unknown, or which models cost nothing
    for running in this process (None: nothing to say beside the number)."""
    if not money:
        return None
    if not money.get("known"):
        return f"money: unknown ({money.get('note', '')})"
    in_process = money.get("in_process") or ()  # absent from summaries of older runs
    return f"money: {in_process_note(in_process)}" if in_process else None


def plots(run_dir: Path, titles: dict[str, str]) -> list[Plot]:
    """The run's PNG plots, known ones first in ``titles`` order, then any others."""
    folder = run_dir / "plots"
    if not folder.is_dir():
        return []
    files = sorted(folder.glob("*.png"))
    order = {name: i for i, name in enumerate(titles)}
    files.sort(key=lambda p: (order.get(p.stem, len(order)), p.name))
    found = []
    for path in files:
        src = png_data_uri(path)
        if src is not None:
            title = titles.get(path.stem, path.stem.replace("_", " "))
            found.append(Plot(name=path.stem, title=title, src=src))
    return found


def at_path(summary: dict[str, Any], path: str) -> Any:
    """The value at a dotted path of summary.json, or None."""
    node: Any = summary
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def metric(summary: dict[str, Any], label: str, path: str, note: str = "") -> Metric | None:
    """A headline metric read from ``path``: a number, or an object with a point estimate
    (``value``/``estimate``) and an interval (``ci_low``/``ci_high`` or ``ci: [lo, hi]``)."""
    node = at_path(summary, path)
    if isinstance(node, int | float | str) and not isinstance(node, bool):
        return Metric(label=label, value=node, path=path, note=note)
    if not isinstance(node, dict):
        return None
    for key in ("value", "estimate", "point", "mean"):
        if key in node:
            low, high = _interval(node)
            reason = node.get("reason")
            return Metric(
                label=label,
                value=node[key],
                ci_low=low,
                ci_high=high,
                path=f"{path}.{key}",
                note=f"{note}; {reason}" if note and reason else (reason or note),
            )
    return None


def _interval(node: dict[str, Any]) -> tuple[float | None, float | None]:
    if isinstance(node.get("ci"), list | tuple) and len(node["ci"]) == 2:
        return node["ci"][0], node["ci"][1]
    for low, high in (("ci_low", "ci_high"), ("low", "high"), ("lo", "hi")):
        if low in node:
            return node[low], node.get(high)
    return None, None


def format_number(value: float | int | bool | None) -> str:
    """A number as the page's ``fmt`` shows it: integers whole, others rounded half away from
    zero to 4 decimals, tiny ones in exponent form (kept identical so tests can compare)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) or (math.isfinite(value) and value == int(value)):
        return str(int(value))
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if abs(value) < 1e-4:
        mantissa, exponent = f"{value:.2e}".split("e")
        return f"{mantissa}e{int(exponent):+d}"
    rounded = float(Decimal(value).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP))
    return str(int(rounded)) if rounded == int(rounded) else repr(rounded)


def isolated(text: str) -> str:
    """``text`` between FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE: put into a sentence
    of the page's own, its bidirectional controls (an unclosed right-to-left override) end
    with it instead of reversing the words that follow."""
    return f"\u2068{text}\u2069"


def main_cap(cap: int | None) -> int | None:
    """The cap of the texts an opened example is about (question, answer, claims, evaluated
    output, raw reply): three times that of the supporting ones, so they are cut last."""
    return None if cap is None else 3 * cap


def clip(text: str | None, cap: int | None) -> str:
    """``text`` cut to ``cap`` characters, saying how much was cut."""
    text = text or ""
    if cap is None or len(text) <= cap:
        return text
    return text[:cap] + TRUNCATION_MARK.format(n=len(text) - cap)


# a citation marker (skipped), a word, or one other visible character
_TOKEN = re.compile(r"\[[^\[\]]{0,80}\]|\w+|[^\w\s]")
_TRAILING_PUNCTUATION = ".,;:!?"


def _tokens(text: str) -> list[tuple[str, int, int]]:
    """Words and punctuation of ``text`` with their spans, case-folded, markers left out."""
    return [
        (m.group().casefold(), m.start(), m.end())
        for m in _TOKEN.finditer(text)
        if not (len(m.group()) > 1 and m.group().startswith("["))
    ]


def locate(
    text: str,
    needle: str,
    tokens: list[tuple[str, int, int]] | None = None,
    *,
    after: int = 0,
) -> tuple[int, int] | None:
    """Where ``needle`` first occurs in ``text`` from index ``after`` on (Python indices):
    exactly, else as the same words and punctuation ignoring case, spacing, trailing
    punctuation and ``[...]`` markers (a claim's text drops the citation markers of its
    sentence and may be spaced differently)."""
    needle = needle.strip()
    if not needle:
        return None
    start = text.find(needle, after)
    if start >= 0:
        return start, start + len(needle)
    words = [t[0] for t in _tokens(needle.rstrip(_TRAILING_PUNCTUATION + " "))]
    if not words:
        return None
    tokens = _tokens(text) if tokens is None else tokens
    return _match_words([t for t in tokens if t[1] >= after], words)


def _match_words(tokens: list[tuple[str, int, int]], words: list[str]) -> tuple[int, int] | None:
    size = len(words)
    first = words[0]
    for i in range(len(tokens) - size + 1):
        if tokens[i][0] == first and all(tokens[i + k][0] == words[k] for k in range(1, size)):
            return tokens[i][1], tokens[i + size - 1][2]
    return None


def utf16_index(text: str, index: int) -> int:
    """A Python index as a JavaScript (UTF-16) one."""
    if text.isascii():
        return index
    return index + sum(1 for ch in text[:index] if ord(ch) > 0xFFFF)


def marks_for(
    text: str, needles: Sequence[tuple[str, MarkClass, str, str | None]]
) -> tuple[list[Mark], list[bool]]:
    """Marks for each (needle, class, label, ref) found in ``text``, and which were found.
    Needles come in the order of the text (an answer's claims), so each is looked for after
    the last one marked first: a sentence the answer repeats is marked at each place. Overlapping
    finds keep the first; the rest count as found but are not drawn twice."""
    marks: list[Mark] = []
    found: list[bool] = []
    taken: list[tuple[int, int]] = []
    tokens = _tokens(text)
    after = 0
    for needle, cls, label, ref in needles:
        span = locate(text, needle, tokens, after=after) or locate(text, needle, tokens)
        found.append(span is not None)
        if span is None or any(s < span[1] and span[0] < e for s, e in taken):
            continue
        taken.append(span)
        after = span[1]
        start, end = utf16_index(text, span[0]), utf16_index(text, span[1])
        marks.append(Mark(start=start, end=end, cls=cls, label=label, ref=ref))
    return marks, found


# ---------------------------------------------------------------- sampling huge runs


@dataclass(frozen=True)
class SampleSettings:
    """How many items a report shows. Runs up to ``size`` + their failures are shown whole;
    a larger one shows every failed or invalid item (up to ``failed_cap``) and a seeded
    sample of ``size`` of the rest, while counts and metrics still cover every item."""

    size: int = 20_000
    failed_cap: int = 20_000
    seed: int = 0


class ItemSample(Generic[T]):
    """Every failed item (up to a cap) and a seeded uniform sample of the rest, streaming.

    The rest is a reservoir (Algorithm R) drawn with ``random.Random(seed)``: the same run
    and settings give the same sample. Kept items come back in the order they were read.
    """

    def __init__(self, settings: SampleSettings) -> None:
        import random

        self.settings = settings
        self._rng = random.Random(settings.seed)
        self.failed: list[tuple[int, T]] = []
        self.rest: list[tuple[int, T]] = []
        self.failed_seen = 0
        self.rest_seen = 0

    def add(self, item: T, *, failed: bool) -> None:
        index = self.failed_seen + self.rest_seen
        if failed:
            self.failed_seen += 1
            if len(self.failed) < self.settings.failed_cap:
                self.failed.append((index, item))
            return
        self.rest_seen += 1
        if len(self.rest) < self.settings.size:
            self.rest.append((index, item))
            return
        slot = self._rng.randrange(self.rest_seen)
        if slot < self.settings.size:
            self.rest[slot] = (index, item)

    def kept(self) -> list[T]:
        return [item for _, item in sorted(self.failed + self.rest, key=lambda pair: pair[0])]

    @property
    def sampled(self) -> bool:
        return len(self.failed) < self.failed_seen or len(self.rest) < self.rest_seen

    def note(self, noun: str, failed_noun: str) -> str | None:
        """What the report shows, when it is not everything (None when it is)."""
        if not self.sampled:
            return None
        total = self.failed_seen + self.rest_seen
        failed = (
            f"all {self.failed_seen:,} {failed_noun}"
            if len(self.failed) == self.failed_seen
            else f"the first {len(self.failed):,} of {self.failed_seen:,} {failed_noun}"
        )
        return (
            f"{len(self.failed) + len(self.rest):,} of {total:,} {noun} shown: {failed}, and a "
            f"seeded sample (seed {self.settings.seed}) of {len(self.rest):,} of the other "
            f"{self.rest_seen:,}. Counts and metrics cover all {total:,}."
        )
