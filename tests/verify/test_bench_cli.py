"""``assay bench run | summarize | compare`` through the real command-line entry point."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest

from assay.cli import main
from assay.metrics import mcnemar_exact_p

from .bench_fixtures import generate_records, mixed_file, verify_only_records, write_jsonl

STUB = ["--generator", "stub/gen", "--verifier", "lexical", "--no-cache", "--no-progress"]


def _run(data: Path, out: Path, pattern: str, *extra: str) -> int:
    args = ["bench", "run", "--data", str(data), "--pattern", pattern, "--out_dir", str(out)]
    return main([*args, "--n", "2", "--n-resamples", "50", *STUB, *extra])


def test_run_prints_where_and_what(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = mixed_file(tmp_path / "data.jsonl", generated=2, verified=4)
    assert _run(data, tmp_path / "run", "entailment") == 0
    out = capsys.readouterr().out
    assert "6 examples (6 run now, 0 already done)" in out
    assert "detection (positive = grounding error)" in out
    assert (tmp_path / "run" / "summary.json").is_file()


def test_an_error_type_that_contradicts_gold_error_is_named_in_one_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = verify_only_records(4)
    records[1] |= {"gold_error": False, "error_type": "contradiction"}
    records[2] |= {"gold_error": False, "error_type": "Wrong citation"}
    records[3] |= {"gold_error": False, "error_type": "supported"}  # says no error: no note
    del records[0]["gold_error"]
    records[0]["error_type"] = "unsupported"
    data = write_jsonl(tmp_path / "data.jsonl", records)
    assert _run(data, tmp_path / "run", "entailment") == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")]
    assert notes == [
        f"note: {data}:1: record 'v0': error_type is 'unsupported' but gold_error is missing "
        "(scored as unlabelled) (and 2 more record(s) like it); set gold_error to true for an "
        "answer with an error, or drop error_type"
    ]


def test_underscore_and_dash_spellings_are_the_same_options(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", generate_records(4))
    args = ["bench", "run", "--data", str(data), "--pattern", "best_of_n", *STUB]
    assert main([*args, "--max-examples", "1", "--out-dir", str(tmp_path / "a")]) == 0
    assert main([*args, "--max_examples", "1", "--out_dir", str(tmp_path / "b")]) == 0
    assert main([*args, "--max-examples", "1", "--out", str(tmp_path / "c")]) == 0  # as judge run
    for name in "abc":
        assert len((tmp_path / name / "results.jsonl").read_text().splitlines()) == 1


def test_a_run_directory_that_is_a_file_is_named_as_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", generate_records(1))
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    args = ["bench", "run", "--data", str(data), "--pattern", "best_of_n", *STUB]
    assert main([*args, "--out", str(afile)]) == 2
    assert f"error: --out {afile} is a file, not a directory" in capsys.readouterr().err


def test_every_record_runs_by_default_and_a_limit_says_what_it_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(250))
    assert _run(data, tmp_path / "all", "entailment") == 0
    out = capsys.readouterr().out
    assert "250 examples" in out and "left out" not in out  # no silent cut at 200
    assert _run(data, tmp_path / "some", "entailment", "--max_examples", "240") == 0
    out = capsys.readouterr().out
    assert "240 examples" in out and "left out 10 record(s)" in out


def test_bad_input_exits_2_naming_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = verify_only_records(3)
    records[2]["gold_citations"] = [{"evidence_id": "nope"}]
    data = write_jsonl(tmp_path / "data.jsonl", records)
    assert _run(data, tmp_path / "run", "entailment") == 2
    err = capsys.readouterr().err
    assert f"{data}:3" in err and "gold_citations" in err
    assert "Traceback" not in err


def test_an_option_out_of_range_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", generate_records(1))
    assert _run(data, tmp_path / "run", "entailment", "--threshold", "1.5") == 2
    assert "threshold" in capsys.readouterr().err


def test_summarize_rebuilds_the_summary_from_results(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(12))
    out = tmp_path / "run"
    assert _run(data, out, "entailment") == 0
    original = json.loads((out / "summary.json").read_text())
    (out / "summary.json").unlink()
    for plot in (out / "plots").iterdir():
        plot.unlink()
    assert main(["bench", "summarize", str(out)]) == 0
    rebuilt = json.loads((out / "summary.json").read_text())
    for key in ("counts", "labels", "detection", "grounding", "buckets", "cost", "selective"):
        assert rebuilt[key] == original[key], key
    assert sorted(p.name for p in (out / "plots").iterdir()) == [
        "calibration.png", "coverage_accuracy.png", "pr_curve.png", "roc_curve.png"
    ]  # fmt: skip


def test_summarize_refuses_a_directory_without_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "summarize", str(tmp_path)]) == 2
    assert "results.jsonl" in capsys.readouterr().err


def test_compare_puts_patterns_side_by_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = mixed_file(tmp_path / "data.jsonl", generated=2, verified=6)
    runs = []
    for pattern in ("best_of_n", "entailment", "self_consistency"):
        runs.append(tmp_path / pattern)
        assert _run(data, runs[-1], pattern, "--oracle", "stub/oracle") == 0
    capsys.readouterr()
    report = tmp_path / "compare.md"
    assert main(["bench", "compare", *map(str, runs), "--out", str(report)]) == 0
    text = capsys.readouterr().out
    assert text == report.read_text()
    for section in ("## Error detection", "## Gating", "## Grounding", "## Cost per example",
                    "## Revision", "## By failure bucket", "## Paired verdicts"):  # fmt: skip
        assert section in text
    detection = text.split("## Error detection")[1].split("##")[0]
    for pattern in ("best_of_n", "entailment", "self_consistency"):
        assert f"| {pattern} |" in detection
    assert "| contradiction |" in text and "| grounded |" in text


def test_compare_reads_a_run_without_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(6))
    out = tmp_path / "run"
    assert _run(data, out, "best_of_n") == 0
    (out / "summary.json").unlink()
    capsys.readouterr()
    assert main(["bench", "compare", str(out)]) == 0
    assert "| run |" in capsys.readouterr().out
    assert not (out / "summary.json").exists()  # comparing never writes into a run


def test_the_learned_checker_can_be_the_verifier(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(6))
    out = tmp_path / "run"
    assert _run(data, out, "entailment", "--verifier", "learned") == 0
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert {c["checker"] for line in lines for c in line["claim_checks"]} == {"learned"}
    verifier = json.loads((out / "run.json").read_text())["models"]["verifier"]
    assert verifier["name"] == "learned" and verifier["checker_version"] == "learned-10"


def test_a_checker_name_is_not_a_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", generate_records(1))
    assert _run(data, tmp_path / "run", "best_of_n", "--generator", "lexical") == 2
    assert "usable only as --verifier" in capsys.readouterr().err


@pytest.mark.parametrize(("first", "second"), [(3, 0), (10, 2), (5, 5), (0, 0), (1, 17), (40, 25)])
def test_mcnemar_exact_p_is_the_two_sided_binomial_test(first: int, second: int) -> None:
    from scipy.stats import binomtest  # type: ignore[import-untyped]  # with scikit-learn

    expected = 1.0 if first + second == 0 else binomtest(first, first + second, 0.5).pvalue
    assert mcnemar_exact_p(first, second) == pytest.approx(expected)


@pytest.mark.parametrize(("first", "second"), [(520, 580), (600, 600), (0, 1100), (1, 1500)])
def test_mcnemar_exact_p_past_1024_discordant_pairs(first: int, second: int) -> None:
    # the definition in exact rationals: 2 * P(X <= min) for X ~ Binomial(n, 1/2), at most 1
    n = first + second
    tail = Fraction(sum(math.comb(n, k) for k in range(min(first, second) + 1)), 2**n)
    assert mcnemar_exact_p(first, second) == pytest.approx(float(min(Fraction(1), 2 * tail)))


def test_compare_pairs_runs_on_shared_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(12))
    runs = [tmp_path / "lexical", tmp_path / "learned"]
    assert _run(data, runs[0], "entailment") == 0
    assert _run(data, runs[1], "entailment", "--verifier", "learned") == 0
    capsys.readouterr()
    assert main(["bench", "compare", *map(str, runs)]) == 0
    paired = capsys.readouterr().out.split("## Paired verdicts")[1]
    row = next(line for line in paired.splitlines() if line.startswith("| lexical | learned |"))
    shared, both, only_a, only_b = (int(x) for x in row.split("|")[3:7])
    assert shared == 12 and both + only_a + only_b <= 12


def test_compare_gives_paired_metric_differences_each_summary_agrees_with(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(40))
    runs = [tmp_path / "lexical", tmp_path / "learned"]
    assert _run(data, runs[0], "entailment") == 0
    assert _run(data, runs[1], "entailment", "--verifier", "learned") == 0
    capsys.readouterr()
    assert main(["bench", "compare", *map(str, runs)]) == 0
    section = capsys.readouterr().out.split("## Paired metric differences")[1]
    row = next(line for line in section.splitlines() if line.startswith("| lexical | learned |"))
    cells = [cell.strip() for cell in row.split("|")[1:-1]]
    summaries = [json.loads((run / "summary.json").read_text()) for run in runs]
    auroc = [s["detection"]["metrics"]["auroc"]["value"] for s in summaries]
    assert cells[2].startswith("40 (")
    difference, interval = cells[3].split(" [")
    assert float(difference) == pytest.approx(auroc[1] - auroc[0], abs=6e-4)
    low, high = (float(x) for x in interval.rstrip("]").split(", "))
    assert low <= float(difference) <= high
    assert "resamples of the shared questions" in section


def test_paired_differences_leave_out_answers_the_runs_do_not_share(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = verify_only_records(12)
    data = write_jsonl(tmp_path / "data.jsonl", records)
    records[0]["answer"] = records[0]["answer"] + " It also rained."  # another answer, same id
    other = write_jsonl(tmp_path / "other.jsonl", records)
    runs = [tmp_path / "first", tmp_path / "second"]
    assert _run(data, runs[0], "entailment") == 0
    assert _run(other, runs[1], "entailment", "--verifier", "learned") == 0
    capsys.readouterr()
    assert main(["bench", "compare", *map(str, runs)]) == 0
    section = capsys.readouterr().out.split("## Paired metric differences")[1]
    assert "| first | second | 11 (" in section
    assert "answer or label differs between the runs" in section and "first / second: 1" in section


def _rescored_copy(run: Path, target: Path, rescore: Callable[[float], float]) -> Path:
    """The run's answers and labels under other scores (another verifier's), summarised."""
    target.mkdir()
    (target / "run.json").write_bytes((run / "run.json").read_bytes())
    lines = []
    for line in (run / "results.jsonl").read_text().splitlines():
        record = json.loads(line)
        record["verifier_score"] = rescore(record["verifier_score"])
        record["verifier_pass"] = record["verifier_score"] < record["threshold"]
        lines.append(json.dumps(record) + "\n")
    (target / "results.jsonl").write_text("".join(lines))
    assert main(["bench", "summarize", str(target), "--no-plots", "--no-report"]) == 0
    return target


def test_compare_fails_a_run_worse_than_the_baseline_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(40))
    base = tmp_path / "base"
    assert _run(data, base, "entailment", "--verifier", "learned") == 0
    same = _rescored_copy(base, tmp_path / "same", lambda p: p)
    flipped = _rescored_copy(base, tmp_path / "flipped", lambda p: 1.0 - p)
    capsys.readouterr()
    gate = ["--fail-if-worse", "auroc", "--fail-if-worse", "brier"]
    report = tmp_path / "compare.json"
    assert main(["bench", "compare", str(base), str(same), *gate, "--json", str(report)]) == 0
    assert "no run is worse than the baseline on auroc, brier" in capsys.readouterr().err
    payload = json.loads(report.read_text())
    (pair,) = payload["paired_differences"]
    assert pair["differences"]["metrics"]["auroc"]["difference"] == 0.0
    assert payload["gate"] == {"baseline": "base", "metrics": ["auroc", "brier"], "failed": []}
    assert payload["runs"][0]["detection"]["metrics"]["auroc"]["value"] > 0.5

    command = ["bench", "compare", str(base), str(same), str(flipped), *gate]
    assert main([*command, "--json", str(report)]) == 1
    err = capsys.readouterr().err
    assert "worse: flipped auroc: lower by -" in err and "against base" in err
    assert "worse: same" not in err
    failed = json.loads(report.read_text())["gate"]["failed"]
    assert [line.split(":")[0] for line in failed] == ["flipped auroc", "flipped brier"]


def test_a_gate_that_cannot_be_checked_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = verify_only_records(6)
    data = write_jsonl(tmp_path / "data.jsonl", records)
    for record in records:
        record["id"] = "other-" + record["id"]
    other = write_jsonl(tmp_path / "other.jsonl", records)
    runs = [tmp_path / "a", tmp_path / "b"]
    assert _run(data, runs[0], "entailment") == 0
    assert _run(other, runs[1], "entailment") == 0
    capsys.readouterr()
    assert main(["bench", "compare", *map(str, runs), "--fail-if-worse", "auroc"]) == 1
    assert "worse: b: no labelled answer shared with a: not checked" in capsys.readouterr().err
    assert main(["bench", "compare", str(runs[0]), "--fail-if-worse", "auroc"]) == 2
    assert "give a baseline run and 1 to 7 runs" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:  # argparse's own usage error
        main(["bench", "compare", *map(str, runs), "--fail-if-worse", "flag_rate"])
    assert usage.value.code == 2 and "invalid choice: 'flag_rate'" in capsys.readouterr().err


def test_model_free_checks_record_their_time_per_claim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(6))
    assert _run(data, tmp_path / "run", "entailment") == 0  # the lexical checker, no model
    assert "ms per claim check" in capsys.readouterr().out
    lines = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    times = [c["check_ms"] for line in lines for c in line["claim_checks"]]
    assert times and all(t > 0 for t in times)
    cost = json.loads((tmp_path / "run" / "summary.json").read_text())["cost"]
    assert cost["calls"] == 0 and cost["claim_checks"] == len(times)
    assert cost["check_ms_per_claim"] == pytest.approx(sum(times) / len(times))


def test_with_a_model_in_the_check_the_model_time_per_call_is_printed_beside_the_wall_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A check's wall time holds its wait behind other calls (142 s per claim was printed on a
    loaded machine): the model's own time per call stands beside it."""
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(4))
    assert _run(data, tmp_path / "run", "entailment", "--verifier", "stub/v") == 0
    cost = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("cost:"))
    assert "ms per claim check (wall time, waits for the model included)" in cost
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())["cost"]
    per_call = summary["latency_ms"] / summary["calls"]
    assert cost.endswith(f", {per_call:.0f} ms of model time per call")
    assert _run(data, tmp_path / "free", "entailment") == 0  # no model: neither note
    cost = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("cost:"))
    assert "wall time" not in cost and "model time" not in cost
    answers = write_jsonl(tmp_path / "gen.jsonl", generate_records(2))
    assert _run(answers, tmp_path / "gen", "entailment") == 0  # a model writes, none checks
    cost = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("cost:"))
    assert "wall time" not in cost and cost.endswith("ms of model time per call")


def test_best_of_n_times_its_answer_level_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each candidate's answer-level verdict is timed as a claim check is (it was 0.0)."""
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(4))
    assert _run(data, tmp_path / "run", "best_of_n") == 0
    assert "ms per claim check" in capsys.readouterr().out
    lines = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    times = [c["check_ms"] for line in lines for c in line["claim_checks"]]
    assert times and all(t > 0 for t in times)
    cost = json.loads((tmp_path / "run" / "summary.json").read_text())["cost"]
    assert cost["claim_checks"] == len(times)
    assert cost["check_ms_per_claim"] == pytest.approx(sum(times) / len(times))


def test_self_consistency_claim_verdicts_are_not_timed_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its claim verdicts are read off one critique call: no time per claim, not 0.0 ms."""
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(4))
    assert _run(data, tmp_path / "run", "self_consistency") == 0
    assert "ms per claim check" not in capsys.readouterr().out
    lines = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    checks = [c for line in lines for c in line["claim_checks"]]
    assert checks and all(c["check_ms"] is None for c in checks)
    cost = json.loads((tmp_path / "run" / "summary.json").read_text())["cost"]
    assert cost["claim_checks"] == 0 and cost["check_ms_per_claim"] is None


def test_the_evidence_cut_is_a_setting_of_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--claim-evidence-cut relevance`` is recorded and fingerprinted: a run made with one cut
    is not resumed with the other."""
    data = write_jsonl(tmp_path / "data.jsonl", verify_only_records(3))
    out = tmp_path / "run"
    model = ["--verifier", "stub/v", "--claim-check", "single_pass"]
    assert _run(data, out, "entailment", *model, "--claim-evidence-cut", "relevance") == 0
    config = json.loads((out / "run.json").read_text())["config"]
    assert config["claim_evidence_cut"] == "relevance"
    capsys.readouterr()
    assert _run(data, out, "entailment", *model) != 0
    assert "settings" in capsys.readouterr().err


def test_one_sample_in_generate_mode_is_run_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--n 1 is not refused (a one-sample run is the baseline a pattern's N is measured
    against, for best_of_n and self_consistency alike), but the run says what is left of the
    pattern; verify-only records and --n 2 get no note."""
    data = mixed_file(tmp_path / "data.jsonl", generated=2, verified=2)
    base = ["bench", "run", "--n-resamples", "20", *STUB, "--no-report", "--critic", "stub/critic"]
    notes = {}
    for pattern, n in [("self_consistency", "1"), ("best_of_n", "1"), ("self_consistency", "2")]:
        out = tmp_path / f"{pattern}-{n}"
        command = [
            *base,
            "--data",
            str(data),
            "--pattern",
            pattern,
            "--n",
            n,
            "--out_dir",
            str(out),
        ]
        assert main(command) == 0
        notes[pattern, n] = [x for x in capsys.readouterr().err.splitlines() if "note:" in x]
    assert notes["self_consistency", "1"] == [
        "note: --n 1: self_consistency critiques each generated answer against the evidence "
        "alone, with no other sample to compare (critique.samples is 0); --n 2 or more measures "
        "self-consistency"
    ]
    assert notes["best_of_n", "1"] == [
        "note: --n 1: best_of_n verifies one generated answer per record, with nothing to "
        "rerank; --n 2 or more measures the selection"
    ]
    assert notes["self_consistency", "2"] == []
    results = (tmp_path / "self_consistency-1" / "results.jsonl").read_text().splitlines()
    generated = [json.loads(x) for x in results if json.loads(x)["mode"] == "generate"]
    assert [r["critique"]["samples"] for r in generated] == [0, 0]
    verify_only = write_jsonl(tmp_path / "v.jsonl", verify_only_records(2))
    command = [*base, "--data", str(verify_only), "--pattern", "self_consistency", "--n", "1"]
    assert main([*command, "--out_dir", str(tmp_path / "v")]) == 0
    assert "note:" not in capsys.readouterr().err  # the given answer is compared with 1 sample
