"""The model-free ``learned`` claim checker: ms per claim, answer-level quality and the padding
flip rate, today's checker (the starting commit) and this one side by side in one run.

    .venv/bin/python benchmarks/bench_checker.py                      # today: learned-1's code
    .venv/bin/python benchmarks/bench_checker.py --today-rev 7cee43a  # against learned-4
    .venv/bin/python benchmarks/bench_checker.py --today-rev d98b7d8  # against learned-3
    .venv/bin/python benchmarks/bench_checker.py --today-src /path/to/old/src --repeats 3

The old checker's code comes from this repository's history (``git archive REV src`` into a
temporary directory; ``--today-rev``, default the last commit with ``learned-1``) or from a
``src`` directory on disk (``--today-src``).

Each checker runs in its own child process (``PYTHONPATH`` picks the code), one after the
other, on the same records: WiCE dev (one claim against its cited web page, 349 pages of up to
~1,100 sentences) and HaluEval QA (short answers against a short knowledge paragraph). A claim's
time is one ``check_sync`` call, the first claim of a record paying for the record's evidence
(the new checker indexes a record's evidence once). Timings are wall-clock on one core and
noisy on a shared machine: compare the two columns of one run, not runs.

Quality is scored as the benchmark's ``entailment`` pattern scores an answer (claims split by
``split_claims``, re-checked against the cited snippets when these do not support them,
``p_error`` = 1 - the weakest claim's probability, error = positive, threshold 0.5). The
padding flip rate: every error answer the checker does not call supported, followed by two
sentences of its own evidence, checked as one claim; a flip is a ``supported`` verdict. The
joined flip rate: the same answers with the longest of their first five evidence sentences joined
into the answer's own sentence (", which ..."), where splitting at sentence ends cannot take it
out.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _git_source import source_at

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
TODAY_REV = "02bdbc6^"  # the last commit whose checker is learned-1, "today" in the issue
FILES = {
    "wice": "wice/claim_dev.jsonl",
    "halueval": "halueval/qa_one-turn_data.json",
    "expertqa": "expertqa/domain_val.jsonl",
}
TIMED = ("wice", "halueval")


def worker(data_dir: Path, repeats: int) -> dict[str, Any]:
    """Measure the checker importable from ``sys.path`` (run in a child process)."""
    from assay.data.importers.expertqa import import_expertqa
    from assay.data.importers.halueval import import_halueval
    from assay.data.importers.wice import import_wice
    from assay.verify.checkers.learned import LearnedChecker

    importers = {"wice": import_wice, "halueval": import_halueval, "expertqa": import_expertqa}
    out: dict[str, Any] = {}
    for name, relative in FILES.items():
        records = importers[name](data_dir / relative).records
        quality = _quality(LearnedChecker(), records)
        if name in TIMED:
            quality["timing"] = _timing(records, repeats)
        if name == "wice":
            quality["run_on"] = _run_on(records[:RUN_ON_PAGES], repeats)
        out[name] = quality
    out["long_inputs"] = _long_inputs()
    return out


def _long_inputs() -> dict[str, float]:
    """ms for one call on inputs a regular expression or a sort could make quadratic (timed
    once: before the fixes of 2026-11-24 these took seconds): the learned checker, instruction
    checks that scan a response, and the judge's salvage of JSON objects from a reply."""
    from assay.instructions.format_checks import number_bullet_lists, number_placeholders
    from assay.instructions.language import detect_language
    from assay.judge.findings import Findings
    from assay.judge.reply_json import parse_reply
    from assay.verify.checkers.learned import LearnedChecker
    from assay.verify.types import Claim, Evidence

    page = [Evidence(evidence_id="e1", text="It opened in 1932. It is 503 metres long.")]
    unspaced = "QmFzZTY0" * 5000  # 40,000 characters without a space (a pasted blob)
    numbers = " ".join(str(i) for i in range(20000)) + "."
    spaced = "It opened" + " " * 20000 + "in 1932."  # a model's degenerate white space
    calls: dict[str, Callable[[], object]] = {
        "learned: claim of 40,000 characters without a space": lambda: LearnedChecker().check_sync(
            Claim(text=unspaced), page
        ),
        "learned: claim of 20,000 numbers": lambda: LearnedChecker().check_sync(
            Claim(text=numbers), page
        ),
        "learned: claim with a run of 20,000 spaces": lambda: LearnedChecker().check_sync(
            Claim(text=spaced), page
        ),
        "instructions: language of 40,000 characters without a space": lambda: detect_language(
            unspaced
        ),
        "instructions: placeholders in a line of 20,000 '['": lambda: number_placeholders(
            "[" * 20000, {"num_placeholders": 1}, ""
        ),
        "instructions: bullets in 20,000 blank lines and no bullet": lambda: number_bullet_lists(
            "\n" * 20000 + "one", {"num_bullets": 1}, ""
        ),
        "judge: reply of 40,000 broken objects": lambda: parse_reply("{a} " * 40000, Findings()),
    }
    out = {}
    for label, call in calls.items():
        _clear_caches()
        start = time.perf_counter()
        call()
        out[label] = 1000 * (time.perf_counter() - start)
    return out


RUN_ON_PAGES = 10
RUN_ON_CLAUSES = 800


def _run_on(records: Sequence[Any], repeats: int) -> dict[str, float]:
    """The worst case of a long claim: one sentence of RUN_ON_CLAUSES copies of a short clause
    from the page ("the first four words of its first sentence, ..."), which one window holds
    but which names too little to be a copied run; ms for one check (the best of ``repeats``,
    caches cleared before each), median and max over the pages."""
    from assay.verify.checkers.learned import LearnedChecker
    from assay.verify.types import Claim

    times: list[float] = []
    for record in records:
        clause = " ".join(record.evidence[0].text.split()[:4]).rstrip(",.;:")
        claim = Claim(text=", ".join([clause] * RUN_ON_CLAUSES) + ".")
        best = math.inf
        for _ in range(repeats):
            _clear_caches()
            start = time.perf_counter()
            LearnedChecker().check_sync(claim, record.evidence)
            best = min(best, 1000 * (time.perf_counter() - start))
        times.append(best)
    return {"median_ms": statistics.median(times), "max_ms": max(times)}


def _timing(records: Sequence[Any], repeats: int) -> dict[str, float]:
    """ms per claim: the best of ``repeats`` passes per claim, a fresh checker (and cache)
    per pass, so the record's first claim pays for its evidence every time."""
    from assay.verify.checkers.learned import LearnedChecker
    from assay.verify.claims import split_claims

    best: list[float] = []
    for pass_number in range(repeats):
        _clear_caches()
        checker = LearnedChecker()
        times: list[float] = []
        for record in records:
            for claim in split_claims(record.answer or ""):
                start = time.perf_counter()
                checker.check_sync(claim, record.evidence)
                times.append(1000 * (time.perf_counter() - start))
        best = times if pass_number == 0 else [min(a, b) for a, b in zip(best, times, strict=True)]
    ordered = sorted(best)
    return {
        "claims": len(ordered),
        "median_ms": statistics.median(ordered),
        "p95_ms": ordered[int(0.95 * (len(ordered) - 1))],
        "max_ms": ordered[-1],
        "mean_ms": statistics.fmean(ordered),
    }


def _clear_caches() -> None:
    """Empty the checker's lru caches (text statistics, evidence indexes), whichever exist."""
    import importlib

    for module_name in (
        "assay.verify.checkers.learned",
        "assay.verify.checkers._learned_text",
        "assay.verify.checkers._align",
    ):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for value in vars(module).values():
            cached = hasattr(value, "cache_clear") and value.__module__ == module_name
            if cached and getattr(value, "__name__", "") != "shipped_weights":
                value.cache_clear()


def _quality(checker: Any, records: Sequence[Any]) -> dict[str, Any]:
    from assay.verify.claims import split_claims

    truth: list[bool] = []
    p_error: list[float] = []
    flips = padded = joined = 0
    for record in records:
        p_ok: list[float] = []
        for claim in split_claims(record.answer or ""):
            check = checker.check_sync(claim, record.evidence)
            p = check.p_supported
            cited = [e for e in record.evidence if e.evidence_id in claim.cited_ids]
            if cited and not check.cited_supporting_ids and check.label != "unsupported":
                p = min(p, checker.check_sync(claim, cited).p_supported)
            p_ok.append(p)
        if p_ok and record.gold_error is not None:
            truth.append(bool(record.gold_error))
            p_error.append(1.0 - min(p_ok))
        if record.gold_error and record.answer:
            flips, padded, joined = _padding(checker, record, (flips, padded, joined))
    padding = {"padding": [flips, padded], "joined": [joined, padded]}
    return {"n": len(truth), **_metrics(truth, p_error), **padding}


SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _padding(checker: Any, record: Any, counts: tuple[int, int, int]) -> tuple[int, int, int]:
    """(flips, padded, joined flips) after one more error answer."""
    from assay.verify.types import Claim

    flips, padded, joined = counts
    answer = record.answer.rstrip(" .")
    if checker.check_sync(Claim(text=answer), record.evidence).label == "supported":
        return counts
    filler = " ".join(e.text for e in record.evidence[:2])[:600]
    check = checker.check_sync(Claim(text=f"{answer}. {filler}"), record.evidence)
    # split here, not by the checker's code: the old tree's checker may have no sentence splitter
    sentences = [s for e in record.evidence[:2] for s in SENTENCE_END.split(e.text)][:5]
    sentences = [s for s in sentences if s.strip()] or [filler]
    longest = max(sentences, key=len).rstrip(" .")
    inside = f"{answer}, which {longest[:1].lower()}{longest[1:]}."
    joined_check = checker.check_sync(Claim(text=inside), record.evidence)
    return (
        flips + (check.label == "supported"),
        padded + 1,
        joined + (joined_check.label == "supported"),
    )


def _metrics(truth: list[bool], p_error: list[float]) -> dict[str, float]:
    import numpy as np

    from assay.metrics import expected_calibration_error

    error, p = np.array(truth), np.array(p_error)
    flagged = p >= 0.5
    pos, neg = p[error], p[~error]
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return {
        "bacc": float((flagged[error].mean() + (~flagged[~error]).mean()) / 2),
        "auroc": float(greater / (len(pos) * len(neg))),
        "ece": expected_calibration_error(error, p),
    }


def measure(src: Path, data_dir: Path, repeats: int) -> dict[str, Any]:
    """Run :func:`worker` in a child process importing assay from ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    command = [sys.executable, __file__, "--worker", "--data-dir", str(data_dir)]
    command += ["--repeats", str(repeats)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"worker for {src} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def table(today: dict[str, Any], after: dict[str, Any]) -> str:
    lines = [
        "| data | claims | today median / p95 / max ms | after median / p95 / max ms | "
        "median speed-up |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in TIMED:
        a, b = today[name]["timing"], after[name]["timing"]
        lines.append(
            f"| {name} | {b['claims']} | {_ms(a)} | {_ms(b)} "
            f"| {a['median_ms'] / b['median_ms']:.1f}x |"
        )
    if "run_on" in today["wice"] and "run_on" in after["wice"]:
        a, b = today["wice"]["run_on"], after["wice"]["run_on"]
        lines.append(
            f"| wice run-on claims ({RUN_ON_CLAUSES} clauses, {RUN_ON_PAGES} pages; median / max) "
            f"| {RUN_ON_PAGES} | {a['median_ms']:.1f} / {a['max_ms']:.1f} "
            f"| {b['median_ms']:.1f} / {b['max_ms']:.1f} | {a['median_ms'] / b['median_ms']:.1f}x |"
        )
    if "long_inputs" in today and "long_inputs" in after:
        lines += ["", "| long input | today ms | after ms |", "|---|---:|---:|"]
        for label, ms in after["long_inputs"].items():
            before = today["long_inputs"].get(label, math.nan)
            lines.append(f"| {label} | {before:.1f} | {ms:.1f} |")
    lines += [
        "",
        "| data | n | today BAcc / AUROC / ECE | after BAcc / AUROC / ECE "
        "| padding flips today | padding flips after | joined flips today | joined flips after |",
        "|---|---:|---|---|---:|---:|---:|---:|",
    ]
    for name in FILES:
        a, b = today[name], after[name]
        lines.append(
            f"| {name} | {b['n']} | {_quality_cell(a)} | {_quality_cell(b)} "
            f"| {_flips(a['padding'])} | {_flips(b['padding'])} "
            f"| {_flips(a['joined'])} | {_flips(b['joined'])} |"
        )
    return "\n".join(lines)


def _ms(t: dict[str, float]) -> str:
    return f"{t['median_ms']:.2f} / {t['p95_ms']:.2f} / {t['max_ms']:.1f}"


def _quality_cell(q: dict[str, float]) -> str:
    return f"{100 * q['bacc']:.1f} / {q['auroc']:.3f} / {q['ece']:.3f}"


def _flips(counts: list[int]) -> str:
    flips, padded = counts
    return f"{flips}/{padded} ({100 * flips / max(1, padded):.1f}%)"


def calibration_demo(data_dir: Path, work: Path) -> str:
    """``bench calibrate`` held out: WiCE dev split by article into halves A and B; calibrate
    on one half's run, apply to the other's, both ways. Every number is on the half not used."""
    import zlib

    from assay.cli import main as assay
    from assay.data.importers.wice import import_wice

    records = import_wice(data_dir / FILES["wice"]).records
    halves = {
        name: [r for r in records if zlib.crc32(r.cluster.encode()) % 2 == bit]
        for name, bit in (("A", 0), ("B", 1))
    }
    quiet = ["--no-progress", "--no-report", "--max-examples", "0", "--n-resamples", "100"]
    for name, part in halves.items():
        path = work / f"wice-{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(r.model_dump_json() + "\n" for r in part), encoding="utf-8")
        run = ["bench", "run", "--data", str(path), "--out_dir", str(work / f"run-{name}")]
        assay([*run, "--pattern", "entailment", "--verifier", "learned", *quiet])
    lines = [
        "| calibrated on -> scored on | target | threshold (raw) "
        "| BAcc | precision | recall | ECE |",
        "|---|---|---|---|---|---|---|",
    ]
    for dev, test in (("A", "B"), ("B", "A")):
        lines.append(_demo_row(work, dev, test, None))
        for target in ("balanced_accuracy", "precision@0.9"):
            cal = work / f"cal-{dev}-{target}.json"
            assay(
                [
                    "bench",
                    "calibrate",
                    str(work / f"run-{dev}"),
                    "--target",
                    target,
                    "--out",
                    str(cal),
                ]
            )
            lines.append(_demo_row(work, dev, test, cal))
        (work / f"run-{test}" / "calibration.json").unlink()
        assay(["bench", "summarize", str(work / f"run-{test}"), "--no-plots", "--no-report"])
    return "\n".join(lines)


def _demo_row(work: Path, dev: str, test: str, cal: Path | None) -> str:
    from assay.cli import main as assay

    run = work / f"run-{test}"
    if cal is not None:
        assay(
            ["bench", "summarize", str(run), "--calibration", str(cal), "--no-plots", "--no-report"]
        )
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    metrics = summary["detection"]["metrics"]
    applied = summary["calibration"]
    target = applied["target"] if applied else "none (checker's own 0.5)"
    threshold = f"{applied['threshold']:.3f} ({applied['raw_threshold']:.3f})" if applied else "0.5"
    cells = [f"{100 * metrics['balanced_accuracy']['value']:.1f}"]
    cells += [f"{metrics[k]['value']:.3f}" for k in ("precision", "recall", "ece_uniform")]
    return (
        f"| {dev} -> {test} ({summary['counts']['used_for_detection']}) | {target} | {threshold} | "
        + " | ".join(cells)
        + " |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--today-src", type=Path, help="the old checker's src directory")
    parser.add_argument("--today-rev", default=TODAY_REV, help="else: its git revision")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes (best kept)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--calibration-demo",
        type=Path,
        metavar="WORK_DIR",
        help="instead: bench calibrate on one half of WiCE dev, applied to the other "
        "(runs in WORK_DIR)",
    )
    args = parser.parse_args()
    if args.calibration_demo is not None:
        print(calibration_demo(args.data_dir, args.calibration_demo))
        return 0
    if args.worker:
        print(json.dumps(worker(args.data_dir, args.repeats)))
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        today_src = args.today_src or source_at(args.today_rev, Path(scratch))
        today = measure(today_src, args.data_dir, args.repeats)
    after = measure(REPO / "src", args.data_dir, args.repeats)
    print(table(today, after))
    return 0


if __name__ == "__main__":
    sys.exit(main())
