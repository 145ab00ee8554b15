"""`assay merge` of judge-run shards beside `assay judge analyze` of the merged run.

Writes a question set of N questions x 2 variants, generates every output with two stub
targets, and judges them with a stub judge in N shards (`judge run --shard K/N`, untimed
set-up, real archives). Then times `assay merge` of the shards (every record read and
checked, then copied as stored into one archive, repeated texts stored once) beside `assay
judge analyze` of the merged run (what one reads it for next), and with ``--before REV`` the
merge of that revision, alternating, each a child process (peak MB: its maximum RSS).

    python benchmarks/bench_judge_merge.py --questions 2000 --shards 4 --before 5967458
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO_SRC := Path(__file__).resolve().parents[1] / "src"))

from _git_source import env_on, print_timing_table, source_at, timed_assay

TARGETS = ["--model", "stub/a", "--model", "stub/b"]


def _assay(*arguments: str) -> None:
    command = [sys.executable, "-m", "assay", *arguments]
    subprocess.run(command, check=True, capture_output=True, env=env_on(REPO_SRC))


def write_questions(path: Path, count: int) -> Path:
    lines = [
        {
            "question_id": f"q{i:06d}",
            "variants": {
                variant: {"prompt": f"Question {i} ({variant}): list two facts about {i}."}
                for variant in ("plain", "terse")
            },
        }
        for i in range(count)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def judge_shards(work: Path, questions: Path, count: int) -> list[Path]:
    """Each shard generated and judged on its own, as N machines would."""
    shards = []
    for index in range(1, count + 1):
        shard = ("--shard", f"{index}/{count}")
        outputs, run = work / f"outputs{index}", work / f"judged{index}"
        _assay("generate", "--questions", str(questions), *TARGETS, "--out", str(outputs), *shard)
        _assay(
            "judge", "run", "--questions", str(questions), "--outputs", str(outputs),
            "--judge", "stub/j", "--out", str(run), "--date", "2026-11-26", *shard,
        )  # fmt: skip
        shards.append(run)
    return shards


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=2000, help="questions (2,000)")
    parser.add_argument("--shards", type=int, default=4, help="shards (4)")
    parser.add_argument("--repeat", type=int, default=2, help="alternating runs of each (2)")
    parser.add_argument("--before", help="also time the merge of this revision (its src)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-judge-merge-") as scratch:
        work = Path(scratch)
        questions = write_questions(work / "questions.jsonl", args.questions)
        shards = [str(shard) for shard in judge_shards(work, questions, args.shards)]
        merged, earlier = work / "merged", work / "merged-before"
        cases = {
            f"assay merge ({args.shards} shards)": (
                ["merge", *shards, "--out", str(merged)],
                REPO_SRC,
            ),
            "judge analyze (the merged run)": (
                ["judge", "analyze", str(merged), "--no-report"],
                REPO_SRC,
            ),
        }
        if args.before:
            source = source_at(args.before, work / "before")
            merge = ["merge", *shards, "--out", str(earlier)]
            cases = {f"assay merge at {args.before}": (merge, source), **cases}
        times: dict[str, list[float]] = {name: [] for name in cases}
        peaks: dict[str, float] = dict.fromkeys(times, 0.0)
        evaluations = 0
        for _ in range(args.repeat):
            shutil.rmtree(merged, ignore_errors=True)
            shutil.rmtree(earlier, ignore_errors=True)
            for name, (arguments, code) in cases.items():
                seconds, peak = timed_assay(arguments, code)
                times[name].append(seconds)
                peaks[name] = max(peaks[name], peak)
                print(f"{name}: {seconds:.1f} s, {peak:.0f} MB", file=sys.stderr, flush=True)
            summary = json.loads((merged / "summary.json").read_text(encoding="utf-8"))
            evaluations = int(summary["counts"]["records"])
    print_timing_table(f"{evaluations:,} evaluations", times, peaks)


if __name__ == "__main__":
    main()
