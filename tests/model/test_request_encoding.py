"""The openai provider's request bodies are byte for byte what ``json=`` would send, also when
the exact judge schema's shared alternatives come from the encoder's memo."""

from __future__ import annotations

import json
from typing import Any

from assay.judge.exact_schema import exact_schema
from assay.judge.protocol import Protocol
from assay.model.providers.openai import _RequestEncoder


def plain(request: dict[str, Any]) -> bytes:
    return json.dumps(request, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def request_for(schema: dict[str, Any] | None, form: str = "json_schema") -> dict[str, Any]:
    request: dict[str, Any] = {
        "model": "m",
        "messages": [{"role": "user", "content": 'é "quoted" assay-schema-'}],
        "temperature": 0.0,
    }
    if schema is not None and form == "json_schema":
        request["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "judgment", "schema": schema, "strict": True},
        }
    elif schema is not None:
        request["response_format"] = {"type": "json_object", "schema": schema}
    return request


def test_bodies_equal_plain_json_for_every_sample_and_form() -> None:
    protocol, encoder = Protocol(), _RequestEncoder()
    for i in range(3):
        built = exact_schema(protocol, {"question_id": f"Q{i}"}, f"- point {i} is here\n- two")
        assert built.schema_ is not None
        for form in ("json_schema", "json_object"):
            request = request_for(built.schema_, form)
            before = json.dumps(request)
            assert encoder.encode(request) == plain(request)
            assert json.dumps(request) == before  # the caller's request is not changed


def test_bodies_without_a_schema_and_a_new_alternative_object() -> None:
    encoder = _RequestEncoder()
    assert encoder.encode(request_for(None)) == plain(request_for(None))
    first = {"anyOf": [{"const": 1}], "$defs": {}}
    assert encoder.encode(request_for(first)) == plain(request_for(first))
    second = {"anyOf": [{"const": 2}], "$defs": {}}
    assert encoder.encode(request_for(second)) == plain(request_for(second))
