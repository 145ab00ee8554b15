"""``assay track RUN ...``: runs logged into MLflow tracking or Weights & Biases (params,
metrics with their intervals, artifacts), once per summary."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import ConfigError

HELP = "log runs into MLflow or Weights & Biases: params, metrics with intervals, artifacts"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "track",
        help=HELP,
        description="A tracker run per assay run (bench, judge, judge draws, instruction "
        "robustness): the report's reproducibility facts as params (W&B: config), its headline "
        "and summary metrics (with 'NAME ci_low' / 'NAME ci_high'; W&B: the run's summary), "
        "assay.* tags and the run's own files as artifacts. MLflow: a run whose summary is "
        "already logged in the experiment is named, not logged again; W&B: the run id comes "
        "from the summary, so the same summary updates the same W&B run. Needs the mlflow or "
        "wandb extra.",
    )
    parser.add_argument("runs", type=Path, nargs="+", metavar="RUN", help="run directories")
    parser.add_argument(
        "--to", choices=("mlflow", "wandb"), default="mlflow", help="the tracker (mlflow)"
    )
    parser.add_argument(
        "--tracking-uri",
        help="MLflow tracking URI (default: MLFLOW_TRACKING_URI, else MLflow's own default; "
        "W&B reads WANDB_BASE_URL)",
    )
    parser.add_argument(
        "--experiment",
        default="assay",
        help="MLflow experiment, or W&B project, made if missing (assay)",
    )
    parser.add_argument("--entity", help="W&B entity (team or user; default: W&B's own)")
    parser.add_argument(
        "--again", action="store_true", help="log runs whose summary is logged already, again"
    )
    parser.set_defaults(handler=_track)


def _track(args: argparse.Namespace) -> int:
    from ..runs import check_not_being_written

    for run in args.runs:
        check_not_being_written(run)  # a run still being written would be logged in part
    if args.to == "wandb":
        return _track_wandb(args)
    if args.entity is not None:
        raise ConfigError("--entity: a W&B setting", hint="give it with --to wandb")
    from ..report.mlflow_tracking import track_runs

    tracked = track_runs(
        args.runs, tracking_uri=args.tracking_uri, experiment=args.experiment, again=args.again
    )
    for item in tracked:
        if item.logged:
            print(
                f"{item.run_dir}: MLflow run {item.run_id} ({item.metrics} metrics, "
                f"{item.params} params, {item.artifacts} artifacts)"
            )
        else:
            print(
                f"{item.run_dir}: already logged as MLflow run {item.run_id} (--again logs it anew)"
            )
    return 0


def _track_wandb(args: argparse.Namespace) -> int:
    from ..report.wandb_tracking import track_runs_wandb

    if args.tracking_uri is not None:
        raise ConfigError(
            "--tracking-uri: an MLflow setting", hint="W&B reads its server from WANDB_BASE_URL"
        )
    tracked = track_runs_wandb(
        args.runs, project=args.experiment, entity=args.entity, again=args.again
    )
    for item in tracked:
        print(
            f"{item.run_dir}: W&B run {item.run_id} ({item.metrics} metrics, {item.params} "
            f"config entries, {item.artifacts} files in the run's artifact)"
        )
    return 0
