"""Self-contained HTML reports of run directories.

``write_report(run_dir)`` writes ``run_dir/report.html``; ``write_comparison([run, run, ...],
out)`` puts several runs side by side. The file opens from disk with no network: plots are
embedded as base64 PNG, the data as escaped JSON blocks, the page script and style inline (see
:mod:`assay.report._html_page` for why nothing from the data can run).

Large runs stay small and fast: the table rows are plain JSON, and what an opened example shows
is stored in chunks (gzip + base64 when the run is large) that the page decodes only when a row
of that chunk is opened. When even that would exceed the size budget, long texts in the opened
views are cut to a length that fits, and the page says so.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import InputError
from ..json_safe import displayable
from ..runs import utc_now, write_atomic
from ._html_common import ExampleSource, RunContent, SampleSettings, read_json_file
from ._html_model import ExampleSet, ReportPayload
from ._html_page import DataBlock, embed_json, gzip_base64, render_page
from ._html_texts import TextStore, share_texts

__all__ = ["ReportOptions", "build_report", "render_report", "write_comparison", "write_report"]

REPORT_NAME = "report.html"
_TEXT_CAPS: tuple[int | None, ...] = (None, 4000, 1500, 600, 250, 100, 60, 40)
_SAMPLE_ROWS = 300
_SAMPLE_WINDOWS = 10


@dataclass(frozen=True)
class ReportOptions:
    """How the file is encoded. The defaults keep 50,000 examples under ~30 MB."""

    max_bytes: int = 28_000_000
    # a huge run shows its failures and a seeded sample of the rest (_html_common.ItemSample)
    sampling: SampleSettings = field(default_factory=SampleSettings)
    gzip_above_bytes: int = 3_000_000  # smaller reports keep readable JSON in the file
    chunk_rows_json: int = 500
    chunk_rows_gzip: int = 250


def write_report(
    run_dir: Path, *, out: Path | None = None, options: ReportOptions | None = None
) -> Path:
    """Write the HTML report of one run directory (default ``run_dir/report.html``)."""
    target = out if out is not None else Path(run_dir) / REPORT_NAME
    text = render_report([Path(run_dir)], options)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, text)
    return target


def write_comparison(
    run_dirs: Sequence[Path], out: Path, *, options: ReportOptions | None = None
) -> Path:
    """Write one HTML report showing several runs side by side."""
    text = render_report([Path(p) for p in run_dirs], options)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, text)
    return out


def render_report(run_dirs: Sequence[Path], options: ReportOptions | None = None) -> str:
    with _collector_paused():
        payload, blocks = build_report(run_dirs, options or ReportOptions())
        return displayable(render_page(payload.title, blocks))


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Building a large report allocates millions of small acyclic objects; the cycle
    collector would rescan them all again and again (about half the time at 50,000 rows)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def build_report(
    run_dirs: Sequence[Path], options: ReportOptions
) -> tuple[ReportPayload, list[DataBlock]]:
    """The payload and every data block of the page (main payload first)."""
    if not run_dirs:
        raise InputError("no run directory given")
    from ._html_compare import across_runs_source
    from ._html_paired import pair_bench_runs

    contents = [load_run(p, options.sampling) for p in run_dirs]
    _distinct_names(contents)
    pair_bench_runs(run_dirs, contents)
    across = across_runs_source(contents) if len(contents) > 1 else None
    sources = [s for c in contents for s in c.sources] + ([across] if across else [])
    plain = sum(_estimate(s, "json", None, True) + len(embed_json(s.rows)) for s in sources)
    encoding = "gzip" if plain > options.gzip_above_bytes else "json"
    fixed = sum(len(embed_json(c.section.model_dump(mode="json"))) for c in contents)
    fixed += sum(_rows_size(s, encoding) for s in sources)
    cap, shares = choose_text_cap(sources, encoding, options, fixed)
    share = dict(zip(map(id, sources), shares, strict=True))
    chunk_blocks: list[DataBlock] = []
    for r, content in enumerate(contents):
        for i, source in enumerate(content.sources):
            plan = _Plan(f"{r}-{i}", encoding, cap, share[id(source)])
            example_set, blocks = encode_source(source, plan, options)
            content.section.example_sets.append(example_set)
            chunk_blocks.extend(blocks)
    across_sets = []
    if across is not None:
        plan = _Plan("x-0", encoding, cap, share[id(across)])
        example_set, blocks = encode_source(across, plan, options)
        across_sets.append(example_set)
        chunk_blocks.extend(blocks)
    payload = ReportPayload(
        title=_title(contents),
        generated_at=utc_now(),
        assay_version=__version__,
        runs=[c.section for c in contents],
        across_runs=across_sets,
    )
    main = DataBlock("assay-data", embed_json(payload.model_dump(mode="json")))
    return payload, [main, *chunk_blocks]


def load_run(
    run_dir: Path, sampling: SampleSettings | None = None, *, examples: bool = True
) -> RunContent:
    """The report content of one run directory, by the kind its run.json names (without
    ``examples``: its numbers, tables and notes, no example read)."""
    from ..judge.draws import DRAWS_KIND, draw_runs
    from ._html_bench import bench_content
    from ._html_generic import generic_content
    from ._html_judge import judge_content
    from ._html_judge_draws import judge_draws_content
    from ._html_robustness import robustness_content

    if not run_dir.is_dir():
        raise InputError("not a run directory", path=run_dir)
    run_file = run_dir / "run.json"
    if not run_file.exists() and draw_runs(run_dir):
        raise InputError(
            "judge runs of repeated draws, not analysed together yet",
            path=run_dir,
            hint=f"`assay judge analyze {run_dir}` analyses the draws and writes the report",
        )
    if not run_file.exists():
        raise InputError(
            "no run.json: not an assay run directory",
            path=run_dir,
            hint="pass the directory a `assay bench run` or `assay judge run` wrote",
        )
    run = read_json_file(run_file)
    kind = str(run.get("kind", ""))
    if kind == "bench":
        return bench_content(run_dir, run, sampling, examples=examples)
    if kind == "judge":
        return judge_content(run_dir, run, sampling, examples=examples)
    if kind == "robustness":
        return robustness_content(run_dir, run, examples=examples)
    if kind == DRAWS_KIND:
        return judge_draws_content(run_dir, run)
    return generic_content(run_dir, run)


@dataclass(frozen=True)
class _Plan:
    """How one example table is encoded."""

    key: str
    encoding: str
    cap: int | None
    share_texts: bool  # store repeated texts once (pays when examples share them)


def choose_text_cap(
    sources: Sequence[ExampleSource], encoding: str, options: ReportOptions, fixed: int
) -> tuple[int | None, list[bool]]:
    """The largest text cap whose estimated file size fits ``options.max_bytes``, and for each
    source whether storing its repeated texts once makes it smaller."""
    budget = 0.95 * (options.max_bytes - fixed - 200_000)  # script, style, markup; a margin
    for cap in _TEXT_CAPS:
        best = [
            min((_estimate(s, encoding, cap, share), share) for share in (False, True))
            for s in sources
        ]
        if sum(size for size, _ in best) <= budget or cap == _TEXT_CAPS[-1]:
            return cap, [share for _, share in best]
    raise AssertionError("unreachable: the last cap is always returned")


def _rows_size(source: ExampleSource, encoding: str) -> int:
    return len(gzip_base64(source.rows) if encoding == "gzip" else embed_json(source.rows))


def _estimate(source: ExampleSource, encoding: str, cap: int | None, share: bool) -> int:
    """Encoded size of all details, from a sample of contiguous windows (neighbours share
    texts, as the variants of one record do, so the sample sees the sharing)."""
    total = len(source.rows)
    if total == 0:
        return 0
    window = _SAMPLE_ROWS // _SAMPLE_WINDOWS
    starts = sorted({total * w // _SAMPLE_WINDOWS for w in range(_SAMPLE_WINDOWS)})
    sample = sorted({i for s in starts for i in range(s, min(s + window, total))})
    store = TextStore()
    details = [_detail(source, i, cap, store if share else None) for i in sample]
    size = len(_encode_chunk(details, encoding))
    if store.texts:
        size += len(_encode_chunk(store.texts, encoding))
    return int(size * total / len(sample))


def _detail(
    source: ExampleSource, index: int, cap: int | None, store: TextStore | None
) -> dict[str, Any]:
    detail = source.detail(index, cap)
    return detail if store is None else share_texts(detail, store)


def encode_source(
    source: ExampleSource, plan: _Plan, options: ReportOptions
) -> tuple[ExampleSet, list[DataBlock]]:
    key, encoding, cap = plan.key, plan.encoding, plan.cap
    size = options.chunk_rows_gzip if encoding == "gzip" else options.chunk_rows_json
    blocks = []
    total = len(source.rows)
    store = TextStore()
    for k, start in enumerate(range(0, total, size)):
        rows = range(start, min(start + size, total))
        details = [_detail(source, i, cap, store if plan.share_texts else None) for i in rows]
        blocks.append(DataBlock(f"assay-chunk-{key}-{k}", _encode_chunk(details, encoding)))
    text_blocks = [
        DataBlock(f"assay-texts-{key}-{k}", _encode_chunk(store.texts[s : s + size], encoding))
        for k, s in enumerate(range(0, len(store.texts), size))
    ]
    gzip_rows = encoding == "gzip"
    example_set = ExampleSet(
        title=source.title,
        source=source.source,
        columns=source.columns,
        row_count=total,
        rows=[] if gzip_rows else source.rows,
        rows_block=f"assay-rows-{key}" if gzip_rows else None,
        chunk_size=size,
        chunk_encoding="gzip" if encoding == "gzip" else "json",
        chunk_ids=[b.block_id for b in blocks],
        text_chunk_size=size,
        text_chunk_ids=[b.block_id for b in text_blocks],
        truncated_to=cap,
    )
    blocks.extend(text_blocks)
    if gzip_rows:
        blocks.insert(0, DataBlock(f"assay-rows-{key}", gzip_base64(source.rows)))
    return example_set, blocks


def _encode_chunk(details: Sequence[object], encoding: str) -> str:
    return gzip_base64(details) if encoding == "gzip" else embed_json(details)


def _distinct_names(contents: list[RunContent]) -> None:
    seen: dict[str, int] = {}
    for content in contents:
        name = content.section.name
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            content.section.name = f"{name} ({seen[name]})"


def _title(contents: list[RunContent]) -> str:
    if len(contents) == 1:
        section = contents[0].section
        return f"assay {section.kind} report: {section.name}"
    return "assay comparison: " + " vs ".join(c.section.name for c in contents)
