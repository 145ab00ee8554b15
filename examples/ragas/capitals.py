"""A ragas evaluation with assay's learned checker as one of its metrics: three questions about
capitals, answered by a RAG system whose answer about Australia is not in its retrieved passage.

Run with a Python that has ragas and assay installed (pip install 'assay[ragas]'):

    python examples/ragas/capitals.py

It writes the dataset as ragas saves one (capitals_dataset.jsonl) and the evaluation with its
scores (capitals_scores.csv), prints the mean score and the explanation of the lowest score.
No LLM and no embeddings are called: the metric is model-free.
"""

from __future__ import annotations

from ragas import EvaluationDataset, evaluate

from assay.integrations.ragas import GroundedClaims

SAMPLES = [
    {
        "user_input": "What is the capital of Australia?",
        "retrieved_contexts": ["Canberra is the capital city of Australia."],
        "response": "The capital of Australia is Sydney.",
        "reference": "Canberra",
    },
    {
        "user_input": "What is the capital of Canada?",
        "retrieved_contexts": ["Ottawa is the capital city of Canada, on the Ottawa River."],
        "response": "Ottawa",
        "reference": "Ottawa",
    },
    {
        "user_input": "What is the capital of Japan?",
        "retrieved_contexts": [
            "Tokyo is the capital of Japan and its largest city.",
            "Kyoto was the imperial capital for more than a thousand years.",
        ],
        "response": "Tokyo is the capital of Japan.",
        "reference": "Tokyo",
    },
]


def main() -> None:
    EvaluationDataset.from_list(SAMPLES).to_jsonl("capitals_dataset.jsonl")
    dataset = EvaluationDataset.from_jsonl("capitals_dataset.jsonl")
    grounded = GroundedClaims()
    result = evaluate(dataset, metrics=[grounded], show_progress=False)
    print(result)
    result.to_pandas().to_csv("capitals_scores.csv", index=False)
    scores = [row[grounded.name] for row in result.scores]
    print(grounded.explain(dataset[scores.index(min(scores))]))


if __name__ == "__main__":
    main()
