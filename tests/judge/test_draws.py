"""Judge runs of repeated draws: `judge run --draws`, `judge analyze` of the draws together,
and the numbers of the draws' tables on hand-made evaluations."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest

from assay.cli import main
from assay.errors import ConfigError
from assay.judge.analysis_types import AnalysisSettings
from assay.judge.draws import summarize_draws
from assay.judge.evaluations import Evaluation
from assay.metrics import within_item_mean_permutation_p
from tests.helpers.cli_output import one_error_line

from .helpers import write_questions
from .test_analyze import record

FAST = AnalysisSettings(n_resamples=300, plots=False)
Dims = tuple[int, int, int, int]


def _draw(scores: dict[tuple[str, str], Dims | None]) -> list[Evaluation]:
    """One draw's evaluations by judge j of target t: (question, variant) -> dims or None
    (an invalid evaluation)."""
    return [Evaluation.of(record("j", "t", q, v, dims)) for (q, v), dims in scores.items()]


# overall scores: Q1 A 8,4,6 B 4,2,-; Q2 A 2,2,4 B 6,4,4; Q3 A 6,-,- B -,0,2
DRAWS = [
    _draw(
        {
            ("Q1", "A"): (2, 2, 2, 2),
            ("Q1", "B"): (1, 1, 1, 1),
            ("Q2", "A"): (1, 1, 0, 0),
            ("Q2", "B"): (2, 2, 1, 1),
            ("Q3", "A"): (2, 2, 1, 1),
            ("Q3", "B"): None,
        }
    ),
    _draw(
        {
            ("Q1", "A"): (1, 1, 1, 1),
            ("Q1", "B"): (1, 1, 0, 0),
            ("Q2", "A"): (1, 1, 0, 0),
            ("Q2", "B"): (1, 1, 1, 1),
            ("Q3", "A"): None,
            ("Q3", "B"): (0, 0, 0, 0),
        }
    ),
    _draw(
        {
            ("Q1", "A"): (2, 2, 1, 1),
            ("Q1", "B"): None,
            ("Q2", "A"): (1, 1, 1, 1),
            ("Q2", "B"): (1, 1, 1, 1),
            ("Q3", "A"): None,
            ("Q3", "B"): (1, 1, 0, 0),
        }
    ),
]
OVERALL = {
    "A": {"Q1": [8, 4, 6], "Q2": [2, 2, 4], "Q3": [6]},
    "B": {"Q1": [4, 2], "Q2": [6, 4, 4], "Q3": [0, 2]},
}


R = TypeVar("R")


def _rows(rows: tuple[R, ...], **match: object) -> list[R]:
    return [r for r in rows if all(getattr(r, k) == v for k, v in match.items())]


def test_a_score_averages_each_questions_draws_first() -> None:
    summary = summarize_draws(DRAWS, FAST)
    (a,) = _rows(summary.scores, prompt_variant="A", dimension="overall_score")
    means = [np.mean(OVERALL["A"][q]) for q in ("Q1", "Q2", "Q3")]
    assert a.mean == pytest.approx(np.mean(means))  # (6 + 8/3 + 6) / 3, not the 7 scores' mean
    assert (a.questions, a.evaluations) == (3, 7)
    assert a.draw_means == pytest.approx((16 / 3, 3, 5))  # each draw's own mean
    pooled = np.mean([np.var(OVERALL["A"][q], ddof=1) for q in ("Q1", "Q2")])
    assert a.within_sd == pytest.approx(math.sqrt(pooled))  # Q3's one draw adds nothing
    assert a.ci_low <= a.mean <= a.ci_high
    assert summary.draw_valid == (5, 5, 4)


def test_a_variants_effect_is_paired_by_question_and_tested_within_questions() -> None:
    summary = summarize_draws(DRAWS, FAST.model_copy(update={"baseline_variant": "A"}))
    (effect,) = _rows(summary.variant_effects, dimension="overall_score")
    assert (effect.baseline, effect.variant, effect.n_pairs) == ("A", "B", 3)
    differences = [np.mean(OVERALL["B"][q]) - np.mean(OVERALL["A"][q]) for q in OVERALL["A"]]
    assert effect.mean_difference == pytest.approx(np.mean(differences))
    questions = ("Q1", "Q2", "Q3")
    assert effect.p_value == within_item_mean_permutation_p(
        [[float(x) for x in OVERALL["A"][q]] for q in questions],
        [[float(x) for x in OVERALL["B"][q]] for q in questions],
        n_resamples=300,
        seed=0,
    )
    # draw 1: Q1 4-8, Q2 6-2 (Q3 has no valid B); draw 2: 2-4, 4-2; draw 3: Q2 4-4 only
    assert effect.draw_effects == pytest.approx((0.0, 0.0, 0.0))


def test_the_noise_table_separates_resampling_from_the_variant() -> None:
    summary = summarize_draws(DRAWS, FAST.model_copy(update={"baseline_variant": "A"}))
    baseline, variant = _rows(summary.noise, dimension="overall_score")
    assert (baseline.variant, variant.variant) == ("A", "B")
    # within: the mean squared difference of two draws, twice the unbiased variance
    assert baseline.questions == 2 and baseline.across is None
    assert baseline.within_variant == pytest.approx(np.mean([2 * 4.0, 2 * (4 / 3)]))
    # the variant's row: questions with two draws of both (Q1, Q2)
    within_b = [2 * np.var(OVERALL["B"][q], ddof=1) for q in ("Q1", "Q2")]
    within_a = [2 * np.var(OVERALL["A"][q], ddof=1) for q in ("Q1", "Q2")]
    across = [
        np.mean([(x - y) ** 2 for x in OVERALL["A"][q] for y in OVERALL["B"][q]])
        for q in ("Q1", "Q2")
    ]
    assert variant.within_variant == pytest.approx(np.mean(within_b))
    assert variant.across == pytest.approx(np.mean(across))
    excess = np.mean([c - (a + b) / 2 for c, a, b in zip(across, within_a, within_b, strict=True)])
    assert variant.excess == pytest.approx(excess)
    assert variant.ci_low is not None and variant.ci_high is not None


def _scored(question: str, variant: str, dims: list[int]) -> Evaluation:
    return Evaluation(
        question_id=question,
        prompt_variant=variant,
        target_model="t",
        output_id=f"{question}/{variant}",
        judge_model="j",
        method="cross_judge",
        attempt=1,
        valid=True,
        flags=(),
        scores=(dims[0], dims[1], dims[2], dims[3]),
        overall_score=sum(dims),
        verdict="PASS",
        blind=True,
        sample_meta=None,
    )


def test_the_excess_estimates_the_squared_shift_without_bias() -> None:
    """Each question's four scores are Binomial(2, p) under A and Binomial(2, p + 0.15) under
    B (an overall shift of 8 x 0.15 = 1.2 points on every question): the excess is about 1.2^2
    however noisy the draws, while a draw of each differs far more than that."""
    rng = np.random.default_rng(0)
    draws: list[list[Evaluation]] = [[] for _ in range(4)]
    for q in range(300):
        p = rng.uniform(0.1, 0.75)
        for k in range(4):
            for variant, chance in (("A", p), ("B", p + 0.15)):
                dims = [int(x) for x in rng.binomial(2, chance, 4)]
                draws[k].append(_scored(f"Q{q}", variant, dims))
    summary = summarize_draws(draws, FAST.model_copy(update={"baseline_variant": "A"}))
    (row,) = _rows(summary.noise, variant="B", dimension="overall_score")
    assert row.excess == pytest.approx(1.2**2, abs=0.3)
    assert row.ci_low is not None and row.ci_low < 1.2**2 < (row.ci_high or 0)
    assert row.across is not None and row.across > 1.2**2 + 2
    (effect,) = _rows(summary.variant_effects, dimension="overall_score")
    assert effect.mean_difference == pytest.approx(1.2, abs=0.15) and effect.p_value < 0.01


def test_one_draw_says_so_and_gives_no_noise_table() -> None:
    summary = summarize_draws(DRAWS[:1], FAST)
    assert summary.noise == ()
    assert any("one draw" in note for note in summary.notes)


def test_an_unknown_baseline_is_refused() -> None:
    with pytest.raises(ConfigError, match="--baseline 'C'"):
        summarize_draws(DRAWS, FAST.model_copy(update={"baseline_variant": "C"}))


# ---------------------------------------------------------------- end to end on stub models


def _generate_draws(tmp_path: Path, questions: Path, draws: int = 3) -> Path:
    out = tmp_path / "outputs"
    argv = ["generate", "--questions", str(questions), "--model", "stub/a", "--model", "stub/b"]
    argv += ["--temperature", "0.7", "--draws", str(draws), "--out", str(out)]
    assert main(argv) == 0
    return out


def _judge(questions: Path, outputs: Path, out: Path, *extra: str) -> list[str]:
    argv = ["judge", "run", "--questions", str(questions), "--outputs", str(outputs)]
    argv += ["--judge", "stub/a", "--judge", "stub/b", "--out", str(out)]
    return [*argv, "--date", "2026-11-26", *extra]


def judge_target_draws(tmp_path: Path, *extra: str) -> Path:
    """Two draws of stub targets, each judged (`judge run --draws`) into tmp_path/run."""
    questions = write_questions(tmp_path / "q.jsonl")
    outputs = _generate_draws(tmp_path, questions, draws=2)
    run = tmp_path / "run"
    assert main(_judge(questions, outputs, run, "--draws", *extra)) == 0
    return run


def test_draws_judged_then_analysed_together_agree_with_each_draws_own_analysis(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    outputs = _generate_draws(tmp_path, questions)
    run = tmp_path / "run"
    assert main(_judge(questions, outputs, run, "--draws")) == 0
    printed = capsys.readouterr().out
    assert (
        "draw-3 (3 of 3): judge --seed 0 -> " in printed
        and f"next: assay judge analyze {run}" in printed
    )
    again = main(_judge(questions, outputs, run, "--draws"))
    assert again == 0 and capsys.readouterr().out.count(", 0 model calls)") == 3
    analyze = ["judge", "analyze", str(run), "--resamples", "200", "--no-plots", "--no-report"]
    assert main(analyze) == 0
    printed = capsys.readouterr().out
    assert "3 draws (draw-1, draw-2, draw-3)" in printed
    summary = json.loads((run / "summary.json").read_text())
    assert summary["kind"] == "judge-draws" and summary["draws"] == ["draw-1", "draw-2", "draw-3"]
    assert (run / "results_analysis.md").read_text().startswith("# Judge results over repeated")
    for k in range(3):
        own = json.loads((run / f"draw-{k + 1}" / "summary.json").read_text())
        assert own["kind"] == "judge"
        own_means = {_key(r): r["mean"] for r in own["scores"]}
        draw_means = {_key(r): r["draw_means"][k] for r in summary["scores"]}
        assert {key: m for key, m in draw_means.items() if m is not None} == pytest.approx(
            own_means
        )
        own_effects = {_key(r): r["mean_difference"] for r in own["variant_effects"]}
        draw_effects = {_key(r): r["draw_effects"][k] for r in summary["variant_effects"]}
        assert {key: e for key, e in draw_effects.items() if e is not None} == pytest.approx(
            own_effects
        )


def _key(row: dict[str, object]) -> tuple[object, ...]:
    variant = row.get("prompt_variant", row.get("variant"))
    return (row["method"], row["judge_model"], row["target_model"], variant, row["dimension"])


def test_draws_judged_under_different_settings_are_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    outputs = _generate_draws(tmp_path, questions, draws=2)
    run = tmp_path / "run"
    for k, constrained in ((1, "exact"), (2, "schema")):
        argv = _judge(questions, outputs / f"draw-{k}", run / f"draw-{k}")
        assert main([*argv, "--constrained", constrained]) == 0
    capsys.readouterr()
    assert main(["judge", "analyze", str(run), "--no-plots", "--no-report"]) == 2
    error = one_error_line(capsys)
    assert error.startswith(f"error: {run}: the draws were judged under different protocol")
    assert not (run / "summary.json").exists()
    assert not (run / "draw-1" / "summary.json").exists()


def test_outputs_without_draws_or_with_other_draws_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    outputs = _generate_draws(tmp_path, questions, draws=2)
    capsys.readouterr()
    run = tmp_path / "run"
    one = outputs / "draw-1"
    assert main(_judge(questions, one, run, "--draws")) == 2
    assert (
        one_error_line(capsys) == f"error: --draws: {one} holds no draw-K folders with a manifest"
    )
    fewer = tmp_path / "fewer"
    fewer.mkdir()
    (fewer / "draw-1").symlink_to(one, target_is_directory=True)
    argv = _judge(questions, outputs, run, "--draws")
    assert main([*argv, "--outputs", str(fewer)]) == 2
    assert one_error_line(capsys) == (
        f"error: --draws: {fewer} holds draw-1 but {outputs} holds draw-1, draw-2"
    )
    assert (
        main(
            _judge(
                questions,
                outputs,
                run,
                "--draws",
                "--executor",
                "batch",
                "--batch-dir",
                str(tmp_path / "b"),
            )
        )
        == 2
    )
    assert one_error_line(capsys).startswith("error: --draws with --executor batch")
    assert not run.exists()
    assert main(_judge(questions, outputs, run)) == 2  # no --draws: one set of outputs expected
    assert "holds draw-K folders" in one_error_line(capsys)


def test_a_judge_run_is_no_parent_of_draws(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    outputs = _generate_draws(tmp_path, questions, draws=2)
    run = tmp_path / "run"
    assert main(_judge(questions, outputs / "draw-1", run)) == 0
    capsys.readouterr()
    assert main(_judge(questions, outputs, run, "--draws")) == 2
    assert one_error_line(capsys) == (
        f"error: --draws: {run} is a judge run itself; the draws go to draw-K folders of a "
        "directory that holds none"
    )


@pytest.fixture
def judged_draws(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """Two draws of stub targets, judged and analysed together (with the HTML report)."""
    run = judge_target_draws(tmp_path)
    assert main(["judge", "analyze", str(run), "--resamples", "100"]) == 0
    capsys.readouterr()
    return run


def test_export_and_load_run_give_every_draws_evaluations_with_their_draw(
    judged_draws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import assay

    loaded = assay.load_run(judged_draws)
    assert isinstance(loaded, assay.JudgeDrawsRun) and loaded.kind == "judge-draws"
    assert loaded.summary["kind"] == "judge-draws"
    rows = loaded.rows()
    each = [assay.load_run(judged_draws / f"draw-{k}") for k in (1, 2)]
    per_draw = len(each[0].rows())
    assert per_draw == len(each[1].rows()) > 0 and len(rows) == 2 * per_draw
    assert [row["draw"] for row in rows] == [1] * per_draw + [2] * per_draw
    assert {k: v for k, v in rows[per_draw].items() if k != "draw"} == each[1].rows()[0]
    out = tmp_path / "rows.jsonl"
    assert main(["export", str(judged_draws), "--out", str(out)]) == 0
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["draw"] for row in exported] == [row["draw"] for row in rows]


def test_the_report_of_the_draws_shows_their_tables_and_names_each_draws_report(
    judged_draws: Path,
) -> None:
    from assay.report.html import load_run

    content = load_run(judged_draws).section
    assert content.kind == "judge-draws"
    assert content.description.startswith("2 draws of the target outputs, each judged under")
    titles = [table.title for table in content.tables]
    assert "Cross-judging (primary): Mean scores over draws" in titles
    assert "Cross-judging (primary): Draw noise against the variant's effect" in titles
    summary = json.loads((judged_draws / "summary.json").read_text())
    shown = {m.path: m.value for m in content.headline}
    for path, value in shown.items():
        index = int(path.split("[")[1].split("]")[0])
        assert summary["scores"][index]["mean"] == value
        assert summary["scores"][index]["dimension"] == "overall_score"
    assert len(shown) == 4  # each judge x target x variant cross-judged
    assert any(f"`assay report {judged_draws / 'draw-2'}`" in n for n in content.notes)
    assert [plot.name for plot in content.plots] == ["draw_scores"]
    assert (judged_draws / "report.html").is_file()


def test_self_judged_draws_lead_the_lines_and_the_plot_when_nothing_is_cross_judged(
    tmp_path: Path,
) -> None:
    from assay.judge.draws_plots import write_draw_plots
    from assay.judge.draws_report import draws_lines

    draws = [
        [Evaluation.of(record("t", "t", q, v, dims)) for q in ("Q1", "Q2") for v in ("A", "B")]
        for dims in ((2, 2, 1, 1), (1, 1, 1, 0))
    ]
    summary = summarize_draws(draws, FAST)
    lines = draws_lines(summary)
    assert "  t on t x A (self-judged): 4.50 [4.50, 4.50] over 2 questions" in "\n".join(lines)
    assert any(line.startswith("  t on t (self-judged): B - A 0.00") for line in lines)
    assert write_draw_plots(summary, tmp_path) == [tmp_path / "draw_scores.png"]


def test_a_draws_unreadable_records_are_named_in_the_joint_summary(
    judged_draws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shard = sorted((judged_draws / "draw-2" / "valid_evaluations").rglob("*.jsonl"))[0]
    lines = shard.read_text().splitlines(keepends=True)
    shard.write_text("{broken\n" + "".join(lines[1:]))  # the first record, damaged in place
    assert main(["judge", "analyze", str(judged_draws), "--resamples", "50", "--no-report"]) == 0
    summary = json.loads((judged_draws / "summary.json").read_text())
    assert (
        "draw-2: 1 archived record(s) could not be read and are left out (its own analysis "
        "lists them)"
    ) in summary["notes"]
    assert "note: draw-2: 1 archived record(s) could not be read" in capsys.readouterr().out


def test_judge_draws_judge_one_set_of_outputs_with_a_seed_each_and_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    outputs = _generate_draws(tmp_path, questions, draws=2) / "draw-1"
    run = tmp_path / "run"
    argv = _judge(questions, outputs, run, "--judge-draws", "3", "--temperature", "0.7")
    assert main([*argv, "--seed", "4"]) == 0
    printed = capsys.readouterr().out
    assert f"draw-3 (3 of 3): judge --seed 6 -> {run / 'draw-3'}" in printed
    seeds = [
        json.loads((run / f"draw-{k}" / "protocol.json").read_text())["decoding"]["seed"]
        for k in (1, 2, 3)
    ]
    assert seeds == [4, 5, 6]
    assert main(["judge", "analyze", str(run), "--resamples", "50", "--no-report"]) == 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["judge_seeds"] == [4, 5, 6]
    assert len(set(summary["draw_fingerprints"])) == 3  # the seed is in each fingerprint
    assert any("the judge sampled at temperature 0.7" in note for note in summary["notes"])
    # the stub judge samples anew with each seed: some question's scores differ by draw
    spreads = [r["within_sd"] for r in summary["scores"] if r["within_sd"] is not None]
    assert spreads and max(spreads) > 0


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        (["--judge-draws", "2"], "--judge-draws: at --temperature 0 the judge gives the same"),
        (["--judge-draws", "0", "--temperature", "1"], "--judge-draws: must be 1 or more, got 0"),
        (
            ["--judge-draws", "2", "--temperature", "1", "--seed", str(2**31 - 1)],
            f"--judge-draws: the seeds {2**31 - 1} to {2**31} pass {2**31 - 1}",
        ),
        (["--judge-draws", "2", "--temperature", "1", "--draws"], "--judge-draws with --draws"),
    ],
)
def test_judge_draws_that_cannot_be_drawn_are_refused(
    extra: list[str], error: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    outputs = _generate_draws(tmp_path, questions, draws=2) / "draw-1"
    capsys.readouterr()
    assert main(_judge(questions, outputs, tmp_path / "run", *extra)) == 2
    assert one_error_line(capsys).startswith(f"error: {error}")
    assert not (tmp_path / "run").exists()


def test_the_report_of_draws_not_yet_analysed_says_what_to_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = judge_target_draws(tmp_path)
    capsys.readouterr()
    assert main(["report", str(run)]) == 2
    captured = capsys.readouterr().err.splitlines()
    assert captured == [
        f"error: {run}: judge runs of repeated draws, not analysed together yet",
        f"  hint: `assay judge analyze {run}` analyses the draws and writes the report",
    ]


def test_a_broken_file_of_the_last_draw_stops_the_analysis_before_any_draw_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = judge_target_draws(tmp_path)
    coverage = run / "draw-2" / "coverage.json"
    kept = coverage.read_text()
    coverage.write_text("{not json")
    capsys.readouterr()
    assert main(["judge", "analyze", str(run), "--no-report"]) == 2
    assert "draw-2/coverage.json (the run's coverage report)" in one_error_line(capsys)
    assert not (run / "draw-1" / "summary.json").exists()
    coverage.write_text(kept)
    assert main(["judge", "analyze", str(run), "--no-report", "--baseline", "nope"]) == 2
    assert one_error_line(capsys).startswith("error: --baseline 'nope': no evaluated sample")
    assert not (run / "draw-1" / "summary.json").exists()


def test_validate_of_a_directory_of_draws_rechecks_each_draw(
    judged_draws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["judge", "validate", str(judged_draws)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("consistent\n") == 2
    assert f"{judged_draws / 'draw-1'}: " in printed and f"{judged_draws / 'draw-2'}: " in printed
    assert main(["judge", "validate", str(judged_draws), "--json"]) == 0
    reports = json.loads(capsys.readouterr().out)
    assert [r["run_dir"] for r in reports] == [str(judged_draws / f"draw-{k}") for k in (1, 2)]
    (judged_draws / "draw-2" / "invalid_evaluations" / "README.md").unlink()
    assert main(["judge", "validate", str(judged_draws)]) == 1
    assert "NOT consistent" in capsys.readouterr().out


def _with_repeats(repeats: int) -> list[dict[str, object]]:
    """Two questions under A and B, each asked ``repeats`` times, named as `assay import`
    names promptfoo's and lm-eval's repeats."""
    from assay.data.importers._common import repeat_variant

    prompts = {"Q1": {"A": "Explain a hash map.", "B": "What is a hash map?"}}
    prompts["Q2"] = {"A": "Name two primes.", "B": "Two primes, please."}
    return [
        {
            "question_id": q,
            "variants": [
                {"variant": repeat_variant(v, k), "prompt": prompt}
                for v, prompt in by_variant.items()
                for k in range(1, repeats + 1)
            ],
        }
        for q, by_variant in prompts.items()
    ]


def test_repeats_of_one_run_are_read_as_draws_of_their_variant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "q.jsonl", _with_repeats(3))
    argv = ["generate", "--questions", str(questions), "--model", "stub/a", "--model", "stub/b"]
    assert main([*argv, "--temperature", "0.7", "--out", str(tmp_path / "outputs")]) == 0
    run = tmp_path / "run"
    assert main(_judge(questions, tmp_path / "outputs", run)) == 0
    capsys.readouterr()
    analyze = ["judge", "analyze", str(run), "--resamples", "50", "--no-plots"]
    assert main([*analyze, "--repeats-as-draws"]) == 0
    printed = capsys.readouterr().out
    assert "3 draws (repeat 1, repeat 2, repeat 3)" in printed
    joint = json.loads((run / "repeats" / "summary.json").read_text())
    single = json.loads((run / "summary.json").read_text())
    assert joint["kind"] == "judge-draws" and single["kind"] == "judge"
    # repeat k of a variant is draw k: each draw's mean is the run's mean of that repeat
    from assay.data.importers._common import repeat_variant

    means = {
        (r["judge_model"], r["prompt_variant"], r["dimension"]): r["mean"] for r in single["scores"]
    }
    for row in joint["scores"]:
        assert row["prompt_variant"] in ("A", "B")
        for k, drawn in enumerate(row["draw_means"], start=1):
            key = (row["judge_model"], repeat_variant(row["prompt_variant"], k), row["dimension"])
            assert drawn == pytest.approx(means[key])
    assert (run / "repeats" / "report.html").is_file()
    assert main(["export", str(run / "repeats")]) == 2
    assert "export the judge run it was made from" in capsys.readouterr().err


def test_repeats_as_draws_without_repeats_is_refused_before_anything_is_written(
    judged_draws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    draw = judged_draws / "draw-1"
    (draw / "summary.json").unlink()
    assert main(["judge", "analyze", str(draw), "--repeats-as-draws"]) == 2
    assert one_error_line(capsys) == (
        f"error: --repeats-as-draws: no prompt variant of {draw} is a repeat ('<variant> "
        "(repeat k)')"
    )
    assert not (draw / "summary.json").exists()
    assert main(["judge", "analyze", str(judged_draws), "--repeats-as-draws"]) == 2
    assert one_error_line(capsys).startswith("error: --repeats-as-draws: the run holds draw-K")


def test_draws_generated_with_other_settings_than_the_seed_are_refused_and_one_draw_noted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    gen = ["generate", "--questions", str(questions), "--model", "stub/a"]
    draws = tmp_path / "draws"
    assert main([*gen, "--temperature", "0.7", "--out", str(draws / "draw-1")]) == 0
    hot = ["--temperature", "0.9", "--seed", "1", "--out", str(draws / "draw-2")]
    assert main([*gen, *hot]) == 0
    capsys.readouterr()
    run = tmp_path / "run"
    judged = ["judge", "run", "--questions", str(questions), "--judge", "stub/j"]
    assert main([*judged, "--outputs", str(draws), "--draws", "--out", str(run)]) == 2
    assert one_error_line(capsys) == (
        f"error: --draws: the draws were generated with other settings: --temperature 0.7 in "
        f"{draws / 'draw-1'}, 0.9 in {draws / 'draw-2'}"
    )
    assert not run.exists()
    assert main([*judged, "--outputs", str(draws / "draw-1"), "--out", str(run)]) == 0
    assert capsys.readouterr().err.startswith(
        f"note: {draws / 'draw-1'} was sampled at --temperature 0.7 with one draw per cell: a "
        "variant's effect is mixed with sampling noise; `assay generate --draws N` and `judge "
        "run --draws` separate them\n"
    )


def test_judge_seed_per_draw_samples_the_targets_and_the_judge_in_each_draw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = judge_target_draws(
        tmp_path, "--judge-seed-per-draw", "--temperature", "0.7", "--seed", "3"
    )
    assert f"draw-2 (2 of 2): judge --seed 4 -> {run / 'draw-2'}" in capsys.readouterr().out
    assert main(["judge", "analyze", str(run), "--resamples", "50", "--no-report"]) == 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["judge_seeds"] == [3, 4]


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        (["--draws", "--judge-seed-per-draw"], "--judge-seed-per-draw: at --temperature 0"),
        (["--judge-seed-per-draw", "--temperature", "1"], "--judge-seed-per-draw without --draws"),
        (
            ["--judge-seed-per-draw", "--judge-draws", "2", "--temperature", "1"],
            "--judge-seed-per-draw with --judge-draws",
        ),
    ],
)
def test_judge_seed_per_draw_is_refused_where_it_cannot_apply(
    extra: list[str], error: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_questions(tmp_path / "q.jsonl")
    outputs = _generate_draws(tmp_path, questions, draws=2)
    capsys.readouterr()
    assert main(_judge(questions, outputs, tmp_path / "run", *extra)) == 2
    assert one_error_line(capsys).startswith(f"error: {error}")
    assert not (tmp_path / "run").exists()


def test_agreement_reads_repeats_as_draws_each_with_its_repeats_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from assay.judge.agreement import label_agreement
    from assay.judge.archive import iter_archive

    questions = write_questions(tmp_path / "q.jsonl", _with_repeats(2))
    argv = ["generate", "--questions", str(questions), "--model", "stub/a", "--model", "stub/b"]
    assert main([*argv, "--temperature", "0.7", "--out", str(tmp_path / "outputs")]) == 0
    for second in (tmp_path / "outputs").glob("*/*__?_repeat_2_*"):  # another sample's text
        second.write_text(second.read_text(encoding="utf-8") + " Once more.", encoding="utf-8")
    run = tmp_path / "run"
    assert main(_judge(questions, tmp_path / "outputs", run)) == 0
    records = [item.record for item in iter_archive(run) if item.record is not None]
    rng = random.Random(7)
    rows = [
        {"question_id": r.question_id, "prompt_variant": r.prompt_variant,
         "target_model": r.target_model, "dimension": "D1", "score": rng.choice([0, 1, 2])}
        for r in records
        if r.valid
    ]  # fmt: skip
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    capsys.readouterr()
    command = ["judge", "agreement", str(run), "--labels", str(labels), "--resamples", "50"]
    assert main([*command, "--repeats-as-draws"]) == 0
    printed = capsys.readouterr().out
    assert "the repeats as draws:" in printed and str(run / "repeats" / "agreement.json") in printed
    joint = json.loads((run / "repeats" / "agreement.json").read_text())
    assert joint["kind"] == "judge-draws-agreement" and joint["draws"] == ["repeat 1", "repeat 2"]
    assert joint["same_outputs"] is False  # the targets sampled each repeat anew
    # draw k's figures are the run's own agreement over the samples of repeat k
    from assay.data.importers._common import split_repeat
    from assay.judge.agreement import Label

    compared = 0
    for k in (1, 2):
        mine = [r for r in records if split_repeat(r.prompt_variant)[1] == k]
        repeat_k = [row for row in rows if split_repeat(str(row["prompt_variant"]))[1] == k]
        expected = label_agreement(mine, [Label.model_validate(r) for r in repeat_k])
        for own in expected.dimensions:
            (joint_row,) = [
                d for d in joint["dimensions"]
                if (d["judge_model"], d["method"], d["dimension"])
                == (own.judge_model, own.method, own.dimension)
            ]  # fmt: skip
            assert joint_row["draw_accuracy"][k - 1] == pytest.approx(own.accuracy.value)
            compared += 1
    assert compared >= 4
    single = json.loads((run / "agreement.json").read_text())
    assert single["labels"] == len(rows)  # the run's own agreement, every repeat a variant
    assert main([*command, "--repeats-as-draws", "--out", str(tmp_path / "x.json")]) == 0


def test_agreement_of_repeats_is_refused_without_repeats_before_anything_is_written(
    judged_draws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = tmp_path / "labels.jsonl"
    row = {"question_id": "Q1", "prompt_variant": "A", "target_model": "stub/a"}
    labels.write_text(json.dumps({**row, "dimension": "D1", "score": 1}) + "\n")
    draw = judged_draws / "draw-1"
    command = ["judge", "agreement", "--labels", str(labels), "--repeats-as-draws"]
    assert main([*command, str(draw)]) == 2
    assert one_error_line(capsys).startswith("error: --repeats-as-draws: no prompt variant of")
    assert not (draw / "agreement.json").exists()
    assert main([*command, str(judged_draws)]) == 2
    assert one_error_line(capsys).startswith("error: --repeats-as-draws: ")
