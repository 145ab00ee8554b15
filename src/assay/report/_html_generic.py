"""Report content for any run directory: what every kind shares, and the whole of a run whose
kind has no dedicated view (its summary's numbers, plots and text artifacts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._html_common import RunContent, metric, plots, read_optional_json, reproducibility
from ._html_model import Document, Metric, RunSection

_MAX_METRICS = 60
_MAX_DOCUMENT_CHARS = 400_000


def base_section(run_dir: Path, run: dict[str, Any], plot_titles: dict[str, str]) -> RunSection:
    """Name, reproducibility facts, summary.json, plots and markdown documents of a run."""
    notes: list[str] = []
    summary = read_optional_json(run_dir / "summary.json", notes)
    if run.get("status") not in ("success", None):
        notes.insert(0, f"run status is {run.get('status')!r}: the results may be partial.")
    return RunSection(
        name=run_dir.resolve().name,
        kind=str(run.get("kind") or "run"),
        path=str(run_dir),
        reproducibility=reproducibility(run, run_dir),
        notes=notes,
        plots=plots(run_dir, plot_titles),
        documents=documents(run_dir),
        summary=summary,
        run=run,
    )


def documents(run_dir: Path) -> list[Document]:
    """The run's markdown artifacts (results analysis, prompt manifest), as plain text."""
    found = []
    for path in sorted(run_dir.glob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if len(text) > _MAX_DOCUMENT_CHARS:
            text = text[:_MAX_DOCUMENT_CHARS] + f"\n… [cut; the whole file is {path.name}]"
        found.append(Document(title=path.name, text=text))
    return found


def summary_metrics(summary: dict[str, Any], *, limit: int = _MAX_METRICS) -> list[Metric]:
    """Every number of summary.json (an estimate with its interval counts as one), by path."""
    found: list[Metric] = []
    _collect(summary, "", found, limit)
    return found


def _collect(node: Any, path: str, found: list[Metric], limit: int) -> None:
    if len(found) >= limit:
        return
    if path:
        as_metric = metric_at(node, path)
        if as_metric is not None:
            found.append(as_metric)
            return
    if isinstance(node, dict):
        for key, value in node.items():
            _collect(value, f"{path}.{key}" if path else str(key), found, limit)


def metric_at(node: Any, path: str) -> Metric | None:
    """A metric when ``node`` is a number or an estimate with an interval, else None."""
    if isinstance(node, bool):
        return None
    if isinstance(node, int | float):
        return Metric(label=path, value=node, path=path)
    if not isinstance(node, dict):
        return None
    found = metric({"x": node}, path, "x")
    if found is None or isinstance(found.value, bool) or not isinstance(found.value, int | float):
        return None
    return found.model_copy(update={"path": path + found.path[1:]})


def generic_content(run_dir: Path, run: dict[str, Any]) -> RunContent:
    section = base_section(run_dir, run, {})
    section.metrics = summary_metrics(section.summary)
    return RunContent(section=section)
