"""``assay.integrations.inspect_ai.instructions_followed``: assay's instruction checker scoring a
real inspect_ai evaluation (inspect's ``eval()``, its ``mockllm`` provider writing the GPT-4
responses IFEval published), checked against IFEval's own labels."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="the inspect extra")  # in the dev extra

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.solver import generate

from assay.instructions.ifeval_data import read_inputs, read_labels
from assay.integrations.inspect_ai import instructions_followed
from tests.helpers.inspect_evals import inspect_dirs_in_tmp, mock_model

PROMPTS = 540  # every IFEval prompt with a published response (about 6 s of eval each mode)


@pytest.fixture(autouse=True, scope="module")
def _inspect_dirs_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with inspect_dirs_in_tmp(tmp_path_factory):
        yield


def _ifeval(data: Path, mode: str) -> tuple[list[Sample], dict[str, str], dict[str, list[bool]]]:
    """IFEval's prompts as inspect samples (instructions in the metadata, in IFEval's fields),
    its published responses and its labels, by sample id."""
    inputs = read_inputs(data / "input_data.jsonl")
    samples, responses, labels = [], {}, {}
    for labelled in read_labels(data / f"eval_results_{mode}.jsonl"):
        key, instructions = inputs[labelled.prompt]
        metadata = {
            "instruction_id_list": instructions.instruction_id_list,
            "kwargs": instructions.kwargs,
        }
        samples.append(Sample(id=str(key), input=labelled.prompt, metadata=metadata))
        responses[labelled.prompt] = labelled.response
        labels[str(key)] = labelled.follow_instruction_list
    return samples, responses, labels


def _run(samples: list[Sample], reply: dict[str, str], logs: Path, **options: Any) -> EvalLog:
    task = Task(dataset=samples, solver=generate(), scorer=instructions_followed(**options))
    (log,) = eval(
        task,
        model=mock_model("gpt-4-as-published", lambda prompt: reply.get(prompt, "")),
        log_dir=str(logs),
        display="none",
        fail_on_error=False,
    )
    return log


def _value(sample: EvalSample) -> tuple[dict[str, Any], str]:
    assert sample.scores is not None
    value = sample.scores["instructions_followed"].value
    assert isinstance(value, dict)
    return value, str(sample.id)


@pytest.mark.parametrize("mode", ["strict", "loose"])
def test_each_sample_is_scored_as_ifeval_labels_it(
    mode: str, shared_data: Path, tmp_path: Path
) -> None:
    samples, responses, labels = _ifeval(shared_data / "ifeval", mode)
    log = _run(samples, responses, tmp_path, mode=mode)
    assert log.status == "success" and len(log.samples or ()) == PROMPTS
    scored = [_value(sample) for sample in log.samples or ()]
    agree = 0
    for value, sample_id in scored:
        followed = labels[sample_id]
        agree += value == {
            "prompt_level": "C" if all(followed) else "I",
            "instruction_level": pytest.approx(sum(followed) / len(followed)),
        }
    # as in DSPy (test_dspy_instructions.py): the checker disagrees with IFEval's verdicts on 4
    # responses in strict mode and 2 in loose
    assert agree >= {"strict": 536, "loose": 538}[mode]
    assert log.results is not None
    metrics = {
        (score.name, name): metric.value
        for score in log.results.scores
        for name, metric in score.metrics.items()
    }
    values: list[dict[str, Any]] = [value for value, _ in scored]
    own_prompt_level = sum(value["prompt_level"] == "C" for value in values) / PROMPTS
    own_instruction_level = sum(value["instruction_level"] for value in values) / PROMPTS
    assert metrics[("prompt_level", "accuracy")] == pytest.approx(own_prompt_level)
    assert metrics[("instruction_level", "mean")] == pytest.approx(own_instruction_level)
    # within the few responses the checker and IFEval judge apart
    ifeval_prompt_level = sum(all(f) for f in labels.values()) / PROMPTS
    assert own_prompt_level == pytest.approx(ifeval_prompt_level, abs=4 / PROMPTS)
    assert ("prompt_level", "stderr") in metrics and ("instruction_level", "stderr") in metrics


def test_the_explanation_names_each_instruction_and_an_empty_output_follows_none(
    tmp_path: Path,
) -> None:
    metadata = {
        "instruction_id_list": ["punctuation:no_comma", "length_constraints:number_words"],
        "kwargs": [{}, {"relation": "less than", "num_words": 5}],
    }
    samples = [
        Sample(id="comma", input="Say yes briefly.", metadata=metadata),
        Sample(id="empty", input="Say nothing.", metadata=metadata),
        Sample(id="unknown", input="x", metadata={"instruction_id_list": ["nope:x"]}),
        Sample(id="none", input="y"),
    ]
    reply = {"Say yes briefly.": "Yes, short.", "Say nothing.": ""}
    log = _run(samples, reply, tmp_path)
    by_id = {sample.id: sample for sample in log.samples or ()}
    comma = by_id["comma"].scores
    assert comma is not None
    score = comma["instructions_followed"]
    assert score.value == {"prompt_level": "I", "instruction_level": 0.5}
    assert score.explanation == (
        "1 of 2 instructions followed (strict)\n"
        "punctuation:no_comma: not followed: 1 commas\n"
        "length_constraints:number_words: followed: 2 words, expected less than 5"
    )
    assert score.metadata is not None and len(score.metadata["instructions"]) == 2
    empty = by_id["empty"].scores
    assert empty is not None
    assert empty["instructions_followed"].value == {"prompt_level": "I", "instruction_level": 0.0}
    unknown, none = by_id["unknown"].error, by_id["none"].error
    assert unknown is not None and none is not None
    assert "metadata.instruction_id_list[0]: nope:x: unknown instruction id" in unknown.message
    assert "metadata.instruction_id_list: expected a non-empty list" in none.message


def test_a_mode_it_does_not_know_is_refused() -> None:
    with pytest.raises(ValueError, match="mode must be one of"):
        instructions_followed(mode="lenient")  # type: ignore[arg-type]
