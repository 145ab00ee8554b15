"""``assay.integrations.dspy.InstructionsFollowedMetric``: assay's instruction checker as a DSPy
metric, in DSPy's own ``Evaluate`` over IFEval's 540 prompts with the GPT-4 responses IFEval
published, its scores against IFEval's own labels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dspy
import pytest

from assay.instructions.ifeval_data import read_inputs, read_labels
from assay.integrations.dspy import InstructionsFollowedMetric

NO_COMMA = ["punctuation:no_comma", "length_constraints:number_words"]
NO_COMMA_KWARGS = [{}, {"relation": "less than", "num_words": 5}]


class PublishedResponses(dspy.Module):  # type: ignore[misc]
    """A program that answers each IFEval prompt with the response IFEval published."""

    def __init__(self, responses: dict[str, str]) -> None:
        super().__init__()
        self.responses = responses

    def forward(self, prompt: str) -> dspy.Prediction:
        return dspy.Prediction(response=self.responses[prompt])


def _ifeval(data: Path, mode: str) -> tuple[list[Any], dict[str, str], dict[str, list[bool]]]:
    """IFEval's prompts as DSPy examples (in IFEval's own fields), its responses and labels."""
    inputs = read_inputs(data / "input_data.jsonl")
    examples, responses, labels = [], {}, {}
    for labelled in read_labels(data / f"eval_results_{mode}.jsonl"):
        _, instructions = inputs[labelled.prompt]
        example = dspy.Example(
            prompt=labelled.prompt,
            instruction_id_list=instructions.instruction_id_list,
            kwargs=instructions.kwargs,
        )
        examples.append(example.with_inputs("prompt"))
        responses[labelled.prompt] = labelled.response
        labels[labelled.prompt] = labelled.follow_instruction_list
    return examples, responses, labels


@pytest.mark.parametrize("mode", ["strict", "loose"])
@pytest.mark.parametrize("level", ["instruction", "prompt"])
def test_evaluate_scores_ifeval_responses_as_ifeval_labels_them(
    mode: str, level: str, shared_data: Path
) -> None:
    examples, responses, labels = _ifeval(shared_data / "ifeval", mode)
    metric = InstructionsFollowedMetric(mode=mode, level=level)  # type: ignore[arg-type]
    result = dspy.Evaluate(devset=examples, num_threads=2)(
        PublishedResponses(responses), metric=metric
    )
    assert len(result.results) == len(examples) == 540
    same = 0
    for example, _, score in result.results:
        followed = labels[example.prompt]
        expected = sum(followed) / len(followed) if level == "instruction" else all(followed)
        same += score == pytest.approx(float(expected), abs=1e-12)
    # the checker disagrees with IFEval's own verdicts on 4 of the 540 responses in strict
    # mode and 2 in loose (docs/instructions.md, "What is not covered, and why")
    assert same >= {"strict": 536, "loose": 538}[mode]
    ifeval_score = sum(
        sum(f) / len(f) if level == "instruction" else float(all(f)) for f in labels.values()
    )
    assert result.score == pytest.approx(round(100 * ifeval_score / 540, 2), abs=0.8)


def test_a_trace_asks_whether_all_are_followed_and_a_predictor_name_feedback() -> None:
    example = dspy.Example(prompt="p", instruction_id_list=NO_COMMA, kwargs=NO_COMMA_KWARGS)
    metric = InstructionsFollowedMetric()
    one_comma = dspy.Prediction(response="Yes, short.")
    assert metric(example, one_comma) == 0.5
    assert metric(example, one_comma, trace=[]) is False
    assert metric(example, dspy.Prediction(response="Short."), trace=[]) is True
    assert InstructionsFollowedMetric(level="prompt")(example, one_comma) == 0.0
    feedback = metric(example, one_comma, [], "respond", [])
    assert isinstance(feedback, dspy.Prediction) and feedback.score == 0.5
    assert feedback.feedback.splitlines() == [
        "1 of 2 instructions followed (strict)",
        "punctuation:no_comma: not followed: 1 commas",
        "length_constraints:number_words: followed: 2 words, expected less than 5",
    ]


def test_fields_can_be_renamed_and_an_empty_response_follows_nothing() -> None:
    example = dspy.Example(question="p", ids=NO_COMMA, args=NO_COMMA_KWARGS)
    metric = InstructionsFollowedMetric(
        response="answer", instructions="ids", kwargs="args", prompt="question"
    )
    assert metric(example, dspy.Prediction(answer="Short.")) == 1.0
    assert metric(example, dspy.Prediction(answer="")) == 0.0
    verdicts = metric.verdicts(example, dspy.Prediction(answer=""))
    assert [v.reason for v in verdicts] == ["the response is empty"] * 2
    no_arguments = dspy.Example(prompt="p", instruction_id_list=["punctuation:no_comma"])
    assert InstructionsFollowedMetric()(no_arguments, dspy.Prediction(response="No.")) == 1.0


BAD_RELATION = [{}, {"relation": "about", "num_words": 5}]
UNKNOWN = r"example\.instruction_id_list\[0\]: nope:x: unknown instruction id"


@pytest.mark.parametrize(
    ("example", "prediction", "message"),
    [
        (
            {"instruction_id_list": NO_COMMA, "kwargs": NO_COMMA_KWARGS},
            {},
            r"prediction\.response: missing",
        ),
        ({"kwargs": []}, {"response": "x"}, r"example\.instruction_id_list: expected a non-empty"),
        ({"instruction_id_list": ["nope:x"], "kwargs": [{}]}, {"response": "x"}, UNKNOWN),
        (
            {"instruction_id_list": NO_COMMA, "kwargs": BAD_RELATION},
            {"response": "x"},
            r"example\.kwargs\[1\]\.relation: .*expected one of",
        ),
    ],
)
def test_what_cannot_be_checked_raises_a_value_error_naming_the_field(
    example: dict[str, Any], prediction: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        InstructionsFollowedMetric()(dspy.Example(**example), dspy.Prediction(**prediction))


def test_a_mode_or_level_it_does_not_know_is_refused() -> None:
    with pytest.raises(ValueError, match="mode must be one of"):
        InstructionsFollowedMetric(mode="lenient")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="level must be"):
        InstructionsFollowedMetric(level="response")  # type: ignore[arg-type]
