"""Start-up time and footprint of the `assay` command (benchmarks/README.md).

Side by side in one run, for this tree and (with `--base SRC`) another checkout's `src`:

- `python -c pass`: the interpreter alone, the floor;
- `assay --help`;
- a 1-sample judge run against a loopback server (benchmarks/fixed_reply_server.py, which
  answers at once; its reply is not a valid judgment, so the sample is archived invalid after
  its re-asks, the same work for both trees), wall time of the whole process;
- peak memory (max RSS) of a `--samples`-sample judge run against the same server.

Each timing is the median of `--repeats` fresh processes; every judge run has its own run
directory and response cache.

    python benchmarks/bench_startup.py [--base /work/base/src] [--samples 2000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def write_judge_inputs(directory: Path, samples: int) -> tuple[Path, Path]:
    questions, manifest = directory / "questions.jsonl", directory / "manifest.jsonl"
    with questions.open("w") as q, manifest.open("w") as m:
        for i in range(samples):
            variant = {"prompt": f"Explain topic {i} in three bullet points.", "constraints": []}
            q.write(
                json.dumps(
                    {"question_id": f"Q{i}", "intent": "explain", "variants": {"v": variant}}
                )
                + "\n"
            )
            text = f"- point one about {i}\n- point two\n- point three"
            m.write(
                json.dumps(
                    {
                        "question_id": f"Q{i}",
                        "prompt_variant": "v",
                        "target_model": "target",
                        "output_id": f"o{i}",
                        "text": text,
                    }
                )
                + "\n"
            )
    return questions, manifest


def timed_run(command: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Wall seconds and max RSS (KiB) of one process, via GNU time."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        started = time.perf_counter()
        done = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", report.name, *command],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        seconds = time.perf_counter() - started
        if done.returncode not in (0, 1):  # 1: invalid evaluations are not a failure here
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-1500:]}")
        return seconds, int(report.read().split()[-1])


def judge_command(questions: Path, manifest: Path, out: Path, base_url: str) -> list[str]:
    return [
        sys.executable, "-m", "assay", "judge", "run", "--questions", str(questions),
        "--outputs", str(manifest), "--judge", "openai/fixed", "--mode", "cross",
        "--out", str(out), "--base-url", base_url,
    ]  # fmt: skip


def measure(
    src: Path | None, base_url: str, scratch: Path, args: argparse.Namespace
) -> dict[str, float]:
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench"}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    tag = "base" if src is not None else "tree"
    (scratch / f"one-{tag}").mkdir()
    (scratch / f"many-{tag}").mkdir()
    one = write_judge_inputs(scratch / f"one-{tag}", 1)
    many = write_judge_inputs(scratch / f"many-{tag}", args.samples)
    pass_s, help_s, judge_s = [], [], []
    for i in range(args.repeats):
        pass_s.append(timed_run([sys.executable, "-c", "pass"], env)[0])
        help_s.append(timed_run([sys.executable, "-m", "assay", "--help"], env)[0])
        run_env = {**env, "ASSAY_CACHE_DIR": str(scratch / f"cache-one-{tag}-{i}")}
        judge_s.append(
            timed_run(judge_command(*one, scratch / f"run-one-{tag}-{i}", base_url), run_env)[0]
        )
    many_env = {**env, "ASSAY_CACHE_DIR": str(scratch / f"cache-many-{tag}")}
    many_s, many_kib = timed_run(
        judge_command(*many, scratch / f"run-many-{tag}", base_url), many_env
    )
    return {
        "python -c pass (s)": statistics.median(pass_s),
        "assay --help (s)": statistics.median(help_s),
        "1-sample judge run (s)": statistics.median(judge_s),
        f"{args.samples}-sample judge run (s)": many_s,
        f"{args.samples}-sample judge run peak RSS (MB)": many_kib / 1024,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="another checkout's src/")
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    port = free_port()
    server = subprocess.Popen([sys.executable, str(HERE / "fixed_reply_server.py"), str(port)])
    time.sleep(0.5)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            base_url = f"http://127.0.0.1:{port}/v1"
            columns = [("this tree", measure(None, base_url, Path(scratch), args))]
            if args.base is not None:
                columns.insert(
                    0, ("starting commit", measure(args.base, base_url, Path(scratch), args))
                )
    finally:
        server.terminate()
    names = list(columns[-1][1])
    print("| measure | " + " | ".join(name for name, _ in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for name in names:
        print(f"| {name} | " + " | ".join(f"{values[name]:.2f}" for _, values in columns) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
