"""An evidence passage given as an object: assay's own fields (``text``, ``id`` or
``evidence_id``, ``title``, ``source``), or a document as a retrieval library serialises it.

A RAG application's log, an inspect sample's metadata or a promptfoo test's vars often hold the
retriever's documents as the library wrote them, so they are read as they are:

- LangChain's ``Document.model_dump()`` (``page_content``, ``id``, ``metadata``), and
  ``dumpd(doc)``, ``{"lc": 1, ..., "kwargs": {...}}``, read from ``kwargs``;
- LlamaIndex's ``TextNode.to_dict()`` (``text``, ``id_``, ``metadata``), and
  ``NodeWithScore.model_dump()``, ``{"node": {...}, "score": ...}``, read from ``node``;
- Haystack's ``Document.to_dict()`` (``content``, ``id``, its metadata keys at the top), and
  ``to_dict(flatten=False)`` (under ``meta``).

Each field is the object's first key of its list below, then its metadata's (``metadata`` or
``meta``). A value of the wrong type on the object itself is refused; a library's metadata is
free-form, so there a value that is not a string is passed over.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import type_name

TEXT_KEYS = ("text", "page_content", "content")
ID_KEYS = ("evidence_id", "id", "id_")
TITLE_KEYS = ("title",)
SOURCE_KEYS = ("source", "url", "file_path", "file_name")
METADATA_KEYS = ("metadata", "meta")
# what an error says a passage object holds
PASSAGE_KEYS = (
    "a 'text' (or 'page_content', 'content'), and optionally 'id' (or 'evidence_id', 'id_'), "
    "'title', 'source' (or 'url', 'file_path', 'file_name')"
)


@dataclass(frozen=True)
class PassageFields:
    """What a passage object gives: its text as written (blank or not), and its id, title and
    source where it has them."""

    text: str
    evidence_id: str | None
    title: str | None
    source: str | None


class PassageError(ValueError):
    """A passage object that cannot be read. ``place`` is where in the object
    (``.node.url``, ``.text``), for the caller to append to the passage's own place;
    ``expected`` and ``got`` say what was wrong, for the caller to word with its own names."""

    def __init__(self, place: str, expected: str, got: str) -> None:
        super().__init__(f"{place}: expected {expected}, got {got}")
        self.place = place
        self.expected = expected
        self.got = got


def read_passage(item: Mapping[str, Any]) -> PassageFields:
    """The fields of one passage object; a :class:`PassageError` where it has no text or a
    field of its own is of the wrong type."""
    item, place = _unwrapped(item)
    metadata = next((m for key in METADATA_KEYS if isinstance(m := item.get(key), Mapping)), {})
    return PassageFields(
        text=_text(item, place),
        evidence_id=_identifier(item, place),
        title=_detail(item, metadata, place, TITLE_KEYS),
        source=_detail(item, metadata, place, SOURCE_KEYS),
    )


def _unwrapped(item: Mapping[str, Any]) -> tuple[Mapping[str, Any], str]:
    """The object that holds the passage's fields, and its place in ``item``."""
    if "lc" in item and isinstance(item.get("kwargs"), Mapping):
        return item["kwargs"], ".kwargs"
    if not any(key in item for key in TEXT_KEYS) and isinstance(item.get("node"), Mapping):
        return item["node"], ".node"
    return item, ""


def _text(item: Mapping[str, Any], place: str) -> str:
    key = next((key for key in TEXT_KEYS if key in item), TEXT_KEYS[0])
    text = item.get(key)
    if not isinstance(text, str):
        got = "none" if key not in item else type_name(text)
        has = ", ".join(sorted(item)) or "nothing"
        raise PassageError(
            f"{place}.{key}",
            f"a passage object with {PASSAGE_KEYS}",
            f"{got} as its text (the object has: {has})",
        )
    return text


def _identifier(item: Mapping[str, Any], place: str) -> str | None:
    key = next((key for key in ID_KEYS if item.get(key) is not None), None)
    if key is None:
        return None
    value = item[key]
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise PassageError(f"{place}.{key}", "a string or an integer", type_name(value))
    return str(value).strip() or None


def _detail(
    item: Mapping[str, Any], metadata: Mapping[str, Any], place: str, keys: tuple[str, ...]
) -> str | None:
    for key in keys:
        value = item.get(key)
        if value is not None:
            if not isinstance(value, str):
                raise PassageError(f"{place}.{key}", "a string", type_name(value))
            return value
    return next((value for key in keys if isinstance(value := metadata.get(key), str)), None)
