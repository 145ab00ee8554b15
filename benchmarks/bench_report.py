"""HTML report of a large benchmark run: write time, file size, and how fast headless Chromium
opens it, filters, sorts and opens an example.

    .venv/bin/python benchmarks/bench_report.py              # 50,000 examples
    .venv/bin/python benchmarks/bench_report.py --n 5000 --repeat 1
    .venv/bin/python benchmarks/bench_report.py --variants 6    # like assay perturb output
    .venv/bin/python benchmarks/bench_report.py --judge-run DIR  # an existing judge run, e.g.
        # one of 1,000,000 evaluations from bench_archive.py --write DIR 1000000 shards

Targets (issue 6): 50,000 examples open in under 3 s; the file stays under ~30 MB. Issue 12: the
report of a 1M-evaluation run is written in <= 500 MB and opens in <= 3 s. The report is
written by a child process (`assay report`), whose peak RSS is the write's memory.
Needs /usr/bin/chromium and /usr/bin/chromedriver (apt-get install chromium chromium-driver).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _synthetic_runs import make_bench_run

from tests.helpers.browser import start_chromium


def wait(driver: Any, script: str, timeout: float = 60.0) -> Any:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.01)
    raise TimeoutError(script)


def browser_timings(
    driver: Any, report: Path, sort_key: str, word: str, id_key: str
) -> dict[str, float]:
    """Milliseconds: ready (from navigation start, as the page measures it), and the page's own
    timings of a filter, a sort, and opening an example in the first and in the last chunk."""
    started = time.perf_counter()
    driver.get(report.as_uri())
    wait(driver, "return document.documentElement.dataset.ready")
    wall_ms = (time.perf_counter() - started) * 1000
    ready_ms = float(driver.execute_script("return document.documentElement.dataset.readyMs"))
    card = driver.find_element("css selector", ".example-set")
    timings = {"open (page ready)": ready_ms, "open (wall, incl. driver)": wall_ms}
    from selenium.webdriver.common.keys import Keys

    search = card.find_element("css selector", "input.filter")
    timings["filter (text, all rows)"] = _update(driver, lambda: search.send_keys(word))
    erase = lambda: search.send_keys(Keys.CONTROL, "a", Keys.BACKSPACE)  # noqa: E731
    timings["clear the filter"] = _update(driver, erase)
    sort = card.find_element("css selector", f"th[data-key={sort_key}] button")
    timings[f"sort ({sort_key}, all rows)"] = _update(driver, sort.click)
    timings["open an example"] = _open_row(driver, card)
    card.find_element("css selector", f"th[data-key={id_key}] button").click()
    card.find_element("css selector", f"th[data-key={id_key}] button").click()  # last chunk
    timings["open an example (last chunk)"] = _open_row(driver, card)
    return timings


_UPDATE_MS = "return document.querySelector('.example-set').dataset.updateMs"


def _update(driver: Any, action: Any) -> float:
    driver.execute_script("delete document.querySelector('.example-set').dataset.updateMs")
    action()
    return float(wait(driver, _UPDATE_MS))


def _open_row(driver: Any, card: Any) -> float:
    driver.execute_script("const d = document.querySelector('.detail'); if (d) d.remove()")
    card.find_element("css selector", "tbody.rows tr").click()
    script = "const d = document.querySelector('.detail'); return d && d.dataset.openMs"
    return float(wait(driver, script))


def write_in_child(run_dir: Path, source: Path | None = None) -> tuple[float, float, Path]:
    """``assay report RUN`` in a fresh child process: seconds, the child's peak RSS in MB, and
    the report. ``source``: run that checkout's ``src`` instead (the code before a change)."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = str(source)
    out = run_dir / ("report-before.html" if source is not None else "report.html")
    code = (
        "import resource, sys; from pathlib import Path; "
        "from assay.report.html import write_report; "
        "write_report(Path(sys.argv[1]), out=Path(sys.argv[2])); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    started = time.perf_counter()
    command = [sys.executable, "-c", code, str(run_dir), str(out)]
    done = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - started
    return seconds, int(done.stdout.split()[-1]) / 1024, out


def measure(
    report: Path, repeat: int, sort_key: str, word: str, id_key: str
) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as profile:
        driver = start_chromium(profile)
        try:
            for _ in range(repeat):
                for key, value in browser_timings(driver, report, sort_key, word, id_key).items():
                    samples.setdefault(key, []).append(value)
        finally:
            driver.quit()
    return samples


def text_cut(html: str) -> str:
    """Where the report cut the long texts of opened examples (``truncated_to`` is null when it
    kept them whole)."""
    cap = re.search(r'"truncated_to":(null|\d+)', html)
    if cap is None:
        return "long texts: not recorded"
    if cap.group(1) == "null":
        return "long texts not cut"
    return f"long texts cut at {cap.group(1)} characters"


def print_report(
    report: Path, write_s: float, peak_mb: float, samples: dict[str, list[float]], repeat: int
) -> None:
    text = report.read_text(encoding="utf-8")
    sampled = re.search(r"[\d,]+ of [\d,]+ [\w ]+ shown: [^.]*\.", text)
    print(f"write_report: {write_s:.1f} s, child process peak RSS {peak_mb:.0f} MB")
    print(f"report.html: {report.stat().st_size / 1e6:.1f} MB; {text_cut(text)}")
    print(f"sampling: {sampled.group(0) if sampled else 'none (every item shown)'}\n")
    print(f"| step (median of {repeat}) | ms |")
    print("|---|---:|")
    for key, values in samples.items():
        print(f"| {key} | {statistics.median(values):.0f} |")


def run(n: int, repeat: int, variants: int, before: Path | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        started = time.perf_counter()
        make_bench_run(run_dir, n, variants=variants)
        make_s = time.perf_counter() - started
        if before is not None:
            before_s, before_mb, _ = write_in_child(run_dir, before)
            print(f"before ({before}): write_report {before_s:.1f} s, peak RSS {before_mb:.0f} MB")
        write_s, peak_mb, report = write_in_child(run_dir)
        results_mb = (run_dir / "results.jsonl").stat().st_size / 1e6
        samples = measure(report, repeat, "p_error", "museum", "id")
        shared = f", {variants} answers per record" if variants > 1 else ", every example unique"
        made = f"results.jsonl {results_mb:.1f} MB (made in {make_s:.1f} s)"
        print(f"examples: {n:,}{shared}; {made}")
        print_report(report, write_s, peak_mb, samples, repeat)


def run_judge(run_dir: Path, repeat: int, before: Path | None) -> None:
    if before is not None:
        before_s, before_mb, _ = write_in_child(run_dir, before)
        print(f"before ({before}): write_report {before_s:.1f} s, peak RSS {before_mb:.0f} MB")
    write_s, peak_mb, report = write_in_child(run_dir)
    samples = measure(report, repeat, "overall_score", "PASS", "output_id")
    print(f"judge run: {run_dir}")
    print_report(report, write_s, peak_mb, samples, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50_000, help="examples (default 50,000)")
    parser.add_argument("--repeat", type=int, default=3, help="browser runs (default 3)")
    parser.add_argument(
        "--variants",
        type=int,
        default=1,
        help="answers per source record sharing its texts, as assay perturb makes 6 (default 1)",
    )
    parser.add_argument("--judge-run", type=Path, help="report on this judge run instead")
    parser.add_argument(
        "--before", type=Path, help="also write the report with this src (e.g. /work/base/src)"
    )
    args = parser.parse_args()
    if args.judge_run is not None:
        run_judge(args.judge_run, args.repeat, args.before)
    else:
        run(args.n, args.repeat, args.variants, args.before)


if __name__ == "__main__":
    main()
