"""Per-judgment latency and tokens of the embedded judge: exact against structure-only decoding.

Three ways of judging the same IFEval GPT-4 outputs (the seeded sample of
benchmarks/real_data.py, whose `prepare` step must have run) with `llamacpp/smollm2`:

- today, structure-only: the starting commit (/work/base, run with PYTHONPATH) with
  `--constrained`, its structure-only schema and its prompt;
- after, structure-only: this tree with `--constrained schema`;
- after, exact: this tree with `--constrained exact` (the default).

Each judgment is one `assay judge run` child process over one output, with the response cache
off and a reply budget of 640 tokens (exact decoding raises its own budget to the longest reply
its schema admits). The three ways alternate output by output, so machine noise hits all alike.
Latency is what the model layer measured for the call (model loading excluded).

    python benchmarks/bench_judge_decoding.py [--n 6] [--base /work/base/src] [--core 1]

`--core N` pins every child to CPU N with one llama.cpp thread (os.cpu_count reported as 1
before assay loads), so the benchmark can run beside other work on a shared machine without
llama.cpp's spinning threads fighting over cores; all three ways run under the same pinning.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = ROOT / "runs" / "bench_judge_decoding"
BUDGET = 640


@dataclass(frozen=True)
class Way:
    key: str
    label: str
    flags: tuple[str, ...]
    base: bool


WAYS = (
    Way("today-schema", "today: structure-only", ("--constrained",), True),
    Way("after-schema", "after: structure-only", ("--constrained", "schema"), False),
    Way("after-exact", "after: exact", ("--constrained", "exact"), False),
)


def _for_the_starting_commit(line: str) -> str:
    """A question or manifest line without the fields the starting commit's models forbid: an
    empty ``meta`` and the manifest's ``prompt_hash`` (which only lets `generate` and `judge run`
    refuse an output of an edited prompt; the benchmark's prompts are the imported ones)."""
    data = json.loads(line)
    if data.get("meta", 0) is None:
        del data["meta"]
    data.pop("prompt_hash", None)
    return json.dumps(data, ensure_ascii=False)


def one_output_inputs(sample_dir: Path, index: int, target: Path) -> tuple[Path, Path]:
    """Questions and manifest files holding only the index-th output of the sample."""
    line = (sample_dir / "manifest.jsonl").read_text(encoding="utf-8").splitlines()[index]
    question_id = json.loads(line)["question_id"]
    questions = [
        q
        for q in (sample_dir / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        if q.strip() and json.loads(q)["question_id"] == question_id
    ]
    target.mkdir(parents=True, exist_ok=True)
    line, questions = (
        _for_the_starting_commit(line),
        [_for_the_starting_commit(q) for q in questions],
    )
    (target / "manifest.jsonl").write_text(line + "\n", encoding="utf-8")
    (target / "questions.jsonl").write_text("\n".join(questions) + "\n", encoding="utf-8")
    return target / "questions.jsonl", target / "manifest.jsonl"


#: Runs ``python -m assay ARGS`` with os.cpu_count() == 1, so llama.cpp uses one thread.
ONE_THREAD = (
    "import os, runpy, sys; os.cpu_count = lambda: 1; sys.argv = ['assay', *sys.argv[1:]]; "
    "runpy.run_module('assay', run_name='__main__')"
)


def judge_once(way: Way, questions: Path, manifest: Path, base_src: str, core: int | None) -> None:
    env = dict(os.environ)
    if way.base:
        env["PYTHONPATH"] = base_src
    else:
        env["PYTHONPATH"] = str(ROOT / "src")
    python = [sys.executable, "-m", "assay"]
    if core is not None:
        python = ["taskset", "-c", str(core), sys.executable, "-c", ONE_THREAD]
    command = [
        *python, "judge", "run", "--questions", str(questions),
        "--outputs", str(manifest), "--judge", "llamacpp/smollm2", *way.flags,
        "--judge-max-tokens", str(BUDGET), "--no-cache", "--timeout", "1800",
        "--max-attempts", "1", "--out", str(OUT / way.key),
    ]  # fmt: skip
    subprocess.run(command, check=True, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)


def archived(way: Way) -> list[dict[str, Any]]:
    """The records of one way's run directory, read as plain JSON (both layouts' fields)."""
    records = []
    for archive in ("valid_evaluations", "invalid_evaluations"):
        for path in sorted((OUT / way.key / archive).rglob("*.json")):
            records.append(json.loads(path.read_text(encoding="utf-8")))
    for path in sorted((OUT / way.key).rglob("*.jsonl")):
        records += [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
    return [r for r in records if r.get("call") is not None]


def row(way: Way) -> str:
    records = archived(way)
    latencies = [r["call"]["latency_s"] for r in records]
    tokens = [r["call"]["completion_tokens"] for r in records]
    valid = sum(1 for r in records if r["valid"])
    cut = sum(1 for r in records if r["call"]["finish_reason"] == "length")
    if not records:
        return f"| {way.label} | 0 | | | | | |"
    return (
        f"| {way.label} | {len(records)} | {valid} | {cut} "
        f"| {statistics.median(latencies):.1f} | {statistics.mean(latencies):.1f} "
        f"| {statistics.median(tokens):.0f} | {statistics.mean(tokens):.0f} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=6, help="outputs judged by each way")
    parser.add_argument("--base", default="/work/base/src", help="src/ of the starting commit")
    parser.add_argument("--core", type=int, help="pin the judge processes to this CPU")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    import real_data

    real_data.write_ifeval_sample(real_data.JUDGE_N)
    sample_dir = real_data.ifeval_sample_dir(real_data.JUDGE_N)
    for index in range(args.n):
        questions, manifest = one_output_inputs(sample_dir, index, OUT / "inputs" / str(index))
        for way in WAYS:
            judge_once(way, questions, manifest, args.base, args.core)
            print(f"output {index + 1}/{args.n}: {way.label} done", file=sys.stderr, flush=True)
    print(
        f"Embedded judge llamacpp/smollm2 on the first {args.n} outputs of the seeded IFEval "
        f"GPT-4 sample, one judgment each, reply budget {BUDGET} tokens"
        f"{'' if args.core is None else f', pinned to CPU {args.core} with one thread'}.\n"
    )
    print(
        "| way | judgments | valid | cut by the budget | median s | mean s "
        "| median tokens | mean tokens |\n|---|---|---|---|---|---|---|---|"
    )
    for way in WAYS:
        print(row(way))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
