"""Runs logged into Weights & Biases: ``assay track RUN ... --to wandb``.

A W&B run per assay run, with what MLflow gets (:mod:`.tracking`): the reproducibility facts
as the run's config, every headline and summary metric in its summary (final numbers, not a
history: ``NAME ci_low`` and ``NAME ci_high`` beside a number that has an interval), the kind
as its job type and tag, the directory, version and summary digest in the config under
``assay.*``, and the run's own files as one artifact of type ``assay-run``.

Logging again is idempotent by construction: the W&B run id is derived from the run's
summary.json digest, so the same summary lands in the same W&B run (``again=True`` makes a new
one). Where and how to log is W&B's own setting: ``wandb login`` or ``WANDB_API_KEY``,
``WANDB_BASE_URL`` for a server of one's own, ``WANDB_MODE=offline`` to write the runs under
``WANDB_DIR`` for a later ``wandb sync``. Needs the ``wandb`` extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .tracking import (
    Tracked,
    artifact_files,
    metric_items,
    param_items,
    read_sections,
    run_tags,
    summary_digest,
)

RUN_ID_PREFIX = "assay-"
ARTIFACT_TYPE = "assay-run"


def track_runs_wandb(
    run_dirs: Sequence[Path],
    *,
    project: str = "assay",
    entity: str | None = None,
    again: bool = False,
) -> list[Tracked]:
    """Log each run into the W&B ``project`` (of ``entity``, default the user's); every run is
    read and checked before anything is logged."""
    contents = read_sections(run_dirs)
    wandb = _wandb()
    return [_track(wandb, path, section, project, entity, again) for path, section in contents]


def wandb_run_id(digest: str) -> str:
    """The W&B run id of a summary: the same summary, the same W&B run."""
    return RUN_ID_PREFIX + digest[:32]


def _wandb() -> Any:
    try:
        import wandb
    except ImportError:
        raise ConfigError(
            "assay track --to wandb needs Weights & Biases", hint="pip install 'assay[wandb]'"
        ) from None
    return wandb


def _track(
    wandb: Any, run_dir: Path, section: Any, project: str, entity: str | None, again: bool
) -> Tracked:
    digest = summary_digest(run_dir)
    metrics = dict(metric_items([*section.headline, *section.metrics]))
    params = dict(param_items(section.reproducibility))
    files = list(artifact_files(run_dir))
    try:
        run = wandb.init(
            project=project,
            entity=entity,
            id=None if again else wandb_run_id(digest),
            resume=None if again else "allow",
            name=run_dir.name,
            job_type=f"assay-{section.kind}",
            tags=[section.kind],
            config={**params, **run_tags(run_dir, section, digest)},
            reinit="create_new",
        )
    except wandb.errors.Error as error:
        raise ConfigError(f"Weights & Biases: {error}") from None
    try:
        run.summary.update(metrics)
        artifact = wandb.Artifact(f"assay-{_artifact_name(run_dir)}", type=ARTIFACT_TYPE)
        for file in files:
            artifact.add_file(str(file), name=file.relative_to(run_dir).as_posix())
        run.log_artifact(artifact)
    finally:
        run.finish()
    return Tracked(run_dir, str(run.id), True, len(metrics), len(params), len(files))


def _artifact_name(run_dir: Path) -> str:
    """The run directory's name in the characters W&B takes in an artifact name."""
    kept = "".join(c if c.isalnum() or c in "-_." else "-" for c in run_dir.resolve().name)
    return kept or "run"
