"""Client CPU per judged sample: `assay judge run` beside a bare AsyncOpenAI loop and inspect_ai.

One loopback OpenAI-compatible stub (its own process, `--serve PORT`) answers every chat request at
once with a judgment that is valid under assay's judge protocol *for that sample*: it reads the
identifiers and the fenced output from the prompt and answers with
`assay.judge.stub_replies.clean_reply` (meta copied, scores summed, verdict from the thresholds,
quotes taken from the output), so every assay evaluation is archived valid on the first attempt.

Each client runs in a fresh child process; its CPU is the child's user+sys time from `os.wait4`.
From it we subtract the CPU of a start of the same tool that does no work (the tool's imports)
and divide by the number of samples:

- `assay judge run` (response cache off, the default `--constrained exact` and also `off`),
  the run archive written as usual; with `--base SRC` also the starting commit's code;
- a bare AsyncOpenAI loop: the same messages (recorded by the stub from the first assay run),
  the same concurrency, `json.loads` of each reply;
- inspect_ai `eval()` through its `openai-api` provider on the same messages and concurrency,
  with a trivial scorer (1 if the reply parses as a JSON object with a "verdict", else 0),
  display off, its eval log written as usual. It runs in a separate interpreter (`--inspect-python`,
  a venv with inspect_ai and openai); without one the row is skipped with the reason.

    python benchmarks/bench_client_cpu.py [--samples 2000] [--base /work/base/src]
        [--inspect-python /tmp/venv-inspect/bin/python] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_startup import write_judge_inputs  # noqa: E402

# --- the stub server ---------------------------------------------------------------------------


def _judgment_text(request: dict[str, Any], rng: random.Random) -> str:
    from assay.judge.stub_replies import clean_reply
    from assay.model import ChatMessage, GenerateConfig

    messages = [ChatMessage(role=m["role"], content=m["content"]) for m in request["messages"]]
    return clean_reply(messages, GenerateConfig(), rng)


def _http_response(content: str) -> bytes:
    body = json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 0,
            "model": "fixed",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
        }
    ).encode()
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}"
    return head.encode() + b"\r\n\r\n" + body


async def _serve(port: int, record: Path | None) -> None:
    rng = random.Random(0)
    models = _http_response("")  # any 200 JSON does for a GET /models probe

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = await reader.readexactly(length) if length else b""
                if head.startswith(b"GET") or not body:
                    writer.write(models)
                else:
                    request = json.loads(body)
                    if record is not None:
                        with record.open("a") as log:
                            log.write(json.dumps(request["messages"]) + "\n")
                    writer.write(_http_response(_judgment_text(request, rng)))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


# --- measuring one child ---------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def child_cpu(
    command: list[str], env: dict[str, str], log: Path, ok_one: bool = True
) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user+sys) of one fresh child process."""
    started = time.perf_counter()
    with log.open("w") as out:
        child = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if child.returncode not in (0, 1) or (
        not ok_one and child.returncode
    ):  # 1: assay's "some evaluations invalid" is still a run
        raise SystemExit(f"{' '.join(command[:4])} ... failed:\n{log.read_text()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def startup_cpu(command: list[str], env: dict[str, str], log: Path, repeats: int) -> float:
    """The least CPU of `repeats` starts that do no work (the tool's imports only)."""
    return min(child_cpu(command, env, log, ok_one=False)[1] for _ in range(repeats))


# --- the clients ------------------------------------------------------------------------------

BARE_LOOP = textwrap.dedent(
    """
    import asyncio, json, sys
    from openai import AsyncOpenAI

    async def main(path, base_url, concurrency):
        prompts = [json.loads(line) for line in open(path)]
        client = AsyncOpenAI(base_url=base_url, api_key="sk-bench")
        gate = asyncio.Semaphore(concurrency)
        async def one(messages):
            async with gate:
                reply = await client.chat.completions.create(
                    model="fixed", messages=messages, temperature=0.0, max_tokens=1024, seed=0
                )
            return json.loads(reply.choices[0].message.content)
        parsed = await asyncio.gather(*(one(m) for m in prompts))
        assert all(isinstance(p, dict) and "verdict" in p for p in parsed)
        await client.close()

    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
    """
)

INSPECT_TASK = textwrap.dedent(
    """
    import json, sys
    from inspect_ai import Task, eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser
    from inspect_ai.scorer import Score, Target, accuracy, scorer
    from inspect_ai.solver import TaskState, generate

    KINDS = {"system": ChatMessageSystem, "user": ChatMessageUser}

    @scorer(metrics=[accuracy()])
    def parses_as_judgment():
        # Trivial on purpose: 1 if the reply is a JSON object with a verdict, else 0.
        async def score(state: TaskState, target: Target) -> Score:
            try:
                body = json.loads(state.output.completion)
            except ValueError:
                return Score(value=0)
            return Score(value=int(isinstance(body, dict) and "verdict" in body))
        return score

    path, base_url, concurrency, log_dir = sys.argv[1:5]
    samples = [
        Sample(input=[KINDS[m["role"]](content=m["content"]) for m in json.loads(line)], id=i)
        for i, line in enumerate(open(path))
    ]
    task = Task(dataset=MemoryDataset(samples), solver=generate(), scorer=parses_as_judgment())
    logs = eval(
        task, model="openai-api/stub/fixed", model_base_url=base_url,
        max_connections=int(concurrency), max_tokens=1024,
        temperature=0.0, seed=0, log_dir=log_dir, display="none",
    )
    assert logs[0].status == "success", logs[0].status
    print("accuracy", logs[0].results.scores[0].metrics["accuracy"].value)
    """
)


def assay_command(
    inputs: tuple[Path, Path], out: Path, base_url: str, args: Any, decoding: list[str]
) -> list[str]:
    questions, manifest = inputs
    return [
        sys.executable, "-m", "assay", "judge", "run", "--questions", str(questions),
        "--outputs", str(manifest), "--judge", "openai/fixed", "--mode", "cross",
        "--out", str(out), "--base-url", base_url, "--no-cache",
        "--concurrency", str(args.concurrency), *decoding,
    ]  # fmt: skip


# The starting commit's --constrained was on/off (on: a structure-only schema); the user's default
# of each tree is the first row, free text the second.
DECODING = {
    "this tree": (["--constrained", "exact"], ["--constrained", "off"]),
    "starting commit": ([], ["--no-constrained"]),
    "before": (["--constrained", "exact"], ["--constrained", "off"]),
}


def count_valid(log: Path) -> str:
    """The run's own summary line ("... N valid, M invalid")."""
    found = re.findall(r"(\d+ valid, \d+ invalid)", log.read_text())
    return found[-1] if found else "no summary line"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--base", type=Path, help="the starting commit's src/ (row 'today')")
    parser.add_argument("--before", type=Path, help="src/ of an earlier commit with this CLI")
    parser.add_argument("--inspect-python", type=Path, help="python of a venv with inspect_ai")
    parser.add_argument("--startup-repeats", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="keep the scratch files in this directory")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--record", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:
        asyncio.run(_serve(args.serve, args.record))
        return 0
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        return run_all(args.keep, args)
    with tempfile.TemporaryDirectory() as scratch:
        return run_all(Path(scratch), args)


def run_all(scratch: Path, args: Any) -> int:
    port, record = free_port(), scratch / "prompts.jsonl"
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), "--record", str(record)]
    )
    time.sleep(1.0)
    base_url = f"http://127.0.0.1:{port}/v1"
    rows: list[tuple[str, float, float, float, str]] = []
    try:
        rows = measure_all(scratch, base_url, record, args)
    finally:
        server.terminate()
        server.wait()
    print_table(rows, args.samples)
    return 0


def measure_all(
    scratch: Path, base_url: str, record: Path, args: Any
) -> list[tuple[str, float, float, float, str]]:
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench", "STUB_API_KEY": "sk-bench"}
    env.pop("PYTHONPATH", None)
    inputs = write_judge_inputs(scratch, args.samples)
    rows = []
    assay_idle = [sys.executable, "-m", "assay", "judge", "run", "--help"]
    trees: list[tuple[str, dict[str, str]]] = [("assay (this tree)", env)]
    if args.base is not None:
        trees.insert(0, ("assay (starting commit)", {**env, "PYTHONPATH": str(args.base)}))
    if args.before is not None:
        trees.insert(-1, ("assay (before)", {**env, "PYTHONPATH": str(args.before)}))
    first = True
    for mode in (0, 1):
        for name, tree_env in trees:
            tree = name.split("(")[1][:-1]
            decoding = DECODING[tree][mode]
            tag = f"{tree.replace(' ', '-')}-{mode}"
            idle = startup_cpu(assay_idle, tree_env, scratch / "idle.log", args.startup_repeats)
            out = scratch / f"run-{tag}"
            wall, cpu = child_cpu(
                assay_command(inputs, out, base_url, args, decoding),
                tree_env,
                scratch / f"{tag}.log",
            )
            if first:  # the stub has now seen every prompt once: the other clients replay them
                record.rename(scratch / "replay.jsonl")
                first = False
            label = " ".join(decoding) or "default (--constrained)"
            rows.append((f"{name}, {label}", wall, cpu, idle, count_valid(scratch / f"{tag}.log")))
    replay = scratch / "replay.jsonl"
    (scratch / "bare.py").write_text(BARE_LOOP)
    idle = startup_cpu([sys.executable, "-c", "import openai"], env, scratch / "idle.log", 3)
    wall, cpu = child_cpu(
        [sys.executable, str(scratch / "bare.py"), str(replay), base_url, str(args.concurrency)],
        env,
        scratch / "bare.log",
    )
    rows.append(("bare AsyncOpenAI loop", wall, cpu, idle, "all parsed"))
    rows.append(inspect_row(scratch, base_url, replay, env, args))
    return rows


def inspect_row(
    scratch: Path, base_url: str, replay: Path, env: dict[str, str], args: Any
) -> tuple[str, float, float, float, str]:
    python = args.inspect_python
    if python is None or not python.exists():
        return ("inspect_ai eval()", 0.0, 0.0, 0.0, f"skipped: no --inspect-python ({python})")
    probe = subprocess.run(
        [str(python), "-c", "import inspect_ai"], capture_output=True, check=False
    )
    if probe.returncode != 0:
        return ("inspect_ai eval()", 0.0, 0.0, 0.0, f"skipped: {python} has no inspect_ai")
    (scratch / "inspect_task.py").write_text(INSPECT_TASK)
    idle = startup_cpu(
        [
            str(python),
            "-c",
            "import inspect_ai, inspect_ai.model, openai; from inspect_ai import eval",
        ],
        env,
        scratch / "idle.log",
        args.startup_repeats,
    )
    command = [
        str(python), str(scratch / "inspect_task.py"), str(replay), base_url,
        str(args.concurrency), str(scratch / "inspect-logs"),
    ]  # fmt: skip
    wall, cpu = child_cpu(command, env, scratch / "inspect.log")
    scored = (scratch / "inspect.log").read_text().strip().splitlines()[-1][:60]
    return ("inspect_ai eval()", wall, cpu, idle, f"scorer {scored}")


def print_table(rows: list[tuple[str, float, float, float, str]], samples: int) -> None:
    per_sample = {name: (cpu - idle) * 1000 / samples for name, _, cpu, idle, _ in rows if cpu}
    bare = per_sample.get("bare AsyncOpenAI loop") or float("nan")
    print(
        "| tool | samples | wall s | CPU s | start-up CPU s | CPU ms/sample (net) "
        "| ratio to bare loop | replies |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, wall, cpu, idle, note in rows:
        if not cpu:
            print(f"| {name} | - | - | - | - | - | - | {note} |")
            continue
        ms = per_sample[name]
        print(
            f"| {name} | {samples} | {wall:.2f} | {cpu:.2f} | {idle:.2f} | {ms:.2f} "
            f"| {ms / bare:.1f}x | {note} |"
        )


if __name__ == "__main__":
    raise SystemExit(main())
