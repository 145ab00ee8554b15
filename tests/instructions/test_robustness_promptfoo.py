"""Prompt variants written as promptfoo prompts: the real promptfoo CLI runs the suite, ``assay
import promptfoo`` reads its results, and ``instructions robustness`` pairs the prompts, the
instructions read from each test's metadata."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.cli import main
from tests.helpers.promptfoo_cli import promptfoo_command, run_promptfoo

SUITE = {
    "prompts": [
        {"id": "{{task}}", "label": "plain"},
        {"id": "{{task}}\n\nFollow every instruction.", "label": "reminder"},
    ],
    # promptfoo's echo provider answers with the prompt itself
    "providers": ["echo"],
    "tests": [
        {
            "vars": {"task": "Say hi without commas."},
            "metadata": {
                "ifeval": {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}
            },
        },
        {
            "vars": {"task": "End with Bye."},
            "metadata": {
                "ifeval": {
                    "instruction_id_list": ["startend:end_checker"],
                    "kwargs": [{"end_phrase": "Bye."}],
                }
            },
        },
    ],
}


def test_promptfoo_prompts_are_variants_paired_by_test_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = run_promptfoo(promptfoo_command(), SUITE, tmp_path / "promptfoo")
    imported = tmp_path / "imported"
    assert main(["import", "promptfoo", str(results), "--out", str(imported)]) == 0
    run = tmp_path / "robustness"
    argv = [
        "instructions",
        "robustness",
        "--questions",
        str(imported / "questions.jsonl"),
        "--outputs",
        str(imported),
        "--instructions-field",
        "meta.metadata.ifeval",
        "--baseline",
        "plain",
    ]
    assert main([*argv, "--out", str(run), "--no-report"]) == 0
    (row,) = json.loads((run / "summary.json").read_text())["paired"]
    # "End with Bye." ends with Bye.; with the reminder after it, the echo no longer does
    assert (row["variant"], row["pairs"], row["lost"], row["gained"]) == ("reminder", 2, 1, 0)
    assert (row["baseline_rate"], row["variant_rate"]) == (1.0, 0.5)
    capsys.readouterr()
    assert main(argv[:-4]) == 2  # the default field: the import keeps them under metadata
    assert "field 'meta.ifeval': question 'test-1' has no instructions" in capsys.readouterr().err


def test_promptfoo_repeats_are_draws_of_their_prompt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = run_promptfoo(
        promptfoo_command(), SUITE, tmp_path / "promptfoo", args=["--repeat", "3"]
    )
    imported = tmp_path / "imported"
    assert main(["import", "promptfoo", str(results), "--out", str(imported)]) == 0
    questions = imported / "questions.jsonl"
    labels = [v["variant"] for v in json.loads(questions.read_text().splitlines()[0])["variants"]]
    assert "plain (repeat 3)" in labels and len(labels) == 6
    run = tmp_path / "robustness"
    argv = ["instructions", "robustness", "--questions", str(questions), "--outputs"]
    argv += [str(imported), "--instructions-field", "meta.metadata.ifeval", "--baseline", "plain"]
    assert main([*argv, "--repeats-as-draws", "--out", str(run), "--no-report"]) == 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["draws"] == ["repeat 1", "repeat 2", "repeat 3"]
    assert summary["draw_outputs"] == [4, 4, 4]
    (row,) = summary["paired"]
    assert (row["variant"], row["pairs"], row["lost"], row["test"]) == (
        "reminder",
        2,
        1,
        "permutation",
    )
    # the echo provider answers alike every time: no draw disagrees with another
    assert [r["within_variant"] for r in summary["noise"]] == [0.0, 0.0]
    assert summary["noise"][1]["excess"] == 0.5  # one of two prompts lost in every draw


def test_promptfoo_repeats_judged_are_draws_of_their_prompt_for_the_judge_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same repeats through the judge protocol (a stub judge): `judge analyze
    --repeats-as-draws` reads repeat k of each prompt as its draw k."""
    results = run_promptfoo(
        promptfoo_command(), SUITE, tmp_path / "promptfoo", args=["--repeat", "2"]
    )
    imported = tmp_path / "imported"
    assert main(["import", "promptfoo", str(results), "--out", str(imported)]) == 0
    run = tmp_path / "judged"
    argv = ["judge", "run", "--questions", str(imported / "questions.jsonl"), "--outputs"]
    assert main([*argv, str(imported), "--judge", "stub/judge", "--out", str(run)]) == 0
    analyze = ["judge", "analyze", str(run), "--baseline", "plain", "--repeats-as-draws"]
    assert main([*analyze, "--no-report", "--no-plots", "--resamples", "50"]) == 0
    summary = json.loads((run / "repeats" / "summary.json").read_text())
    assert summary["draws"] == ["repeat 1", "repeat 2"]
    # 2 test cases x 2 prompts per repeat, less the stub judge's seeded invalid replies
    single = json.loads((run / "summary.json").read_text())
    assert sum(summary["draw_valid"]) == single["counts"]["valid"] > 0
    assert all(n <= 4 for n in summary["draw_valid"])
    variants = {r["prompt_variant"] for r in summary["scores"]}
    assert variants == {"plain", "reminder"}
    (effect,) = [r for r in summary["variant_effects"] if r["dimension"] == "overall_score"]
    assert (effect["baseline"], effect["variant"], effect["n_pairs"]) == ("plain", "reminder", 2)
