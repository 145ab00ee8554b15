"""``assay import promptfoo``: results files written by the real promptfoo CLI (its ``echo``
provider, Python providers, and once its OpenAI-compatible provider against the loopback
llama.cpp server) become a judge question set and outputs manifest, which ``assay judge run``
then judges with a stub judge."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from assay.cli import main
from assay.data.questions import load_outputs, load_questions
from assay.judge.evalset import build_eval_set
from assay.report.export import JudgeRun, load_run
from tests.helpers.cli_output import one_error_line
from tests.helpers.promptfoo_cli import promptfoo_command, rows, run_promptfoo

PROMPTS = [
    {"id": "Q: {{question}}", "label": "plain"},
    "Answer briefly: {{question}}",  # no label: promptfoo labels it with the template
]
TESTS: list[dict[str, Any]] = [
    {
        "description": "France",
        "vars": {"question": "What is the capital of France?"},
        "metadata": {"topic": "geography"},
        "assert": [{"type": "contains", "value": "France"}],
    },
    # a list var: promptfoo makes one test case per value
    {"vars": {"question": ["What is the capital of Italy?", "What is the capital of Spain?"]}},
]
SUITE = {
    "prompts": PROMPTS,
    "providers": ["echo", {"id": "echo", "label": "shouter"}],
    "tests": TESTS,
}
FAULTY_PROVIDER = """
def call_api(prompt, options, context):
    if "boom" in prompt:
        return {"error": "the provider failed"}
    if "silent" in prompt:
        return {"output": ""}
    if "tool" in prompt:
        return {"output": {"name": "lookup", "arguments": {"q": 1}}}
    return {"output": "Something."}
"""


@dataclass(frozen=True)
class Results:
    suite: Path  # SUITE: 3 test cases x 2 prompts x 2 providers
    repeated: Path  # SUITE's first test case under `--repeat 2`
    faulty: Path  # a failed call, an empty output, a structured output, one fine
    other_suite: Path  # test-1 with other vars


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Results:
    command = promptfoo_command()
    root = tmp_path_factory.mktemp("promptfoo")
    faulty_dir = root / "faulty"
    faulty_dir.mkdir()
    (faulty_dir / "provider.py").write_text(FAULTY_PROVIDER, encoding="utf-8")
    faulty = {
        "prompts": ["{{text}}"],
        "providers": [{"id": "file://provider.py", "label": "flaky"}],
        "tests": [{"vars": {"text": t}} for t in ("boom", "silent", "tool", "fine")],
    }
    other = {"prompts": PROMPTS, "providers": ["echo"], "tests": [{"vars": {"question": "Hi?"}}]}
    return Results(
        suite=run_promptfoo(command, SUITE, root / "suite"),
        repeated=run_promptfoo(
            command, {**SUITE, "tests": TESTS[:1]}, root / "repeated", args=["--repeat", "2"]
        ),
        faulty=run_promptfoo(command, faulty, faulty_dir),
        other_suite=run_promptfoo(command, other, root / "other"),
    )


def import_results(out: Path, *files: Path) -> int:
    return main(["import", "promptfoo", *map(str, files), "--out", str(out)])


def judge(out: Path, run: Path) -> int:
    return main(
        [
            "judge", "run", "--questions", str(out / "questions.jsonl"), "--outputs", str(out),
            "--judge", "stub/judge-a", "--out", str(run), "--date", "2026-11-25",
        ]
    )  # fmt: skip


def test_prompts_providers_and_tests_meet_in_the_judge_cross_product(
    results: Results, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "judge_set"
    assert import_results(out, results.suite) == 0
    printed = capsys.readouterr().out
    assert "promptfoo: read 12 rows" in printed
    assert "kept 12 records: questions 3, prompt variants 2, target models 2" in printed
    questions = load_questions(out / "questions.jsonl")
    evalset = build_eval_set(questions, load_outputs(out))
    assert evalset.coverage.complete and len(evalset.samples) == 12
    assert sorted({s.target_model for s in evalset.samples}) == ["echo", "shouter"]
    assert [q.question_id for q in questions.questions] == ["test-1", "test-2", "test-3"]
    # a labelled prompt is named by its label; one without, by its template (promptfoo's label)
    found = questions.variant("test-1", "plain")
    assert found is not None
    question, variant = found
    assert variant.prompt == "Q: What is the capital of France?"
    assert question.meta == {
        "description": "France",
        "vars": {"question": "What is the capital of France?"},
        "metadata": {"topic": "geography"},
    }
    spain = questions.variant("test-3", "Answer briefly: {{question}}")
    assert spain is not None
    assert spain[1].prompt == "Answer briefly: What is the capital of Spain?"
    assert spain[0].meta == {
        "description": None,
        "vars": {"question": "What is the capital of Spain?"},
        "metadata": {},
    }
    sample = next(
        s
        for s in evalset.samples
        if (s.question_id, s.prompt_variant, s.target_model) == ("test-1", "plain", "shouter")
    )
    assert sample.output_text == "Q: What is the capital of France?"  # the echo provider
    assert sample.output_id == "test-1:plain"


def test_imported_results_are_judged_end_to_end(
    results: Results, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, run = tmp_path / "judge_set", tmp_path / "run"
    assert import_results(out, results.suite) == 0
    assert judge(out, run) == 0
    assert "12 expected, 12 aligned; missing 0, duplicated 0" in capsys.readouterr().out
    loaded = load_run(run)
    assert isinstance(loaded, JudgeRun) and len(loaded.records) == 12
    record = next(
        r for r in loaded.records if (r.question_id, r.prompt_variant) == ("test-1", "plain")
    )
    # what promptfoo knew of the row travels with every evaluation of it
    assert record.sample_meta is not None
    assert record.sample_meta["description"] == "France"
    assert record.sample_meta["metadata"] == {"topic": "geography"}
    verdict = record.sample_meta["promptfoo"]
    assert verdict["pass"] is True and verdict["score"] == 1
    assert verdict["assertions"] == [
        {"type": "contains", "pass": True, "score": 1, "reason": "Assertion passed"}
    ]
    assert record.sample_meta["file"] == results.suite.name


def test_repeats_are_variants_of_one_question(
    results: Results, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "judge_set"
    assert import_results(out, results.repeated) == 0
    assert "kept 8 records: questions 1, prompt variants 4, target models 2" in (
        capsys.readouterr().out
    )
    (question,) = load_questions(out / "questions.jsonl").questions
    assert [v.variant for v in question.variants] == [
        "plain",
        "Answer briefly: {{question}}",
        "plain (repeat 2)",
        "Answer briefly: {{question}} (repeat 2)",
    ]
    # the repeat-free run of the same suite names the test case alike: both import together
    # only when they are different providers' outputs, so here they collide
    assert import_results(tmp_path / "both", results.suite, results.repeated) == 2
    assert "echo's output for test-1 under 'plain' is also in" in one_error_line(capsys)


def test_errored_and_empty_rows_are_reported_and_left_to_the_coverage_check(
    results: Results, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "judge_set"
    assert import_results(out, results.faulty) == 0
    printed = capsys.readouterr().out
    assert "kept 1 records" in printed
    assert "skipped 3: row with an error 1, row without a text output 2" in printed
    boom = next(r for r in rows(results.faulty) if r["vars"]["text"] == "boom")
    index = rows(results.faulty).index(boom)
    assert f"  row with an error: test-1 x {{{{text}}}} x row {index} (flaky, results.json)" in (
        printed
    )
    evalset = build_eval_set(load_questions(out / "questions.jsonl"), load_outputs(out))
    assert not evalset.coverage.complete
    assert [s.question_id for s in evalset.samples] == ["test-4"]
    assert judge(out, tmp_path / "run") == 2
    err = capsys.readouterr().err
    for question_id in ("test-1", "test-2", "test-3"):
        assert f"missing: {question_id} x {{{{text}}}} x flaky" in err


def edited(results: Path, tmp_path: Path, change: Any) -> Path:
    """A copy of a real results file with ``change(document)`` applied."""
    document = json.loads(results.read_text(encoding="utf-8"))
    change(document)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("not json at all", "not a promptfoo results file (not JSON: "),
        (json.dumps([1, 2]), "not a promptfoo results file (a JSON list, not an object"),
        (json.dumps({"accuracy": 0.5}), "not a promptfoo results file (no 'results.results'"),
    ],
)
def test_a_file_that_is_no_results_file_is_refused_naming_it(
    content: str, problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "results.json"
    path.write_text(content, encoding="utf-8")
    assert import_results(tmp_path / "out", path) == 2
    assert one_error_line(capsys).startswith(f"error: {path}: {problem}")
    assert not (tmp_path / "out").exists()


def test_a_row_without_a_field_is_refused_naming_row_and_field(
    results: Results, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def drop_prompt_text(document: dict[str, Any]) -> None:
        del document["results"]["results"][5]["prompt"]["raw"]

    path = edited(results.suite, tmp_path, drop_prompt_text)
    assert import_results(tmp_path / "out", path) == 2
    assert one_error_line(capsys) == (
        f"error: {path}: results.results[5].prompt.raw: expected a string, missing: not a "
        "promptfoo results row"
    )


def test_a_response_that_is_no_object_is_refused_not_skipped(
    results: Results, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def bare_string_response(document: dict[str, Any]) -> None:
        document["results"]["results"][2]["response"] = "Paris."

    path = edited(results.suite, tmp_path, bare_string_response)
    assert import_results(tmp_path / "out", path) == 2
    assert one_error_line(capsys) == (
        f"error: {path}: results.results[2].response: expected an object (its text under "
        "'output'), got str: not a promptfoo results row"
    )
    assert not (tmp_path / "out").exists()


def test_colliding_ids_are_refused_naming_file_row_and_field(
    results: Results, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert import_results(tmp_path / "out", results.suite, results.suite) == 2
    assert "is also in this file too (is the file named twice?)" in one_error_line(capsys)

    def one_provider_name(document: dict[str, Any]) -> None:
        for row in document["results"]["results"]:
            row["provider"]["label"] = ""

    path = edited(results.suite, tmp_path, one_provider_name)
    assert import_results(tmp_path / "out", path) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"error: {path}: results.results[")
    assert "].provider: two providers are named 'echo' (rows " in line

    def one_prompt_label(document: dict[str, Any]) -> None:
        for row in document["results"]["results"]:
            row["prompt"]["label"] = "plain"

    path = edited(results.suite, tmp_path, one_prompt_label)
    assert import_results(tmp_path / "out", path) == 2
    assert "].prompt.label: two prompts are named 'plain' (rows " in one_error_line(capsys)

    assert import_results(tmp_path / "out", results.suite, results.other_suite) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"error: {results.other_suite}: results.results[")
    assert f"].vars: test-1 is another test case here than in {results.suite}" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_results_of_the_llama_server_are_judged(
    llama_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    provider = {
        "id": "openai:chat:smollm2",
        "label": "smollm2",
        "config": {
            "apiBaseUrl": llama_server,
            "apiKey": "none",
            "max_tokens": 24,
            "temperature": 0,
            "seed": 0,
        },
    }
    suite = {"prompts": PROMPTS[:1], "providers": [provider], "tests": TESTS}
    results = run_promptfoo(promptfoo_command(), suite, tmp_path / "promptfoo")
    out, run = tmp_path / "judge_set", tmp_path / "run"
    assert import_results(out, results) == 0
    outputs = load_outputs(out)
    assert [o.target_model for o in outputs] == ["smollm2"] * 3
    assert all(o.text and o.text.strip() for o in outputs)
    manifest = [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]
    assert all(line["completion_tokens"] for line in manifest)  # the server counts its tokens
    assert judge(out, run) == 0
    loaded = load_run(run)
    assert isinstance(loaded, JudgeRun) and len(loaded.records) == 3
    assert {r.evaluated_output for r in loaded.records} == {o.text for o in outputs}
