"""The HTML report in real headless Chromium: the numbers shown are summary.json's, filtering,
sorting and opening work, hostile model output runs nothing, and the page looks right."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.report._html_common import at_path, format_number
from assay.report.html import ReportOptions, write_comparison, write_report
from tests.helpers.browser import CHROMEDRIVER, CHROMIUM, start_chromium
from tests.report.conftest import PAYLOAD

INSTALL = "install it with: apt-get update && apt-get install -y chromium chromium-driver"

pytestmark = pytest.mark.browser


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.fail(f"headless Chromium is required and {', '.join(missing)} is missing; {INSTALL}")
    with tempfile.TemporaryDirectory(prefix="assay-chromium-") as profile:
        driver = start_chromium(profile, browser_log=True)
        try:
            yield driver
        finally:
            driver.quit()


def open_report(driver: Any, path: Path) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(path.as_uri())
    state = WebDriverWait(driver, 20).until(
        lambda d: d.execute_script("return document.documentElement.dataset.ready")
    )
    assert state == "true", driver.find_element("id", "app").text
    problems = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not problems, problems  # a CSP violation or a script error would show here
    fetched = driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    assert all(name.startswith("data:") for name in fetched), fetched  # no network at all


def css(driver: Any, selector: str) -> list[Any]:
    return list(driver.find_elements("css selector", selector))


def shown_count(card: Any) -> str:
    return str(card.find_element("css selector", ".count").text)


def detail_title(driver: Any) -> str:
    return str(driver.find_element("css selector", ".detail h3").text)


def wait_for(driver: Any, selector: str) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, 10).until(lambda d: css(d, selector) and css(d, selector)[0])


@pytest.fixture(scope="module")
def bench_report(bench_run: Path) -> Path:
    return write_report(bench_run)


@pytest.fixture(scope="module")
def judge_report(judge_run: Path) -> Path:
    return write_report(judge_run)


def expected_metric_text(summary: dict[str, Any], path: str) -> str:
    text = format_number(at_path(summary, path))
    parent = at_path(summary, path.rsplit(".", 1)[0]) if path.endswith(".value") else None
    if isinstance(parent, dict) and parent.get("low") is not None:
        text += f" [{format_number(parent['low'])}, {format_number(parent['high'])}]"
    return text


def test_bench_numbers_shown_equal_summary_json(browser: Any, bench_report: Path) -> None:
    summary = json.loads((bench_report.parent / "summary.json").read_text())
    run = json.loads((bench_report.parent / "run.json").read_text())
    open_report(browser, bench_report)
    rows = css(browser, "table.metrics tr[data-path]")
    assert len(rows) >= 20
    for row in rows:
        path = row.get_attribute("data-path")
        shown = row.find_element("css selector", ".metric-value").text
        assert shown == expected_metric_text(summary, path), path
    bucket_card = next(c for c in css(browser, ".table-card") if "Failure buckets" in c.text)
    for tr in bucket_card.find_elements("css selector", "tbody tr"):
        cells = [td.text for td in tr.find_elements("css selector", "td")]
        stats = summary["buckets"][cells[0]]
        fields = ("examples", "scored", "flagged", "passed", "unscored", "mean_p_error")
        assert cells[1:] == [format_number(stats[f]) for f in (*fields, "flag_rate")]
    browser.find_element("css selector", ".run-head details.reproducibility summary").click()
    assert run["fingerprint"] in browser.find_element("css selector", ".run-head").text


def test_judge_numbers_shown_equal_summary_json(browser: Any, judge_report: Path) -> None:
    summary = json.loads((judge_report.parent / "summary.json").read_text())
    open_report(browser, judge_report)
    for row in css(browser, "table.metrics tr[data-path]"):
        path = row.get_attribute("data-path")
        shown = row.find_element("css selector", ".metric-value").text
        assert shown == format_number(at_path(summary, path)), path
    scores = next(c for c in css(browser, ".table-card") if "Scores per target" in c.text)
    header = [th.text for th in scores.find_elements("css selector", "thead th")]
    body = [
        [td.text for td in tr.find_elements("css selector", "td")]
        for tr in scores.find_elements("css selector", "tbody tr")
    ]
    for score in summary["scores"]:
        key = [score[k] for k in ("method", "judge_model", "target_model", "prompt_variant")]
        row = next(r for r in body if r[:4] == key)
        mean, low, high = (format_number(score[k]) for k in ("mean", "ci_low", "ci_high"))
        assert row[header.index(score["dimension"])] == f"{mean} [{low}, {high}]"
    invalid = next(c for c in css(browser, ".example-set") if "Invalid evaluations" in c.text)
    expected = f"{summary['counts']['invalid']} of {summary['counts']['invalid']} shown"
    if summary["counts"]["records"] == summary["counts"]["work_items"]:  # one attempt each
        assert shown_count(invalid) == expected


def test_filter_sort_and_open_an_example(browser: Any, bench_report: Path) -> None:
    from selenium.webdriver.support.ui import Select

    results = [json.loads(x) for x in (bench_report.parent / "results.jsonl").open()]
    open_report(browser, bench_report)
    card = css(browser, ".example-set")[0]
    total = len(results)
    assert shown_count(card) == f"{total} of {total} shown"
    Select(card.find_element("css selector", "select[data-column=bucket]")).select_by_value(
        "wrong_citation"
    )
    wrong = sum(r["failure_bucket"] == "wrong_citation" for r in results)
    assert shown_count(card) == f"{wrong} of {total} shown"
    Select(card.find_element("css selector", "select[data-column=bucket]")).select_by_value("")
    p_error = card.find_element("css selector", "th[data-key=p_error] button")
    p_error.click()
    first = card.find_element("css selector", "tbody.rows tr td:nth-child(7)").text
    assert first == format_number(min(r["verifier_score"] for r in results))
    search = card.find_element("css selector", "input.filter")
    search.send_keys("hostile")
    browser.implicitly_wait(0)
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 5).until(lambda d: shown_count(card) == f"1 of {total} shown")
    card.find_element("css selector", "tbody.rows tr").click()
    detail = wait_for(browser, ".detail .detail-body")
    assert browser.find_element("css selector", ".detail h3").text == "hostile::payload"
    assert detail.find_elements("css selector", ".text mark")
    chip = detail.find_element("css selector", ".claim .chip")
    chip.click()
    flashed = detail.find_elements("css selector", ".evidence .ev.flash")
    assert flashed and chip.text in flashed[0].text


def test_hostile_output_shows_as_text_and_runs_nothing(
    browser: Any, bench_report: Path, judge_report: Path
) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    open_report(browser, bench_report)
    card = css(browser, ".example-set")[0]
    card.find_element("css selector", "input.filter").send_keys("hostile")
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 5).until(lambda d: "1 of" in shown_count(card))
    card.find_element("css selector", "tbody.rows tr").click()
    detail = wait_for(browser, ".detail .detail-body")
    assert "<script>window.__pwned = 'script'</script>" in detail.text
    assert "javascript:window.__pwned='source'" in detail.text  # the source, as plain text
    evidence = detail.find_element("css selector", ".evidence .ev").text
    assert "Evidence text <script>window.__pwned" in evidence  # a shared text, put back
    meta = detail.find_element("css selector", ".evidence .ev .ev-details").text
    assert meta == f"meta: score 0.42 · note {PAYLOAD}".strip()  # the meta, as plain text
    _assert_inert(browser)

    open_report(browser, judge_report)
    valid_or_invalid = css(browser, ".example-set")
    opened = False
    for example_set in valid_or_invalid:  # every row is on the first page
        for tr in example_set.find_elements("css selector", "tbody.rows tr"):
            if "/Q1/" in tr.text:
                tr.click()
                opened = True
                break
        if opened:
            break
    assert opened
    body = wait_for(browser, ".detail .detail-body")
    assert "<img src=x onerror=" in body.text
    folded = body.find_element("css selector", "details.section")
    assert folded.get_attribute("open") is None and "Prompt sent" in folded.text
    _assert_inert(browser)
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018


def _assert_inert(driver: Any) -> None:
    assert driver.execute_script("return typeof window.__pwned") == "undefined"
    sources = [img.get_attribute("src") for img in css(driver, "img")]
    assert all(s.startswith("data:image/png;base64,") for s in sources)
    links = [a.get_attribute("href") for a in css(driver, "a[href]")]
    assert all(h.startswith(("http://", "https://")) for h in links), links
    assert not [s for s in css(driver, "script") if "__pwned" in (s.get_attribute("src") or "")]


def test_gzip_chunks_decode_in_the_browser(browser: Any, bench_run: Path, tmp_path: Path) -> None:
    options = ReportOptions(gzip_above_bytes=0, chunk_rows_gzip=16)
    path = write_report(bench_run, out=tmp_path / "gzip.html", options=options)
    open_report(browser, path)
    card = css(browser, ".example-set")[0]
    rows = card.find_elements("css selector", "tbody.rows tr")
    rows[20].click()  # in the second chunk
    detail = wait_for(browser, ".detail .detail-body")
    assert (
        rows[20].find_element("css selector", "td").text
        in browser.find_element("css selector", ".detail h3").text
    )
    cards = detail.find_elements("css selector", ".evidence .ev .text")
    assert cards and all(len(card.text) > 40 for card in cards)  # shared texts put back


def test_comparison_puts_runs_side_by_side(
    browser: Any, bench_run: Path, best_of_n_run: Path, tmp_path: Path
) -> None:
    path = write_comparison([bench_run, best_of_n_run], tmp_path / "compare.html")
    open_report(browser, path)
    assert len(css(browser, ".runs-grid > .run-head")) == 2
    header = [th.text for th in css(browser, ".comparison thead th")]
    assert header == ["metric", "run", "run (2)"]
    tabs = css(browser, ".tabs button")
    tabs[1].click()
    assert tabs[1].get_attribute("aria-selected") == "true"
    card = css(browser, ".run-slot .example-set")[0]
    total = sum(1 for _ in (best_of_n_run / "results.jsonl").open())
    assert shown_count(card) == f"{total} of {total} shown"


def test_screenshots(
    browser: Any, bench_report: Path, judge_report: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    shots = tmp_path_factory.mktemp("screenshots")
    open_report(browser, bench_report)
    assert browser.save_screenshot(str(shots / "bench_top.png"))
    css(browser, ".example-set tbody.rows tr")[1].click()
    detail = wait_for(browser, ".detail .detail-body")
    browser.execute_script("arguments[0].scrollIntoView()", detail)
    assert browser.save_screenshot(str(shots / "bench_example.png"))
    open_report(browser, judge_report)
    assert browser.save_screenshot(str(shots / "judge_top.png"))
    for name in ("bench_top", "bench_example", "judge_top"):
        assert (shots / f"{name}.png").stat().st_size > 10_000


def test_examples_across_runs_filter_disagreements(
    browser: Any, bench_run: Path, critique_run: Path, tmp_path: Path
) -> None:
    from selenium.webdriver.support.ui import Select

    path = write_comparison([bench_run, critique_run], tmp_path / "across.html")
    open_report(browser, path)
    card = next(c for c in css(browser, ".example-set") if "Examples across runs" in c.text)
    tables = [
        {r["id"]: r["verifier_pass"] for r in map(json.loads, (run / "results.jsonl").open())}
        for run in (bench_run, critique_run)
    ]
    ids = list(tables[0])
    disagree = sum(1 for i in ids if {tables[0][i], tables[1][i]} == {True, False})
    select = card.find_element("css selector", "select[data-column=agreement]")
    if disagree == 0:
        assert "disagree" not in select.text
        return
    Select(select).select_by_value("disagree")
    assert shown_count(card) == f"{disagree} of {len(ids)} shown"
    card.find_element("css selector", "tbody.rows tr").click()
    detail = wait_for(browser, ".detail .detail-body")
    titles = [h.text for h in detail.find_elements("css selector", "h3")]
    assert "run: selected answer" in titles and "run (2): selected answer" in titles


def test_a_run_of_another_kind_still_opens(browser: Any, tmp_path: Path) -> None:
    from assay.cli import main

    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question_id": "Q1", "variants": {"A": {"prompt": "Hi"}}}))
    out = tmp_path / "outputs"
    assert (
        main(["generate", "--questions", str(questions), "--model", "stub/a", "--out", str(out)])
        == 0
    )
    open_report(browser, write_report(out))
    browser.find_element("css selector", ".run-head details.reproducibility summary").click()
    head = browser.find_element("css selector", ".run-head").text
    assert "generate" in head and "success" in head


def test_step_through_the_filtered_examples(browser: Any, bench_report: Path) -> None:
    from selenium.webdriver.support.ui import Select, WebDriverWait

    results = [json.loads(x) for x in (bench_report.parent / "results.jsonl").open()]
    missed = [r["id"] for r in results if r["gold_error"] and r["verifier_pass"]]
    assert len(missed) >= 2, "the lexical checker is expected to miss some injected errors"
    open_report(browser, bench_report)
    card = css(browser, ".example-set")[0]
    Select(card.find_element("css selector", "select[data-column=outcome]")).select_by_value(
        "missed error (FN)"
    )
    card.find_element("css selector", "tbody.rows tr").click()
    wait_for(browser, ".detail .detail-body")
    assert detail_title(browser) == missed[0]
    assert browser.find_element("css selector", ".prev-example").get_attribute("disabled")
    browser.find_element("css selector", ".next-example").click()
    WebDriverWait(browser, 5).until(lambda d: detail_title(d) == missed[1])
    nav = browser.find_element("css selector", ".detail .nav").text
    assert f"2 of {len(missed)}" in nav


def test_an_opened_example_has_a_link_that_reopens_it(browser: Any, bench_report: Path) -> None:
    open_report(browser, bench_report)
    css(browser, ".example-set tbody.rows tr")[3].click()
    wait_for(browser, ".detail .detail-body")
    title = browser.find_element("css selector", ".detail h3").text
    link = browser.current_url
    assert link.endswith("#open=0-0/3")
    browser.get("about:blank")
    browser.get(link)  # a fresh load of the page, with the link's fragment
    wait_for(browser, ".detail .detail-body")
    assert browser.find_element("css selector", ".detail h3").text == title
    browser.find_element("css selector", ".detail .close").click()
    assert "#open=" not in browser.current_url  # closed: the address links to no example


def test_the_keyboard_opens_an_example_and_follows_a_claim_to_its_evidence(
    browser: Any, bench_report: Path
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    open_report(browser, bench_report)
    row = css(browser, ".example-set tbody.rows tr")[0]
    browser.execute_script("arguments[0].focus()", row)
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    detail = wait_for(browser, ".detail .detail-body")
    claim = detail.find_element("css selector", ".text mark[tabindex='0']")
    browser.execute_script("arguments[0].focus()", claim)
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    assert detail.find_elements("css selector", ".evidence .ev.flash")
