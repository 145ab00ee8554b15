"""A tiny deepeval evaluation for the worked example of docs/importers.md (needs the deepeval
extra).

Three questions about capitals, answered by two scripted models (no model call, no network):
each answer is a deepeval ``LLMTestCase`` with the passage it was written from as its
``retrieval_context`` and a reviewer's verdict in its metadata (``hallucinated``). deepeval's
``evaluate`` scores them with assay's ``GroundedClaimsMetric``; then the test cases are saved
the way deepeval saves datasets (``EvaluationDataset.save_as``), for ``assay import deepeval``::

    DEEPEVAL_TELEMETRY_OPT_OUT=1 python examples/deepeval/capitals.py capitals_deepeval
"""

from __future__ import annotations

import contextlib
import io
import sys

from deepeval.dataset import EvaluationDataset
from deepeval.evaluate import evaluate  # where it is defined (the package re-exports it untyped)
from deepeval.evaluate.configs import DisplayConfig
from deepeval.metrics import BaseMetric
from deepeval.test_case import LLMTestCase

from assay.integrations.deepeval import GroundedClaimsMetric

QUESTIONS = {
    "france": ("What is the capital of France?", "Paris"),
    "australia": ("What is the capital of Australia?", "Canberra"),
    "canada": ("What is the capital of Canada?", "Ottawa"),
}
RETRIEVED = {
    "france": "Paris is the capital and largest city of France.",
    "australia": "Canberra is the capital city of Australia.",
    "canada": "Ottawa is the capital city of Canada, in Ontario.",
}
# what each scripted model answers, by question
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


def test_cases(model: str) -> list[LLMTestCase]:
    return [
        LLMTestCase(
            name=f"{model}-{key}",
            input=question,
            actual_output=REPLIES[model][key],
            expected_output=f"The capital is {target}.",
            retrieval_context=[RETRIEVED[key]],
            metadata={"model": model, "hallucinated": target not in REPLIES[model][key]},
        )
        for key, (question, target) in QUESTIONS.items()
    ]


def main(directory: str) -> None:
    dataset = EvaluationDataset()
    quiet = DisplayConfig(show_indicator=False, print_results=False)
    metrics: list[BaseMetric] = [GroundedClaimsMetric()]
    for model in REPLIES:
        cases = test_cases(model)
        # deepeval prints a report of each run (and a pointer to its cloud service); the
        # example prints one line per model instead
        with contextlib.redirect_stdout(io.StringIO()):
            result = evaluate(cases, metrics=metrics, display_config=quiet)
        passed = sum(test.success for test in result.test_results)
        print(f"{model}: {passed} of {len(cases)} test cases pass Grounded Claims (assay)")
        for case in cases:
            dataset.add_test_case(case)
    dataset.save_as("json", directory, file_name="capitals", include_test_cases=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "capitals_deepeval")
