"""The judge archive at scale: bytes per evaluation, files, write time, and `assay judge
analyze` and `validate` time and peak memory, for the sharded layout beside the per-file one.

Records are made the way `assay judge run` makes them: the real judge prompt
(`judge_messages`) for each synthetic sample, a protocol-valid reply that quotes the sample's
own output, classified by the real validator, and written through `Archive.add` (which reads
every record back before it counts it). No model is called: this measures the archive, not
the client (benchmarks/README.md has the client's CPU per sample).

Each step runs in its own child process; peak memory is that child's maximum RSS.

    python benchmarks/bench_archive.py                         # 20k both layouts, 100k shards
    python benchmarks/bench_archive.py --sizes 20000:files 20000:shards 100000:shards \\
        1000000:shards

Targets (issue 12): <= 2 KB per evaluation beyond the output text; analyze over 1M
evaluations <= 60 s.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

VARIANTS = 5
TARGETS = 20
WORDS = [
    "the",
    "a",
    "hash",
    "map",
    "stores",
    "keys",
    "values",
    "in",
    "buckets",
    "lookup",
    "is",
    "fast",
    "on",
    "average",
    "and",
    "resizing",
]


def _output_text(rng: random.Random, index: int) -> str:
    lines = [f"## Answer {index}"]
    for _ in range(rng.randint(4, 8)):
        lines.append("- " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16))) + ".")
    return "\n".join(lines)


def _reply(meta: dict[str, str], output: str, rng: random.Random) -> str:
    scores = {d: rng.randint(1, 2) for d in ("FORMAT_COMPLIANCE", "INSTRUCTION_COMPLIANCE")}
    scores |= {d: rng.randint(0, 2) for d in ("SEMANTIC_FIDELITY", "COMPLETENESS")}
    total = sum(scores.values())
    verdict = "FAIL" if total <= 3 else "PARTIAL" if 0 in scores.values() or total < 7 else "PASS"
    lines = output.splitlines()
    evidence = [
        {"dimension": d, "quote": lines[i % len(lines)][2:40], "reason": f"supports {d}"}
        for i, d in enumerate(scores)
    ]
    body = {
        "meta": meta,
        "scores": {**scores, "overall_score": total},
        "verdict": verdict,
        "flags": [],
        "evidence": evidence,
    }
    return json.dumps(body)


def write_archive(run_dir: Path, count: int, layout: str, *, domains: int = 0) -> dict[str, Any]:
    """Write ``count`` evaluations; returns seconds, and output characters written.
    ``domains``: give each question's samples ``meta.domain`` (one of that many), as a
    question set's own fields are archived, for ``judge analyze --by meta.domain``."""
    from assay.judge.archive import Archive, CallInfo, EvaluationRecord
    from assay.judge.evalset import Sample
    from assay.judge.prompts import JudgeRequest, judge_messages
    from assay.judge.protocol import DecodingSettings, Protocol
    from assay.judge.run import protocol_state
    from assay.judge.validate import classify
    from assay.runs import RunLog, RunLogger

    protocol = Protocol()
    archive = Archive.open(run_dir, protocol_state(protocol, DecodingSettings(), layout))  # type: ignore[arg-type]
    # run.json as `assay judge run` writes it, so that `assay report` reads the directory too
    log = RunLog(kind="judge", fingerprint=archive.state.fingerprint, sample_count=count)
    logger = RunLogger(run_dir, log)
    request = JudgeRequest(judge_model="stub/judge", method="cross_judge", timestamp="2026-11-23")
    rng = random.Random(0)
    started, output_chars = time.perf_counter(), 0
    for index in range(count):
        question, rest = divmod(index, VARIANTS * TARGETS)
        variant, target = divmod(rest, TARGETS)
        output = _output_text(rng, index)
        output_chars += len(output.encode("utf-8"))
        sample = Sample(
            question_id=f"Q{question}",
            prompt_variant=f"V{variant}",
            target_model=f"stub/target-{target}",
            output_id=f"out-{index}",
            output_text=output,
            prompt=f"Explain hash maps for question {question}, variant {variant}, in bullets.",
            constraints=("use Markdown bullets", "at most 120 words"),
            intent="teach the reader what a hash map is",
        )
        meta = request.meta(sample)
        reply = _reply(meta, output, rng)
        classification = classify(reply, meta, output, protocol)
        record = EvaluationRecord(
            fingerprint=archive.state.fingerprint,
            question_id=sample.question_id,
            prompt_variant=sample.prompt_variant,
            target_model=sample.target_model,
            output_id=sample.output_id,
            judge_model=request.judge_model,
            method="cross_judge",
            attempt=1,
            valid=classification.valid,
            flags=classification.flags,
            classification=classification,
            raw_reply=reply,
            call=CallInfo(finish_reason="stop", prompt_tokens=900, completion_tokens=180),
            constrained=True,
            messages=tuple(judge_messages(sample, request, protocol, archive.state.fingerprint)),
            evaluated_output=output,
            decoding_mode="exact",
            reply_budget=1024,
            request_date=request.timestamp,  # as `assay judge run` keeps it, for validate
            sample_meta={"domain": f"d{question % domains}"} if domains else None,
        )
        archive.add(record)
    archive.close()
    logger.finish("success", finished_count=count)
    return {"seconds": time.perf_counter() - started, "output_bytes": output_chars}


def _in_child(*command: str) -> tuple[float, float, str]:
    """Run ``command``; its wall seconds, peak RSS in MB, and standard output."""
    probe = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "dt = time.perf_counter() - t\n"
        "assert p.returncode == 0, p.stderr[-2000:]\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "print(f'{dt} {rss}'); print(p.stdout)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, *command], capture_output=True, text=True, check=True
    )
    head, _, out = done.stdout.partition("\n")
    seconds, rss = head.split()
    return float(seconds), float(rss), out


def _archive_bytes(run_dir: Path) -> tuple[int, int]:
    files = [p for p in run_dir.rglob("*") if p.is_file() and _is_archive(p, run_dir)]
    return sum(p.stat().st_size for p in files), len(files)


def _is_archive(path: Path, run_dir: Path) -> bool:
    top = path.relative_to(run_dir).parts[0]
    return top in ("valid_evaluations", "invalid_evaluations", "archive_blobs.jsonl")


def measure(count: int, layout: str, work: Path) -> dict[str, Any]:
    run_dir = work / f"{layout}-{count}"
    shutil.rmtree(run_dir, ignore_errors=True)
    here = str(Path(__file__).resolve())
    write_s, write_rss, out = _in_child(
        sys.executable, here, "--write", str(run_dir), str(count), layout
    )
    written = json.loads(out.strip().splitlines()[-1])
    size, files = _archive_bytes(run_dir)
    assay = (sys.executable, "-m", "assay", "judge")
    analyze_s, analyze_rss, _ = _in_child(
        *assay, "analyze", str(run_dir), "--no-plots", "--no-report", "--resamples", "200"
    )
    validate_s, validate_rss, _ = _in_child(*assay, "validate", str(run_dir))
    row = {
        "layout": layout,
        "evaluations": count,
        "files": files,
        "archive MB": size / 1e6,
        "bytes/eval beyond output": (size - written["output_bytes"]) / count,
        "write s": write_s,
        "write peak MB": write_rss,
        "analyze s": analyze_s,
        "analyze peak MB": analyze_rss,
        "validate s": validate_s,
        "validate peak MB": validate_rss,
    }
    shutil.rmtree(run_dir, ignore_errors=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--sizes", nargs="+", default=["20000:files", "20000:shards", "100000:shards"]
    )
    parser.add_argument("--work", type=Path, default=None, help="scratch directory")
    parser.add_argument("--write", nargs=3, metavar=("DIR", "N", "LAYOUT"), help=argparse.SUPPRESS)
    parser.add_argument("--domains", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        run_dir, count, layout = Path(args.write[0]), int(args.write[1]), args.write[2]
        print(json.dumps(write_archive(run_dir, count, layout, domains=args.domains)))
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-archive-"))
    rows = []
    for size in args.sizes:
        count, layout = size.split(":")
        rows.append(measure(int(count), layout, work))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        cells = [f"{v:.1f}" if isinstance(v, float) else str(v) for v in row.values()]
        print("| " + " | ".join(cells) + " |")
    load = " ".join(f"{x:.1f}" for x in __import__("os").getloadavg())
    print(f"\nload average {load}")


if __name__ == "__main__":
    main()
