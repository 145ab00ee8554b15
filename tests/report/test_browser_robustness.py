"""The report of an instruction-robustness run (real headless Chromium): the headline shares
per target, the paired table, and every output openable beside the baseline's, with each
instruction's verdict and reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from tests.instructions.test_robustness import INPUTS, output, write_jsonl
from tests.report.test_browser import browser, open_report, wait_for  # noqa: F401

pytestmark = pytest.mark.browser


def robustness_run(tmp_path: Path) -> Path:
    """Prompt 1 lost under typos (a comma), everything else followed."""
    inputs = write_jsonl(tmp_path / "input_data.jsonl", INPUTS)
    questions = tmp_path / "questions.jsonl"
    vary = ["instructions", "vary", "--inputs", str(inputs), "--out", str(questions)]
    assert main([*vary, "--variants", "typos"]) == 0
    rows = [
        output(key, variant, "model-a", not (key == 1 and variant == "typos"))
        for key in (1, 2, 3)
        for variant in ("original", "typos")
    ]
    manifest = write_jsonl(tmp_path / "manifest.jsonl", rows)
    run = tmp_path / "robustness"
    argv = ["instructions", "robustness", "--questions", str(questions), "--outputs"]
    assert main([*argv, str(manifest), "--out", str(run)]) == 0
    return run


def test_a_lost_prompt_opens_beside_the_baselines_output_and_verdicts(
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    from selenium.webdriver.support.ui import Select, WebDriverWait

    open_report(browser, robustness_run(tmp_path) / "report.html")
    head = wait_for(browser, ".run-head")
    assert "instruction following under 1 prompt variant(s) of 3 prompts" in head.text
    metrics = {
        m.get_attribute("data-path"): m.text
        for m in head.find_elements("css selector", ".headline-metric")
    }
    assert "1" in metrics["targets[0].baseline_rate"]  # every prompt under the original
    assert "0.6667" in metrics["targets[0].robust_rate"]
    page = browser.find_element("tag name", "body").text
    assert "Each variant against 'original', paired by prompt" in page

    card = wait_for(browser, ".example-set")
    Select(card.find_element("css selector", "select[data-column='change']")).select_by_value(
        "lost"
    )
    WebDriverWait(browser, 10).until(
        lambda d: len(card.find_elements("css selector", "tbody tr")) == 1
    )
    card.find_element("css selector", "tbody tr").click()
    detail = wait_for(browser, ".example-set .detail")
    WebDriverWait(browser, 10).until(lambda d: "The baseline's verdicts" in detail.text)
    assert "ifeval-1 x typos x model-a" in detail.text
    assert "Hi, there." in detail.text  # the output under the variant
    assert "1 commas" in detail.text and "0 commas" in detail.text  # both verdicts' reasons


def test_draws_show_the_noise_table_and_pair_each_output_with_the_baseline_of_its_draw(
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    from selenium.webdriver.support.ui import Select, WebDriverWait

    inputs = write_jsonl(tmp_path / "input_data.jsonl", INPUTS)
    questions = tmp_path / "questions.jsonl"
    vary = ["instructions", "vary", "--inputs", str(inputs), "--out", str(questions)]
    assert main([*vary, "--variants", "typos"]) == 0
    argv = ["instructions", "robustness", "--questions", str(questions), "--draws"]
    for draw in (1, 2):  # prompt 1 follows in draw 1 only, under either prompt
        rows = [
            output(key, variant, "model-a", key != 1 or draw == 1)
            for key in (1, 2, 3)
            for variant in ("original", "typos")
        ]
        (tmp_path / f"d{draw}").mkdir()
        argv += ["--outputs", str(write_jsonl(tmp_path / f"d{draw}" / "m.jsonl", rows))]
    run = tmp_path / "robustness"
    assert main([*argv, "--out", str(run)]) == 0

    open_report(browser, run / "report.html")
    head = wait_for(browser, ".run-head")
    assert "3 prompts, 2 draws of each (6, 6 outputs)" in head.text
    page = browser.find_element("tag name", "body").text
    assert "Draws: how often sampling alone changes a verdict" in page
    shown = [
        img.get_attribute("alt") for img in browser.find_elements("css selector", ".plots img")
    ]
    assert shown == [
        "Each variant against the baseline: change in prompt-level accuracy",
        "Draws: disagreement within a variant and against the baseline",
    ]
    card = wait_for(browser, ".example-set")
    Select(card.find_element("css selector", "select[data-column='draw']")).select_by_value("2")
    Select(
        card.find_element("css selector", "select[data-column='prompt_variant']")
    ).select_by_value("typos")
    WebDriverWait(browser, 10).until(
        lambda d: len(card.find_elements("css selector", "tbody tr")) == 3
    )
    card.find_element("css selector", "tbody tr").click()
    detail = wait_for(browser, ".example-set .detail")
    WebDriverWait(browser, 10).until(lambda d: "The baseline's verdicts" in detail.text)
    assert "ifeval-1 x typos x model-a" in detail.text
    assert "The baseline's prompt (original, draw 2)" in detail.text
