"""The three patterns verify the same labelled answer by three different mechanisms (issue 13):
best_of_n one answer-level verdict, entailment claim checks, self_consistency a critique
against sampled answers; the model claim splitter; compare's "identical by construction"."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.metrics.grounding import citation_coverage, citation_precision, supported_claim_rate
from assay.model import ChatMessage, Completion, GenerateConfig, ModelOptions, get_model
from assay.model.providers.stub import TASK_TAG, StubBackend
from assay.verify.benchmark import BenchmarkConfig, run_benchmark
from assay.verify.checkers.answer_level import SinglePassAnswerVerifier
from assay.verify.checkers.single_pass import SinglePassChecker
from assay.verify.metering import MeteredModel
from assay.verify.patterns import PatternContext, PatternOutcome, PatternSettings, get_pattern
from assay.verify.results import iter_results
from assay.verify.stub_replies import RESPONDERS
from assay.verify.summary import BenchSummary
from assay.verify.types import GroundedQARecord

from .bench_fixtures import verify_only_records, write_jsonl

NO_CACHE = ModelOptions(cache=False)


class TaskLog(StubBackend):
    """The stub with assay's task responders, logging the task tag of every call."""

    def __init__(self, name: str) -> None:
        super().__init__(name, task_responders=RESPONDERS)
        self.tasks: Counter[str] = Counter()

    async def generate(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> Completion:
        system = next((m.content for m in messages if m.role == "system"), "")
        match = TASK_TAG.search(system)
        self.tasks[match.group(1) if match else "untagged"] += 1
        return await super().generate(messages, config)


def _context(backend: TaskLog, n: int) -> tuple[PatternContext, MeteredModel]:
    model = get_model("stub/signals", NO_CACHE, backend=backend, model_type=MeteredModel)
    context = PatternContext(
        generator=model,
        checker=SinglePassChecker(model),
        critic=model,
        settings=PatternSettings(n=n),
        answer_verifier=SinglePassAnswerVerifier(model),
    )
    return context, model


def _run_all(pattern: str, records: list[GroundedQARecord], n: int) -> tuple[list[Any], TaskLog]:
    backend = TaskLog("signals")
    context, model = _context(backend, n)

    async def go() -> list[PatternOutcome]:
        try:
            return [await get_pattern(pattern).run(r, context) for r in records]  # type: ignore[arg-type]
        finally:
            await model.aclose()

    return asyncio.run(go()), backend


def test_three_patterns_give_three_signals_each_from_its_own_mechanism() -> None:
    records = [GroundedQARecord.model_validate(d) for d in verify_only_records(6)]
    claims = sum(len(_rule_claims(r)) for r in records)

    best, best_log = _run_all("best_of_n", records, n=1)
    assert best_log.tasks == Counter({"answer_label": len(records)})  # one verdict per answer
    for outcome, record in zip(best, records, strict=True):
        (check,) = outcome.claim_checks  # the whole answer is the one thing checked
        assert outcome.score_method == "answer-level"
        assert check.checker == "answer:stub/signals"
        assert f"{check.claim.text} [cite:{check.claim.cited_ids[0]}]" == record.answer
        assert check.probability_source in ("next_token", "next_token_bounded")
        assert outcome.critique is None and len(outcome.candidates) == 1

    entail, entail_log = _run_all("entailment", records, n=1)
    assert set(entail_log.tasks) == {"claim_label"} and entail_log.tasks["claim_label"] >= claims
    for outcome in entail:
        assert outcome.score_method.startswith("weakest-claim")
        assert all(c.checker == "model:stub/signals" for c in outcome.claim_checks)
        assert outcome.critique is None

    k = 3
    consistency, sc_log = _run_all("self_consistency", records, n=k)
    # K sampled answers (one sampling request) and one critique per record, no claim check
    assert sc_log.tasks == Counter({"answer": k * len(records), "critique": len(records)})
    for outcome in consistency:
        assert outcome.score_method == "critique" and outcome.critique is not None
        assert outcome.critique.samples == k and len(outcome.candidates) == 1 + k
        assert outcome.claim_checks and all(c.checker == "critique" for c in outcome.claim_checks)
        assert outcome.p_error == outcome.critique.error_probability

    signals = [[o.p_error for o in run] for run in (best, entail, consistency)]
    assert signals[0] != signals[1] and signals[1] != signals[2] and signals[0] != signals[2]


def _rule_claims(record: GroundedQARecord) -> list[object]:
    from assay.verify.claims import split_claims

    return list(split_claims(record.answer or ""))


def test_best_of_n_extra_candidates_feed_pass_at_n_never_the_labelled_verdict() -> None:
    records = [GroundedQARecord.model_validate(d) for d in verify_only_records(6)]
    alone, _ = _run_all("best_of_n", records, n=1)
    extra, log = _run_all("best_of_n", records, n=4)
    assert log.tasks["answer"] == 3 * len(records)
    assert log.tasks["answer_label"] == 4 * len(records)
    for one, four in zip(alone, extra, strict=True):
        assert four.p_error == one.p_error and four.verifier_pass == one.verifier_pass
        assert four.selected_index == 0 and four.selected_answer == one.selected_answer
        assert [c.index for c in four.candidates] == [0, 1, 2, 3]
        scored = [c for c in four.candidates if c.score and c.score.p_error is not None]
        assert four.pass_at_n == any(c.score.verifier_pass for c in scored if c.score)
        best = min(scored, key=lambda c: (c.score.p_error if c.score else 1.0, c.index))
        assert four.best_index == best.index


# ------------------------------------------------------------------------ through the runner


def _config(data: Path, out: Path, **changes: Any) -> BenchmarkConfig:
    settings: dict[str, Any] = {
        "data": data,
        "out_dir": out,
        "pattern": "entailment",
        "n": 1,
        "generator": "stub/gen",
        "verifier": "lexical",
        "n_resamples": 50,
        "model_options": NO_CACHE,
    }
    return BenchmarkConfig.model_validate(settings | changes)


def test_the_model_claim_splitter_runs_end_to_end_on_the_stub(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(6))
    rules = _config(data, tmp_path / "rules")
    model = _config(data, tmp_path / "model", claim_splitter="model", splitter="stub/split")
    assert run_benchmark(rules).calls == 0
    report = run_benchmark(model)
    assert report.calls == 6  # one decomposition per answer, counted as the run's cost
    results = list(iter_results(tmp_path / "model" / "results.jsonl"))
    for result in results:
        assert result.usage.calls == 1 and result.usage.completion_tokens > 0
        (candidate,) = result.candidates
        assert candidate.score is not None and candidate.score.claim_splitter == "model"
        assert candidate.score.split_failure is None
    run = json.loads((tmp_path / "model" / "run.json").read_text())
    assert run["config"]["claim_splitter"] == "model"
    assert run["models"]["splitter"]["name"] == "stub/split"
    rules_run = json.loads((tmp_path / "rules" / "run.json").read_text())
    assert rules_run["fingerprint"] != run["fingerprint"]
    summary = BenchSummary.model_validate_json((tmp_path / "model" / "summary.json").read_text())
    assert summary.cost.per_example["calls"] == 1.0


def test_the_model_claim_splitter_is_only_for_entailment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(2))
    args = ["bench", "run", "--data", str(data), "--pattern", "best_of_n", "--verifier"]
    args += ["lexical", "--claim-splitter", "model", "--out_dir", str(tmp_path / "run")]
    assert main(args) == 2
    assert "only the entailment pattern" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_the_model_claim_splitter_runs_on_the_embedded_model(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(2))
    config = _config(
        data,
        tmp_path / "run",
        claim_splitter="model",
        splitter="llamacpp/smollm2",
    )
    report = run_benchmark(config)
    assert report.calls == 2
    for result in iter_results(tmp_path / "run" / "results.jsonl"):
        score = result.candidates[0].score
        assert score is not None
        # the small model's decomposition is used, or the rules with the reason it was not
        assert score.claim_splitter == "model" or score.split_failure is not None
        assert result.claim_checks


def test_self_consistency_grounding_equals_a_direct_computation(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(12))
    out = tmp_path / "run"
    run_benchmark(_config(data, out, pattern="self_consistency", n=3, generator="stub/demo"))
    results = [r for r in iter_results(out / "results.jsonl") if r.complete]
    checks = [c for r in results for c in r.claim_checks]
    assert checks and all(c.checker == "critique" for c in checks)
    assert {c.label for c in checks} == {"supported", "unsupported"}
    for result in results:
        assert result.critique is not None and result.critique.samples == 3
        flagged = set(result.critique.unsupported_claims) | set(result.critique.contradictions)
        assert any(c.label == "unsupported" for c in result.claim_checks) <= bool(flagged)
    metrics = BenchSummary.model_validate_json((out / "summary.json").read_text()).grounding
    assert metrics.metrics["citation_coverage"] == pytest.approx(citation_coverage(checks))
    assert metrics.metrics["supported_claim_rate"] == pytest.approx(supported_claim_rate(checks))
    assert metrics.metrics["citation_precision"] == pytest.approx(citation_precision(checks))


def _compare(runs: list[Path], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["bench", "compare", *map(str, runs)]) == 0
    return capsys.readouterr().out.split("## Identical by construction")[1].split("\n## ")[0]


def test_compare_flags_runs_identical_by_construction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(12))
    # two entailment runs sharing the lexical verifier: n never reaches a verify-only verdict
    first, second = tmp_path / "n1", tmp_path / "n3"
    run_benchmark(_config(data, first, n=1))
    run_benchmark(_config(data, second, n=3))
    section = _compare([first, second], capsys)
    row = next(line for line in section.splitlines() if line.startswith("| n1 | n3 |"))
    assert "| 12 |" in row and "verifier lexical" in row and "scoring weakest-claim" in row
    assert "n 1 vs 3" in row


def test_the_html_report_of_identical_runs_says_so(tmp_path: Path) -> None:
    from assay.report.html import ReportOptions, build_report

    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(6))
    runs = [tmp_path / "n1", tmp_path / "n3", tmp_path / "learned"]
    run_benchmark(_config(data, runs[0], n=1))
    run_benchmark(_config(data, runs[1], n=3))
    run_benchmark(_config(data, runs[2], verifier="learned"))
    payload, _ = build_report(runs, ReportOptions())
    notes = {run.name: [n for n in run.notes if "by construction" in n] for run in payload.runs}
    assert notes["learned"] == []
    (first,) = notes["n1"]
    assert "the same p_error as n3 on all 6 shared records" in first and "n 1 vs 3" in first
    assert notes["n3"][0].startswith("identical by construction: the same p_error as n1")


def test_the_html_report_of_several_runs_shows_each_others_paired_differences(
    tmp_path: Path,
) -> None:
    from assay.report.html import ReportOptions, build_report

    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(12))
    runs = [tmp_path / "lexical", tmp_path / "learned"]
    run_benchmark(_config(data, runs[0]))
    run_benchmark(_config(data, runs[1], verifier="learned"))
    payload, _ = build_report(runs, ReportOptions())
    tables = {run.name: [t for t in run.tables if t.title == "Paired metric differences"]
              for run in payload.runs}  # fmt: skip
    (lexical,), (learned,) = tables["lexical"], tables["learned"]
    assert lexical.rows[0][:3] == ["learned", "12 (4 questions)", "0"]
    assert learned.rows[0][0] == "lexical"
    auroc = [json.loads((r / "summary.json").read_text())["detection"]["metrics"]["auroc"]
             for r in runs]  # fmt: skip
    gain = auroc[1]["value"] - auroc[0]["value"]
    assert float(str(lexical.rows[0][3]).split(" ")[0]) == pytest.approx(gain, abs=6e-4)
    assert float(str(learned.rows[0][3]).split(" ")[0]) == pytest.approx(-gain, abs=6e-4)
    assert "other - this" in lexical.columns[3]
    single, _ = build_report(runs[:1], ReportOptions())
    assert not [t for t in single.runs[0].tables if t.title == "Paired metric differences"]


def test_compare_does_not_flag_runs_that_differ(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(12))
    runs = [tmp_path / "lexical", tmp_path / "learned"]
    run_benchmark(_config(data, runs[0]))
    run_benchmark(_config(data, runs[1], verifier="learned"))
    section = _compare(runs, capsys)
    assert "No two runs give the same p_error on every shared record" in section
    assert "| lexical | learned |" not in section
    # the note explains listed pairs; with none listed it would contradict the line above
    assert "Two runs listed here" not in section


def test_stub_answer_responders_read_the_answer_level_prompt() -> None:
    record = GroundedQARecord.model_validate(verify_only_records(2)[1])
    from assay.verify.checkers.answer_level import LABEL_SYSTEM, answer_messages
    from assay.verify.types import Claim

    answer = Claim(text="Paris is the capital of France.", cited_ids=("p1",))
    good = answer_messages(LABEL_SYSTEM, answer, record, 6000)
    votes = [
        RESPONDERS["answer_label"](good, GenerateConfig(), random.Random(i)) for i in range(40)
    ]
    assert votes.count("Yes") > 30  # grounded, flipped now and then as the stub's noise


@pytest.mark.parametrize(
    ("claim_check", "sources"),
    [("auto", {"next_token", "next_token_bounded"}), ("json", {"stated"})],
)
def test_best_of_n_asks_one_answer_level_question_per_candidate(
    tmp_path: Path, claim_check: str, sources: set[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(6))
    out = tmp_path / "run"
    config = _config(
        data, out, pattern="best_of_n", n=3, verifier="stub/v", claim_check=claim_check
    )
    report = run_benchmark(config)
    assert report.calls == 6 * (2 + 3)  # 2 extra candidates (one request each), 3 verdicts
    for result in iter_results(out / "results.jsonl"):
        assert len(result.candidates) == 3 and result.selected_index == 0
        assert all(len(c.score.claim_checks) == 1 for c in result.candidates if c.score)
        (check,) = result.claim_checks
        assert check.probability_source in sources and check.checker == "answer:stub/v"
    summary = BenchSummary.model_validate_json((out / "summary.json").read_text())
    assert summary.selection is not None and summary.selection.records == 6
    assert summary.counts["used_for_detection"] == 6  # the labelled answers only


def test_a_setting_an_earlier_run_did_not_record_counts_as_its_value_then(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run made before ``claim_evidence_cut`` existed cut in page order: compared with a run
    that records ``page_order`` the setting is not listed as differing."""
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(6))
    first, second = tmp_path / "n1", tmp_path / "n3"
    run_benchmark(_config(data, first, n=1))
    run_benchmark(_config(data, second, n=3))
    summary = json.loads((first / "summary.json").read_text())
    del summary["config"]["claim_evidence_cut"]
    (first / "summary.json").write_text(json.dumps(summary))
    row = next(
        line
        for line in _compare([first, second], capsys).splitlines()
        if line.startswith("| n1 | n3 |")
    )
    assert "n 1 vs 3" in row and "claim_evidence_cut" not in row
