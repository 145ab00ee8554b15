"""Opening examples in quick succession (real headless Chromium): the example opened last is
the one shown and the one the address links to, whichever example's data arrived last."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.report.html import ReportOptions, write_report
from tests.report.helpers import bench_run
from tests.report.test_browser import browser, open_report, wait_for  # noqa: F401
from tests.verify.bench_fixtures import verify_only_records

pytestmark = pytest.mark.browser

# Two rows per gzip chunk: an example's data is decoded (asynchronously) when first opened.
CHUNKED = ReportOptions(gzip_above_bytes=0, chunk_rows_gzip=2)

OPEN_TWO = """
const rows = [...document.querySelectorAll(".example-set tbody tr")];
const byRow = r => rows.find(tr => Number(tr.dataset.row) === r);
byRow(arguments[0]).click();  // its chunk is not decoded yet: it arrives late
byRow(arguments[1]).click();  // decoded already: it arrives first
"""


def test_the_last_example_opened_is_shown_and_linked(
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    run = bench_run(tmp_path, verify_only_records(12))
    open_report(browser, write_report(run, options=CHUNKED))
    wait_for(browser, ".example-set tbody tr").click()  # row 0: chunk 0 is decoded
    WebDriverWait(browser, 10).until(lambda d: "#open=" in d.current_url)
    late, last = 10, 1
    browser.execute_script(OPEN_TWO, late, last)
    WebDriverWait(browser, 10).until(
        lambda d: d.execute_script(
            "const b = document.querySelector('.example-set .detail');"
            "return b && b.dataset.openMs !== undefined"
        )
    )
    browser.execute_script("return new Promise(done => setTimeout(done, 500))")  # both settle
    detail = browser.find_element("css selector", ".example-set .detail")
    assert detail.get_attribute("data-row") == str(last)
    assert browser.current_url.endswith(f"/{last}"), browser.current_url
