"""A grounding guard in a LangChain chain: retrieve, answer, then check the answer against the
documents it was given with assay's model-free checker, and flag what is not grounded.

Runs offline with langchain-core alone: an in-memory vector store over deterministic fake
embeddings stands in for a real retriever, and a scripted chat model for a real one (it answers
the first question wrongly, the second rightly). Swap in your own retriever and model; the
guard step stays the same.

    .venv/bin/python examples/langchain_guard.py
"""

from __future__ import annotations

from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

from assay import check_grounding

DOCUMENTS = [
    Document(id="atlas-3", page_content="Canberra is the capital city of Australia."),
    Document(id="gov-1", page_content="Parliament House in Canberra opened in 1988."),
]
PROMPT = ChatPromptTemplate.from_template(
    "Answer from the context; cite a document as [cite:ID].\n\n{context}\n\nQuestion: {question}"
)


def context(inputs: dict[str, Any]) -> dict[str, str]:
    documents = "\n".join(f"[{d.id}] {d.page_content}" for d in inputs["docs"])
    return {"context": documents, "question": inputs["question"]}


def guard(inputs: dict[str, Any]) -> Any:
    """The answer checked against the documents the model was given."""
    return check_grounding(inputs["answer"], inputs["docs"], question=inputs["question"])


def main() -> None:
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=64))
    store.add_documents(DOCUMENTS)
    model = FakeListChatModel(
        responses=[
            "The capital of Australia is Sydney.",
            "Canberra is the capital of Australia [cite:atlas-3].",
        ]
    )
    answer = context | PROMPT | model | StrOutputParser()
    chain = (
        {"docs": store.as_retriever(search_kwargs={"k": 2}), "question": RunnablePassthrough()}
        | RunnablePassthrough.assign(answer=answer)
        | RunnablePassthrough.assign(grounding=guard)
    )
    for question in ["What is the capital of Australia?"] * 2:
        out = chain.invoke(question)
        verdict = "grounded" if out["grounding"].grounded else "FLAGGED"
        print(f"{verdict}: {out['answer']}")
        print(f"  {out['grounding'].explanation.splitlines()[0]}")


if __name__ == "__main__":
    main()
