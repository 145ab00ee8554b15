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

What else the object says about the passage (the retriever's ``score``, the metadata object, a
chunk's offsets, any key of a user's own) is kept as it is, as the passage's ``meta``; left out
are the keys read as fields, values that are null or empty, and the keys a library writes for
its own machinery (:data:`LIBRARY_KEYS`: embeddings, templates, class names).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import type_name

TEXT_KEYS = ("text", "page_content", "content")
ID_KEYS = ("evidence_id", "id", "id_")
TITLE_KEYS = ("title",)
SOURCE_KEYS = ("source", "url", "file_path", "file_name")
METADATA_KEYS = ("metadata", "meta")
# written by a retrieval library for its own use (an embedding, a prompt template, its class),
# not about the passage; LangChain also marks its documents "type": "Document"
LIBRARY_KEYS = frozenset(
    {
        "blob",
        "class_name",
        "embedding",
        "excluded_embed_metadata_keys",
        "excluded_llm_metadata_keys",
        "metadata_separator",
        "metadata_seperator",
        "metadata_template",
        "mimetype",
        "relationships",
        "sparse_embedding",
        "text_template",
    }
)
LIBRARY_MARKS = {"type": "Document"}
MAX_META_DEPTH = 64
# what an error says a passage object holds
PASSAGE_KEYS = (
    "a 'text' (or 'page_content', 'content'), and optionally 'id' (or 'evidence_id', 'id_'), "
    "'title', 'source' (or 'url', 'file_path', 'file_name')"
)


# not frozen: the table importer and the integrations read thousands of passages a record, and
# a frozen dataclass's __init__ costs three times as much
@dataclass(slots=True)
class PassageFields:
    """What a passage object gives: its text as written (blank or not), its id, title and
    source where it has them, and the rest of what it says about the passage (``meta``)."""

    text: str
    evidence_id: str | None
    title: str | None
    source: str | None
    meta: dict[str, Any] = field(default_factory=dict)


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
    wrapper = item
    item, place = _unwrapped(item)
    metadata = _metadata(item)
    # the key each field is read from, found once: the fields are read there, and the rest of
    # the object is what those keys leave
    text_key = next(filter(item.__contains__, TEXT_KEYS), TEXT_KEYS[0])
    id_key, title_key, source_key = (
        _first_given(item, keys) for keys in (ID_KEYS, TITLE_KEYS, SOURCE_KEYS)
    )
    wrapper_rest = _rest(wrapper, {"node"}) if place == ".node" else {}
    return PassageFields(
        text=_text(item, text_key, place),
        evidence_id=_identifier(item, id_key, place),
        title=_detail(item, title_key, metadata, place, TITLE_KEYS),
        source=_detail(item, source_key, metadata, place, SOURCE_KEYS),
        meta=_rest(item, {text_key, id_key, title_key, source_key}) | wrapper_rest,
    )


def _unwrapped(item: Mapping[str, Any]) -> tuple[Mapping[str, Any], str]:
    """The object that holds the passage's fields, and its place in ``item``."""
    if "lc" in item and isinstance(item.get("kwargs"), Mapping):
        return item["kwargs"], ".kwargs"
    node = item.get("node")
    if node is not None and isinstance(node, Mapping) and not any(k in item for k in TEXT_KEYS):
        return node, ".node"
    return item, ""


def _metadata(item: Mapping[str, Any]) -> Mapping[str, Any]:
    for key in METADATA_KEYS:
        value = item.get(key)
        if value is not None and isinstance(value, Mapping):
            return value
    return {}


def _rest(item: Mapping[str, Any], read: set[str | None]) -> dict[str, Any]:
    """The object's keys that say more about the passage than the fields ``read`` from it:
    those of :func:`read_passage`'s lists it did not read (a ``url`` beside a ``source``)
    stay. A wrapper's (LlamaIndex's ``NodeWithScore``) is its ``score``: what it says of the
    passage inside it."""
    return {
        key: value
        for key, value in item.items()
        if key not in read
        and key not in LIBRARY_KEYS
        and not (key in LIBRARY_MARKS and LIBRARY_MARKS[key] == value)
        and value not in (None, "", [], {})
        and _is_json(value)
    }


def _is_json(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is JSON that reads back as itself: a CSV cell in Python's notation
    can hold a NaN, a tuple or bytes, which a result line could not keep, so such a value is
    passed over, like a library's metadata of the wrong type; so is one nested more than
    :data:`MAX_META_DEPTH` levels deep (a file's rows are read no deeper)."""
    if depth > MAX_META_DEPTH:
        return False
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_is_json(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return all(
            isinstance(key, str) and _is_json(item, depth + 1) for key, item in value.items()
        )
    return value is None or isinstance(value, str | int)


def _text(item: Mapping[str, Any], key: str, place: str) -> str:
    text = item.get(key)
    if not isinstance(text, str):
        got = "none" if key not in item else type_name(text)
        has = ", ".join(sorted(map(str, item))) or "nothing"
        raise PassageError(
            f"{place}.{key}",
            f"a passage object with {PASSAGE_KEYS}",
            f"{got} as its text (the object has: {has})",
        )
    return text


def _first_given(item: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    """The first of ``keys`` whose value in ``item`` is not null."""
    for key in keys:
        if item.get(key) is not None:
            return key
    return None


def _identifier(item: Mapping[str, Any], key: str | None, place: str) -> str | None:
    if key is None:
        return None
    value = item[key]
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise PassageError(f"{place}.{key}", "a string or an integer", type_name(value))
    return str(value).strip() or None


def _detail(
    item: Mapping[str, Any],
    key: str | None,
    metadata: Mapping[str, Any],
    place: str,
    keys: tuple[str, ...],
) -> str | None:
    """The field from ``item[key]`` (a string, or refused), else the first string among
    ``keys`` in the metadata."""
    if key is not None:
        value = item[key]
        if not isinstance(value, str):
            raise PassageError(f"{place}.{key}", "a string", type_name(value))
        return value
    for key in keys if metadata else ():
        value = metadata.get(key)
        if isinstance(value, str):
            return value
    return None
