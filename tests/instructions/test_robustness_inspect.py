"""Variants run by inspect_ai: ``instructions vary --inspect`` writes the dataset, inspect's own
``eval()`` answers it (its ``mockllm`` provider writing IFEval's published GPT-4 responses, in
lower case under the ``lowercase`` wording) and scores it with ``instructions_followed()``,
``assay import inspect`` brings the log back as one question per prompt with a variant per
wording, and ``instructions robustness`` pairs them: its rates equal the inspect scorer's."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="the inspect extra")  # in the dev extra

from inspect_ai import Task, eval
from inspect_ai.dataset import json_dataset
from inspect_ai.log import EvalLog
from inspect_ai.solver import generate

from assay.cli import main
from assay.instructions.ifeval_data import read_responses
from assay.integrations.inspect_ai import instructions_followed
from tests.conftest import SHARED_DATA
from tests.helpers.inspect_evals import inspect_dirs_in_tmp, mock_model

IFEVAL = SHARED_DATA / "ifeval"
PROMPTS = 12
EPOCHS = 2


@pytest.fixture(autouse=True, scope="module")
def _inspect_dirs_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with inspect_dirs_in_tmp(tmp_path_factory):
        yield


def _replies(dataset: Path) -> dict[str, str]:
    """Each wording's answer: the response IFEval published for the original prompt, in lower
    case under the lowercase wording (an answer that changes with the wording)."""
    published = {r.prompt: r.response for r in read_responses(IFEVAL / RESPONSES)}
    samples = [json.loads(line) for line in dataset.read_text(encoding="utf-8").splitlines()]
    original = {
        s["metadata"]["assay"]["question_id"]: published[s["input"]]
        for s in samples
        if s["metadata"]["assay"]["variant"] == "original"
    }
    replies = {}
    for sample in samples:
        placed = sample["metadata"]["assay"]
        answer = original[placed["question_id"]]
        replies[sample["input"]] = answer.lower() if placed["variant"] == "lowercase" else answer
    return replies


RESPONSES = "input_response_data_gpt4_20231107_145030.jsonl"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, EvalLog, dict[str, Any]]:
    work = tmp_path_factory.mktemp("inspect-variants")
    dataset = work / "varied.jsonl"
    vary = ["instructions", "vary", "--inputs", str(IFEVAL / "input_data.jsonl")]
    assert main([*vary, "--limit", str(PROMPTS), "--inspect", str(dataset)]) == 0
    replies = _replies(dataset)
    task = Task(
        dataset=json_dataset(str(dataset)), solver=generate(), scorer=instructions_followed()
    )
    (log,) = eval(
        task,
        model=mock_model("gpt-4-as-published", lambda prompt: replies[prompt]),
        epochs=EPOCHS,
        log_dir=str(work / "logs"),
        display="none",
    )
    assert log.status == "success" and log.location
    imported, robustness = work / "imported", work / "robustness"
    assert main(["import", "inspect", log.location, "--out", str(imported)]) == 0
    argv = ["instructions", "robustness", "--questions", str(imported / "questions.jsonl")]
    argv += ["--outputs", str(imported), "--instructions-field", "meta.metadata"]
    assert main([*argv, "--repeats-as-draws", "--out", str(robustness), "--no-report"]) == 0
    summary = json.loads((robustness / "summary.json").read_text(encoding="utf-8"))
    return imported, log, summary


def test_each_prompt_is_one_question_with_a_variant_per_wording(
    run: tuple[Path, EvalLog, dict[str, Any]],
) -> None:
    imported, log, _ = run
    lines = (imported / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line) for line in lines]
    assert len(questions) == PROMPTS
    for question in questions:
        variants = [v["variant"] for v in question["variants"]]
        assert "original" in variants and "lowercase" in variants
        repeats = [f"{v} (repeat 2)" for v in variants if "(repeat" not in v]
        assert set(repeats) <= set(variants)  # each wording's second epoch, as a repeat
        wordings = {v["variant"]: v["prompt"] for v in question["variants"]}
        # lower case but for what an instruction names and web addresses, which stay as they are
        assert wordings["lowercase"].lower() == wordings["original"].lower()
        assert wordings["lowercase"] != wordings["original"]
    assert len(log.samples or ()) == sum(len(q["variants"]) for q in questions)


def test_robustness_rates_are_the_inspect_scorer_s_by_wording(
    run: tuple[Path, EvalLog, dict[str, Any]],
) -> None:
    _, log, summary = run
    scored: dict[str, list[bool]] = defaultdict(list)
    for sample in log.samples or ():
        assert sample.scores is not None and sample.metadata is not None
        value = sample.scores["instructions_followed"].value
        assert isinstance(value, dict)
        scored[sample.metadata["assay"]["variant"]].append(value["prompt_level"] == "C")
    assert summary["draws"] and len(summary["draws"]) == EPOCHS
    rates = {row["variant"]: row["prompt_level"] for row in summary["variants"]}
    assert set(rates) == set(scored)
    for variant, followed in scored.items():
        assert rates[variant] == pytest.approx(sum(followed) / len(followed))
    # the lower-case answers lose what capitals or case instructions asked for
    assert rates["lowercase"] != rates["original"]
    paired = {row["variant"]: row for row in summary["paired"]}
    assert paired["lowercase"]["pairs"] == PROMPTS


def test_a_placed_sample_without_its_question_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = tmp_path / "bad.jsonl"
    sample = {"id": "x", "input": "Say hi.", "metadata": {"assay": {"variant": "original"}}}
    dataset.write_text(json.dumps(sample) + "\n", encoding="utf-8")
    task = Task(dataset=json_dataset(str(dataset)), solver=generate())
    (log,) = eval(
        task, model=mock_model("m", lambda p: "hi"), log_dir=str(tmp_path), display="none"
    )
    assert log.location
    assert main(["import", "inspect", log.location, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "field 'metadata.assay.question_id'" in err and "got None" in err
    assert "Traceback" not in err


def _log_of(samples: list[dict[str, Any]], folder: Path) -> str:
    """An inspect log of ``samples`` (dataset lines), each answered "hi"."""
    folder.mkdir(parents=True, exist_ok=True)
    dataset = folder / "dataset.jsonl"
    dataset.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    task = Task(dataset=json_dataset(str(dataset)), solver=generate())
    (log,) = eval(task, model=mock_model("m", lambda p: "hi"), log_dir=str(folder), display="none")
    assert log.location
    return log.location


def _placed(question: str, variant: str, prompt: str) -> dict[str, Any]:
    placement = {"question_id": question, "variant": variant}
    return {"id": f"{question}:{variant}", "input": prompt, "metadata": {"assay": placement}}


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ({"id": "q", "input": "Say hi."}, "is named by a sample's metadata.assay in one log"),
        (_placed("q", "original", "Say hello."), "has another input here than in"),
    ],
)
def test_a_question_named_two_ways_or_a_variant_with_two_inputs_is_refused(
    second: dict[str, Any], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _log_of([_placed("q", "original", "Say hi.")], tmp_path / "first")
    other = _log_of([second], tmp_path / "second")
    assert main(["import", "inspect", first, other, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "out" / "questions.jsonl").exists()
