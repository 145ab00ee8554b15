"""Text that is hostile to the layout, not to security, in real headless Chromium: very long
tokens, right-to-left overrides a model never closes, long questions. The page's own labels and
layout must stay as they are, whatever the data holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.report.html import write_report
from tests.report.helpers import bench_run
from tests.report.test_browser import (  # noqa: F401
    browser,
    css,
    open_report,
    shown_count,
    wait_for,
)
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
    run = bench_run(root, records, verifier="learned")
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


# True when the characters of `word` (found in a text node under arguments[0]) run left to right
IN_READING_ORDER = """
const walker = document.createTreeWalker(arguments[0], NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  const at = node.data.indexOf(arguments[1]);
  if (at < 0) continue;
  const left = i => { const r = document.createRange(); r.setStart(node, i);
    r.setEnd(node, i + 1); return r.getBoundingClientRect().left; };
  return left(at) < left(at + arguments[1].length - 1);
}
return null;
"""


@pytest.fixture(scope="module")
def rtl_bench_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rtl_bench")
    records = verify_only_records(2)
    records[0]["answer"] = f"Paris is the capital of France {RLO}and never closed. [cite:p1]"
    run = bench_run(root, records, verifier="learned")
    return write_report(run)


@pytest.fixture(scope="module")
def rtl_judge_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rtl_judge")
    ids = [f"Q{RLO}unclosed", "capitals"]
    questions = [{"question_id": q, "variants": {"A": {"prompt": "Say hi."}}} for q in ids]
    outputs = [
        {"question_id": q, "prompt_variant": "A", "target_model": "stub/t", "output_id": f"o{n}"}
        | {"text": "- Hi there."}
        for n, q in enumerate(ids)
    ]
    write_jsonl(root / "q.jsonl", questions)
    write_jsonl(root / "outputs.jsonl", outputs)
    run = root / "run"
    command = ["judge", "run", "--questions", str(root / "q.jsonl")]
    command += ["--outputs", str(root / "outputs.jsonl"), "--date", "2026-11-24"]
    assert main([*command, "--judge", "stub/j", "--mode", "cross", "--out", str(run)]) == 0
    assert main(["judge", "analyze", str(run), "--resamples", "20", "--no-plots"]) == 0
    return write_report(run)


def test_an_unclosed_right_to_left_override_leaves_the_pages_labels_readable(
    browser: Any,  # noqa: F811
    rtl_bench_report: Path,
) -> None:
    detail = open_first_example(browser, rtl_bench_report)
    label = detail.find_element("css selector", ".text mark sup")
    word = label.get_attribute("textContent").split()[-1]  # the claim's label
    assert browser.execute_script(IN_READING_ORDER, label, word) is True
    claim = detail.find_element("css selector", "ol.claims li")
    assert browser.execute_script(IN_READING_ORDER, claim, "p_supported") is True


def test_an_unclosed_right_to_left_override_in_a_question_id_leaves_the_title_readable(
    browser: Any,  # noqa: F811
    rtl_judge_report: Path,
) -> None:
    open_report(browser, rtl_judge_report)
    rows = css(browser, ".example-set tbody.rows tr")
    next(row for row in rows if "unclosed" in row.get_attribute("textContent")).click()
    title = wait_for(browser, ".detail h3")
    assert "unclosed" in title.get_attribute("textContent")
    assert browser.execute_script(IN_READING_ORDER, title, "judged by") is True
    assert browser.execute_script(IN_READING_ORDER, title, "attempt") is True


def test_the_filter_searches_the_whole_question(
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    records = verify_only_records(3)
    question = "Which city is the capital of France? " * 5 + "Answer with the Merovingian name."
    records[1]["question"] = question
    run = bench_run(tmp_path, records)
    open_report(browser, write_report(run))
    card = css(browser, ".example-set")[0]
    card.find_element("css selector", "input.filter").send_keys("merovingian")
    WebDriverWait(browser, 5).until(lambda d: shown_count(card) == "1 of 3 shown")
    cell = card.find_element("css selector", "tbody.rows tr td:nth-child(2)")
    assert cell.get_attribute("title") == question  # a hover shows it in full


def filtered(card: Any) -> Any:
    return lambda driver: card.get_attribute("data-update-ms")


def test_the_judge_tables_filter_finds_a_question_id(
    browser: Any,  # noqa: F811
    rtl_judge_report: Path,
) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    open_report(browser, rtl_judge_report)
    shown = []
    for card in css(browser, ".example-set"):
        search = card.find_element("css selector", "input.filter")
        assert "question" in search.get_attribute("placeholder")
        # the filter runs once typing pauses, and then stamps its timing on the table
        browser.execute_script("arguments[0].removeAttribute('data-update-ms')", card)
        search.send_keys("capitals")
        WebDriverWait(browser, 5).until(filtered(card))
        shown.append(int(card.find_element("css selector", ".count").text.split()[0]))
    assert sum(shown) == 1  # one question x one judge
