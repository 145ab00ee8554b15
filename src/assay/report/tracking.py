"""What every experiment tracker gets of an assay run (``assay track``): the numbers and facts
of the report's first screen, and the run's own files; nothing is recomputed.

The trackers (:mod:`.mlflow_tracking`, :mod:`.wandb_tracking`) take the same items: every
headline and summary metric as a number (with ``NAME ci_low`` and ``NAME ci_high`` beside a
number that has an interval), the reproducibility facts as parameters, the kind, directory,
version and summary digest as tags, and run.json, summary.json, the report, the markdown
tables, agreement.json and the plots as files (never the archives).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import InputError
from ._html_model import Fact, Metric

SUMMARY = "summary.json"
DIGEST_TAG = "assay.summary_sha256"
ARTIFACT_SUFFIXES = (".json", ".md", ".html")
KEY_MAX = 250  # MLflow's limit on a metric or param name (W&B takes it too)
VALUE_MAX = 6000  # and on a param's value
_NOT_IN_A_KEY = re.compile(r"[^A-Za-z0-9_\-. :/]+")


@dataclass(frozen=True)
class Tracked:
    """One assay run in a tracker: its run id there, and whether this call logged it."""

    run_dir: Path
    run_id: str
    logged: bool  # False: a tracker run of the same summary was there already
    metrics: int
    params: int
    artifacts: int


def read_sections(run_dirs: Sequence[Path]) -> list[tuple[Path, Any]]:
    """Each run's report section (what its first screen shows); every run is read and
    checked before anything is logged."""
    from .html import load_run

    for path in run_dirs:  # before any run is read
        if not (path / SUMMARY).is_file():
            raise InputError(
                f"no {SUMMARY}: the run has not been summarised",
                path=path,
                hint="`assay judge analyze`, `assay bench summarize` or `assay instructions "
                "robustness` writes it",
            )
    return [(path, load_run(path, examples=False).section) for path in run_dirs]


def summary_digest(run_dir: Path) -> str:
    """The SHA-256 of the run's summary.json: what a tracker knows a logged summary by."""
    return hashlib.sha256((run_dir / SUMMARY).read_bytes()).hexdigest()


def run_tags(run_dir: Path, section: Any, digest: str) -> dict[str, str]:
    return {
        "assay.kind": section.kind,
        "assay.run_dir": str(run_dir.resolve()),
        "assay.version": __version__,
        DIGEST_TAG: digest,
    }


def metric_items(metrics: Sequence[Metric]) -> Iterator[tuple[str, float]]:
    """Each finite number under a name MLflow accepts (its label, see :func:`metric_key`; a
    repeated name gets ``_2``, ``_3``), its interval as ``NAME ci_low`` and ``NAME ci_high``."""
    seen: set[str] = set()
    for metric in metrics:
        value = metric.value
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if not math.isfinite(value):
            continue
        name = _unique(metric_key(metric.label), seen)
        yield name, float(value)
        for bound, value in (("ci_low", metric.ci_low), ("ci_high", metric.ci_high)):
            if value is not None and math.isfinite(value):
                yield f"{name[: KEY_MAX - 8]} {bound}", float(value)


def param_items(facts: Sequence[Fact]) -> Iterator[tuple[str, str]]:
    seen: set[str] = set()
    for fact in facts:
        if fact.value is None or fact.value == "":
            continue
        yield _unique(metric_key(fact.label), seen), str(fact.value)[:VALUE_MAX]


def metric_key(label: str) -> str:
    """``label`` in the characters MLflow takes (W&B takes them too): the others (commas,
    brackets, the marks that keep a model name's direction in the report) become spaces, runs
    of spaces one."""
    key = " ".join(_NOT_IN_A_KEY.sub(" ", label).split()) or "value"
    return key[:KEY_MAX]


def _unique(key: str, seen: set[str]) -> str:
    name, count = key, 1
    while name in seen:
        count += 1
        name = f"{key[: KEY_MAX - 6]}_{count}"
    seen.add(name)
    return name


def artifact_files(run_dir: Path) -> Iterator[Path]:
    """The run's own files: its top-level JSON, markdown and HTML, and its plots."""
    for path in sorted(run_dir.iterdir()):
        if path.is_file() and path.suffix in ARTIFACT_SUFFIXES:
            yield path
    plots = run_dir / "plots"
    if plots.is_dir():
        yield from sorted(p for p in plots.iterdir() if p.suffix == ".png")
