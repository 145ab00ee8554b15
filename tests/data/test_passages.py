"""``assay.data.passages``: a passage object read alike by the table importer and the
integrations' evidence (inspect, promptfoo), also when a retrieval library wrote it."""

from __future__ import annotations

import pytest

from assay.data.passages import PassageError, PassageFields, read_passage
from assay.integrations._grounding import evidence_items
from tests.helpers.retrieved_documents import retrieved_documents

PARIS = "https://example.org/paris"


def test_each_librarys_document_gives_its_text_id_title_and_source() -> None:
    documents = retrieved_documents()
    read = [read_passage(document) for _, document in documents]
    assert read == [
        PassageFields(
            "Paris is the capital of France.", None, None, PARIS,
            {"metadata": {"source": PARIS, "page": 3}},
        ),
        PassageFields(
            "The Seine flows through Paris.", "lc-2", "Seine", None,
            {"metadata": {"title": "Seine"}},
        ),
        PassageFields(
            "The Louvre is in Paris.", "node-3", None, "louvre.txt",
            {"metadata": {"file_name": "louvre.txt"}},
        ),
        PassageFields("Paris hosted the 1900 Olympics.", "node-4", None, None, {"score": 0.82}),
        PassageFields(
            "Montmartre is a hill in Paris.", documents[4][0], "Montmartre", PARIS,
            {"page": 7, "score": 0.61},
        ),
        PassageFields("Paris has 20 arrondissements.", "hs-6", None, None),
    ]  # fmt: skip


def test_the_integrations_evidence_is_the_same_passages_with_ids_by_place() -> None:
    documents = retrieved_documents()
    evidence = evidence_items([document for _, document in documents])
    assert [passage.evidence_id for passage in evidence] == [expected for expected, _ in documents]
    assert [passage.text for passage in evidence] == [
        read_passage(document).text for _, document in documents
    ]


@pytest.mark.parametrize(
    ("item", "place", "message"),
    [
        ({"body": "x"}, ".text", "got none as its text (the object has: body)"),
        ({"content": None, "id": "h1"}, ".content", "got null as its text"),
        ({"text": "x", "id": ["a"]}, ".id", "expected a string or an integer, got list"),
        ({"text": "x", "source": 3}, ".source", "expected a string, got int"),
        ({"lc": 1, "kwargs": {"page_content": 2}}, ".kwargs.page_content", "got int as its text"),
    ],
)
def test_a_passage_that_cannot_be_read_names_where(
    item: dict[str, object], place: str, message: str
) -> None:
    with pytest.raises(PassageError) as caught:
        read_passage(item)
    assert caught.value.place == place
    assert message in str(caught.value)


def test_blank_ids_and_free_form_metadata_are_passed_over() -> None:
    item = {"page_content": "x", "id": " ", "metadata": {"source": 7, "title": "T", "url": "u"}}
    assert read_passage(item) == PassageFields("x", None, "T", "u", {"metadata": item["metadata"]})


def test_what_else_a_passage_says_is_its_meta_less_the_librarys_machinery() -> None:
    node = {
        "node": {
            "text": "x", "id_": "n1", "url": "u", "embedding": [0.1, 0.2], "class_name": "TextNode",
            "metadata_template": "{key}: {value}", "relationships": {}, "start_char_idx": 40,
            "end_char_idx": None,
        },
        "score": 0.7,
        "class_name": "NodeWithScore",
    }  # fmt: skip
    assert read_passage(node).meta == {"start_char_idx": 40, "score": 0.7}
    # a key of a field's list that was not read stays: the url beside the source
    own = {"text": "x", "source": "s", "url": "u", "rank": 2, "type": "web", "tags": []}
    assert read_passage(own).meta == {"url": "u", "rank": 2, "type": "web"}
    langchain = {"page_content": "x", "metadata": {"page": 1}, "type": "Document"}
    assert read_passage(langchain).meta == {"metadata": {"page": 1}}


def test_a_value_json_cannot_keep_is_passed_over_in_meta() -> None:
    # what a CSV cell in Python's notation can hold: NaN, a tuple, bytes
    item = {"text": "x", "score": float("nan"), "span": (1, 2), "raw": b"x", "rank": 1,
            "metadata": {"page": 2, "bad": float("inf")}}  # fmt: skip
    assert read_passage(item).meta == {"rank": 1}


def test_a_value_nested_deeper_than_a_table_row_is_passed_over_not_a_crash() -> None:
    deep: list[object] = []
    for _ in range(2000):  # deeper than Python's recursion limit
        deep = [deep]
    item = {"text": "x", "deep": deep, "rank": 1, "shallow": [[["ok"]]]}
    assert read_passage(item).meta == {"rank": 1, "shallow": [[["ok"]]]}
