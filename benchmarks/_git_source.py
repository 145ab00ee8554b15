"""This repository's ``src`` as it was at a revision, for benchmarks that run an earlier
version beside this tree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def source_at(revision: str, into: Path) -> Path:
    """``src`` at ``revision`` (``git archive``), unpacked under ``into`` (made if missing);
    returns its path."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", revision, "src"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def env_on(source: Path) -> dict[str, str]:
    """This process's environment with ``PYTHONPATH`` on ``source``: a child runs that code."""
    return {**os.environ, "PYTHONPATH": str(source)}


def write_judge_run(run_dir: Path, count: int, *, domains: int = 0) -> None:
    """A judge run of ``count`` evaluations as ``bench_archive.py`` writes one, in a child on
    this tree's code (``domains``: each question's samples with ``meta.domain``)."""
    writer = [sys.executable, str(Path(__file__).with_name("bench_archive.py")), "--write"]
    writer += [str(run_dir), str(count), "shards", "--domains", str(domains)]
    subprocess.run(writer, check=True, capture_output=True, env=env_on(REPO / "src"))


def timed_assay(arguments: list[str], source: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of ``python -m assay ARGUMENTS`` run on ``source``'s
    code, in a child of its own so that the peak is the command's alone."""
    command = [sys.executable, "-c", _PROBE, sys.executable, "-m", "assay", *arguments]
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=env_on(source))
    seconds, peak = done.stdout.split()
    return float(seconds), float(peak)


# runs the command as its own child and prints its wall time and maximum RSS
_PROBE = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "assert p.returncode == 0, p.stderr[-2000:]\n"
    "dt = time.perf_counter() - t\n"
    "print(dt, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)\n"
)


def print_timing_table(title: str, times: dict[str, list[float]], peaks: dict[str, float]) -> None:
    """Each version's wall times of alternating runs, its best and its peak RSS, as markdown,
    then the machine's load average (noise the ratios share)."""
    runs = max(len(t) for t in times.values())
    header = " | ".join(f"run {k + 1}" for k in range(runs))
    print(f"\n| {title} | {header} | best | peak MB |")
    print("|---|" + "---|" * (runs + 2))
    for name, taken in times.items():
        cells = " | ".join(f"{s:.1f} s" for s in taken)
        print(f"| {name} | {cells} | {min(taken):.1f} s | {peaks[name]:.0f} |")
    print(f"\nload average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
