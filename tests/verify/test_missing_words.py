"""summary.json's ``missing_words``: the claim words the ``learned`` checker found nowhere,
counted over the answers it flagged, false alarms apart from caught errors, and the report's
table of them."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from assay.cli import main
from assay.report.html import ReportOptions, build_report
from assay.verify.results import iter_results
from assay.verify.summary import build_summary
from assay.verify.summary_parts import MISSING_WORDS_LISTED, MissingWordsTally

from ..conftest import REPO_ROOT
from .bench_fixtures import tally_in_batches

EXAMPLES = REPO_ROOT / "examples" / "grounded_qa_labelled.jsonl"


@pytest.fixture(scope="module")
def learned_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("missing") / "run"
    args = ["bench", "run", "--data", str(EXAMPLES), "--pattern", "entailment"]
    flags = ["--verifier", "learned", "--no-cache", "--no-progress", "--n-resamples", "20"]
    assert main([*args, *flags, "--out_dir", str(run)]) == 0
    return run


def _expected(run: Path, error: bool) -> tuple[int, Counter[str]]:
    """Flagged answers with gold ``error`` and, per word, how many of them miss it: counted
    here from results.jsonl, apart from the summary's tally."""
    answers, words = 0, Counter[str]()
    for result in iter_results(run / "results.jsonl"):
        if result.verifier_pass is False and result.gold_error is error:
            answers += 1
            words.update({w.lower() for c in result.claim_checks for w in c.missing_words})
    return answers, words


def test_the_summary_counts_missing_words_in_false_alarms_and_caught_errors(
    learned_run: Path,
) -> None:
    stats = json.loads((learned_run / "summary.json").read_text())["missing_words"]
    for key, error in (("false_alarms", False), ("caught_errors", True)):
        answers, words = _expected(learned_run, error)
        assert stats[key] == answers > 0
        listed = dict(stats[f"in_{key}"])
        assert len(listed) == min(MISSING_WORDS_LISTED, len(words))
        assert all(words[word] == n for word, n in listed.items())
        assert min(listed.values()) >= max(
            (n for w, n in words.items() if w not in listed), default=0
        )  # the most frequent are the ones listed


def test_a_tally_merged_in_batches_counts_the_same(learned_run: Path) -> None:
    results = list(iter_results(learned_run / "results.jsonl"))
    whole = build_summary(learned_run, results=results, plots=False, n_resamples=20)
    for size in (1, 4, 9):
        merged = tally_in_batches(results, size)
        summary = build_summary(learned_run, plots=False, n_resamples=20, tally=merged)
        assert summary.missing_words == whole.missing_words


def test_the_count_is_bounded_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.verify import summary_parts

    monkeypatch.setattr(summary_parts, "MISSING_WORDS_KEPT", 2)
    tally = MissingWordsTally(reported=True)
    tally._count(tally.in_false_alarms, {"a": 1, "b": 1})
    tally._count(tally.in_false_alarms, {"a": 1, "c": 1})
    assert tally.in_false_alarms == {"a": 2, "b": 1} and tally.capped
    stats = tally.stats()
    assert stats is not None and stats.capped


def test_no_missing_words_without_a_checker_that_keeps_them(tmp_path: Path) -> None:
    run = tmp_path / "run"
    args = ["bench", "run", "--data", str(EXAMPLES), "--pattern", "entailment"]
    flags = ["--verifier", "lexical", "--no-cache", "--no-progress", "--no-report"]
    assert main([*args, *flags, "--n-resamples", "20", "--out_dir", str(run)]) == 0
    assert json.loads((run / "summary.json").read_text())["missing_words"] is None


def test_the_report_shows_the_words_side_by_side(learned_run: Path) -> None:
    stats = json.loads((learned_run / "summary.json").read_text())["missing_words"]
    payload, _ = build_report([learned_run], ReportOptions())
    table = next(t for t in payload.runs[0].tables if t.title.startswith("Claim words not found"))
    assert len(table.rows) == max(len(stats["in_false_alarms"]), len(stats["in_caught_errors"]))
    assert [tuple(r[:2]) for r in table.rows[: len(stats["in_false_alarms"])]] == [
        tuple(pair) for pair in stats["in_false_alarms"]
    ]
    assert [tuple(r[2:]) for r in table.rows] == [tuple(p) for p in stats["in_caught_errors"]]
    assert f"{stats['false_alarms']} grounded answers flagged" in (table.note or "")
