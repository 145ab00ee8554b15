"""Typed values that cross the model layer: messages, generation settings, outputs, failures."""

from __future__ import annotations

import enum
import random
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Role = Literal["system", "user", "assistant"]


#: How structured output is asked for: OpenAI's json_schema format, llama-cpp-python's
#: json_object-with-schema, "auto" (json_schema, falling back once the server rejects it), or off.
StructuredOutput = Literal["auto", "json_schema", "json_object", "off"]


#: A sampling seed. llama.cpp reads seeds as unsigned 32-bit and takes 0xFFFFFFFF, which is
#: what -1 becomes, to mean "a random seed": a negative seed would make a seeded run silently
#: unrepeatable. The upper bound leaves room for ``seed + i`` of every sample and re-ask.
Seed = Annotated[int, Field(ge=0, le=2**31 - 1)]


class ChatMessage(BaseModel):
    """One chat turn."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    content: str


def system(content: str) -> ChatMessage:
    return ChatMessage(role="system", content=content)


def user(content: str) -> ChatMessage:
    return ChatMessage(role="user", content=content)


class JsonSchema(BaseModel):
    """A JSON schema for structured output, named as OpenAI's ``response_format`` wants."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    schema_: dict[str, Any] = Field(alias="schema")
    strict: bool = True


class GenerateConfig(BaseModel):
    """Every generation parameter assay knows. All of them enter the cache key.

    ``n`` asks for several samples; the model layer turns it into ``n`` single-sample calls,
    sample ``i`` seeded with ``seed + i``, so each sample is cached on its own.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(default=512, ge=1, le=32768)
    seed: Seed | None = 0
    stop: tuple[str, ...] = ()
    n: int = Field(default=1, ge=1, le=128)
    logprobs: bool = False
    top_logprobs: int = Field(default=0, ge=0, le=20)
    # With logprobs: also report every token whose text, stripped and casefolded, is one of
    # these words (the labels of a label question), wherever it ranks. Backends that hold
    # the whole distribution (llama.cpp in-process) honour it; HTTP APIs return top_logprobs.
    logprob_tokens: tuple[str, ...] = ()
    json_schema: JsonSchema | None = None

    @field_validator("stop", mode="before")
    @classmethod
    def _stop_as_tuple(cls, value: object) -> object:
        if isinstance(value, str):
            return (value,)
        if isinstance(value, list):
            return tuple(value)
        return value

    def for_sample(self, index: int) -> GenerateConfig:
        """The single-sample settings of sample ``index``."""
        seed = None if self.seed is None else self.seed + index
        return self.model_copy(update={"n": 1, "seed": seed})

    def decoding_params(self) -> dict[str, Any]:
        """The parameters a run log records (everything but the schema body)."""
        params = self.model_dump(exclude={"json_schema"})
        params["json_schema"] = None if self.json_schema is None else self.json_schema.name
        return params


class TopLogprob(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    token: str
    logprob: float


class TokenLogprob(BaseModel):
    """The log-probability of one generated token, with the alternatives when asked."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    token: str
    logprob: float
    top: tuple[TopLogprob, ...] = ()


class Completion(BaseModel):
    """One successful sample."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    finish_reason: str
    # counts are never negative: a server that says so sent a reply of the wrong shape, a
    # retried call failure, not a cost below zero
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    # of prompt_tokens, how many an in-process backend took from its KV cache (shared prefix)
    prompt_tokens_reused: int = Field(default=0, ge=0)
    # of prompt_tokens, how many the provider served from its prompt cache (billed at its
    # cached-input price; OpenAI's usage.prompt_tokens_details.cached_tokens)
    cached_prompt_tokens: int = Field(default=0, ge=0)
    latency_s: float = 0.0
    logprobs: tuple[TokenLogprob, ...] | None = None
    model: str = ""  # the model name the backend reported, when it reports one
    # the backend configuration that served the reply, when the server reports one (OpenAI's
    # and vLLM's system_fingerprint); replies cached before this field existed load with ""
    system_fingerprint: str = ""
    cached: bool = False
    sample_index: int = 0

    @property
    def ok(self) -> Literal[True]:
        return True


class ErrorKind(enum.StrEnum):
    """Why a call failed. The first five are retried; the rest are final."""

    RATE_LIMIT = "rate_limit"
    SERVER_ERROR = "server_error"
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    MALFORMED_RESPONSE = "malformed_response"
    BAD_REQUEST = "bad_request"
    AUTHENTICATION = "authentication"
    NOT_FOUND = "not_found"
    CONTEXT_LENGTH = "context_length"
    BACKEND = "backend"
    CANCELLED = "cancelled"
    # not sent: written to a batch input file (see assay.model._batch); never recorded
    DEFERRED = "deferred"

    @property
    def retryable(self) -> bool:
        return self in _RETRYABLE


_RETRYABLE = frozenset(
    {
        ErrorKind.RATE_LIMIT,
        ErrorKind.SERVER_ERROR,
        ErrorKind.TIMEOUT,
        ErrorKind.CONNECTION,
        ErrorKind.MALFORMED_RESPONSE,
    }
)


class CallFailure(BaseModel):
    """A call that failed after every allowed attempt. Never model text, never a score."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ErrorKind
    message: str
    attempts: int = 1
    latency_s: float = 0.0
    sample_index: int = 0

    @property
    def ok(self) -> Literal[False]:
        return False

    def describe(self) -> str:
        return describe_failure(self.kind.value, self.attempts, self.message)


def describe_failure(kind: str, attempts: int, message: str) -> str:
    """A failed call in words, as every printout and summary gives it (also for an archived
    failure, which keeps the kind as text): ``timeout after 4 attempt(s): ...``."""
    return f"{kind} after {attempts} attempt(s): {message}"


ModelResult = Completion | CallFailure


class BackendError(Exception):
    """Raised *inside* a backend; the model layer retries it or turns it into a CallFailure."""

    def __init__(self, kind: ErrorKind, message: str, *, retry_after_s: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retry_after_s = retry_after_s


def texts(results: Sequence[ModelResult]) -> list[str | None]:
    """The text of each result, ``None`` for failures."""
    return [r.text if isinstance(r, Completion) else None for r in results]


#: A stub reply function: (messages, config, seeded rng) -> reply text.
StubResponder = Callable[[Sequence[ChatMessage], GenerateConfig, random.Random], str]
