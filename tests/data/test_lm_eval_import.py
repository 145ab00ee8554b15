"""``assay import lm-eval``: samples files written by the real lm-eval CLI (its
``local-chat-completions`` model against the loopback llama.cpp server, and its ``dummy``
model for task shapes a small model need not answer) become a judge question set and outputs
manifest, which ``assay judge run`` then judges with a stub judge; IFEval documents also become
IFEval's files, which ``assay instructions`` and ``assay import ifeval`` read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.data.questions import load_outputs, load_questions
from assay.judge.evalset import build_eval_set
from assay.report.export import JudgeRun, load_run
from tests.helpers.cli_output import one_error_line
from tests.helpers.lm_eval_cli import (
    lm_eval_workdir,
    run_lm_eval,
    samples_files,
    skip_without_lm_eval,
)

skip_without_lm_eval()

# another template over the example's documents: a second prompt variant of each question
TERSE = """\
include: capitals.yaml
task: capitals_terse
doc_to_text: "Capital of {{country}}?"
"""
# the dummy model answers every request: shapes of tasks the chat run does not cover
CHOICE = """\
include: capitals.yaml
task: capitals_choice
output_type: multiple_choice
doc_to_choice: ["Paris", "Canberra", "Ottawa"]
doc_to_target: "{{['Paris', 'Canberra', 'Ottawa'].index(capital)}}"
metric_list:
  - metric: acc
"""
TWICE = """\
include: capitals.yaml
task: capitals_twice
repeats: 2
filter_list:
  - name: first
    filter:
      - function: take_first
  - name: word
    filter:
      - function: regex
        regex_pattern: "([A-Z][a-z]+)"
      - function: take_first
"""


def write_tasks(workdir: Path) -> Path:
    tasks = workdir / "examples" / "lm_eval"
    for name, text in (("terse", TERSE), ("choice", CHOICE), ("twice", TWICE)):
        (tasks / f"capitals_{name}.yaml").write_text(text, encoding="utf-8")
    return tasks


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = lm_eval_workdir(tmp_path_factory.mktemp("lm-eval"))
    write_tasks(workdir)
    return workdir


@pytest.fixture(scope="module")
def chat(llama_server: str, workdir: Path) -> dict[str, Path]:
    """Task -> samples file of SmolLM2 behind the llama.cpp server: capitals,
    capitals_terse, ifeval_offline."""
    run_lm_eval(
        [
            "--model", "local-chat-completions",
            "--model_args", f"model=smollm2,base_url={llama_server}/chat/completions",
            "--apply_chat_template", "--include_path", "examples/lm_eval",
            "--tasks", "capitals,capitals_terse,ifeval_offline", "--limit", "3",
            "--log_samples", "--output_path", "chat",
        ],
        workdir,
    )  # fmt: skip
    return samples_files(workdir / "chat")


@pytest.fixture(scope="module")
def dummy(workdir: Path) -> dict[str, Path]:
    """Task -> samples file of lm-eval's dummy model: capitals_choice, capitals_twice."""
    run_lm_eval(
        [
            "--model", "dummy", "--include_path", "examples/lm_eval",
            "--tasks", "capitals_choice,capitals_twice", "--limit", "2",
            "--log_samples", "--output_path", "dummy",
        ],
        workdir,
    )  # fmt: skip
    return samples_files(workdir / "dummy")


def import_samples(out: Path, *files: Path) -> int:
    return main(["import", "lm-eval", *map(str, files), "--out", str(out)])


def judge(out: Path, run: Path) -> int:
    return main(
        [
            "judge", "run", "--questions", str(out / "questions.jsonl"), "--outputs", str(out),
            "--judge", "stub/judge-a", "--out", str(run), "--date", "2026-11-25",
        ]
    )  # fmt: skip


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.slow
def test_documents_tasks_and_the_model_meet_in_the_judge_cross_product(
    chat: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capitals, terse = chat["capitals"], chat["capitals_terse"]
    out = tmp_path / "judge_set"
    assert import_samples(out, capitals, terse) == 0
    printed = capsys.readouterr().out
    assert "lm-eval: read 6 rows from" in printed and "(6 samples)" in printed
    assert "kept 6 records: questions 3, prompt variants 2, target models 1" in printed
    questions = load_questions(out / "questions.jsonl")
    assert [q.question_id for q in questions.questions] == ["doc-0", "doc-1", "doc-2"]
    first = questions.questions[0]
    assert first.meta == {"doc": {"country": "France", "capital": "Paris"}, "target": "Paris"}
    # a chat request's lone user message is the prompt, as the task's template wrote it
    assert [(v.variant, v.prompt) for v in first.variants] == [
        ("capitals", "What is the capital of France? Answer in one sentence."),
        ("capitals_terse", "Capital of France?"),
    ]
    evalset = build_eval_set(questions, load_outputs(out))
    assert evalset.coverage.complete and {s.target_model for s in evalset.samples} == {"smollm2"}
    manifest = {(o["question_id"], o["prompt_variant"]): o for o in lines(out / "manifest.jsonl")}
    for sample in lines(capitals):
        output = manifest[(f"doc-{sample['doc_id']}", "capitals")]
        assert output["text"] == sample["resps"][0][0]
        assert output["output_id"] == f"doc-{sample['doc_id']}:capitals"
        assert output["meta"]["lm_eval"] == {"none": {"exact_match": sample["exact_match"]}}
        assert output["meta"]["gen_kwargs"] == sample["arguments"]["gen_args_0"]["arg_1"]
        assert output["meta"]["model_source"] == "local-chat-completions"
        assert output["meta"]["file"] == capitals.name


@pytest.mark.slow
def test_imported_samples_are_judged_and_sliced_by_lm_evals_metric(
    chat: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, run = tmp_path / "judge_set", tmp_path / "run"
    assert import_samples(out, chat["capitals"]) == 0
    assert judge(out, run) == 0
    assert "3 expected, 3 aligned; missing 0, duplicated 0" in capsys.readouterr().out
    loaded = load_run(run)
    assert isinstance(loaded, JudgeRun) and len(loaded.records) == 3
    record = loaded.records[0]
    assert record.sample_meta is not None and record.sample_meta["task"] == "capitals"
    by = "meta.lm_eval.none.exact_match"
    assert main(["judge", "analyze", str(run), "--by", by, "--no-report"]) == 0
    sliced = json.loads((run / "slices" / f"{by}.json").read_text(encoding="utf-8"))
    assert sliced  # the judge's verdicts beside lm-eval's exact_match


@pytest.mark.slow
def test_ifeval_documents_are_written_for_the_instruction_checker(
    chat: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = chat["ifeval_offline"]
    out = tmp_path / "judge_set"
    assert import_samples(out, samples) == 0
    layout = out / "ifeval" / "smollm2" / "ifeval_offline"
    assert f"wrote 3 IFEval responses of smollm2 under 'ifeval_offline' (strict and loose " \
        f"verdicts) to {layout}" in capsys.readouterr().out  # fmt: skip
    questions = load_questions(out / "questions.jsonl")
    assert [q.question_id for q in questions.questions] == [
        f"ifeval-{s['doc']['key']}" for s in lines(samples)
    ]
    strict = lines(layout / "eval_results_strict.jsonl")
    loose = lines(layout / "eval_results_loose.jsonl")
    for sample, strict_line, loose_line in zip(lines(samples), strict, loose, strict=True):
        assert strict_line["response"] == sample["resps"][0][0]
        assert strict_line["follow_instruction_list"] == sample["inst_level_strict_acc"]
        assert loose_line["follow_instruction_list"] == sample["inst_level_loose_acc"]
    # assay's checker beside lm-eval's verdicts on the same responses
    assert main(["instructions", "agreement", "--data-dir", str(layout)]) == 0
    assert "- strict: 3 prompts" in capsys.readouterr().out
    responses = layout / "input_response_data_smollm2.jsonl"
    assert main(["instructions", "check", "--data", str(responses)]) == 0
    assert "3 responses (strict)" in capsys.readouterr().out
    # and lm-eval's verdicts as ground truth of a judge set, with the same question ids
    ground_truth = tmp_path / "ifeval_set"
    assert main(
        [
            "import", "ifeval", str(layout / "input_data.jsonl"), "--responses", str(responses),
            "--labels", str(layout / "eval_results_strict.jsonl"),
            "--loose-labels", str(layout / "eval_results_loose.jsonl"), "--out", str(ground_truth),
        ]
    ) == 0  # fmt: skip
    labelled = lines(ground_truth / "labels.jsonl")
    assert [label["question_id"] for label in labelled] == [
        q.question_id for q in questions.questions
    ]
    assert {label["target_model"] for label in labelled} == {"smollm2"}


def test_log_likelihood_tasks_are_skipped_with_their_reason(
    dummy: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    choice = dummy["capitals_choice"]
    assert import_samples(tmp_path / "alone", choice) == 2
    assert one_error_line(capsys) == (
        f"error: {choice}: nothing to import: no record kept of 2 rows (2 samples); skipped: "
        "sample of a log-likelihood task (no text output) 2"
    )
    assert not (tmp_path / "alone").exists()
    out = tmp_path / "judge_set"
    assert import_samples(out, choice, dummy["capitals_twice"]) == 0
    printed = capsys.readouterr().out
    assert "skipped 2: sample of a log-likelihood task (no text output) 2" in printed
    assert f"  sample of a log-likelihood task (no text output): doc-0 (capitals_choice, " \
        f"{choice.name}), doc-1 (capitals_choice, {choice.name})" in printed  # fmt: skip
    # only the generation task's documents are questions: nothing left for the judge to miss
    questions = load_questions(out / "questions.jsonl")
    assert build_eval_set(questions, load_outputs(out)).coverage.complete


def test_repeats_are_variants_and_every_filter_keeps_its_values(
    dummy: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "judge_set"
    assert import_samples(out, dummy["capitals_twice"]) == 0
    assert "kept 4 records: questions 2, prompt variants 2, target models 1" in (
        capsys.readouterr().out
    )
    (question, _) = load_questions(out / "questions.jsonl").questions
    assert [v.variant for v in question.variants] == [
        "capitals_twice",
        "capitals_twice (repeat 2)",
    ]
    first, second = lines(out / "manifest.jsonl")[:2]
    assert (first["text"], second["text"]) == ("lol", "lol")  # the dummy model's answer
    assert (first["meta"]["repeat"], second["meta"]["repeat"]) == (1, 2)
    assert first["meta"]["lm_eval"] == {
        "first": {"exact_match": 0.0},
        "word": {"exact_match": 0.0},
    }
    # a filter that answered another text than the model's (the regex found no word)
    assert first["meta"]["filtered"] == {"word": "[invalid]"}
    assert first["meta"]["model_source"] == "dummy"


def test_older_releases_list_of_arguments_reads_alike(
    dummy: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def argument_lists(rows: list[dict[str, Any]]) -> None:
        for row in rows:
            row["arguments"] = [list(a.values()) for a in row["arguments"].values()]

    twice = dummy["capitals_twice"]
    path = edited(twice, tmp_path / "m", argument_lists)
    for source, out in ((twice, tmp_path / "new"), (path, tmp_path / "old")):
        assert import_samples(out, source) == 0
    capsys.readouterr()
    for name in ("questions.jsonl", "manifest.jsonl"):
        assert lines(tmp_path / "old" / name) == lines(tmp_path / "new" / name)


@pytest.mark.slow
def test_a_new_import_removes_the_ifeval_files_of_an_earlier_one_and_nothing_else(
    chat: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The judge set is replaced by a new import into the same folder: the IFEval files of
    the earlier one (another model, or no IFEval task at all) would be read as its."""
    out = tmp_path / "judge_set"
    assert import_samples(out, chat["ifeval_offline"]) == 0
    first = out / "ifeval" / "smollm2" / "ifeval_offline"
    notes = out / "ifeval" / "notes.txt"
    notes.write_text("mine", encoding="utf-8")
    other = edited(
        chat["ifeval_offline"], tmp_path / "other-model", lambda rows: None, with_results=False
    )
    capsys.readouterr()
    assert import_samples(out, other) == 0
    second = out / "ifeval" / "other-model" / "ifeval_offline"
    assert f"removed the IFEval files of an earlier import from {first}" in capsys.readouterr().out
    assert not first.parent.exists()
    assert (second / "input_response_data_other-model.jsonl").is_file()
    assert import_samples(out, chat["capitals"]) == 0
    assert not second.parent.exists()
    assert notes.read_text(encoding="utf-8") == "mine"
    assert sorted(p.name for p in (out / "ifeval").iterdir()) == ["notes.txt"]


def test_without_a_results_file_the_folder_names_the_model(
    dummy: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alone = tmp_path / "my-model" / dummy["capitals_twice"].name
    alone.parent.mkdir()
    shutil.copy(dummy["capitals_twice"], alone)
    assert import_samples(tmp_path / "out", alone) == 0
    capsys.readouterr()
    outputs = lines(tmp_path / "out" / "manifest.jsonl")
    assert {o["target_model"] for o in outputs} == {"my-model"}
    assert {o["meta"]["model_source"] for o in outputs} == {None}


def edited(
    samples: Path,
    folder: Path,
    change: Any,
    *,
    name: str | None = None,
    with_results: bool = True,
) -> Path:
    """A copy of a real samples file in ``folder`` with ``change(lines)`` applied, and with the
    results file beside it unless ``with_results`` is false (the folder then names the model)."""
    folder.mkdir(parents=True, exist_ok=True)
    if with_results:
        for results in samples.parent.glob("results_*.json"):
            shutil.copy(results, folder)
    rows = lines(samples)
    change(rows)
    path = folder / (name or samples.name)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_an_empty_response_is_reported_and_left_to_the_coverage_check(
    dummy: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def silent_first_repeat(rows: list[dict[str, Any]]) -> None:
        for row in rows:
            if row["doc_id"] == 0:
                row["resps"] = [[" ", "lol"]]

    path = edited(dummy["capitals_twice"], tmp_path / "m", silent_first_repeat)
    out = tmp_path / "judge_set"
    assert import_samples(out, path) == 0
    printed = capsys.readouterr().out
    assert "kept 3 records" in printed
    assert f"  sample without a text output: doc-0 (capitals_twice, {path.name})" in printed
    evalset = build_eval_set(load_questions(out / "questions.jsonl"), load_outputs(out))
    assert not evalset.coverage.complete
    assert judge(out, tmp_path / "run") == 2
    assert "missing: doc-0 x capitals_twice x " in capsys.readouterr().err


def test_a_bad_line_is_refused_naming_file_line_and_field(
    dummy: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def drop_doc(rows: list[dict[str, Any]]) -> None:
        del rows[1]["doc"]

    path = edited(dummy["capitals_twice"], tmp_path / "m", drop_doc)
    assert import_samples(tmp_path / "out", path) == 2
    assert one_error_line(capsys).startswith(
        f"error: {path}:2 field 'doc': missing field; this does not look like a per-sample "
        "lm-eval file (the object has fields: arguments, "
    )

    def numbers_for_texts(rows: list[dict[str, Any]]) -> None:
        rows[0]["resps"] = [[0.5]]

    path = edited(dummy["capitals_twice"], tmp_path / "n", numbers_for_texts)
    assert import_samples(tmp_path / "out", path) == 2
    assert one_error_line(capsys).startswith(
        f"error: {path}:1 field 'resps': expected one text per repeat, as a generate_until "
        "task writes them"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        (
            "samples_capitals_2026-11-25T13-09-58.799275.jsonl",
            '{"doc_id": 0,\n',
            ":1: invalid JSON (",
        ),
        ("capitals.jsonl", "{}\n", ": not named as lm-eval names a samples file"),
    ],
)
def test_a_file_that_is_no_samples_file_is_refused_naming_it(
    name: str, content: str, problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    assert import_samples(tmp_path / "out", path) == 2
    assert one_error_line(capsys).startswith(f"error: {path}{problem}")
    assert not (tmp_path / "out").exists()


def test_a_results_file_that_is_no_json_is_refused_naming_it(
    dummy: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = edited(dummy["capitals_twice"], tmp_path / "m", lambda rows: None)
    (results,) = path.parent.glob("results_*.json")
    results.write_text("[1, 2]", encoding="utf-8")
    assert import_samples(tmp_path / "out", path) == 2
    assert one_error_line(capsys) == (
        f"error: {results}: not an lm-eval results file (a JSON list, not an object)"
    )


def test_colliding_ids_are_refused_naming_the_files(
    dummy: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    twice = dummy["capitals_twice"]
    assert import_samples(tmp_path / "out", twice, twice) == 2
    assert "'capitals_twice' is also in this file too (is the file named twice?)" in (
        one_error_line(capsys)
    )

    def another_dataset(rows: list[dict[str, Any]]) -> None:
        for row in rows:
            row["doc"] = {"city": "Lyon"}

    other_task = twice.name.replace("capitals_twice", "cities")
    path = edited(twice, tmp_path / "cities", another_dataset, name=other_task)
    assert import_samples(tmp_path / "out", twice, path) == 2
    line = one_error_line(capsys)
    assert line.startswith(
        f"error: {path}:1 field 'doc': doc-0 is another document here than in {twice}"
    )

    def another_prompt(rows: list[dict[str, Any]]) -> None:
        for row in rows:
            row["arguments"]["gen_args_0"]["arg_0"] = "Which city?"

    # another model's answers to the same task, asked otherwise
    path = edited(twice, tmp_path / "other-model", another_prompt, with_results=False)
    assert import_samples(tmp_path / "out", twice, path) == 2
    assert one_error_line(capsys).startswith(
        f"error: {path}:1 field 'arguments': prompt 'capitals_twice' of doc-0 reads 'Which "
        "city?' here, "
    )
    assert not (tmp_path / "out").exists()
