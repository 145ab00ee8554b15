"""A tiny inspect_ai task for the worked example of docs/importers.md (needs the inspect extra).

Three questions about capitals, two epochs, scored by inspect's ``includes()`` and by assay's
``grounded_claims()`` (the learned claim checker against the evidence in each sample's
metadata). With a model of your own::

    inspect eval examples/inspect/capitals.py --model openai/gpt-4o-mini

Run as a script, it evaluates two scripted models with inspect's ``mockllm`` provider (no
network, no model download) and writes their logs into LOG_DIR::

    python examples/inspect/capitals.py logs
"""

from __future__ import annotations

import sys
from typing import Any

from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, Model, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate

from assay.integrations.inspect_ai import grounded_claims

SAMPLES = [
    Sample(
        id="france",
        input="What is the capital of France? Answer in one sentence.",
        target="Paris",
        metadata={"evidence": ["Paris is the capital and largest city of France."]},
    ),
    Sample(
        id="australia",
        input="What is the capital of Australia? Answer in one sentence.",
        target="Canberra",
        metadata={"evidence": ["Canberra is the capital city of Australia."]},
    ),
    Sample(
        id="canada",
        input="What is the capital of Canada? Answer in one sentence.",
        target="Ottawa",
        metadata={"evidence": ["Ottawa is the capital city of Canada, in Ontario."]},
    ),
]

# what each scripted model answers, by sample id
REPLIES = {
    "careful": {
        "france": "The capital of France is Paris.",
        "australia": "The capital of Australia is Canberra.",
        "canada": "The capital of Canada is Ottawa.",
    },
    "hasty": {
        "france": "The capital of France is Paris.",
        "australia": "The capital of Australia is Sydney.",
        "canada": "The capital of Canada is Toronto.",
    },
}


@task
def capitals() -> Task:
    return Task(
        dataset=SAMPLES,
        solver=generate(),
        scorer=[includes(), grounded_claims()],
        epochs=2,
    )


def scripted_model(name: str) -> Model:
    """inspect's mockllm provider answering each sample from REPLIES (the usage is given, so
    mockllm does not count tokens with tiktoken, which downloads its vocabulary)."""
    by_prompt = {str(s.input): REPLIES[name][str(s.id)] for s in SAMPLES}

    def reply(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        output = ModelOutput.from_content(model=name, content=by_prompt[messages[-1].text])
        output.usage = ModelUsage(input_tokens=12, output_tokens=8, total_tokens=20)
        return output

    return get_model(f"mockllm/{name}", custom_outputs=reply)


def main(log_dir: str) -> None:
    for name in REPLIES:
        (log,) = eval(capitals(), model=scripted_model(name), log_dir=log_dir, display="none")
        assert log.results is not None
        accuracy = ", ".join(
            f"{score.name} {score.metrics['accuracy'].value:.3f}" for score in log.results.scores
        )
        print(f"{log.eval.model}: {log.status}, accuracy: {accuracy}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "logs")
