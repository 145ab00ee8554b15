"""The report shows what the ``learned`` checker matched: each claim's evidence window, the
features that decided it and the claim's words the evidence lacks, in real headless Chromium."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.report.html import write_report
from tests.report.test_browser import browser, open_report, wait_for  # noqa: F401
from tests.verify.bench_fixtures import verify_only_records, write_jsonl

pytestmark = pytest.mark.browser


def test_an_opened_claim_shows_its_window_and_deciding_features(
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    records = verify_only_records(3)
    records[0]["answer"] = "Paris, the capital of France, was founded by Venetian sailors."
    data = write_jsonl(tmp_path / "data.jsonl", records)
    run = tmp_path / "run"
    args = ["bench", "run", "--data", str(data), "--pattern", "entailment", "--out_dir", str(run)]
    flags = ["--generator", "stub/gen", "--verifier", "learned", "--no-cache", "--no-progress"]
    assert main([*args, *flags, "--n-resamples", "20", "--no-report"]) == 0
    first = json.loads((run / "results.jsonl").read_text().splitlines()[0])
    check = first["claim_checks"][0]
    assert check["evidence_window"] and check["deciding_features"]
    assert "Venetian" in check["missing_words"]  # as the claim writes it, not its stem
    open_report(browser, write_report(run))
    browser.find_element("css selector", ".example-set tbody.rows tr").click()
    detail = wait_for(browser, ".detail .detail-body")
    text = detail.text
    assert "matched window" in text and "deciding features" in text
    assert "not in the evidence" in text and "Venetian" in text
    name = check["deciding_features"][0][0]
    assert name in text
    # each fact apart: a long one (here the deciding features) on a line of its own
    facts = detail.find_elements("css selector", ".claim-facts")[0]
    parts = facts.find_elements("css selector", ".claim-fact")
    labels = [part.find_element("css selector", ".k").text for part in parts]
    assert labels[:3] == ["p_supported", "from", "checker"] and "deciding features" in labels
    long = [part for part in parts if "long" in part.get_attribute("class").split()]
    assert parts[labels.index("deciding features")] in long
    for part in long:
        others = {other.location["y"] for other in parts if other != part}
        assert part.location["y"] not in others, part.text
        assert part.size["width"] >= facts.size["width"] - 1  # the whole line
