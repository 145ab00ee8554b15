"""Throughput and memory of assay's model layer against a bare AsyncOpenAI loop.

Both clients talk to the same loopback server (benchmarks/fixed_reply_server.py, its own
process) that answers at once with a fixed reply, so the numbers measure client overhead.
Each measurement runs in a fresh child process (peak RSS = ru_maxrss of that child); the
modes alternate within one run so that machine noise hits both alike.

    python benchmarks/bench_model_layer.py [--requests 2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONCURRENCIES = (1, 16, 64)
# Untimed requests first: the SDK builds its response models and the pool its connections on
# first use, in both clients alike; the table measures steady-state throughput.
WARM_UP = 50


async def bare_loop(base_url: str, requests: int, concurrency: int) -> float:
    import openai

    client = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0)
    semaphore = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with semaphore:
            response = await client.chat.completions.create(
                model="fixed",
                messages=[{"role": "user", "content": f"q{i}"}],
                max_tokens=8,
                temperature=0.0,
                seed=0,
            )
            assert response.choices[0].message.content == "fixed reply"

    await asyncio.gather(*(one(-i) for i in range(1, WARM_UP + 1)))
    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(requests)))
    elapsed = time.perf_counter() - started
    await client.close()
    return requests / elapsed


async def assay_loop(
    base_url: str, requests: int, concurrency: int, cache_path: str | None
) -> float:
    from assay.model import Completion, GenerateConfig, ModelOptions, get_model, user

    options = ModelOptions(
        base_url=base_url,
        max_concurrency=concurrency,
        cache=cache_path is not None,
        cache_path=Path(cache_path) if cache_path else None,
    )
    model = get_model("openai/fixed", options)
    config = GenerateConfig(max_tokens=8)

    async def one(i: int) -> None:
        result = await model.generate([user(f"q{i}")], config)
        assert isinstance(result, Completion), result

    await asyncio.gather(*(one(-i) for i in range(1, WARM_UP + 1)))
    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(requests)))
    elapsed = time.perf_counter() - started
    await model.aclose()
    return requests / elapsed


def child(mode: str, base_url: str, requests: int, concurrency: int, cache: str) -> None:
    cache_path = cache or None
    if mode == "bare":
        rate = asyncio.run(bare_loop(base_url, requests, concurrency))
    else:
        rate = asyncio.run(assay_loop(base_url, requests, concurrency, cache_path))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"rate": rate, "peak_mb": peak_mb}))


def measure(
    mode: str, base_url: str, requests: int, concurrency: int, cache: str = ""
) -> dict[str, float]:
    command = [
        sys.executable,
        __file__,
        "--child",
        mode,
        base_url,
        str(requests),
        str(concurrency),
        cache,
    ]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    result: dict[str, float] = json.loads(output.strip().splitlines()[-1])
    return result


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    sys.path.insert(0, str(HERE.parent))
    from tests.helpers.servers import free_port, wait_until_ready

    port = free_port()
    process = subprocess.Popen([sys.executable, str(HERE / "fixed_reply_server.py"), str(port)])
    base_url = f"http://127.0.0.1:{port}/v1"
    wait_until_ready(f"{base_url}/models", process, 20)
    return process, base_url


THROUGHPUT_HEADER = [
    "| concurrency | bare AsyncOpenAI req/s | assay req/s (no cache) | ratio "
    "| assay req/s (cache writes) | ratio | peak MB bare / assay |",
    "|---:|---:|---:|---:|---:|---:|---:|",
]


def throughput_row(base_url: str, requests: int, repeats: int, concurrency: int) -> str:
    samples: dict[str, list[dict[str, float]]] = {"bare": [], "assay": [], "cached": []}
    for repeat in range(repeats):  # interleaved, order rotated: noise hits every mode alike
        for mode in _rotated(tuple(samples), repeat):
            with tempfile.TemporaryDirectory() as tmp:
                cache = f"{tmp}/cache.sqlite" if mode == "cached" else ""
                kind = "bare" if mode == "bare" else "assay"
                samples[mode].append(measure(kind, base_url, requests, concurrency, cache))
    bare, plain, cached = (statistics.median(m["rate"] for m in samples[k]) for k in samples)
    peak_bare = max(m["peak_mb"] for m in samples["bare"])
    peak_assay = max(m["peak_mb"] for m in samples["assay"])
    return (
        f"| {concurrency} | {bare:,.0f} | {plain:,.0f} | {plain / bare:.2f}x "
        f"| {cached:,.0f} | {cached / bare:.2f}x | {peak_bare:.0f} / {peak_assay:.0f} |"
    )


def throughput_table(base_url: str, requests: int, repeats: int) -> list[str]:
    rows = [throughput_row(base_url, requests, repeats, c) for c in CONCURRENCIES]
    return THROUGHPUT_HEADER + rows


def _rotated(modes: tuple[str, ...], shift: int) -> list[str]:
    shift %= len(modes)
    return list(modes[shift:] + modes[:shift])


def replay_table(base_url: str, calls: int) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        cache = f"{tmp}/cache.sqlite"
        measure("assay", base_url, calls, 64, cache)  # fill the cache
        started = time.perf_counter()
        replay = measure("assay", base_url, calls, 64, cache)
        wall = time.perf_counter() - started
    in_loop = calls / replay["rate"]
    return [
        "| cached replay | calls | in-loop s | wall s (with process start) | peak MB |",
        "|---|---:|---:|---:|---:|",
        f"| assay, cache only | {calls:,} | {in_loop:.2f} | {wall:.2f} | {replay['peak_mb']:.0f} |",
    ]


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _, _, mode, base_url, requests, concurrency, cache = sys.argv
        child(mode, base_url, int(requests), int(concurrency), cache)
        return
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--replay-calls", type=int, default=10_000)
    args = parser.parse_args()
    server, base_url = start_server()
    try:
        print("\n".join(throughput_table(base_url, args.requests, args.repeats)))
        print()
        print("\n".join(replay_table(base_url, args.replay_calls)))
    finally:
        server.terminate()


if __name__ == "__main__":
    main()
