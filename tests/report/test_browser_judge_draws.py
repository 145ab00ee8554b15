"""The report of a directory of judge draw runs (real headless Chromium): the cross-judged
overall score per target x variant over the draws, the tables of the draws together, and the
plot of each draw's own mean."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from tests.judge.test_draws import judged_draws  # noqa: F401
from tests.judge.test_draws_agreement import write_labels
from tests.report.test_browser import browser, open_report, wait_for  # noqa: F401

pytestmark = pytest.mark.browser


def test_the_draws_report_shows_the_scores_over_draws_and_the_noise_table(
    browser: Any,  # noqa: F811
    judged_draws: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    labels = tmp_path / "labels"  # the draws judged other outputs: a labels file per draw
    for k in (1, 2):
        write_labels(labels / f"labels-draw-{k}.jsonl")
    agreement = ["judge", "agreement", str(judged_draws), "--labels", str(labels)]
    assert main([*agreement, "--resamples", "50"]) == 0
    assert main(["report", str(judged_draws)]) == 0
    open_report(browser, judged_draws / "report.html")
    head = wait_for(browser, ".run-head")
    assert "2 draws of the target outputs, each judged under protocol fingerprint" in head.text
    summary = json.loads((judged_draws / "summary.json").read_text())
    metrics = {
        m.get_attribute("data-path"): m.text
        for m in head.find_elements("css selector", ".headline-metric")
    }
    overall = [
        (i, row) for i, row in enumerate(summary["scores"]) if row["dimension"] == "overall_score"
    ]
    assert set(metrics) == {f"scores[{i}].mean" for i, _ in overall}
    for i, row in overall:
        assert f"{row['mean']:.4g}"[:3] in metrics[f"scores[{i}].mean"]
    page = browser.find_element("tag name", "body").text
    assert "Mean scores over draws" in page and "Draw noise against the variant's effect" in page
    assert "within-question SD" in page and "p (permutation)" in page
    assert "Agreement with labels over the draws" in page and "median's gain" in page
    images = browser.find_elements("css selector", "img")
    assert any("draw" in (img.get_attribute("alt") or "").lower() for img in images)
