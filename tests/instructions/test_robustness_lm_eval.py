"""Variants run by the real lm-evaluation-harness CLI: ``vary --lm-eval`` writes a task per
wording, lm-eval's ``local-chat-completions`` model answers them through the loopback llama.cpp
server, ``assay import lm-eval`` brings the samples back, and ``robustness`` pairs them by
prompt."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.data.questions import load_outputs, load_questions
from tests.helpers.cli_output import one_error_line
from tests.helpers.lm_eval_cli import run_lm_eval, samples_files, skip_without_lm_eval
from tests.helpers.servers import start_llama_server
from tests.instructions.test_robustness import INPUTS, write_jsonl

skip_without_lm_eval()

TASKS = ["ifeval_varied_original", "ifeval_varied_typos", "ifeval_varied_line_per_sentence"]


def write_tasks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *options: str
) -> tuple[Path, Path]:
    inputs = write_jsonl(tmp_path / "input_data.jsonl", INPUTS)
    questions, tasks = tmp_path / "questions.jsonl", tmp_path / "tasks"
    argv = [
        "instructions",
        "vary",
        "--inputs",
        str(inputs),
        "--variants",
        "typos,line-per-sentence",
    ]
    assert main([*argv, "--out", str(questions), "--lm-eval", str(tasks), *options]) == 0
    assert f"wrote 3 lm-eval tasks ({', '.join(TASKS)}) to {tasks}" in capsys.readouterr().out
    return questions, tasks


def test_every_task_reads_the_same_documents_and_sends_its_wording(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions, tasks = write_tasks(tmp_path, capsys)
    varied = {
        q.question_id: {v.variant: v.prompt for v in q.variants}
        for q in load_questions(questions).questions
    }
    documents = {
        name: [json.loads(line) for line in (tasks / f"{name}.jsonl").read_text().splitlines()]
        for name in TASKS
    }
    assert [len(documents[name]) for name in TASKS] == [3, 3, 2]  # one sentence has no break
    by_key = {doc["key"]: doc for doc in documents[TASKS[0]]}
    for doc in documents[TASKS[2]]:
        assert doc == by_key[doc["key"]]  # the importer meets one document per prompt
        assert doc["variants"] == varied[f"ifeval-{doc['key']}"]
    assert (
        'doc_to_text: "{{variants[\\"line-per-sentence\\"]}}"'
        in (tasks / f"{TASKS[2]}.yaml").read_text()
    )


def run_tasks(
    llama_server: str, tmp_path: Path, tasks: Path, *gen_kwargs: str, seed: int = 1234
) -> Path:
    """lm-eval's chat model through the loopback server on every task (``seed``: the one it
    sends with every request, lm-eval's default 1234); the imported set."""
    workdir = tmp_path / "work"  # lm-eval's own cache goes beside it
    workdir.mkdir(parents=True)
    model_args = f"model=smollm2,base_url={llama_server}/chat/completions,seed={seed}"
    run_lm_eval(
        [
            "--model", "local-chat-completions", "--model_args", model_args,
            "--apply_chat_template", "--include_path", str(tasks), "--tasks", ",".join(TASKS),
            "--gen_kwargs", ",".join(["max_gen_toks=24", *gen_kwargs]),
            "--log_samples", "--output_path", "out",
        ],
        workdir,
    )  # fmt: skip
    samples = samples_files(workdir / "out")
    assert sorted(samples) == sorted(TASKS)
    imported = tmp_path / "imported"
    assert main(["import", "lm-eval", *map(str, samples.values()), "--out", str(imported)]) == 0
    return imported


def robustness(imported: Path, run: Path, *options: str) -> dict[str, Any]:
    argv = ["instructions", "robustness", "--questions", str(imported / "questions.jsonl")]
    argv += ["--outputs", str(imported), "--instructions-field", "meta.doc"]
    assert main([*argv, "--baseline", TASKS[0], "--out", str(run), "--no-report", *options]) == 0
    return dict(json.loads((run / "summary.json").read_text()))


@pytest.mark.slow
@pytest.mark.parametrize("metrics", ["lm-eval", "assay"])
def test_lm_eval_answers_the_variants_and_robustness_pairs_them(
    llama_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], metrics: str
) -> None:
    _, tasks = write_tasks(tmp_path, capsys, "--lm-eval-metrics", metrics)
    imported = run_tasks(llama_server, tmp_path, tasks)
    questions = load_questions(imported / "questions.jsonl")
    sent = {(q.question_id, v.variant): v.prompt for q in questions.questions for v in q.variants}
    for doc in (
        json.loads(line) for line in (tasks / f"{TASKS[1]}.jsonl").read_text().splitlines()
    ):
        assert sent[(f"ifeval-{doc['key']}", TASKS[1])] == doc["variants"]["typos"]
    summary = robustness(imported, tmp_path / "robustness")
    # in the order of the kinds, as vary writes them
    assert [(r["variant"], r["pairs"]) for r in summary["paired"]] == [(TASKS[1], 3), (TASKS[2], 2)]
    assert sum(r["outputs"] for r in summary["variants"]) == 8
    if metrics == "assay":  # lm-eval's own per-sample scores are robustness's verdicts
        verdicts = [
            json.loads(line) for line in (tmp_path / "robustness" / "verdicts.jsonl").open()
        ]
        scored = {
            (o.question_id, o.prompt_variant): o.meta["lm_eval"]["none"]["prompt_level_strict_acc"]
            for o in load_outputs(imported)
            if o.meta is not None
        }
        assert scored == {
            (v["question_id"], v["prompt_variant"]): v["follow_all_instructions"] for v in verdicts
        }


@pytest.mark.slow
def test_lm_eval_repeats_through_an_api_repeat_its_seed_and_runs_with_other_seeds_are_draws(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """lm-eval's API models send one seed (1234) with every request, so its repeats against a
    server that honours seeds are mostly the same answer: robustness says so. Runs with
    another seed each (--model_args seed=N), imported apart, are real draws. A server of its
    own: what an earlier request left in the server's prompt cache changes the rounding, and
    with it a sampled answer now and then."""
    with start_llama_server() as llama_server:
        repeats_then_seeds(llama_server, tmp_path, capsys)


def repeats_then_seeds(
    llama_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, tasks = write_tasks(tmp_path, capsys, "--lm-eval-repeats", "2")
    assert "repeats: 2" in (tasks / f"{TASKS[0]}.yaml").read_text()
    sampled = ("do_sample=True", "temperature=1.0")
    imported = run_tasks(llama_server, tmp_path / "repeats", tasks, *sampled)
    capsys.readouterr()
    summary = robustness(imported, tmp_path / "repeats" / "run", "--repeats-as-draws")
    assert summary["draws"] == ["repeat 1", "repeat 2"]
    assert summary["draw_outputs"] == [8, 8]
    assert summary["repeated_cells"] == 8 and summary["same_text_cells"] >= 6  # 8 here
    assert "cells with two draws or more have the same text in every draw" in (
        capsys.readouterr().err
    )

    (tmp_path / "seeds").mkdir()
    _, tasks = write_tasks(tmp_path / "seeds", capsys)
    draws = [
        run_tasks(llama_server, tmp_path / f"seed{seed}", tasks, *sampled, seed=seed)
        for seed in (1, 2)
    ]
    run = tmp_path / "seeds" / "run"
    argv = ["instructions", "robustness", "--questions", str(draws[0] / "questions.jsonl")]
    argv += ["--outputs", str(draws[0]), "--outputs", str(draws[1]), "--draws"]
    argv += ["--instructions-field", "meta.doc", "--baseline", TASKS[0], "--no-report"]
    assert main([*argv, "--out", str(run)]) == 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["repeated_cells"] == 8 and summary["same_text_cells"] < 8
    assert [(r["variant"], r["draws"]) for r in summary["noise"]] == [
        (TASKS[0], 6),
        (TASKS[1], 6),
        (TASKS[2], 4),
    ]


def test_assay_metrics_score_each_task_against_the_wording_it_sent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--lm-eval-metrics assay: a scorer per task in the module beside the tasks, which lm-eval
    imports; loaded here the same way, by path."""
    _, tasks = write_tasks(tmp_path, capsys, "--lm-eval-metrics", "assay")
    assert (
        "process_results: !function ifeval_metrics.process_results_ifeval_varied_typos"
        in (tasks / f"{TASKS[1]}.yaml").read_text()
    )
    spec = importlib.util.spec_from_file_location("ifeval_metrics", tasks / "ifeval_metrics.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    doc = json.loads((tasks / f"{TASKS[1]}.jsonl").read_text().splitlines()[1])  # end with Bye.
    scored = module.process_results_ifeval_varied_typos(doc, ["Fine. Bye."])
    assert scored == {
        "prompt_level_strict_acc": True,
        "inst_level_strict_acc": [True],
        "prompt_level_loose_acc": True,
        "inst_level_loose_acc": [True],
    }
    assert module.process_results_ifeval_varied_typos(doc, ["Fine."])["inst_level_strict_acc"] == [
        False
    ]
    assert module.agg_inst_level_acc([[True, False], [True]]) == pytest.approx(2 / 3)


def test_vary_needs_a_question_set_or_a_task_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = write_jsonl(tmp_path / "input_data.jsonl", INPUTS)
    argv = ["instructions", "vary", "--inputs", str(inputs)]
    assert main(argv) == 2
    assert one_error_line(capsys) == (
        "error: give --out (a question set), --lm-eval DIR (lm-eval tasks), --inspect FILE (an "
        "inspect_ai dataset), or several"
    )
    assert main([*argv, "--lm-eval", str(inputs)]) == 2
    assert one_error_line(capsys) == f"error: --lm-eval: {inputs} is a file, not a directory"
