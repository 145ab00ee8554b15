"""Two scripted models as promptfoo Python providers (no network, no model download): `careful`
answers from the evidence, `hasty` gets one capital wrong. promptfoo calls `careful` or `hasty`
as `file://models.py:careful` with the rendered prompt."""

from __future__ import annotations

from typing import Any

ANSWERS = {
    "careful": {
        "Australia": "The capital of Australia is Canberra.",
        "Canada": "The capital of Canada is Ottawa.",
        "Japan": "The capital of Japan is Tokyo.",
    },
    "hasty": {
        "Australia": "The capital of Australia is Sydney.",
        "Canada": "The capital of Canada is Ottawa.",
        "Japan": "The capital of Japan is Tokyo.",
    },
}


def _answer(model: str, prompt: str) -> dict[str, Any]:
    country = next(name for name in ANSWERS[model] if name in prompt)
    return {"output": ANSWERS[model][country]}


def careful(prompt: str, options: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    return _answer("careful", prompt)


def hasty(prompt: str, options: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    return _answer("hasty", prompt)
