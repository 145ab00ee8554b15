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

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .tracking import (
    DIGEST_TAG,
    Tracked,
    artifact_files,
    metric_items,
    param_items,
    read_sections,
    run_tags,
    summary_digest,
)


def track_runs(
    run_dirs: Sequence[Path],
    *,
    tracking_uri: str | None = None,
    experiment: str = "assay",
    again: bool = False,
) -> list[Tracked]:
    """Log each run into ``experiment`` at ``tracking_uri`` (default: MLflow's own, from
    ``MLFLOW_TRACKING_URI``); every run is read and checked before anything is logged."""
    contents = read_sections(run_dirs)
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
    digest = summary_digest(run_dir)
    if not again and (existing := _logged_before(mlflow, experiment_id, digest)) is not None:
        return Tracked(run_dir, existing, logged=False, metrics=0, params=0, artifacts=0)
    metrics = dict(metric_items([*section.headline, *section.metrics]))
    params = dict(param_items(section.reproducibility))
    files = list(artifact_files(run_dir))
    tags = run_tags(run_dir, section, digest)
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
