"""The JSON object in a model's reply, read leniently: the verifier's own prompts (claim checks,
critiques, oracle labels, claim splits) ask for one object, and small models wrap it in prose
or code fences. (The judge protocol is strict instead: judge/reply_json.py.)"""

from __future__ import annotations

import json
from typing import Any


def reply_object(text: str) -> dict[str, Any] | str:
    """The object between the reply's first ``{`` and last ``}``, or why there is none:
    ``"has no JSON object"``, ``"is not JSON (<parser message>)"``, ``"is not a JSON object"``."""
    start, end = text.find("{"), text.rfind("}")
    if not 0 <= start < end:
        return "has no JSON object"
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError as error:
        return f"is not JSON ({error.msg})"
    if not isinstance(data, dict):
        return "is not a JSON object"
    return data
