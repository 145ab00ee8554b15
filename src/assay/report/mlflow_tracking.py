"""Runs logged into MLflow tracking: ``assay track RUN ... [--tracking-uri URI]``.

An MLflow run per assay run, with what its report's first screen shows: the reproducibility
facts as params (judge and target models, decoding, fingerprint, ...), every headline and
summary metric as a metric (with ``... ci_low`` and ``... ci_high`` beside a number that has
an interval), the kind, directory and version as ``assay.*`` tags, and the run's own files as
artifacts (run.json, summary.json, the report, the markdown tables, agreement.json, the plots;
never the archives). The numbers are the ones ``assay report`` shows, read from the same
``summary.json``; nothing is recomputed.

Logging again is idempotent: an MLflow run whose ``assay.summary_sha256`` tag is the run's
summary.json digest, in the same experiment, is named and left alone (``again=True`` logs a
new one). Needs the ``mlflow`` extra.
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
from ..errors import ConfigError, InputError
from ._html_model import Fact, Metric

SUMMARY = "summary.json"
DIGEST_TAG = "assay.summary_sha256"
ARTIFACT_SUFFIXES = (".json", ".md", ".html")
KEY_MAX = 250  # MLflow's limit on a metric or param name
VALUE_MAX = 6000  # and on a param's value
_NOT_IN_A_KEY = re.compile(r"[^A-Za-z0-9_\-. :/]+")


@dataclass(frozen=True)
class Tracked:
    """One assay run in MLflow: its run id, and whether this call logged it."""

    run_dir: Path
    run_id: str
    logged: bool  # False: an MLflow run of the same summary was there already
    metrics: int
    params: int
    artifacts: int


def track_runs(
    run_dirs: Sequence[Path],
    *,
    tracking_uri: str | None = None,
    experiment: str = "assay",
    again: bool = False,
) -> list[Tracked]:
    """Log each run into ``experiment`` at ``tracking_uri`` (default: MLflow's own, from
    ``MLFLOW_TRACKING_URI``); every run is read and checked before anything is logged."""
    from .html import load_run

    for path in run_dirs:  # before any run is read
        if not (path / SUMMARY).is_file():
            raise InputError(
                f"no {SUMMARY}: the run has not been summarised",
                path=path,
                hint="`assay judge analyze`, `assay bench summarize` or `assay instructions "
                "robustness` writes it",
            )
    contents = [(path, load_run(path, examples=False).section) for path in run_dirs]
    mlflow = _mlflow()
    if tracking_uri is not None:
        mlflow.set_tracking_uri(tracking_uri)
    try:
        experiment_id = mlflow.set_experiment(experiment).experiment_id
    except mlflow.exceptions.MlflowException as error:
        raise ConfigError(f"MLflow at {mlflow.get_tracking_uri()}: {error}") from None
    return [_track(mlflow, experiment_id, path, section, again) for path, section in contents]


def _mlflow() -> Any:
    try:
        import mlflow
    except ImportError:
        raise ConfigError("assay track needs MLflow", hint="pip install 'assay[mlflow]'") from None
    return mlflow


def _track(mlflow: Any, experiment_id: str, run_dir: Path, section: Any, again: bool) -> Tracked:
    digest = hashlib.sha256((run_dir / SUMMARY).read_bytes()).hexdigest()
    if not again and (existing := _logged_before(mlflow, experiment_id, digest)) is not None:
        return Tracked(run_dir, existing, logged=False, metrics=0, params=0, artifacts=0)
    metrics = dict(metric_items([*section.headline, *section.metrics]))
    params = dict(param_items(section.reproducibility))
    files = list(artifact_files(run_dir))
    tags = {
        "assay.kind": section.kind,
        "assay.run_dir": str(run_dir.resolve()),
        "assay.version": __version__,
        DIGEST_TAG: digest,
    }
    with mlflow.start_run(experiment_id=experiment_id, run_name=run_dir.name) as run:
        mlflow.set_tags(tags)
        mlflow.log_params(params)
        mlflow.log_metrics(metrics)
        for file in files:
            folder = file.parent.relative_to(run_dir).as_posix()
            mlflow.log_artifact(str(file), artifact_path=None if folder == "." else folder)
    return Tracked(run_dir, run.info.run_id, True, len(metrics), len(params), len(files))


def _logged_before(mlflow: Any, experiment_id: str, digest: str) -> str | None:
    found = mlflow.search_runs(
        experiment_ids=[experiment_id],
        filter_string=f"tags.`{DIGEST_TAG}` = '{digest}'",
        output_format="list",
        max_results=1,
    )
    return str(found[0].info.run_id) if found else None


def metric_items(metrics: Sequence[Metric]) -> Iterator[tuple[str, float]]:
    """Each finite number under a name MLflow accepts (its label, see :func:`mlflow_key`; a
    repeated name gets ``_2``, ``_3``), its interval as ``NAME ci_low`` and ``NAME ci_high``."""
    seen: set[str] = set()
    for metric in metrics:
        value = metric.value
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if not math.isfinite(value):
            continue
        name = _unique(mlflow_key(metric.label), seen)
        yield name, float(value)
        for bound, value in (("ci_low", metric.ci_low), ("ci_high", metric.ci_high)):
            if value is not None and math.isfinite(value):
                yield f"{name[: KEY_MAX - 8]} {bound}", float(value)


def param_items(facts: Sequence[Fact]) -> Iterator[tuple[str, str]]:
    seen: set[str] = set()
    for fact in facts:
        if fact.value is None or fact.value == "":
            continue
        yield _unique(mlflow_key(fact.label), seen), str(fact.value)[:VALUE_MAX]


def mlflow_key(label: str) -> str:
    """``label`` in the characters MLflow takes: the others (commas, brackets, the marks that
    keep a model name's direction in the report) become spaces, runs of spaces one."""
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
