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
        PassageFields("Paris is the capital of France.", None, None, PARIS),
        PassageFields("The Seine flows through Paris.", "lc-2", "Seine", None),
        PassageFields("The Louvre is in Paris.", "node-3", None, "louvre.txt"),
        PassageFields("Paris hosted the 1900 Olympics.", "node-4", None, None),
        PassageFields("Montmartre is a hill in Paris.", documents[4][0], "Montmartre", PARIS),
        PassageFields("Paris has 20 arrondissements.", "hs-6", None, None),
    ]


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
    assert read_passage(item) == PassageFields("x", None, "T", "u")
