"""``assay import inspect``: logs written by real inspect_ai evaluations (inspect's own
``eval()`` with its ``mockllm`` provider, and once with its OpenAI-compatible provider against
the loopback llama.cpp server) become a judge question set and outputs manifest, which
``assay judge run`` then judges with a stub judge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from assay.cli import main
from assay.data.questions import load_outputs, load_questions
from assay.judge.evalset import build_eval_set
from assay.report.export import JudgeRun, load_run

inspect_ai = pytest.importorskip("inspect_ai", reason="the inspect extra")  # in the dev extra

from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText  # noqa: E402

from tests.helpers.cli_output import one_error_line  # noqa: E402
from tests.helpers.inspect_evals import (  # noqa: E402
    QA_SAMPLES,
    fail_on,
    inspect_dirs_in_tmp,
    mock_model,
    run_eval,
)

# a 1x1 PNG: an input the judge, which reads text, would not see
PIXEL = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8Dw"
    "HwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
FAULTY_SAMPLES = (
    Sample(id="boom", input="Use the tool."),
    Sample(id="silent", input="Reply with nothing."),
    Sample(id="fine", input="Reply with something."),
    Sample(
        id="picture",
        input=[
            ChatMessageUser(
                content=[ContentText(text="What is in this picture?"), ContentImage(image=PIXEL)]
            )
        ],
    ),
)


@dataclass(frozen=True)
class Logs:
    model_a: Path  # QA_SAMPLES x 2 epochs by mockllm/model-a
    model_b: Path  # the same by mockllm/model-b, a .json log
    faulty: Path  # a sample with an error, one with an empty output, one fine
    failed: Path  # a run that stopped on an error (status "error")
    other_dataset: Path  # sample id "capital" with another input


@pytest.fixture(autouse=True, scope="module")
def _inspect_dirs_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with inspect_dirs_in_tmp(tmp_path_factory):
        yield


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Logs:
    """The logs every test here reads, from one inspect session (its first eval takes
    seconds; later ones a fraction of a second)."""
    log_dir = tmp_path_factory.mktemp("inspect-logs")
    silent = mock_model("model-a", lambda prompt: "" if "nothing" in prompt else "Something.")
    return Logs(
        model_a=run_eval(QA_SAMPLES, mock_model("model-a"), log_dir / "a", epochs=2),
        model_b=run_eval(
            QA_SAMPLES, mock_model("model-b"), log_dir / "b", epochs=2, log_format="json"
        ),
        faulty=run_eval(
            FAULTY_SAMPLES, silent, log_dir / "faulty", solver=fail_on("boom"), fail_on_error=False
        ),
        failed=run_eval(
            FAULTY_SAMPLES, mock_model("model-a"), log_dir / "failed", solver=fail_on("boom")
        ),
        other_dataset=run_eval(
            [Sample(id="capital", input="What is the capital of Italy?")],
            mock_model("model-b"),
            log_dir / "other",
        ),
    )


def import_logs(out: Path, *logs: Path) -> int:
    return main(["import", "inspect", *map(str, logs), "--out", str(out)])


def test_epochs_and_models_meet_in_the_judge_cross_product(
    logs: Logs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (logs.model_a.suffix, logs.model_b.suffix) == (".eval", ".json")
    out = tmp_path / "judge_set"
    assert import_logs(out, logs.model_a, logs.model_b) == 0
    printed = capsys.readouterr().out
    assert "inspect: read 12 rows" in printed
    assert "kept 12 records: questions 3, epochs 2, target models 2" in printed
    assert "wrote 3 questions" in printed and "wrote 12 outputs" in printed

    questions = load_questions(out / "questions.jsonl")
    evalset = build_eval_set(questions, load_outputs(out))
    assert evalset.coverage.complete and len(evalset.samples) == 3 * 2 * 2
    assert sorted({s.target_model for s in evalset.samples}) == [
        "mockllm/model-a",
        "mockllm/model-b",
    ]
    colour = questions.variant("colour", "epoch-2")
    assert colour is not None
    question, variant = colour
    # a chat input keeps each message's role; the sample's target and metadata go into meta
    assert variant.prompt == "system: Answer in one word.\n\nuser: Name a primary colour."
    assert question.meta == {"target": ["red", "blue", "yellow"], "metadata": {}}
    first = questions.variant("capital", "epoch-1")
    assert first is not None
    assert first[1].prompt == "What is the capital of France?"
    assert first[0].meta == {"target": "Paris", "metadata": {"topic": "geography"}}
    sample = next(
        s
        for s in evalset.samples
        if (s.question_id, s.prompt_variant, s.target_model) == ("3", "epoch-2", "mockllm/model-b")
    )
    assert sample.output_text == "model-b answers: Say hello."
    assert sample.output_id == "qa:3:epoch-2"


def test_imported_logs_are_judged_end_to_end(
    logs: Logs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, run = tmp_path / "judge_set", tmp_path / "run"
    assert import_logs(out, logs.model_a, logs.model_b) == 0
    judged = main(
        [
            "judge", "run", "--questions", str(out / "questions.jsonl"), "--outputs", str(out),
            "--judge", "stub/judge-a", "--out", str(run), "--date", "2026-11-25",
        ]
    )  # fmt: skip
    assert judged == 0
    assert "12 expected, 12 aligned; missing 0, duplicated 0" in capsys.readouterr().out
    loaded = load_run(run)
    assert isinstance(loaded, JudgeRun) and len(loaded.records) == 12
    record = next(r for r in loaded.records if r.question_id == "capital")
    # what inspect knew of the sample travels with every evaluation of it
    assert record.sample_meta is not None
    assert record.sample_meta["target"] == "Paris"
    assert record.sample_meta["metadata"] == {"topic": "geography"}
    assert record.sample_meta["scores"] == {"includes": "I"}
    assert record.sample_meta["task"] == "qa"
    assert record.evaluated_output.startswith(record.target_model.removeprefix("mockllm/"))


def test_errored_and_empty_samples_are_reported_and_left_to_the_coverage_check(
    logs: Logs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "judge_set"
    assert import_logs(out, logs.faulty) == 0
    printed = capsys.readouterr().out
    assert "kept 1 records" in printed
    assert (
        "skipped 3: sample with an error 1, sample without an output 1, "
        "input with non-text content (image, audio, video) 1"
    ) in printed
    assert "  input with non-text content (image, audio, video): picture (epoch 1, " in printed
    assert f"  sample with an error: boom (epoch 1, {logs.faulty.name})" in printed
    assert f"  sample without an output: silent (epoch 1, {logs.faulty.name})" in printed
    # the skipped cells stay in the question set: the judge names them missing, never judges ""
    evalset = build_eval_set(load_questions(out / "questions.jsonl"), load_outputs(out))
    assert not evalset.coverage.complete
    assert [s.question_id for s in evalset.samples] == ["fine"]
    code = main(
        [
            "judge", "run", "--questions", str(out / "questions.jsonl"), "--outputs", str(out),
            "--judge", "stub/judge-a", "--out", str(tmp_path / "run"),
        ]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "missing: boom x epoch-1 x mockllm/model-a" in err
    assert "missing: silent x epoch-1 x mockllm/model-a" in err


def test_a_failed_run_is_refused_naming_the_log(
    logs: Logs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert import_logs(tmp_path / "out", logs.model_a, logs.failed) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"error: {logs.failed}: the log of a run that did not finish")
    assert "status 'error': RuntimeError" in line and "crashed" in line
    assert not (tmp_path / "out").exists()


INTERRUPTED_EVAL = """
import sys
from pathlib import Path
from inspect_ai.solver import solver
from tests.helpers.inspect_evals import QA_SAMPLES, mock_model, run_eval

@solver
def interrupted():
    async def solve(state, generate):
        raise KeyboardInterrupt  # Ctrl-C in the middle of the run
    return solve

try:
    run_eval(QA_SAMPLES, mock_model("model-a"), Path(sys.argv[1]), solver=interrupted())
except KeyboardInterrupt:
    pass
"""


def test_an_interrupted_run_is_refused_naming_the_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a process interrupted mid-run leaves the log inspect opened at the start: status "started"
    log_dir = tmp_path / "logs"
    root = Path(__file__).resolve().parents[2]
    subprocess.run(
        [sys.executable, "-c", INTERRUPTED_EVAL, str(log_dir)],
        check=True,
        cwd=root,
        capture_output=True,
        env={**os.environ, "XDG_DATA_HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path)},
    )
    (log,) = log_dir.iterdir()
    assert import_logs(tmp_path / "out", log) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"error: {log}: the log of a run that did not finish (status 'started')")
    assert not (tmp_path / "out").exists()


def test_a_cancelled_run_is_refused_naming_the_log(
    logs: Logs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # inspect's own writer, given the log of a run that was cancelled part way
    from inspect_ai.log import read_eval_log, write_eval_log

    cancelled = read_eval_log(str(logs.model_a)).model_copy(update={"status": "cancelled"})
    path = tmp_path / "cancelled.eval"
    write_eval_log(cancelled, str(path))
    assert import_logs(tmp_path / "out", logs.model_b, path) == 2
    line = one_error_line(capsys)
    assert line == (
        f"error: {path}: the log of a run that did not finish (status 'cancelled'); assay imports"
        " logs of finished runs: rerun the eval (inspect eval-retry) and import its log"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("notes.eval", b"not a zip archive"),
        ("results.json", json.dumps({"accuracy": 0.5}).encode()),
        ("questions.jsonl", b'{"question_id": "Q1"}\n'),
    ],
)
def test_a_file_that_is_no_eval_log_is_refused_naming_it(
    name: str, content: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert import_logs(tmp_path / "out", path) == 2
    assert one_error_line(capsys).startswith(f"error: {path}: not an inspect_ai eval log (")


def test_a_json_log_of_another_shape_is_refused_naming_where(
    logs: Logs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A .json log whose sample lacks its input: the error says where, not only that the file
    failed inspect_ai's validation."""
    from inspect_ai.log import read_eval_log, write_eval_log

    written = tmp_path / "written.json"
    write_eval_log(read_eval_log(str(logs.model_a)), str(written))
    log = json.loads(written.read_text(encoding="utf-8"))
    del log["samples"][0]["input"]
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    assert import_logs(tmp_path / "out", path) == 2
    assert one_error_line(capsys) == (
        f"error: {path}: not an inspect_ai eval log (ValidationError: 1 validation error for "
        "EvalLog; the first at samples.0.input: Field required)"
    )


def test_colliding_logs_are_refused_naming_both_files(
    logs: Logs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert import_logs(tmp_path / "out", logs.model_a, logs.model_a) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"error: {logs.model_a}: mockllm/model-a's output for sample")
    assert "is also in this log too (is the log named twice?)" in line
    assert import_logs(tmp_path / "out", logs.model_b, logs.other_dataset) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"error: {logs.other_dataset}: sample capital has another input")
    assert str(logs.model_b) in line


def test_out_that_is_a_file_is_refused_naming_what_would_be_written(
    logs: Logs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.write_text("mine\n", encoding="utf-8")
    assert import_logs(out, logs.model_a) == 2
    assert one_error_line(capsys) == (
        f"error: --out {out} is a file, not a directory: this importer writes "
        "questions.jsonl, manifest.jsonl into a directory (replacing files of those names, as "
        "every importer replaces its output)"
    )
    assert out.read_text(encoding="utf-8") == "mine\n"


def test_without_the_extra_one_line_names_it(logs: Logs, tmp_path: Path) -> None:
    # inspect_ai made unimportable in a fresh interpreter, as where the extra is not installed
    code = (
        "import sys\n"
        "sys.modules['inspect_ai'] = None\n"
        "sys.modules['inspect_ai.log'] = None\n"
        "from assay.cli import main\n"
        f"sys.exit(main(['import', 'inspect', {str(logs.model_a)!r}, '--out', "
        f"{str(tmp_path / 'out')!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "error: assay import inspect needs inspect_ai, which is not installed: "
        "pip install 'assay[inspect]'"
    ]


@pytest.mark.slow
def test_a_log_of_the_llama_server_is_judged(
    llama_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # inspect's OpenAI-compatible provider: openai-api/<service>/<model> reads
    # <SERVICE>_BASE_URL and <SERVICE>_API_KEY
    monkeypatch.setenv("LLAMACPP_BASE_URL", llama_server)
    monkeypatch.setenv("LLAMACPP_API_KEY", "none")
    log = run_eval(
        QA_SAMPLES[:2],
        "openai-api/llamacpp/smollm2",
        tmp_path / "logs",
        max_tokens=24,
        temperature=0.0,
        seed=0,
    )
    out, run = tmp_path / "judge_set", tmp_path / "run"
    assert import_logs(out, log) == 0
    outputs = load_outputs(out)
    assert [o.target_model for o in outputs] == ["openai-api/llamacpp/smollm2"] * 2
    assert all(o.text.strip() for o in outputs)
    judged = main(
        [
            "judge", "run", "--questions", str(out / "questions.jsonl"), "--outputs", str(out),
            "--judge", "stub/judge-a", "--out", str(run), "--date", "2026-11-25",
        ]
    )  # fmt: skip
    assert judged == 0
    loaded = load_run(run)
    assert isinstance(loaded, JudgeRun) and len(loaded.records) == 2
    assert {r.evaluated_output for r in loaded.records} == {o.text for o in outputs}
