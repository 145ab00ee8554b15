"""A whole `assay judge run` at scale: wall time and peak memory at two sizes, side by side
with another checkout (benchmarks/README.md, "Flat memory, a whole judge run").

The judge is `openai/fixed` on a loopback stub (benchmarks/bench_client_cpu.py's server, its
own process) that answers each request at once with a judgment valid for that sample, so
every evaluation is archived valid on the first attempt. The inputs have the archive
benchmark's shape: questions x 5 prompt variants x 20 target models, one manifest line per
output. Each run is a fresh child process (response cache off, the default `--constrained
exact`, sharded archive); its peak memory is the child's maximum RSS (`os.wait4`).

    python benchmarks/bench_judge_run.py --sizes 100000 1000000 [--before OTHER/src]
        [--before-up-to 100000] [--src THIS/src] [--work DIR]

Target (issue 12): peak memory at 1M samples <= 1.5x that at 100k.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_client_cpu import free_port  # noqa: E402

VARIANTS = 5
TARGETS = 20
WORDS = [
    "the",
    "cache",
    "keeps",
    "recent",
    "answers",
    "and",
    "evicts",
    "the",
    "oldest",
    "entry",
    "when",
    "it",
    "is",
    "full",
]


def output_text(index: int) -> str:
    """Three short bullet points, different per output (the judge quotes them)."""
    lines = [" ".join(WORDS[(index + i * 7 + j) % len(WORDS)] for j in range(9)) for i in range(3)]
    return "\n".join(f"- {line} ({index}.{n})" for n, line in enumerate(lines))


def write_inputs(directory: Path, samples: int) -> tuple[Path, Path]:
    questions, manifest = directory / "questions.jsonl", directory / "manifest.jsonl"
    count = -(-samples // (VARIANTS * TARGETS))
    written = 0
    with questions.open("w") as q_out, manifest.open("w") as m_out:
        for i in range(count):
            variants = {
                f"v{v}": {"prompt": f"Explain topic {i} in three bullet points ({v}).",
                          "constraints": ["three bullet points"]}
                for v in range(VARIANTS)
            }  # fmt: skip
            q_out.write(json.dumps({"question_id": f"Q{i}", "intent": "explain",
                                    "variants": variants}) + "\n")  # fmt: skip
            for t in range(TARGETS):
                for v in range(VARIANTS):
                    if written == samples:
                        continue
                    line = {"question_id": f"Q{i}", "prompt_variant": f"v{v}",
                            "target_model": f"target-{t}", "output_id": f"o{written}",
                            "text": output_text(written)}  # fmt: skip
                    m_out.write(json.dumps(line) + "\n")
                    written += 1
    return questions, manifest


def judge_run(
    inputs: tuple[Path, Path], out: Path, base_url: str, env: dict[str, str], log: Path
) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of one `assay judge run` child."""
    questions, manifest = inputs
    command = [
        sys.executable, "-m", "assay", "judge", "run", "--questions", str(questions),
        "--outputs", str(manifest), "--judge", "openai/fixed", "--mode", "cross",
        "--out", str(out), "--base-url", base_url, "--no-cache", "--concurrency", "8",
    ]  # fmt: skip
    started = time.perf_counter()
    with log.open("w") as sink:
        child = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"judge run failed:\n{log.read_text()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--before", type=Path, help="another checkout's src/, run first")
    parser.add_argument(
        "--before-up-to", type=int, help="run --before only at sizes up to this (default: all)"
    )
    parser.add_argument("--src", type=Path, help="this tree's src/ (default: the installed one)")
    parser.add_argument("--work", type=Path, help="scratch directory (default: a temporary one)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=args.work) as scratch:
        return measure(Path(scratch), args)


def measure(scratch: Path, args: argparse.Namespace) -> int:
    port = free_port()
    server = subprocess.Popen([sys.executable, str(HERE / "bench_client_cpu.py"), "--serve",
                               str(port)])  # fmt: skip
    time.sleep(1.0)
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench"}
    env.pop("PYTHONPATH", None)
    trees = [("this tree", env if args.src is None else {**env, "PYTHONPATH": str(args.src)})]
    if args.before is not None:
        trees.insert(0, ("before", {**env, "PYTHONPATH": str(args.before)}))
    rows = []
    try:
        for size in args.sizes:
            inputs_dir = scratch / f"inputs-{size}"
            inputs_dir.mkdir()
            inputs = write_inputs(inputs_dir, size)
            for name, tree_env in trees:
                if name == "before" and size > (args.before_up_to or size):
                    continue
                tag = f"{name.replace(' ', '-')}-{size}"
                wall, cpu, peak = judge_run(
                    inputs, scratch / f"run-{tag}", f"http://127.0.0.1:{port}/v1", tree_env,
                    scratch / f"{tag}.log",
                )  # fmt: skip
                summary = (scratch / f"{tag}.log").read_text().strip().splitlines()
                valid = next((line for line in summary if " valid, " in line), "?")
                rows.append((name, size, wall, cpu, peak, valid.split(": ")[-1]))
                print(f"{name} {size}: {wall:.1f} s, peak {peak:.1f} MB", file=sys.stderr)
                shutil_rmtree(scratch / f"run-{tag}")
    finally:
        server.terminate()
        server.wait()
    print_table(rows)
    return 0


def shutil_rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def print_table(rows: list[tuple[str, int, float, float, float, str]]) -> None:
    print("| tree | samples | wall s | CPU s | CPU ms/sample | peak MB | judged |")
    print("|---|---|---|---|---|---|---|")
    for name, size, wall, cpu, peak, valid in rows:
        print(f"| {name} | {size:,} | {wall:.1f} | {cpu:.1f} | {1000 * cpu / size:.2f} | "
              f"{peak:.1f} | {valid} |")  # fmt: skip
    for name in dict.fromkeys(row[0] for row in rows):
        peaks = [(row[1], row[4]) for row in rows if row[0] == name]
        if len(peaks) >= 2:
            (small, low), (large, high) = peaks[0], peaks[-1]
            print(f"\n{name}: peak at {large:,} / at {small:,} = {high / low:.2f}x")


if __name__ == "__main__":
    raise SystemExit(main())
