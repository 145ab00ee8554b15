"""How many labelled answers ``assay bench calibrate`` needs before it helps.

The `learned` checker's ``p_error`` speaks for a 50/50 prior and its threshold is fixed at 0.5;
on data whose error rate or difficulty differs, a user labels some answers of their own and
calibrates on them. This script measures that workflow on each data file, held out by
construction: a file's answers are scored once with ``assay bench run --verifier learned``;
then, many times over, ``n`` of its answers (whole groups: questions, articles, documents, so no
group is on both sides) are drawn as the labelled dev set, each calibration method is fitted on
them with the ``balanced_accuracy`` target exactly as ``bench calibrate`` fits it, and the map
and threshold are scored on the file's other answers. ``none`` is the checker's own 0.5, scored
on the same held-out answers.

    python benchmarks/calibration_budget.py                 # the three files in ../shared/data
    python benchmarks/calibration_budget.py --data lfqa=lfqa.jsonl --sizes 25 50 100 200 400

``--data NAME=PATH`` adds an assay records file (labelled, verify-only, e.g. from ``assay import
aggrefact``); the three shared files are imported with assay's own importers. Runs live under
``--work`` (default runs/calibration_budget, gitignored) and resume: a rerun scores nothing
twice. Each cell is BAcc / ECE on the held-out answers, the median over the draws with the
10th-90th percentile span, then the share of draws whose held-out ECE is lower than ``none``'s
on the same answers. A second table per file gives the ECE of ``bench calibrate --error-rate R``
(no labels; the verdicts do not change) at the file's own error rate and 0.1 either side. A
third says how often ``bench calibrate``'s own check (5-fold cross-validation on the dev labels
alone) said the fitted isotonic threshold was worse than the checker's 0.5 (and the map's ECE
worse than the raw scores'), among the draws where it then was worse on the other answers, and
among the rest.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import numpy as np
import numpy.typing as npt

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
WORK = REPO / "runs" / "calibration_budget"
SHARED_FILES = {
    "expertqa": "expertqa/domain_val.jsonl",
    "wice": "wice/claim_dev.jsonl",
    "halueval": "halueval/qa_one-turn_data.json",
}
METHODS = ("none", "shift", "platt", "isotonic")
TARGET = "balanced_accuracy"

Bools = npt.NDArray[np.bool_]
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Scored:
    """One file's labelled, scored answers (from a bench run's results)."""

    name: str
    truth: Bools
    p_error: Floats
    group: npt.NDArray[np.intp]  # a group index per answer


@dataclass(frozen=True)
class Cell:
    bacc: Floats
    ece: Floats
    ece_better: float  # share of draws with a lower held-out ECE than `none`


def records_file(name: str, work: Path, data_dir: Path) -> Path:
    """The shared file ``name`` imported with assay's importer (once)."""
    from assay.data.importers.expertqa import import_expertqa
    from assay.data.importers.halueval import import_halueval
    from assay.data.importers.wice import import_wice

    path = work / "data" / f"{name}.jsonl"
    if not path.is_file():
        importer = {"expertqa": import_expertqa, "wice": import_wice, "halueval": import_halueval}
        records = importer[name](data_dir / SHARED_FILES[name]).records
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    return path


def score_file(name: str, records: Path, work: Path) -> Scored:
    """Run the learned checker over ``records`` (resumable) and read its labelled scores."""
    from assay.cli import main as assay

    run = work / "runs" / name
    quiet = ["--no-progress", "--no-report", "--max-examples", "0", "--n-resamples", "10"]
    command = ["bench", "run", "--data", str(records), "--out_dir", str(run)]
    if assay([*command, "--pattern", "entailment", "--verifier", "learned", *quiet]) != 0:
        raise SystemExit(f"bench run failed on {records}")
    groups: dict[str, int] = {}
    truth, p_error, group = [], [], []
    for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["gold_error"] is None or row["verifier_score"] is None:
            continue
        truth.append(bool(row["gold_error"]))
        p_error.append(float(row["verifier_score"]))
        group.append(groups.setdefault(row["cluster"], len(groups)))
    return Scored(name, np.array(truth), np.array(p_error), np.array(group, dtype=np.intp))


def draw_dev(
    scored: Scored,
    n: int,
    rng: np.random.Generator,
    members: list[list[int]] | None = None,
) -> Bools | None:
    """Whole groups in random order until ``n`` answers; None when one class is missing.
    ``members`` (:func:`group_members`) saves rebuilding the groups on every draw."""
    members = group_members(scored) if members is None else members
    dev = np.zeros(len(scored.truth), dtype=bool)
    taken = 0
    for g in rng.permutation(len(members)):
        if taken >= n:
            break
        dev[members[int(g)]] = True
        taken += len(members[int(g)])
    both = 0 < scored.truth[dev].sum() < dev.sum()
    rest = ~dev
    return dev if both and 0 < scored.truth[rest].sum() < rest.sum() else None


def group_members(scored: Scored) -> list[list[int]]:
    """The answers of each group, by group index."""
    members: dict[int, list[int]] = defaultdict(list)
    for index, g in enumerate(scored.group):
        members[int(g)].append(index)
    return [members[g] for g in range(len(members))]


def held_out(scored: Scored, dev: Bools, method: str) -> tuple[float, float]:
    """(BAcc, ECE) on the answers outside ``dev``, of ``method`` fitted on ``dev``."""
    from assay.metrics import balanced_accuracy_score, expected_calibration_error
    from assay.verify.calibration import Method, fit_calibration

    test = ~dev
    truth, raw = scored.truth[test], scored.p_error[test]
    if method == "none":
        calibrated, threshold = raw, 0.5
    else:
        fitted = fit_calibration(
            scored.truth[dev],
            scored.p_error[dev],
            target=TARGET,
            method=cast(Method, method),
            dev_run="-",
        )
        calibrated, threshold = fitted.apply(raw), fitted.threshold
    bacc = balanced_accuracy_score(truth, calibrated >= threshold)
    return bacc, expected_calibration_error(truth, calibrated)


def measure(
    scored: Scored, n: int, draws: int, seed: int, check: Check | None = None
) -> dict[str, Cell] | None:
    """Every method on ``draws`` dev sets of ``n`` answers, scored on the rest. With ``check``,
    the same draws also ask ``bench calibrate``'s held-out check (cross-validation on the dev
    labels alone) whether the isotonic fit is worse than the checker's own scores, and count
    how that compares with what the rest of the file then shows."""
    rng = np.random.default_rng([seed, n])
    members = group_members(scored)
    results: dict[str, list[tuple[float, float]]] = {m: [] for m in METHODS}
    attempts = 0
    while len(results["none"]) < draws and attempts < 10 * draws:
        attempts += 1
        dev = draw_dev(scored, n, rng, members)
        if dev is None:
            continue
        for method in METHODS:
            results[method].append(held_out(scored, dev, method))
        if check is not None:
            check.add(scored, dev, results["isotonic"][-1], results["none"][-1])
    if not results["none"]:
        return None
    base_ece = np.array([e for _, e in results["none"]])
    cells = {}
    for method, values in results.items():
        bacc = np.array([b for b, _ in values])
        ece = np.array([e for _, e in values])
        cells[method] = Cell(bacc, ece, float(np.mean(ece < base_ece)))
    return cells


@dataclass
class Agreement:
    """How often a check said "worse", among the draws that were worse and among the rest."""

    worse: int = 0
    said_worse: int = 0
    others: int = 0
    said_other: int = 0

    def add(self, said: bool, worse: bool) -> None:
        if worse:
            self.worse += 1
            self.said_worse += said
        else:
            self.others += 1
            self.said_other += said

    def cells(self) -> list[str]:
        measured = self.worse + self.others
        return [
            f"{self.worse}/{measured}",
            f"{self.said_worse}/{self.worse}",
            f"{self.said_other}/{self.others}",
        ]


@dataclass
class Check:
    """``bench calibrate``'s held-out check of the isotonic fit against what the draws show:
    BAcc at the fitted threshold, and ECE."""

    bacc: Agreement = field(default_factory=Agreement)
    ece: Agreement = field(default_factory=Agreement)
    unmeasured: int = 0
    draws: int = 0

    def add(
        self,
        scored: Scored,
        dev: Bools,
        fitted: tuple[float, float],
        raw: tuple[float, float],
    ) -> None:
        """One draw: ``fitted`` and ``raw`` are (BAcc, ECE) held out, isotonic and none."""
        from assay.verify.calibration import DevAnswers, cross_validate

        self.draws += 1
        answers = DevAnswers(
            truth=scored.truth[dev],
            raw=scored.p_error[dev],
            groups=tuple(str(g) for g in scored.group[dev]),
            threshold=0.5,
        )
        checked = cross_validate(answers, target=TARGET, method="isotonic")
        if checked is None or checked.target_before is None:
            self.unmeasured += 1
            return
        after = checked.target_after
        self.bacc.add(after is None or after < checked.target_before, fitted[0] < raw[0])
        self.ece.add(checked.ece_after > checked.ece_before, fitted[1] > raw[1])

    def cells(self, n: int) -> list[str]:
        return [
            str(n),
            *self.bacc.cells(),
            *self.ece.cells(),
            f"{self.unmeasured}/{self.draws}",
        ]


def stated_rates(scored: Scored) -> str:
    """ECE with no labels: ``bench calibrate --error-rate R`` at the file's own error rate
    (what a user who knows it gets) and 0.1 either side of it (a rough guess)."""
    from assay.metrics import expected_calibration_error
    from assay.verify.calibration import stated_error_rate_map

    rate = float(scored.truth.mean())
    cells = [f"{expected_calibration_error(scored.truth, scored.p_error):.3f}"]
    for stated in (rate - 0.1, rate, rate + 0.1):
        stated = round(min(max(stated, 0.05), 0.95), 2)
        mapped = stated_error_rate_map(stated).apply(scored.p_error)
        cells.append(f"{expected_calibration_error(scored.truth, mapped):.3f} at {stated:.2f}")
    return "| " + " | ".join(cells) + " |"


def _span(values: Floats, scale: float, digits: int) -> str:
    low, mid, high = np.percentile(values, [10, 50, 90]) * scale
    return f"{mid:.{digits}f} ({low:.{digits}f}-{high:.{digits}f})"


def table(scored: Scored, label: str, sizes: list[int], draws: int, seed: int) -> list[str]:
    """One row per dev size; each cell BAcc / ECE on the held-out answers, median (10th-90th
    percentile) over the draws, and the share of draws whose ECE beats ``none``'s; then the
    stated-rate ECE and the held-out check's record."""
    lines = [
        f"**{scored.name}** ({len(scored.truth)} answers, {len(set(scored.group.tolist()))} "
        f"groups, error rate {scored.truth.mean():.2f}; checker {label})",
        "",
        "| labelled dev answers | " + " | ".join(METHODS) + " |",
        "|---|" + "---|" * len(METHODS),
    ]
    checks: list[list[str]] = []
    for n in sizes:
        if 2 * n > len(scored.truth):
            continue
        check = Check()
        cells = measure(scored, n, draws, seed, check)
        if cells is None:
            continue
        row = [str(n)]
        for method, cell in cells.items():
            text = f"{_span(cell.bacc, 100, 1)} / {_span(cell.ece, 1, 3)}"
            if method != "none":
                text += f", {100 * cell.ece_better:.0f}%"
            row.append(text)
        lines.append("| " + " | ".join(row) + " |")
        checks.append(check.cells(n))
    return [
        *lines,
        "",
        "| ECE, no calibration | stated error rate 0.1 under the file's | the file's | 0.1 over |",
        "|---|---|---|---|",
        stated_rates(scored),
        "",
        "| labelled dev answers | isotonic's threshold lost BAcc held out "
        "| cross-validation said so, of those | said so, of the others "
        "| isotonic's map raised ECE held out | said so, of those | said so, of the others "
        "| not measured (a fold with one class) |",
        "|---|---|---|---|---|---|---|---|",
        *("| " + " | ".join(cells) + " |" for cells in checks),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--data", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--no-shared", action="store_true", help="only the --data files")
    parser.add_argument("--sizes", type=int, nargs="+", default=[25, 50, 100, 200])
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=WORK)
    args = parser.parse_args(argv)
    files: list[tuple[str, Path, str]] = []
    if not args.no_shared:
        for name in SHARED_FILES:
            files.append((name, records_file(name, args.work, args.data_dir), "in fit"))
    for item in args.data:
        name, _, path = item.partition("=")
        if not path:
            parser.error(f"--data {item!r}: expected NAME=PATH")
        files.append((name, Path(path), "held out"))
    for name, path, label in files:
        scored = score_file(name, path, args.work)
        print("\n".join(table(scored, label, args.sizes, args.draws, args.seed)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
