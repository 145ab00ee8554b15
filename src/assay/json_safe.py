"""JSON that always reads back: records holding anything a model may return.

A model's reply can hold anything, lone surrogates (``\\ud800``) included, which UTF-8 cannot
encode and pydantic's JSON parser refuses even when escaped. Every file assay writes from
model output (the response cache, results, the judge archive) goes through these two
functions, so that whatever was written reads back as the same value.
"""

from __future__ import annotations

import json
import re
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError, to_jsonable_python

M = TypeVar("M", bound=BaseModel)


def model_json(record: BaseModel, *, indent: int | None = None) -> str:
    """The record as JSON that always reads back as the same record.

    Records that UTF-8 cannot encode are written with every non-ASCII character escaped,
    which JSON allows and :func:`load_model` reads back exactly.
    """
    try:
        text = record.model_dump_json(indent=indent)
        text.encode("utf-8")
    except (PydanticSerializationError, UnicodeEncodeError):
        return _escaped(record, indent)
    # pydantic writes a lone surrogate in a dict *key* as U+FFFD instead of raising; a
    # replacement character may be such a loss, so take the exact path whenever one appears.
    return _escaped(record, indent) if "\ufffd" in text else text


def _escaped(record: BaseModel, indent: int | None) -> str:
    # The python-mode dump keeps strings exactly (the JSON mode replaces surrogates in keys);
    # what json cannot take itself (dates, enums) goes through pydantic's JSON conversion.
    return json.dumps(
        record.model_dump(), ensure_ascii=True, indent=indent, default=to_jsonable_python
    )


def load_model(model: type[M], text: str, *, strict: bool = False) -> M:
    """Read what :func:`model_json` wrote (pydantic's own parser refuses escaped surrogates).

    ``strict``: JSON types must match the fields (``"true"`` is no boolean, ``"0.5"`` no
    number), as in a file assay wrote; a hand-edited value of the wrong type is refused.
    """
    try:
        return model.model_validate_json(text, strict=strict)
    except ValidationError as error:
        if not any(item["type"] == "json_invalid" for item in error.errors()):
            raise
    if strict:  # the types are checked on the text with its surrogates stood in for
        model.model_validate_json(_ESCAPED_SURROGATE.sub(r"\1\\ufffd", text), strict=True)
    return model.model_validate(json.loads(text))


_ESCAPED_SURROGATE = re.compile(r"(?<!\\)((?:\\\\)*)\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def displayable(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, the replacement character: for
    text formats that cannot hold one (UTF-8 HTML, CSV, Parquet), where no reader could
    tell it apart from a lost character anyway. JSON keeps it exactly, escaped."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text
