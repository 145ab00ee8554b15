"""Texts that many examples repeat, stored once per example table.

Records made by ``assay perturb`` share their question, evidence and gold answer across six
answers; compared runs share them across runs. Opened examples refer to such texts by number
(``text_ref``) and the page reads them from the store's chunks when an example is opened.
Texts with marks (the answer, the evaluated output) stay in place: their marks belong to them.
"""

from __future__ import annotations

from typing import Any

_MIN_SHARED_LENGTH = 40  # shorter texts cost less inline than as a reference


class TextStore:
    """Distinct texts in first-seen order."""

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self.texts: list[str] = []

    def ref(self, text: str) -> int:
        found = self._index.get(text)
        if found is None:
            found = self._index[text] = len(self.texts)
            self.texts.append(text)
        return found


def share_texts(detail: dict[str, Any], store: TextStore) -> dict[str, Any]:
    """``detail`` (a compact Detail as JSON) with its shareable texts moved into ``store``."""
    for section in detail.get("sections", []):
        if section.get("type") == "evidence":
            for item in section.get("items", []):
                _move(item, store)
        elif section.get("type") == "text" and not section.get("marks"):
            _move(section, store)
    return detail


def _move(node: dict[str, Any], store: TextStore) -> None:
    text = node.get("text")
    if isinstance(text, str) and len(text) >= _MIN_SHARED_LENGTH:
        node["text_ref"] = store.ref(node.pop("text"))
