"""``assay track RUN ...``: runs logged into MLflow tracking (params, metrics with their
intervals, artifacts), once per summary."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

HELP = "log runs into MLflow tracking: params, metrics with intervals, artifacts"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "track",
        help=HELP,
        description="An MLflow run per assay run (bench, judge, judge draws, instruction "
        "robustness): the report's reproducibility facts as params, its headline and summary "
        "metrics (with 'NAME ci_low' / 'NAME ci_high'), assay.* tags and the run's own files "
        "as artifacts. A run whose summary is already logged in the experiment is named, not "
        "logged again. Needs the mlflow extra.",
    )
    parser.add_argument("runs", type=Path, nargs="+", metavar="RUN", help="run directories")
    parser.add_argument(
        "--tracking-uri",
        help="MLflow tracking URI (default: MLFLOW_TRACKING_URI, else MLflow's own default)",
    )
    parser.add_argument(
        "--experiment", default="assay", help="MLflow experiment, made if missing (assay)"
    )
    parser.add_argument(
        "--again", action="store_true", help="log runs whose summary is logged already, again"
    )
    parser.set_defaults(handler=_track)


def _track(args: argparse.Namespace) -> int:
    from ..report.mlflow_tracking import track_runs
    from ..runs import check_not_being_written

    for run in args.runs:
        check_not_being_written(run)  # a run still being written would be logged in part
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
