"""``stub/<name>``: a deterministic backend for dry runs and tests.

Three ways to give it replies:

- scripted: a list of replies (used in turn, then cycled), or a callable
  ``(messages, config, rng) -> str`` that may also raise :class:`BackendError`;
- a JSONL file (``stub/path/to/replies.jsonl``): one reply per line, either a JSON string or an
  object ``{"text": ...}`` or ``{"error": "<ErrorKind>", "message": ...}``, used in turn;
- the default mode: assay's own prompts start their system message with a task tag
  ``[assay:<task>]``; a responder for that task writes a plausible reply, seeded by the request.
  Without a responder, a JSON schema in the request gets a seeded instance of the schema, and
  free text gets a short seeded sentence.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from .._backend import Backend
from .._types import (
    BackendError,
    ChatMessage,
    Completion,
    ErrorKind,
    GenerateConfig,
    StubResponder,
    TokenLogprob,
    TopLogprob,
)

TASK_TAG = re.compile(r"\[assay:([a-z0-9_.-]+)\]")


class StubBackend(Backend):
    provider = "stub"

    def __init__(
        self,
        model: str = "default",
        *,
        replies: Sequence[str] | StubResponder | None = None,
        task_responders: Mapping[str, StubResponder] | None = None,
        workdir: Path | None = None,
    ) -> None:
        super().__init__(model)
        self._scripted: list[dict[str, Any]] | None = None
        self._responder: StubResponder | None = None
        self._next = 0
        if callable(replies):
            self._responder = replies
        elif replies is not None:
            self._scripted = [{"text": r} for r in replies]
        elif model.endswith(".jsonl"):
            # relative to the driver's working directory on a Ray worker (``workdir``)
            self._scripted = _read_reply_file((workdir or Path()) / Path(model).expanduser())
        # Replies to assay's own tagged prompts ([assay:task]), given by the layer that writes
        # those prompts, so that this provider knows nothing of the layers above it.
        self._task_responders = dict(task_responders or {})
        self.calls = 0

    @property
    def supports_json_schema(self) -> bool:
        return True

    @property
    def supports_logprobs(self) -> bool:
        return True

    async def generate(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> Completion:
        self.calls += 1
        rng = random.Random(_request_seed(messages, config))
        text = self._reply(messages, config, rng)
        text = _apply_stop(text, config.stop)
        tokens = text.split()
        completion_tokens = min(len(tokens), config.max_tokens)
        return Completion(
            text=text,
            finish_reason="stop" if len(tokens) <= config.max_tokens else "length",
            prompt_tokens=sum(len(m.content.split()) for m in messages),
            completion_tokens=completion_tokens,
            logprobs=_fake_logprobs(tokens, config, rng) if config.logprobs else None,
            model=self.name,
        )

    def _reply(
        self, messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random
    ) -> str:
        if self._responder is not None:
            return self._responder(messages, config, rng)
        if self._scripted is not None:
            return self._next_scripted()
        task = _task_of(messages)
        if task is not None and task in self._task_responders:
            return self._task_responders[task](messages, config, rng)
        return default_reply(messages, config, rng)

    def _next_scripted(self) -> str:
        assert self._scripted is not None
        if not self._scripted:
            raise BackendError(ErrorKind.BACKEND, "the stub has no scripted replies")
        item = self._scripted[self._next % len(self._scripted)]
        self._next += 1
        if "error" in item:
            raise BackendError(ErrorKind(item["error"]), str(item.get("message", "scripted")))
        return str(item["text"])


def default_reply(
    messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random
) -> str:
    """A plausible reply: a schema instance, else a seeded sentence."""
    if config.json_schema is not None:
        return json.dumps(schema_instance(config.json_schema.schema_, rng))
    words = ["the", "answer", "depends", "on", "the", "evidence", "given", "above"]
    rng.shuffle(words)
    return "Stub reply: " + " ".join(words) + "."


def _task_of(messages: Sequence[ChatMessage]) -> str | None:
    for message in messages:
        if message.role == "system" and (match := TASK_TAG.search(message.content)):
            return match.group(1)
    return None


def schema_instance(schema: dict[str, Any], rng: random.Random, depth: int = 0) -> Any:
    """A seeded value that satisfies a simple JSON schema (objects, arrays, enums, scalars)."""
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props: dict[str, Any] = schema.get("properties", {})
        return {key: schema_instance(sub, rng, depth + 1) for key, sub in props.items()}
    if kind == "array":
        low = int(schema.get("minItems", 1 if depth < 3 else 0))
        count = max(low, min(int(schema.get("maxItems", 2)), 2))
        return [schema_instance(schema.get("items", {}), rng, depth + 1) for _ in range(count)]
    if kind == "integer":
        return rng.randint(int(schema.get("minimum", 0)), int(schema.get("maximum", 2)))
    if kind == "number":
        return round(rng.uniform(schema.get("minimum", 0.0), schema.get("maximum", 1.0)), 3)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    return f"stub-{rng.randrange(10_000)}"


def _request_seed(messages: Sequence[ChatMessage], config: GenerateConfig) -> int:
    material = json.dumps(
        [[m.role, m.content] for m in messages] + [config.seed, config.temperature]
    )
    return int.from_bytes(hashlib.sha256(material.encode()).digest()[:8], "big")


def _apply_stop(text: str, stop: Sequence[str]) -> str:
    for marker in stop:
        if marker and marker in text:
            text = text[: text.index(marker)]
    return text


def _fake_logprobs(
    tokens: list[str], config: GenerateConfig, rng: random.Random
) -> tuple[TokenLogprob, ...]:
    out = []
    for token in tokens[: config.max_tokens]:
        logprob = math.log(rng.uniform(0.5, 1.0))
        top = [TopLogprob(token=token, logprob=logprob)]
        if config.top_logprobs > 1:
            top.append(TopLogprob(token="<alt>", logprob=math.log1p(-math.exp(logprob))))
        out.append(TokenLogprob(token=token, logprob=logprob, top=tuple(top)))
    return tuple(out)


def _read_reply_file(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise ConfigError(
            f"stub reply file not found: {path}",
            hint="stub/<path>.jsonl names a file with one reply per line",
        )
    replies: list[dict[str, Any]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise ConfigError(f"{path}:{number}: not JSON ({error.msg})") from error
        replies.append(item if isinstance(item, dict) else {"text": str(item)})
    return replies
