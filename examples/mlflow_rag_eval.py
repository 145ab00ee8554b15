"""A traced RAG app evaluated by MLflow with assay's model-free grounding scorer: the scorer
reads the documents the app's RETRIEVER span returned and checks the answer against them.

Runs offline: a keyword retriever over three documents stands in for a real one, a scripted
answer for a model's (the second question is answered wrongly), and the tracking store is a
SQLite file in a temporary directory, removed at the end. Swap in your own app; the scorer stays
the same.

    .venv/bin/python examples/mlflow_rag_eval.py
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import tempfile
from typing import Any

import mlflow
from mlflow.entities import Document

from assay.integrations.mlflow import GroundedClaims

DOCUMENTS = [
    Document(id="atlas-3", page_content="Canberra is the capital city of Australia."),
    Document(id="gov-1", page_content="Parliament House in Canberra opened in 1988."),
    Document(id="geo-7", page_content="Mount Kosciuszko is the highest mountain in Australia."),
]
SCRIPTED_ANSWERS = {  # what a model might answer; the second is wrong
    "What is the capital of Australia?": "Canberra is the capital of Australia [cite:atlas-3].",
    "When did Parliament House open?": "Parliament House opened in 1999.",
    "What is the highest mountain in Australia?": "Mount Kosciuszko is the highest.",
}


@mlflow.trace(span_type="RETRIEVER")
def retrieve(question: str) -> list[Document]:
    words = {word.strip("?.").lower() for word in question.split() if len(word) > 3}
    return [d for d in DOCUMENTS if words & set(d.page_content.lower().rstrip(".").split())]


@mlflow.trace
def rag_app(question: str) -> str:
    retrieve(question)
    return SCRIPTED_ANSWERS[question]


def evaluate() -> Any:
    # MLflow's default artifact root (./mlruns) lands in the store's directory too
    with tempfile.TemporaryDirectory() as store, contextlib.chdir(store):
        mlflow.set_tracking_uri(f"sqlite:///{store}/mlflow.db")
        mlflow.set_experiment("assay-grounding")
        data = [{"inputs": {"question": question}} for question in SCRIPTED_ANSWERS]
        with contextlib.redirect_stdout(io.StringIO()):  # MLflow's own progress lines
            return mlflow.genai.evaluate(data=data, predict_fn=rag_app, scorers=[GroundedClaims()])


def main() -> None:
    logging.getLogger("mlflow").setLevel(logging.ERROR)
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    results = evaluate()
    for _, row in results.result_df.iterrows():
        verdict = "grounded" if row["grounded_claims/value"] else "FLAGGED"
        print(f"{verdict}: {row['request']['question']}")
        print(f"  {row['grounded_claims/rationale'].splitlines()[0]}")
    print(f"grounded_claims/mean: {results.metrics['grounded_claims/mean']:.3f}")


if __name__ == "__main__":
    main()
