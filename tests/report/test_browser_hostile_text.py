"""Text that is hostile to the layout, not to security, in real headless Chromium: very long
tokens, right-to-left overrides a model never closes, long questions. The page's own labels and
layout must stay as they are, whatever the data holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.report.html import write_report
from tests.report.test_browser import browser, css, open_report, wait_for  # noqa: F401
from tests.verify.bench_fixtures import FRANCE, verify_only_records, write_jsonl

pytestmark = pytest.mark.browser

LONG_TOKEN = "x" * 4000
RLO = "\u202e"  # right-to-left override; a text that never closes it reverses what follows


@pytest.fixture(scope="module")
def hostile_bench_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile_text")
    records = verify_only_records(3)
    records[0]["answer"] = f"Paris is the capital of France {LONG_TOKEN}. [cite:p1]"
    records[0]["evidence"] = [{**FRANCE[0], "title": LONG_TOKEN}, FRANCE[1]]
    data = write_jsonl(root / "data.jsonl", records)
    run = root / "run"
    args = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(run)]
    flags = ["--verifier", "learned", "--no-cache", "--no-progress", "--n-resamples", "20"]
    assert main([*args, *flags, "--no-report"]) == 0
    return write_report(run)


def open_first_example(driver: Any, report: Path) -> Any:
    open_report(driver, report)
    css(driver, ".example-set tbody.rows tr")[0].click()
    return wait_for(driver, ".detail .detail-body")


def test_a_long_token_wraps_inside_the_opened_example(
    browser: Any,  # noqa: F811
    hostile_bench_report: Path,
) -> None:
    detail = open_first_example(browser, hostile_bench_report)
    assert LONG_TOKEN[:100] in detail.text
    widths = browser.execute_script(
        "const d = document.querySelector('.detail');"
        "return [d.scrollWidth, d.clientWidth,"
        " document.documentElement.scrollWidth, window.innerWidth];"
    )
    assert widths[0] <= widths[1] and widths[2] <= widths[3], widths
