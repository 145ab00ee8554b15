"""``assay bench calibrate DEV_RUN``: a threshold and a calibration map fitted on a labelled
dev run, for ``bench run --calibration FILE`` and ``bench summarize --calibration FILE``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import ConfigError

DEFAULT_THRESHOLD = 0.5


def register_calibrate(commands: Any) -> None:
    parser = commands.add_parser(
        "calibrate",
        help="fit a threshold and calibration map on a labelled dev run",
        description="Fit a calibration map of p_error and an operating threshold on the "
        "labelled, scored answers of DEV_RUN; apply them to another run with "
        "`assay bench run --calibration FILE` or `assay bench summarize --calibration FILE`.",
    )
    parser.add_argument("dev_run", type=Path, help="a bench run directory with gold labels")
    parser.add_argument(
        "--target",
        default="balanced_accuracy",
        help="balanced_accuracy (default), f1, precision@R (most recall with precision >= R) "
        "or recall@R (most precision with recall >= R)",
    )
    parser.add_argument(
        "--method",
        choices=("isotonic", "platt", "shift"),
        default="isotonic",
        help="isotonic (default): a non-decreasing step map; platt: sigmoid(a*logit(p)+b); "
        "shift: sigmoid(logit(p)+b), one number, for small dev sets",
    )
    parser.add_argument(
        "--out", type=Path, help="calibration file (default DEV_RUN/calibration-<target>.json)"
    )
    parser.set_defaults(handler=_calibrate)


def _calibrate(args: argparse.Namespace) -> int:
    from ..verify.calibration import (
        backwards_note,
        dev_pairs,
        fit_calibration,
        run_scorer,
        write_calibration,
    )

    truth, raw = dev_pairs(args.dev_run)
    calibration = fit_calibration(
        truth,
        raw,
        target=args.target,
        method=args.method,
        dev_run=str(args.dev_run),
        dev_scorer=run_scorer(args.dev_run),
    )
    out = args.out or args.dev_run / f"calibration-{args.target.replace('@', '-at-')}.json"
    write_calibration(calibration, out)
    print(
        f"wrote {out}: {args.method} map on {calibration.dev_n} answers, threshold "
        f"{calibration.threshold:.4f} on calibrated p_error (raw {calibration.raw_threshold:.4f}), "
        f"{args.target} {calibration.dev_value:.3f} on the dev run (in fit)"
    )
    backwards = backwards_note(truth, raw, calibration)
    if backwards:
        print(f"warning: {backwards}", file=sys.stderr)
    return 0


def calibration_threshold(path: Path, given: float) -> float:
    """The raw threshold ``bench run`` gates with under a calibration file."""
    from ..verify.calibration import read_calibration

    if given != DEFAULT_THRESHOLD:
        raise ConfigError("--threshold and --calibration: give one (the file sets the threshold)")
    return read_calibration(path).raw_threshold


def adopt_calibration(path: Path | None, run_dir: Path, *, replace: bool) -> None:
    """Keep a copy of the calibration file in the run (see
    :func:`assay.verify.calibration.adopt_calibration`)."""
    if path is None:
        return
    from ..verify.calibration import adopt_calibration as adopt

    adopt(path, run_dir, replace=replace)
