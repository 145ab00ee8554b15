"""Passages as the retrieval libraries serialise their documents, written by the pinned
libraries themselves (the dev extra)."""

from __future__ import annotations

from typing import Any


def retrieved_documents() -> list[tuple[str, Any]]:
    """One passage written by each retrieval library's own serialisation, with the id each
    gets: LangChain's Document (``model_dump``, and ``dumpd``'s ``{"lc": 1, "kwargs"}``),
    LlamaIndex's TextNode and NodeWithScore (a retriever's score), Haystack's Document
    (flattened, its default, with a score; and with ``meta``)."""
    from haystack import Document as HaystackDocument
    from langchain_core.documents import Document as LangChainDocument
    from langchain_core.load import dumpd
    from llama_index.core.schema import NodeWithScore, TextNode

    paris = "https://example.org/paris"
    langchain = LangChainDocument(
        page_content="Paris is the capital of France.", metadata={"source": paris, "page": 3}
    )
    dumped = LangChainDocument(
        id="lc-2", page_content="The Seine flows through Paris.", metadata={"title": "Seine"}
    )
    node = TextNode(
        id_="node-3", text="The Louvre is in Paris.", metadata={"file_name": "louvre.txt"}
    )
    scored = NodeWithScore(
        node=TextNode(id_="node-4", text="Paris hosted the 1900 Olympics."), score=0.82
    )
    haystack = HaystackDocument(
        content="Montmartre is a hill in Paris.",
        meta={"url": paris, "title": "Montmartre", "page": 7},
        score=0.61,
    )
    kept_meta = HaystackDocument(id="hs-6", content="Paris has 20 arrondissements.")
    return [
        ("1", langchain.model_dump()),
        ("lc-2", dumpd(dumped)),
        ("node-3", node.to_dict()),
        ("node-4", scored.model_dump()),
        (haystack.id, haystack.to_dict()),
        ("hs-6", kept_meta.to_dict(flatten=False)),
    ]
