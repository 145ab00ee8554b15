"""``assay instructions vary`` and ``robustness``: paired verdicts per variant, from the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.metrics import mcnemar_exact_p
from tests.helpers.cli_output import one_error_line

INPUTS = [
    {
        "key": 1,
        "prompt": "Say hi without commas.",
        "instruction_id_list": ["punctuation:no_comma"],
        "kwargs": [{}],
    },
    {
        "key": 2,
        "prompt": "Answer briefly. End your reply with Bye.",
        "instruction_id_list": ["startend:end_checker"],
        "kwargs": [{"end_phrase": "Bye."}],
    },
    {
        "key": 3,
        "prompt": "Thank the team. Add a postscript starting with P.S.",
        "instruction_id_list": ["detectable_content:postscript"],
        "kwargs": [{"postscript_marker": "P.S."}],
    },
]
FOLLOWS = {1: "Hi there.", 2: "Ok. Bye.", 3: "Thanks. P.S. well done"}
BREAKS = {1: "Hi, there.", 2: "Ok.", 3: "Thanks."}


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def varied(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    inputs = write_jsonl(tmp_path / "input_data.jsonl", INPUTS)
    questions = tmp_path / "questions.jsonl"
    argv = ["instructions", "vary", "--inputs", str(inputs), "--out", str(questions)]
    assert main([*argv, "--variants", "typos,reminder"]) == 0
    assert "wrote 3 prompts, 9 prompt variants" in capsys.readouterr().out
    return questions


def summary_of(run: Path) -> dict[str, Any]:
    return dict(json.loads((run / "summary.json").read_text()))


def output(key: int, variant: str, target: str, follows: bool) -> dict[str, Any]:
    return {
        "question_id": f"ifeval-{key}",
        "prompt_variant": variant,
        "target_model": target,
        "output_id": f"{key}:{variant}",
        "text": (FOLLOWS if follows else BREAKS)[key],
    }


def test_each_variant_is_paired_with_the_original_on_the_prompts_answered_under_both(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = "model-a", "model-b"
    manifest = write_jsonl(
        tmp_path / "manifest.jsonl",
        [
            output(1, "original", a, True),
            output(1, "typos", a, False),
            output(1, "reminder", a, True),
            output(2, "original", a, True),
            output(2, "typos", a, True),  # no reminder output for prompt 2: missing, not failed
            output(3, "original", a, False),
            output(3, "typos", a, True),
            output(3, "reminder", a, False),
            *(output(key, "original", b, True) for key in (1, 2, 3)),
        ],
    )
    run = tmp_path / "robustness"
    argv = ["instructions", "robustness", "--questions", str(varied), "--outputs", str(manifest)]
    assert main([*argv, "--out", str(run), "--no-report"]) == 0
    printed = capsys.readouterr().out
    summary, verdicts = summary_of(run), run / "verdicts.jsonl"

    rows = {(r["target_model"], r["variant"]): r for r in summary["variants"]}
    of_a = [r for r in summary["variants"] if r["target_model"] == a]
    assert [(r["variant"], r["outputs"], r["missing"]) for r in of_a] == [
        ("original", 3, 0),
        ("typos", 3, 0),
        ("reminder", 2, 1),
    ]
    assert rows[(a, "original")]["prompt_level"] == pytest.approx(2 / 3)
    assert rows[(b, "typos")] == {
        "target_model": b,
        "variant": "typos",
        "outputs": 0,
        "missing": 3,
        "prompt_level": None,
        "instruction_level": None,
    }
    paired = {(r["target_model"], r["variant"]): r for r in summary["paired"]}
    assert set(paired) == {(a, "typos"), (a, "reminder")}  # model-b answered no variant
    typos = paired[(a, "typos")]
    assert (typos["pairs"], typos["lost"], typos["gained"], typos["difference"]) == (3, 1, 1, 0)
    assert (typos["test"], typos["p_value"]) == ("mcnemar", mcnemar_exact_p(1, 1))
    assert typos["p_value"] == 1.0
    reminder = paired[(a, "reminder")]
    assert (reminder["pairs"], reminder["baseline_rate"], reminder["variant_rate"]) == (2, 0.5, 0.5)

    targets = {r["target_model"]: r for r in summary["targets"]}
    # prompts 1 and 3 have all three outputs: 1 follows, breaks, follows; 3 the other way
    assert targets[a] == {
        "target_model": a,
        "prompts": 2,
        "baseline_rate": 0.5,
        "robust_rate": 0.0,
        "any_rate": 1.0,
        "unstable_rate": 1.0,
        "resampling_unstable_rate": None,  # one draw per cell
    }
    assert targets[b]["prompts"] == 0 and targets[b]["robust_rate"] is None

    lines = [json.loads(line) for line in verdicts.read_text().splitlines()]
    assert len(lines) == 11 and lines[1]["prompt_variant"] == "typos"
    assert lines[1]["follow_all_instructions"] is False
    assert lines[1]["results"][0]["reason"] == "1 commas"
    assert "| model-a | typos | 3 | 66.7% | 66.7% | +0.0 pts |" in printed


def test_a_small_change_that_loses_every_prompt_is_significant(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Twelve prompts lost, none gained: McNemar's p is 2 / 2**12, the interval excludes 0."""
    inputs = [dict(INPUTS[0], key=k, prompt=f"Say hi {k} without commas.") for k in range(12)]
    questions = tmp_path / "many.jsonl"
    argv = ["instructions", "vary", "--inputs", str(write_jsonl(tmp_path / "in.jsonl", inputs))]
    assert main([*argv, "--out", str(questions), "--variants", "lowercase"]) == 0
    manifest = write_jsonl(
        tmp_path / "many_manifest.jsonl",
        [
            output(1, v, "m", v == "original") | {"question_id": f"ifeval-{k}"}
            for k in range(12)
            for v in ("original", "lowercase")
        ],
    )
    run = tmp_path / "robustness"
    argv = ["instructions", "robustness", "--questions", str(questions), "--outputs", str(manifest)]
    assert main([*argv, "--out", str(run), "--no-report"]) == 0
    row = summary_of(run)["paired"][0]
    assert (row["lost"], row["gained"], row["difference"]) == (12, 0, -1.0)
    assert (row["test"], row["p_value"]) == ("mcnemar", pytest.approx(2 / 2**12))
    assert row["ci_high"] == -1.0
    capsys.readouterr()
    gated = [*argv, "--out", str(tmp_path / "gated"), "--no-report", "--fail-if-variant-loses"]
    assert main(gated) == 1  # for CI: the run is written, and the loss named
    err = capsys.readouterr().err
    assert "loses: m lowercase: prompt-level -1.000 [-1.000, -1.000] against original" in err
    assert summary_of(tmp_path / "gated")["paired"][0]["lost"] == 12
    assert main([*argv, "--fail-if-variant-loses", "1.0"]) == 0  # a loss of at most 1.0 passes
    assert "no variant surely loses more than 1" in capsys.readouterr().err


def test_generated_outputs_of_every_cell_are_checked(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = tmp_path / "outputs"
    argv = ["generate", "--questions", str(varied), "--model", "stub/a", "--out", str(outputs)]
    assert main(argv) == 0
    run = tmp_path / "robustness"
    argv = ["instructions", "robustness", "--questions", str(varied), "--outputs", str(outputs)]
    assert main([*argv, "--out", str(run), "--mode", "loose"]) == 0
    lines = [json.loads(line) for line in (run / "verdicts.jsonl").read_text().splitlines()]
    assert len(lines) == 9 and {line["mode"] for line in lines} == {"loose"}
    assert {(line["question_id"], line["prompt_variant"]) for line in lines} == {
        (f"ifeval-{k}", v) for k in (1, 2, 3) for v in ("original", "typos", "reminder")
    }


def test_a_question_without_instructions_is_refused_with_its_line(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = varied.read_text().splitlines()
    second = json.loads(lines[1])
    second["meta"] = None
    lines[1] = json.dumps(second)
    varied.write_text("\n".join(lines) + "\n")
    manifest = write_jsonl(tmp_path / "m.jsonl", [output(1, "original", "m", True)])
    argv = ["instructions", "robustness", "--questions", str(varied), "--outputs", str(manifest)]
    assert main(argv) == 0  # the question without instructions has no output: not read
    manifest = write_jsonl(tmp_path / "m.jsonl", [output(2, "original", "m", True)])
    capsys.readouterr()
    assert main(argv) == 2
    assert one_error_line(capsys) == (
        f"error: {varied}:2 field 'meta.ifeval': question 'ifeval-2' has no instructions to check"
    )


def test_a_bad_instruction_argument_in_the_set_is_refused_with_line_and_field(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    varied.write_text(varied.read_text().replace('"end_phrase":"Bye."', '"end_phrase":3'))
    manifest = write_jsonl(tmp_path / "m.jsonl", [output(2, "typos", "m", True)])
    argv = ["instructions", "robustness", "--questions", str(varied), "--outputs", str(manifest)]
    assert main(argv) == 2
    assert one_error_line(capsys) == (
        f"error: {varied}:2 field 'meta.ifeval.kwargs[0].end_phrase': startend:end_checker: "
        "expected a string, got 3"
    )


def test_an_output_of_another_question_set_is_refused_naming_its_line(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = write_jsonl(
        tmp_path / "m.jsonl", [output(1, "original", "m", True), output(1, "polite", "m", True)]
    )
    argv = ["instructions", "robustness", "--questions", str(varied), "--outputs", str(manifest)]
    assert main(argv) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"error: {manifest}:2: the output for question 'ifeval-1' variant ")
    assert "'polite' has no such question and variant in" in line


def test_an_unknown_variant_kind_is_refused_with_the_choices(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = write_jsonl(tmp_path / "input_data.jsonl", INPUTS)
    argv = ["instructions", "vary", "--inputs", str(inputs), "--out", str(tmp_path / "q.jsonl")]
    with pytest.raises(SystemExit) as exit_code:
        main([*argv, "--variants", "typos,shouting"])
    assert exit_code.value.code == 2
    err = capsys.readouterr().err
    assert "unknown variant kind(s) 'shouting'; choose from typos, lowercase" in err
    assert not (tmp_path / "q.jsonl").exists()


def test_a_bad_instruction_in_the_inputs_is_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = [*INPUTS[:2], dict(INPUTS[2], kwargs=[{"postscript_marker": 7}])]
    inputs = write_jsonl(tmp_path / "input_data.jsonl", bad)
    out = tmp_path / "q.jsonl"
    assert main(["instructions", "vary", "--inputs", str(inputs), "--out", str(out)]) == 2
    assert one_error_line(capsys) == (
        f"error: {inputs}:3 field 'kwargs[0].postscript_marker': "
        "detectable_content:postscript: expected a string, got 7"
    )
    assert not out.exists()


@pytest.mark.slow
def test_the_embedded_model_answers_every_variant_and_each_answer_is_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = write_jsonl(tmp_path / "input_data.jsonl", INPUTS[:2])
    questions, outputs = tmp_path / "questions.jsonl", tmp_path / "outputs"
    assert main(["instructions", "vary", "--inputs", str(inputs), "--out", str(questions)]) == 0
    generate = ["generate", "--questions", str(questions), "--model", "llamacpp/smollm2"]
    assert main([*generate, "--max-tokens", "24", "--out", str(outputs)]) == 0
    run = tmp_path / "robustness"
    argv = ["instructions", "robustness", "--questions", str(questions), "--outputs", str(outputs)]
    assert main([*argv, "--out", str(run)]) == 0
    result = summary_of(run)
    assert (run / "report.html").is_file()
    cells = sum(len(json.loads(line)["variants"]) for line in questions.read_text().splitlines())
    assert sum(r["outputs"] for r in result["variants"]) == cells == 11
    assert all(r["missing"] == 0 for r in result["variants"])
    assert {r["variant"] for r in result["paired"]} == {
        "typos",
        "lowercase",
        "line-per-sentence",
        "preamble",
        "reminder",
    }


def test_a_question_set_of_ones_own_names_its_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Variants written by hand, each question's instructions in meta.ifeval (ids and kwargs
    only), paired with a baseline of another name."""
    meta = {"ifeval": {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}}
    question = {
        "question_id": "q1",
        "variants": [
            {"variant": "terse", "prompt": "Say hi. No commas."},
            {"variant": "polite", "prompt": "Please say hi, and use no commas."},
        ],
        "meta": meta,
    }
    questions = write_jsonl(tmp_path / "own.jsonl", [question])
    manifest = write_jsonl(
        tmp_path / "m.jsonl",
        [
            {
                "question_id": "q1",
                "prompt_variant": "terse",
                "target_model": "m",
                "output_id": "1",
                "text": "Hi.",
            },
            {
                "question_id": "q1",
                "prompt_variant": "polite",
                "target_model": "m",
                "output_id": "2",
                "text": "Hi, you.",
            },
        ],
    )
    run = tmp_path / "robustness"
    argv = ["instructions", "robustness", "--questions", str(questions), "--outputs", str(manifest)]
    assert main([*argv, "--out", str(run), "--no-report"]) == 2
    assert one_error_line(capsys) == (
        "error: no prompt variant 'original' in the question set to pair the others with"
    )
    assert main([*argv, "--out", str(run), "--no-report", "--baseline", "terse"]) == 0
    row = summary_of(run)["paired"][0]
    assert (row["baseline"], row["variant"], row["lost"], row["gained"]) == (
        "terse",
        "polite",
        1,
        0,
    )


@pytest.mark.parametrize(
    ("command", "option", "message"),
    [
        ("vary", ["--limit", "0"], "error: --limit: must be 1 or more, got 0"),
        ("robustness", ["--seed", "-1"], "error: --seed: must be 0 or more, got -1"),
        ("robustness", ["--resamples", "0"], "error: --resamples: must be 1 or more, got 0"),
    ],
)
def test_a_bad_number_option_is_one_error_naming_it(
    varied: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    option: list[str],
    message: str,
) -> None:
    manifest = write_jsonl(tmp_path / "m.jsonl", [output(1, "original", "m", True)])
    inputs = tmp_path / "input_data.jsonl"
    argv = {
        "vary": ["--inputs", str(inputs), "--out", str(tmp_path / "other.jsonl")],
        "robustness": ["--questions", str(varied), "--outputs", str(manifest)],
    }[command]
    capsys.readouterr()
    assert main(["instructions", command, *argv, *option]) == 2
    assert one_error_line(capsys) == message


def test_the_verdicts_as_judge_labels_audit_a_judge_run_on_the_same_outputs(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """robustness --out writes labels.jsonl, which `judge agreement --labels` reads: a judge
    run on the varied set is then compared with the checker, output by output."""
    outputs, run = tmp_path / "outputs", tmp_path / "run"
    assert (
        main(["generate", "--questions", str(varied), "--model", "stub/a", "--out", str(outputs)])
        == 0
    )
    robustness = tmp_path / "robustness"
    argv = ["instructions", "robustness", "--questions", str(varied), "--outputs", str(outputs)]
    assert main([*argv, "--out", str(robustness), "--no-report"]) == 0
    labels = robustness / "labels.jsonl"
    lines = [json.loads(line) for line in labels.read_text().splitlines()]
    # 9 outputs; prompts 1 and 2 have a format instruction (no_comma, end_checker), 3 has none
    assert {line["dimension"] for line in lines} == {"INSTRUCTION_COMPLIANCE", "FORMAT_COMPLIANCE"}
    assert sum(line["dimension"] == "INSTRUCTION_COMPLIANCE" for line in lines) == 9
    assert sum(line["dimension"] == "FORMAT_COMPLIANCE" for line in lines) == 6
    assert {line["annotator"] for line in lines} == {"instructions-strict"}
    judge = ["judge", "run", "--questions", str(varied), "--outputs", str(outputs)]
    assert main([*judge, "--judge", "stub/judge", "--out", str(run)]) == 0
    assert main(["judge", "agreement", str(run), "--labels", str(labels)]) == 0
    report = json.loads((run / "agreement.json").read_text())
    assert report["labels"] == len(lines) and report["unmatched_labels"] == 0
    # the robustness folder itself stands for its labels.jsonl
    assert main(["judge", "agreement", str(run), "--labels", str(robustness)]) == 0
    assert json.loads((run / "agreement.json").read_text()) == report


def test_two_targets_are_contrasted_per_variant_paired_by_prompt(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """model-a loses every prompt to typos and nothing to the reminder; model-b loses nothing."""
    rows = [
        output(key, variant, target, target == "model-b" or variant != "typos")
        for key in (1, 2, 3)
        for variant in ("original", "typos", "reminder")
        for target in ("model-a", "model-b")
    ]
    manifest = write_jsonl(tmp_path / "two.jsonl", rows)
    run = tmp_path / "robustness"
    argv = ["instructions", "robustness", "--questions", str(varied), "--outputs", str(manifest)]
    assert main([*argv, "--out", str(run), "--no-report"]) == 0
    assert "## Targets compared" in capsys.readouterr().out
    contrasts = {r["variant"]: r for r in summary_of(run)["contrasts"]}
    typos, reminder = contrasts["typos"], contrasts["reminder"]
    assert (typos["first"], typos["second"], typos["prompts"]) == ("model-a", "model-b", 3)
    assert (typos["first_effect"], typos["second_effect"], typos["difference"]) == (-1, 0, -1)
    assert typos["ci_low"] == typos["ci_high"] == -1.0
    assert reminder["difference"] == 0 and reminder["ci_low"] == reminder["ci_high"] == 0


def test_outputs_of_an_earlier_variant_text_are_refused(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """vary run again with another seed gives other typos: outputs generated for the first
    texts answered other prompts, and are refused rather than checked against the new ones."""
    outputs = tmp_path / "outputs"
    generate = ["generate", "--questions", str(varied), "--model", "stub/a"]
    assert main([*generate, "--out", str(outputs)]) == 0
    inputs = tmp_path / "input_data.jsonl"
    vary = ["instructions", "vary", "--inputs", str(inputs), "--out", str(varied)]
    assert main([*vary, "--variants", "typos,reminder", "--seed", "1"]) == 0
    capsys.readouterr()
    argv = ["instructions", "robustness", "--questions", str(varied), "--outputs", str(outputs)]
    assert main(argv) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"error: {outputs / 'manifest.jsonl'}:")
    assert "field 'prompt_hash': the output for question 'ifeval-1' variant 'typos' answered " in (
        line
    )


def test_a_second_output_for_one_cell_is_refused_naming_both(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = output(1, "original", "m", True)
    manifest = write_jsonl(tmp_path / "m.jsonl", [first, first | {"output_id": "again"}])
    argv = ["instructions", "robustness", "--questions", str(varied), "--outputs", str(manifest)]
    assert main(argv) == 2
    assert one_error_line(capsys) == (
        f"error: {manifest}:2: the output for question 'ifeval-1' variant 'original' of m is "
        f"also at {manifest}:1: one output per target, question and variant"
    )


def test_an_instructions_field_outside_meta_is_refused(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = write_jsonl(tmp_path / "m.jsonl", [output(1, "original", "m", True)])
    argv = ["instructions", "robustness", "--questions", str(varied), "--outputs", str(manifest)]
    assert main([*argv, "--instructions-field", "ifeval"]) == 2
    assert one_error_line(capsys) == (
        "error: --instructions-field: expected a dotted path under meta (meta.KEY[.KEY...]), "
        "got 'ifeval'"
    )


def test_out_refuses_a_directory_that_holds_another_kind_of_run(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = tmp_path / "outputs"
    generate = ["generate", "--questions", str(varied), "--model", "stub/a"]
    assert main([*generate, "--out", str(outputs)]) == 0
    capsys.readouterr()
    argv = ["instructions", "robustness", "--questions", str(varied), "--outputs", str(outputs)]
    assert main([*argv, "--out", str(outputs)]) == 2
    assert one_error_line(capsys).startswith(
        f"error: {outputs} holds a 'generate' run, not a robustness run"
    )
    assert not (outputs / "summary.json").exists()


def test_variants_list_the_instructions_as_constraints_unless_told_not_to(
    varied: Path, tmp_path: Path
) -> None:
    with_them = [json.loads(line) for line in varied.read_text().splitlines()]
    assert {tuple(v["constraints"]) for v in with_them[1]["variants"]} == {
        ("startend:end_checker (end_phrase=Bye.)",)
    }
    bare = tmp_path / "bare.jsonl"
    inputs = tmp_path / "input_data.jsonl"
    vary = ["instructions", "vary", "--inputs", str(inputs), "--out", str(bare)]
    assert main([*vary, "--no-constraints"]) == 0
    questions = [json.loads(line) for line in bare.read_text().splitlines()]
    assert all(v["constraints"] == [] for q in questions for v in q["variants"])
    assert questions[1]["meta"]["ifeval"]["kwargs"] == [{"end_phrase": "Bye."}]  # still checked


def test_judge_analyze_compares_each_variant_with_the_baseline_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A varied set judged by an LLM judge: `lowercase` sorts before `original`, so without
    --baseline the judge's variant effects would be measured from `lowercase`."""
    inputs = write_jsonl(tmp_path / "input_data.jsonl", INPUTS)
    questions, outputs, run = tmp_path / "q.jsonl", tmp_path / "outputs", tmp_path / "run"
    vary = ["instructions", "vary", "--inputs", str(inputs), "--out", str(questions)]
    assert main([*vary, "--variants", "lowercase,typos"]) == 0
    generate = ["generate", "--questions", str(questions), "--model", "stub/a"]
    assert main([*generate, "--out", str(outputs)]) == 0
    judge = ["judge", "run", "--questions", str(questions), "--outputs", str(outputs)]
    assert main([*judge, "--judge", "stub/judge", "--out", str(run)]) == 0
    analyze = ["judge", "analyze", str(run), "--no-plots", "--resamples", "50"]

    def baselines() -> set[str]:
        summary = json.loads((run / "summary.json").read_text())
        return {row["baseline"] for row in summary["variant_effects"]}

    assert main(analyze) == 0
    assert baselines() == {"lowercase"}
    assert main([*analyze, "--baseline", "original"]) == 0
    effects = json.loads((run / "summary.json").read_text())["variant_effects"]
    assert effects and {r["baseline"] for r in effects} == {"original"}
    assert {r["variant"] for r in effects} <= {"lowercase", "typos"}
    capsys.readouterr()
    assert main([*analyze, "--baseline", "polite"]) == 2
    assert one_error_line(capsys) == (
        "error: --baseline 'polite': no evaluated sample has this prompt variant"
    )


# ---------------------------------------------------------------- repeated draws

# per prompt key and variant, three draws: whether each followed its prompt's instruction
DRAWS = {
    1: {"original": [1, 1, 1], "typos": [0, 0, 0], "reminder": [1, 1, 1]},
    2: {"original": [1, 0, 1], "typos": [1, 1, 0], "reminder": [1, 0, 1]},
    3: {"original": [0, 0, 0], "typos": [0, 0, 1], "reminder": [0, 0, 0]},
}


def draw_manifests(tmp_path: Path) -> list[Path]:
    """One manifest per draw, each in its own folder as three generate runs would be."""
    paths = []
    for draw in range(3):
        records = [
            output(key, variant, "m", bool(followed[draw]))
            for key, variants in DRAWS.items()
            for variant, followed in variants.items()
        ]
        (tmp_path / f"draw{draw}").mkdir()
        paths.append(write_jsonl(tmp_path / f"draw{draw}" / "manifest.jsonl", records))
    return paths


def test_repeated_draws_compare_shares_of_draws_and_measure_sampling_noise(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "robustness"
    argv = ["instructions", "robustness", "--questions", str(varied), "--draws"]
    for manifest in draw_manifests(tmp_path):
        argv += ["--outputs", str(manifest)]
    assert main([*argv, "--out", str(run)]) == 0
    summary = summary_of(run)
    assert summary["draws"] == [str(tmp_path / f"draw{d}" / "manifest.jsonl") for d in range(3)]
    verdicts = [json.loads(line) for line in (run / "verdicts.jsonl").read_text().splitlines()]
    assert sorted({v["draw"] for v in verdicts}) == [1, 2, 3] and len(verdicts) == 27
    # a judge label file per draw: every draw answers the same cells under the same ids
    assert sorted(p.name for p in run.glob("labels*")) == [
        "labels-draw-1.jsonl",
        "labels-draw-2.jsonl",
        "labels-draw-3.jsonl",
    ]

    typos = next(r for r in summary["paired"] if r["variant"] == "typos")
    # prompt shares: original 1, 2/3, 0; typos 0, 2/3, 1/3
    assert typos["baseline_rate"] == pytest.approx(5 / 9)
    assert typos["variant_rate"] == pytest.approx(1 / 3)
    assert typos["difference"] == pytest.approx(-2 / 9)
    assert (typos["pairs"], typos["lost"], typos["gained"], typos["test"]) == (
        3,
        1,
        1,
        "permutation",
    )
    assert 0 < typos["p_value"] <= 1

    noise = {r["variant"]: r for r in summary["noise"]}
    assert noise["original"]["within_variant"] == pytest.approx(2 / 9)  # prompt 2: 2 of 3 pairs
    assert noise["original"]["excess"] is None
    row = noise["typos"]
    assert (row["prompts"], row["draws"]) == (3, 9)
    assert row["within_variant"] == pytest.approx(4 / 9)
    assert row["within_baseline"] == pytest.approx(2 / 9)
    assert row["across"] == pytest.approx(16 / 27)
    # per prompt: 1 (always followed against never), -2/9 (equal shares: noise), 0
    assert row["excess"] == pytest.approx(7 / 27)
    # the original's draws again: no effect, an estimate of 0 that noise moves either way
    assert noise["reminder"]["excess"] == pytest.approx(-2 / 27)

    target = summary["targets"][0]
    assert (target["prompts"], target["robust_rate"], target["unstable_rate"]) == (3, 0.0, 1.0)
    assert target["resampling_unstable_rate"] == pytest.approx(2 / 3)  # prompts 2 and 3
    instructions = {r["instruction_id"]: r for r in summary["instructions"]}
    assert instructions["startend:end_checker"]["baseline_followed"] == pytest.approx(4 / 3)
    assert (
        instructions["punctuation:no_comma"]["lost"],
        instructions["punctuation:no_comma"]["gained"],
    ) == (1, 0)
    printed = capsys.readouterr().out
    assert summary["draw_outputs"] == [9, 9, 9]
    # prompt 1 under every wording, prompt 3 under two: the same text in every draw
    assert (summary["repeated_cells"], summary["same_text_cells"]) == (9, 5)
    assert printed.startswith(f"Draws: 1 `{tmp_path / 'draw0' / 'manifest.jsonl'}` (9 outputs), ")
    assert "## Draws: how often sampling alone changes a verdict" in printed
    assert "| m | typos | 3 | 9 | 44.4% | 22.2% | 59.3% | +25.9 pts |" in printed
    assert "draws disagree" in (run / "report.html").read_text(encoding="utf-8")
    plots = run / "plots"
    assert sorted(p.name for p in plots.iterdir()) == ["draw_noise.png", "variant_effects.png"]
    # again with one draw into the same run: the noise plot has no data and goes
    assert main([*argv[:4], "--outputs", argv[6], "--out", str(run)]) == 0
    assert [p.name for p in plots.iterdir()] == ["variant_effects.png"]
    assert [p.name for p in run.glob("labels*")] == ["labels.jsonl"]


def test_the_same_cells_in_two_outputs_are_draws_only_when_asked(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second, _ = draw_manifests(tmp_path)
    argv = ["instructions", "robustness", "--questions", str(varied), "--no-report"]
    argv += ["--outputs", str(first), "--outputs", str(second)]
    assert main(argv) == 2
    assert one_error_line(capsys) == (
        f"error: {second}:1: the output for question 'ifeval-1' variant 'original' of m is also "
        f"at {first}:1: one output per target, question and variant"
    )


@pytest.mark.parametrize(
    ("outputs", "message"),
    [
        (["a"], "error: --draws: give two --outputs or more, one per draw"),
        (["a", "a"], "error: --outputs: a is given twice"),
    ],
)
def test_draws_need_two_distinct_outputs(
    varied: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    outputs: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["instructions", "robustness", "--questions", str(varied), "--draws"]
    assert main([*argv, *(x for o in outputs for x in ("--outputs", o))]) == 2
    assert one_error_line(capsys) == message


def generate_draw(questions: Path, out: Path, temperature: str, seed: str) -> Path:
    argv = ["generate", "--questions", str(questions), "--model", "stub/m", "--out", str(out)]
    assert main([*argv, "--temperature", temperature, "--seed", seed]) == 0
    return out


def test_draws_generated_with_other_settings_are_refused_and_unseeded_ones_noted(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = generate_draw(varied, tmp_path / "t07-s1", "0.7", "1")
    other_seed = generate_draw(varied, tmp_path / "t07-s2", "0.7", "2")
    same_seed = generate_draw(varied, tmp_path / "t07-s1-again", "0.7", "1")
    hotter = generate_draw(varied, tmp_path / "t09-s3", "0.9", "3")
    capsys.readouterr()
    argv = ["instructions", "robustness", "--questions", str(varied), "--draws", "--no-report"]
    assert main([*argv, "--outputs", str(one), "--outputs", str(hotter)]) == 2
    assert one_error_line(capsys) == (
        f"error: --draws: the draws were generated with other settings: --temperature 0.7 in "
        f"{one}, 0.9 in {hotter}"
    )
    assert main([*argv, "--outputs", str(one), "--outputs", str(other_seed)]) == 0
    assert "note:" not in capsys.readouterr().err
    assert main([*argv, "--outputs", str(one), "--outputs", str(same_seed)]) == 0
    assert "note: two draws were generated with one --seed" in capsys.readouterr().err


@pytest.mark.slow
def test_draws_of_the_embedded_model_at_a_temperature_measure_its_sampling_noise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = write_jsonl(tmp_path / "input_data.jsonl", INPUTS[:1])
    questions = tmp_path / "questions.jsonl"
    assert main(["instructions", "vary", "--inputs", str(inputs), "--out", str(questions)]) == 0
    generate = ["generate", "--questions", str(questions), "--model", "llamacpp/smollm2"]
    generate += ["--max-tokens", "16", "--temperature", "1.0", "--seed", "1", "--draws", "3"]
    out = tmp_path / "draws"
    assert main([*generate, "--out", str(out)]) == 0
    draws = [out / f"draw-{k}" for k in (1, 2, 3)]
    seeds = [json.loads((d / "run.json").read_text())["config"]["seed"] for d in draws]
    assert seeds == [1, 2, 3]
    texts = [sorted(p.read_text() for p in d.glob("*/*.txt")) for d in draws]
    assert texts[0] != texts[1] != texts[2]  # the seeds gave other outputs
    run = tmp_path / "robustness"
    argv = ["instructions", "robustness", "--questions", str(questions), "--draws"]
    assert main([*argv, "--outputs", str(out), "--out", str(run)]) == 0  # the draw-K folders
    summary = summary_of(run)
    assert summary["draws"] == [str(d) for d in draws]
    variants = json.loads(questions.read_text())["variants"]
    assert [r["draws"] for r in summary["noise"]] == [3] * len(variants)
    assert all(r["test"] == "permutation" for r in summary["paired"])
    assert (run / "report.html").is_file()


def test_a_robustness_run_exports_a_row_per_output_or_per_instruction_verdict(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import assay

    run = tmp_path / "robustness"
    argv = ["instructions", "robustness", "--questions", str(varied), "--draws", "--no-report"]
    for manifest in draw_manifests(tmp_path):
        argv += ["--outputs", str(manifest)]
    assert main([*argv, "--out", str(run)]) == 0
    loaded = assay.load_run(run)
    assert isinstance(loaded, assay.RobustnessRun)
    rows = loaded.rows()
    assert len(rows) == 27
    first = rows[0]
    assert {k: first[k] for k in ("question_id", "prompt_variant", "draw", "not_followed")} == {
        "question_id": "ifeval-1",
        "prompt_variant": "original",
        "draw": 1,
        "not_followed": "",
    }
    broken = next(
        r for r in rows if r["prompt_variant"] == "typos" and r["question_id"] == "ifeval-1"
    )
    assert (broken["follow_all_instructions"], broken["not_followed"]) == (
        False,
        "punctuation:no_comma",
    )
    assert broken["response"] == BREAKS[1]

    out = tmp_path / "verdicts.csv"
    assert main(["export", str(run), "--claims", "--out", str(out)]) == 0
    assert "wrote 27 rows" in capsys.readouterr().err  # one instruction per prompt here
    header, line = out.read_text(encoding="utf-8").splitlines()[:2]
    assert header.split(",")[6:10] == ["instruction_index", "instruction_id", "kwargs", "followed"]
    assert line.startswith("ifeval-1,original,m,1,")


def test_a_damaged_verdicts_file_is_named_with_its_line_and_field(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "robustness"
    manifest = draw_manifests(tmp_path)[0]
    argv = ["instructions", "robustness", "--questions", str(varied), "--outputs", str(manifest)]
    assert main([*argv, "--no-report", "--out", str(run)]) == 0
    verdicts = run / "verdicts.jsonl"
    lines = verdicts.read_text(encoding="utf-8").splitlines()
    damaged = json.loads(lines[1])
    damaged["draw"] = "second"
    verdicts.write_text("\n".join([lines[0], json.dumps(damaged), *lines[2:]]) + "\n")
    capsys.readouterr()
    assert main(["export", str(run)]) == 2
    assert one_error_line(capsys) == (
        f"error: {verdicts}:2 field 'draw': Input should be a valid integer, unable to parse "
        "string as an integer"
    )


def own_question(*variants: tuple[str, str]) -> dict[str, Any]:
    meta = {"ifeval": {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}}
    return {
        "question_id": "q1",
        "variants": [{"variant": label, "prompt": prompt} for label, prompt in variants],
        "meta": meta,
    }


@pytest.mark.parametrize(
    ("variants", "problem"),
    [
        ((("plain", "Say hi."), ("plain (repeat 2)", "Say hi!")), "another prompt"),
        ((("plain", "Say hi."), ("terse (repeat 2)", "Say hi.")), "no variant of that name"),
    ],
)
def test_a_repeat_that_is_no_draw_of_its_variant_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    variants: tuple[tuple[str, str], ...],
    problem: str,
) -> None:
    questions = write_jsonl(tmp_path / "own.jsonl", [own_question(*variants)])
    manifest = write_jsonl(tmp_path / "m.jsonl", [])
    argv = ["instructions", "robustness", "--questions", str(questions), "--outputs"]
    assert main([*argv, str(manifest), "--repeats-as-draws", "--baseline", "plain"]) == 2
    label, base = variants[1][0], variants[1][0].split(" (")[0]
    assert one_error_line(capsys) == (
        f"error: {questions}: question 'q1': variant {label!r} is a repeat of {base!r}, which "
        f"has {problem}"
    )


def test_repeats_are_draws_and_draws_exclude_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = write_jsonl(
        tmp_path / "own.jsonl",
        [
            own_question(
                ("plain", "Say hi."),
                ("plain (repeat 2)", "Say hi."),
                ("polite", "Please say hi."),
                ("polite (repeat 2)", "Please say hi."),
            )
        ],
    )
    texts = {"plain": "Hi.", "plain (repeat 2)": "Hi, you.", "polite": "Hi, you."}
    texts["polite (repeat 2)"] = "Hi, you."
    records = [
        {"question_id": "q1", "prompt_variant": label, "target_model": "m", "output_id": label}
        | {"text": text}
        for label, text in texts.items()
    ]
    manifest = write_jsonl(tmp_path / "m.jsonl", records)
    run = tmp_path / "run"
    argv = ["instructions", "robustness", "--questions", str(questions), "--outputs"]
    argv += [str(manifest), "--baseline", "plain", "--no-report"]
    assert main([*argv, "--repeats-as-draws", "--out", str(run)]) == 0
    summary = summary_of(run)
    (row,) = summary["paired"]
    assert (row["variant"], row["baseline_rate"], row["variant_rate"]) == ("polite", 0.5, 0.0)
    noise = {r["variant"]: r for r in summary["noise"]}
    assert noise["plain"]["within_variant"] == 1.0  # its two draws disagree
    assert noise["polite"]["within_variant"] == 0.0
    capsys.readouterr()
    assert main([*argv, "--repeats-as-draws", "--draws", "--outputs", str(questions)]) == 2
    assert one_error_line(capsys) == "error: --draws and --repeats-as-draws: give one of them"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ["--temperature", "0"],
            "error: --draws: at --temperature 0 every draw is the same greedy answer",
        ),
        (
            ["--seed", str(2**31 - 2)],
            f"error: --draws: the seeds {2**31 - 2} to {2**31} pass {2**31 - 1}",
        ),
        (
            ["--executor", "batch", "--batch-dir", "b"],
            "error: --draws with --executor batch: a batch directory holds one draw's calls",
        ),
    ],
)
def test_generate_draws_refuses_what_cannot_give_draws(
    varied: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    options: list[str],
    message: str,
) -> None:
    argv = ["generate", "--questions", str(varied), "--model", "stub/m", "--draws", "3"]
    argv += ["--temperature", "0.7", "--out", str(tmp_path / "out")]
    assert main([*argv, *options]) == 2
    assert one_error_line(capsys) == message
    assert not (tmp_path / "out").exists()


def test_generate_draws_writes_a_folder_per_draw_that_robustness_reads_as_its_draws(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = ["generate", "--questions", str(varied), "--model", "stub/m", "--temperature", "0.7"]
    assert main([*argv, "--seed", "5", "--draws", "2", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"draw 2 of 2: --seed 6 -> {out / 'draw-2'}" in printed
    assert sorted(p.name for p in out.iterdir()) == ["draw-1", "draw-2"]
    run = tmp_path / "run"
    robustness = ["instructions", "robustness", "--questions", str(varied), "--draws"]
    assert main([*robustness, "--outputs", str(out), "--out", str(run), "--no-report"]) == 0
    summary = summary_of(run)
    assert summary["draw_outputs"] == [9, 9]
    # the stub seeds its reply by the request, whose seed is the draw's
    assert (summary["repeated_cells"], summary["same_text_cells"]) == (9, 0)
    assert "note:" not in capsys.readouterr().err
    assert main([*argv, "--draws", "2", "--out", str(out / "draw-1")]) == 2
    assert one_error_line(capsys) == (
        f"error: --draws: {out / 'draw-1'} holds outputs of its own; the draws go to draw-K "
        "folders of a directory that holds none"
    )


def test_a_folder_of_draws_given_as_one_set_of_outputs_is_named(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = ["generate", "--questions", str(varied), "--model", "stub/m", "--temperature", "0.7"]
    assert main([*argv, "--draws", "2", "--out", str(out)]) == 0
    capsys.readouterr()
    robustness = ["instructions", "robustness", "--questions", str(varied), "--outputs", str(out)]
    assert main(robustness) == 2
    assert one_error_line(capsys) == (
        f"error: {out}: holds draw-K folders (the draws of `assay generate --draws`), not one "
        "set of outputs"
    )


def test_each_draws_labels_audit_a_judge_run_on_that_draw(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Draws answer the same cells under the same output ids: labels-draw-K.jsonl is what a
    judge run on draw-K is compared with."""
    outputs, run = tmp_path / "outputs", tmp_path / "run"
    argv = ["generate", "--questions", str(varied), "--model", "stub/a", "--temperature", "0.7"]
    assert main([*argv, "--draws", "2", "--out", str(outputs)]) == 0
    robustness = tmp_path / "robustness"
    argv = ["instructions", "robustness", "--questions", str(varied), "--draws"]
    assert main([*argv, "--outputs", str(outputs), "--out", str(robustness), "--no-report"]) == 0
    judge = ["judge", "run", "--questions", str(varied), "--outputs", str(outputs / "draw-2")]
    assert main([*judge, "--judge", "stub/judge", "--out", str(run)]) == 0
    labels = robustness / "labels-draw-2.jsonl"
    assert main(["judge", "agreement", str(run), "--labels", str(labels)]) == 0
    report = json.loads((run / "agreement.json").read_text())
    assert report["labels"] == 15 and report["unmatched_labels"] == 0
    # every draw judged, then compared with its own labels from the robustness folder
    every = tmp_path / "every"
    judge = ["judge", "run", "--questions", str(varied), "--outputs", str(outputs), "--draws"]
    assert main([*judge, "--judge", "stub/judge", "--out", str(every)]) == 0
    assert main(["judge", "agreement", str(every), "--labels", str(robustness)]) == 0
    joint = json.loads((every / "agreement.json").read_text())
    assert joint["labels"] == [15, 15] and joint["unmatched_labels"] == [0, 0]
    assert (
        json.loads((every / "draw-2" / "agreement.json").read_text())["dimensions"]
        == (report["dimensions"])
    )


def test_one_sampled_draw_per_cell_gets_a_note_naming_draws(
    varied: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = generate_draw(varied, tmp_path / "sampled", "0.7", "1")
    greedy = generate_draw(varied, tmp_path / "greedy", "0", "1")
    capsys.readouterr()
    argv = ["instructions", "robustness", "--questions", str(varied), "--no-report"]
    assert main([*argv, "--outputs", str(greedy)]) == 0
    assert "note:" not in capsys.readouterr().err
    assert main([*argv, "--outputs", str(out)]) == 0
    assert capsys.readouterr().err == (
        f"note: {out} was sampled at --temperature 0.7 with one draw per cell: a variant's "
        "effect is mixed with sampling noise; `assay generate --draws N` and `robustness "
        "--draws` separate them\n"
    )
