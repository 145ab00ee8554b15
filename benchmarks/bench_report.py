"""HTML report of a large benchmark run: write time, file size, and how fast headless Chromium
opens it, filters, sorts and opens an example.

    .venv/bin/python benchmarks/bench_report.py              # 50,000 examples
    .venv/bin/python benchmarks/bench_report.py --n 5000 --repeat 1
    .venv/bin/python benchmarks/bench_report.py --variants 6    # like assay perturb output

Targets (issue 6): 50,000 examples open in under 3 s; the file stays under ~30 MB.
Needs /usr/bin/chromium and /usr/bin/chromedriver (apt-get install chromium chromium-driver).
"""

from __future__ import annotations

import argparse
import re
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _synthetic_runs import make_bench_run

from assay.report.html import write_report
from tests.helpers.browser import start_chromium


def wait(driver: Any, script: str, timeout: float = 60.0) -> Any:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.01)
    raise TimeoutError(script)


def browser_timings(driver: Any, report: Path) -> dict[str, float]:
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
    timings["filter (text, all rows)"] = _update(driver, lambda: search.send_keys("museum"))
    erase = lambda: search.send_keys(Keys.CONTROL, "a", Keys.BACKSPACE)  # noqa: E731
    timings["clear the filter"] = _update(driver, erase)
    sort = card.find_element("css selector", "th[data-key=p_error] button")
    timings["sort (p_error, all rows)"] = _update(driver, sort.click)
    timings["open an example"] = _open_row(driver, card)
    card.find_element("css selector", "th[data-key=id] button").click()
    card.find_element("css selector", "th[data-key=id] button").click()  # descending: last chunk
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


def run(n: int, repeat: int, variants: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        started = time.perf_counter()
        make_bench_run(run_dir, n, variants=variants)
        make_s = time.perf_counter() - started
        started = time.perf_counter()
        report = write_report(run_dir)
        write_s = time.perf_counter() - started
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        size_mb = report.stat().st_size / 1e6
        cap = re.search(r'"truncated_to":(null|\d+)', report.read_text(encoding="utf-8"))
        results_mb = (run_dir / "results.jsonl").stat().st_size / 1e6
        samples: dict[str, list[float]] = {}
        with tempfile.TemporaryDirectory() as profile:
            driver = start_chromium(profile)
            try:
                for _ in range(repeat):
                    for key, value in browser_timings(driver, report).items():
                        samples.setdefault(key, []).append(value)
            finally:
                driver.quit()
    shared = f", {variants} answers per record" if variants > 1 else ", every example unique"
    print(f"examples: {n:,}{shared}; results.jsonl {results_mb:.1f} MB (made in {make_s:.1f} s)")
    print(f"write_report: {write_s:.1f} s, process peak RSS {peak_mb:.0f} MB")
    cut = cap.group(1) if cap else "?"
    print(f"report.html: {size_mb:.1f} MB; long texts cut at {cut} characters", end="")
    print(" (3x that for question, answer, claims)\n" if cut.isdigit() else "\n")
    print(f"| step (median of {repeat}) | ms |")
    print("|---|---:|")
    for key, values in samples.items():
        print(f"| {key} | {statistics.median(values):.0f} |")


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
    args = parser.parse_args()
    run(args.n, args.repeat, args.variants)


if __name__ == "__main__":
    main()
