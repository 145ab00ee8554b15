"""``assay bench calibrate DEV_RUN``: a threshold and a calibration map fitted on a labelled
dev run, for ``bench run --calibration FILE`` and ``bench summarize --calibration FILE``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ._common import check_out_file

if TYPE_CHECKING:
    from ..verify.calibration import CrossValidation, Method


def register_calibrate(commands: Any) -> None:
    parser = commands.add_parser(
        "calibrate",
        help="fit a threshold and calibration map on a labelled dev run",
        description="Fit a calibration map of p_error and an operating threshold on the "
        "labelled, scored answers of DEV_RUN (or, with no labels, shift p_error to a stated "
        "--error-rate); apply them to another run with `assay bench run --calibration FILE` "
        "or `assay bench summarize --calibration FILE`.",
    )
    parser.add_argument(
        "dev_run", type=Path, nargs="?", help="a bench run directory with gold labels"
    )
    parser.add_argument(
        "--error-rate",
        type=float,
        help="no DEV_RUN: the share of answers you expect to be wrong; p_error is shifted to it "
        "(Bayes' rule for a new prior) and the verifier's decisions are kept (needs --out)",
    )
    parser.add_argument(
        "--target",
        default="balanced_accuracy",
        help="balanced_accuracy (default), f1, precision@R (most recall with precision >= R) "
        "or recall@R (most precision with recall >= R)",
    )
    parser.add_argument(
        "--method",
        choices=("isotonic", "platt", "shift"),
        help="isotonic (default): a non-decreasing map, linear between fitted knots; platt: "
        "sigmoid(a*logit(p)+b); "
        "shift: sigmoid(logit(p)+b), one number, for small dev sets",
    )
    parser.add_argument(
        "--out", type=Path, help="calibration file (default DEV_RUN/calibration-<target>.json)"
    )
    parser.set_defaults(handler=_calibrate)


def _calibrate(args: argparse.Namespace) -> int:
    if (args.dev_run is None) == (args.error_rate is None):
        raise ConfigError("bench calibrate: give a DEV_RUN or --error-rate, one of the two")
    if args.error_rate is not None:
        return _stated_rate(args)
    from ..verify.calibration import (
        backwards_note,
        cross_validate,
        dev_answers,
        fit_calibration,
        run_scorer,
        write_calibration,
    )

    method: Method = args.method or "isotonic"
    out = args.out or args.dev_run / f"calibration-{args.target.replace('@', '-at-')}.json"
    check_out_file(out)
    dev = dev_answers(args.dev_run)
    calibration = fit_calibration(
        dev.truth,
        dev.raw,
        target=args.target,
        method=method,
        dev_run=str(args.dev_run),
        dev_scorer=run_scorer(args.dev_run),
    )
    checked = cross_validate(dev, target=args.target, method=method)
    calibration = calibration.model_copy(update={"dev_cross_validation": checked})
    write_calibration(calibration, out)
    print(
        f"wrote {out}: {method} map on {calibration.dev_n} answers, threshold "
        f"{calibration.threshold:.4f} on calibrated p_error (raw {calibration.raw_threshold:.4f}), "
        f"{args.target} {calibration.dev_value:.3f} on the dev run (in fit)"
    )
    print("\n".join(_held_out_lines(checked, args.target)))
    backwards = backwards_note(dev.truth, dev.raw, calibration)
    if backwards:
        print(f"warning: {backwards}", file=sys.stderr)
    return 0


def _stated_rate(args: argparse.Namespace) -> int:
    from ..verify.calibration import stated_error_rate_map, write_calibration

    if args.out is None:
        raise ConfigError("bench calibrate --error-rate: give --out FILE (there is no DEV_RUN)")
    check_out_file(args.out)
    if args.target != "balanced_accuracy" or args.method is not None:
        raise ConfigError(
            "bench calibrate --error-rate keeps the verifier's decisions and shifts p_error; "
            "--target and --method need labelled answers (give a DEV_RUN instead)"
        )
    calibration = stated_error_rate_map(args.error_rate)
    write_calibration(calibration, args.out)
    print(
        f"wrote {args.out}: p_error shifted to an error rate of {args.error_rate:g} "
        f"(log-odds {calibration.platt_b:+.4f}); decisions unchanged (raw threshold 0.5)"
    )
    return 0


def _held_out_lines(checked: CrossValidation | None, target: str) -> list[str]:
    """The cross-validation's numbers: an estimate the in-fit dev value is not. With a few
    hundred labels or fewer neither comparison predicts what new answers will show
    (docs/learned-checker.md, "How many labels it takes"), so they are reported, not turned
    into a verdict."""
    if checked is None:
        return ["held out on the dev run: not measured (a fold's training part has one class)"]
    before, after = checked.target_before, checked.target_after
    return [
        f"held out on the dev run ({checked.folds} folds by group): {target} "
        f"{_value(after)} calibrated against {_value(before)} at the run's threshold "
        f"{checked.threshold_before:g}; "
        f"ECE {checked.ece_after:.3f} against {checked.ece_before:.3f}"
    ]


def _value(value: float | None) -> str:
    return "not reached" if value is None else f"{value:.3f}"


def calibration_threshold(path: Path, given: float | None) -> float:
    """The raw threshold ``bench run`` gates with under a calibration file."""
    from ..verify.calibration import read_calibration

    if given is not None:
        raise ConfigError("--threshold and --calibration: give one (the file sets the threshold)")
    return read_calibration(path).raw_threshold


def adopt_calibration(path: Path | None, run_dir: Path, *, replace: bool) -> None:
    """Keep a copy of the calibration file in the run (see
    :func:`assay.verify.calibration.adopt_calibration`)."""
    if path is None:
        return
    from ..verify.calibration import adopt_calibration as adopt

    adopt(path, run_dir, replace=replace)
