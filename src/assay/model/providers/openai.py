"""``openai/<model>``: any OpenAI-compatible chat-completions server, over plain HTTP.

The requests go through httpx directly, not the openai SDK: a chat completion is one JSON POST,
and the SDK costs about 0.4 s of import and a typed object per reply, which dominate short runs
and the client's CPU per call. Retries are the model layer's, one policy for every backend.
The API key is held by the client only; it is never part of a cache key, a log or an error:
the credentials of the base URL are stripped (``self.base_url`` is the public form) and every
secret is masked in what the server sends back (error bodies, replies), see ``assay.redact``.
"""

from __future__ import annotations

import itertools
import json
import os
import secrets
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
from pydantic import ValidationError

from ...errors import ConfigError
from ...redact import Redactor, public_url, url_secrets
from .._backend import Backend
from .._types import (
    BackendError,
    ChatMessage,
    Completion,
    ErrorKind,
    GenerateConfig,
    JsonSchema,
    StructuredOutput,
    TokenLogprob,
    TopLogprob,
)

# connection pools per backend, and connections each keeps open between requests (64 in all)
POOLS = 4
KEEPALIVE_PER_POOL = 16


class _StatusError(Exception):
    """A non-2xx answer: its status, the server's message and the raw response."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.status_code = response.status_code
        self.body = response.text
        super().__init__(_error_message(response))


class OpenAIBackend(Backend):
    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        structured_output: StructuredOutput = "auto",
        api_key_env: str = "OPENAI_API_KEY",
    ) -> None:
        super().__init__(model)
        full_url = base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        _check_url(full_url, "--base-url" if base_url else "OPENAI_BASE_URL")
        #: The URL without credentials: the only form stored, printed or put in a cache key.
        self.base_url = public_url(full_url)
        key = api_key or os.environ.get("OPENAI_API_KEY")
        self._redact = Redactor([key, *url_secrets(full_url)])
        #: Where the key came from, for the error of a server that refuses it.
        self._key_source = (
            f"read from the environment variable {api_key_env if api_key else 'OPENAI_API_KEY'}"
            if key
            else "no key was sent: OPENAI_API_KEY is not set"
        )
        if not key:
            # Local servers accept any key; hosted ones answer 401, reported as such.
            key = "not-set"
        self._structured: StructuredOutput = structured_output
        self._encoder = _RequestEncoder()
        # Several small connection pools, taken in turn: httpcore 1.0's pool checks every
        # connection for every waiting request each time it places one, so one pool of 64
        # connections spent most of a busy client's time there (benchmarks/README.md).
        self._clients = [
            httpx.AsyncClient(
                base_url=full_url.rstrip("/") + "/",
                headers={"Authorization": f"Bearer {key}"},
                timeout=httpx.Timeout(timeout_s, connect=min(10.0, timeout_s)),
                limits=httpx.Limits(
                    max_connections=None, max_keepalive_connections=KEEPALIVE_PER_POOL
                ),
            )
            for _ in range(POOLS)
        ]
        self._next_client = itertools.cycle(self._clients)

    @property
    def cache_identity(self) -> dict[str, str]:
        return {"base_url": self.base_url.rstrip("/")}

    def version_info(self) -> dict[str, str]:
        """The HTTP client's version and the server's address (credentials stripped; never the
        key). The model id the server reports is in each reply and in the usage summary."""
        return {"httpx": httpx.__version__, "base_url": self.base_url.rstrip("/")}

    @property
    def supports_json_schema(self) -> bool:
        return self._structured != "off"

    @property
    def supports_logprobs(self) -> bool:
        return True

    async def generate(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> Completion:
        try:
            completion = await self._generate(messages, config)
        except BackendError as error:
            message = self._redact.message(error.message)
            raise BackendError(error.kind, message, retry_after_s=error.retry_after_s) from None
        if not self._redact.active:
            return completion
        # what the server names itself by lands in run logs too: no secret it echoes may
        served = {"model": completion.model, "system_fingerprint": completion.system_fingerprint}
        update = {key: self._redact(value) for key, value in served.items()}
        return completion.model_copy(update={"text": self._redact(completion.text), **update})

    async def _generate(
        self, messages: Sequence[ChatMessage], config: GenerateConfig
    ) -> Completion:
        try:
            response = await self._create(messages, config)
        except _StatusError as error:
            raise _status_error(error, self.base_url, self._key_source) from None
        except httpx.TimeoutException:
            raise BackendError(ErrorKind.TIMEOUT, f"request to {self.base_url} timed out") from None
        except httpx.TransportError as error:
            raise BackendError(
                ErrorKind.CONNECTION, f"cannot reach {self.base_url}: {_cause(error)}"
            ) from None
        except (json.JSONDecodeError, ValueError, TypeError) as error:
            raise BackendError(
                ErrorKind.MALFORMED_RESPONSE, f"unreadable response body: {_short(str(error))}"
            ) from None
        return _completion(response)

    async def _create(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> object:
        try:
            return await self._post(self._request(messages, config))
        except _StatusError as error:
            if not self._should_fall_back(error, config):
                raise
        # The server rejected OpenAI's json_schema response format; llama-cpp-python's server
        # (and others) take the schema inside a json_object format instead. Learned once, kept.
        self._structured = "json_object"
        return await self._post(self._request(messages, config))

    async def _post(self, request: dict[str, Any]) -> object:
        response = await next(self._next_client).post(
            "chat/completions",
            content=self._encoder.encode(request),
            headers={"Content-Type": "application/json"},
        )
        if not response.is_success:
            raise _StatusError(response)
        return json.loads(response.content)

    def _should_fall_back(self, error: _StatusError, config: GenerateConfig) -> bool:
        return (
            self._structured == "auto"
            and config.json_schema is not None
            and error.status_code in (400, 422, 500)
            and "response_format" in error.body
        )

    def _request(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [m.model_dump() for m in messages],
            "temperature": config.temperature,
            "top_p": config.top_p,
            "max_tokens": config.max_tokens,
        }
        if config.seed is not None:
            request["seed"] = config.seed
        if config.stop:
            request["stop"] = list(config.stop)
        if config.logprobs:
            request["logprobs"] = True
            if config.top_logprobs:
                request["top_logprobs"] = config.top_logprobs
        if config.json_schema is not None and self._structured != "off":
            request["response_format"] = _response_format(config.json_schema, self._structured)
        return request

    def batch_request(
        self, messages: Sequence[ChatMessage], config: GenerateConfig
    ) -> dict[str, Any] | None:
        """The request body this call sends, for a batch input file.

        In a batch file no fallback is possible: "auto" asks for the json_schema format, as
        OpenAI takes it; for a server that wants llama-cpp-python's form, pass
        ``--structured-output json_object``."""
        return self._request(messages, config)

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose()


class _RequestEncoder:
    """Request bodies as httpx's ``json=`` would encode them (compact, UTF-8, no NaN), with the
    alternatives of a JSON schema's top-level ``anyOf`` encoded once per object.

    The exact judge schema shares its score/verdict alternatives between every sample of a
    protocol (tens of kB); encoding them again for each request was a tenth of the client's
    CPU per judged sample. An alternative is reused only while it is the very same object, and
    the memo is bounded.
    """

    MAX_MEMO = 4096

    def __init__(self) -> None:
        self._memo: dict[int, tuple[object, str]] = {}
        self._slot = f"assay-schema-{secrets.token_hex(16)}"

    def encode(self, request: dict[str, Any]) -> bytes:
        try:
            return self._text(request).encode()
        except UnicodeEncodeError:
            # a lone surrogate (a model's earlier reply, quoted in this prompt): UTF-8 cannot
            # hold it, JSON's \u escape can, and the server decides what it makes of it
            escaped = json.dumps(request, ensure_ascii=True, separators=(",", ":"))
            return escaped.encode()

    def _text(self, request: dict[str, Any]) -> str:
        schema, path = _schema_of(request)
        if schema is None or not isinstance(schema.get("anyOf"), list):
            return _dumps(request)
        path[0][path[1]] = self._slot  # a copy of the request's nesting, not the caller's
        return _dumps(path[2]).replace(f'"{self._slot}"', self._schema_text(schema), 1)

    def _schema_text(self, schema: dict[str, Any]) -> str:
        parts = [
            f"{_dumps(key)}:{self._alternatives(value) if key == 'anyOf' else _dumps(value)}"
            for key, value in schema.items()
        ]
        return "{" + ",".join(parts) + "}"

    def _alternatives(self, alternatives: list[Any]) -> str:
        return "[" + ",".join(self._alternative(item) for item in alternatives) + "]"

    def _alternative(self, item: object) -> str:
        known = self._memo.get(id(item))
        if known is not None and known[0] is item:
            return known[1]
        text = _dumps(item)
        if len(self._memo) >= self.MAX_MEMO:
            self._memo.clear()
        self._memo[id(item)] = (item, text)
        return text


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _schema_of(
    request: dict[str, Any],
) -> tuple[dict[str, Any] | None, tuple[dict[str, Any], str, dict[str, Any]]]:
    """The request's JSON schema, and where it sits in a shallow copy of the request (the
    dict holding it, its key, the copied request)."""
    copy = dict(request)
    response_format = copy.get("response_format")
    if not isinstance(response_format, dict):
        return None, (copy, "", copy)
    outer = copy["response_format"] = dict(response_format)
    if outer.get("type") == "json_object":
        holder = outer
    elif isinstance(outer.get("json_schema"), dict):
        holder = outer["json_schema"] = dict(outer["json_schema"])
    else:
        return None, (copy, "", copy)
    schema = holder.get("schema")
    return (schema if isinstance(schema, dict) else None), (holder, "schema", copy)


def _response_format(schema: JsonSchema, mode: StructuredOutput) -> dict[str, Any]:
    if mode == "json_object":
        return {"type": "json_object", "schema": schema.schema_}
    return {
        "type": "json_schema",
        "json_schema": {"name": schema.name, "schema": schema.schema_, "strict": schema.strict},
    }


def _check_url(url: str, source: str) -> None:
    """An http(s) URL with a host and a valid port, refused before any request (a bad port
    or bracket was an internal error from deep inside the HTTP client)."""
    try:
        parts = urlsplit(url)
        port = parts.port  # raises for a port that is not a number in range
        httpx.URL(url)
    except (ValueError, httpx.InvalidURL) as error:
        problem = str(error)
    else:
        problem = ""
        if parts.scheme not in ("http", "https") or not parts.hostname:
            problem = "expected http://HOST[:PORT]/PATH or https://..."
        elif port == 0:
            problem = "port 0"
    if problem:
        shown_url = public_url(url)
        raise ConfigError(f"{source} {shown_url}: not a server URL ({problem})")


def _completion(response: object) -> Completion:
    """The reply as a Completion; a reply of any other shape is a (retried) call failure."""
    reply, text, choice = _checked_reply(response)
    try:
        usage = reply.get("usage") or {}
        return Completion(
            text=text,
            finish_reason=choice.get("finish_reason") or "unknown",
            prompt_tokens=usage.get("prompt_tokens") or 0,
            cached_prompt_tokens=_cached_tokens(usage),
            completion_tokens=usage.get("completion_tokens") or 0,
            logprobs=_logprobs(choice.get("logprobs")),
            model=reply.get("model") or "",
            system_fingerprint=reply.get("system_fingerprint") or "",
        )
    except ValidationError as error:
        item = error.errors()[0]
        where = ".".join(str(part) for part in item["loc"])
        problem = f"{where}: {item['msg']} (got {item.get('input')!r})"
        raise _malformed(f"reply has a field assay cannot take: {_short(problem)}") from None
    except (AttributeError, TypeError, ValueError, KeyError) as error:
        raise _malformed(f"reply has a field of the wrong type: {_short(str(error))}") from None


def _cached_tokens(usage: dict[str, Any]) -> int:
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return cached if isinstance(cached, int) and cached >= 0 else 0


def _checked_reply(response: object) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """The reply, its first choice's text and that choice, checked: a server can put a number
    where the text belongs, or answer 200 with an error object."""
    if not isinstance(response, dict):
        raise _malformed(f"reply is not a chat completion object ({type(response).__name__})")
    error = response.get("error")
    if error is not None:
        raise _malformed(f"reply is an error object: {_short(str(error))}")
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices:
        raise _malformed("reply has no choices")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    text = message.get("content") if isinstance(message, dict) else None
    if text is None:
        raise _malformed("reply's first choice has no message content")
    if not isinstance(text, str):
        raise _malformed(f"reply's message content is not a string but {type(text).__name__}")
    return response, text, choice


def _malformed(cause: str) -> BackendError:
    return BackendError(ErrorKind.MALFORMED_RESPONSE, cause)


def _logprobs(block: Any) -> tuple[TokenLogprob, ...] | None:
    content = block.get("content") if isinstance(block, dict) else None
    if not content:
        return None
    return tuple(
        TokenLogprob(
            token=item["token"],
            logprob=float(item["logprob"]),
            top=tuple(
                TopLogprob(token=t["token"], logprob=float(t["logprob"]))
                for t in (item.get("top_logprobs") or [])
            ),
        )
        for item in content
    )


def _error_message(response: httpx.Response) -> str:
    """The server's own message (``{"error": {"message": ...}}``), else its body."""
    try:
        body = response.json()
    except ValueError:
        return _short(response.text) or response.reason_phrase
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return _short(str(message if message is not None else body))


def _status_error(error: _StatusError, base_url: str, key_source: str) -> BackendError:
    status = error.status_code
    detail = str(error) + _not_found_hint(status, base_url)
    kind = status_kind(status, detail)
    if kind is ErrorKind.AUTHENTICATION:
        # the server's own words may quote the key: they are left out
        return BackendError(kind, f"HTTP {status}: the server refused the API key ({key_source})")
    retry_after = _retry_after(error.response) if kind.retryable else None
    return BackendError(kind, f"HTTP {status}: {detail}", retry_after_s=retry_after)


def _not_found_hint(status: int, base_url: str) -> str:
    """A 404 from a base URL without ``/v1``: servers (llama.cpp's, vLLM, Ollama, OpenAI)
    answer chat completions under ``/v1``, so the path is the likely cause, not the model."""
    base = base_url.rstrip("/")
    if status != 404 or base.endswith("/v1"):
        return ""
    return (
        f" (no {base}/chat/completions: OpenAI-compatible servers serve it under /v1; "
        f"try --base-url {base}/v1)"
    )


def status_kind(status: int, detail: str) -> ErrorKind:
    """The kind of failure an HTTP error status (with its message) stands for."""
    if status == 429:
        return ErrorKind.RATE_LIMIT
    if status >= 500:
        return ErrorKind.SERVER_ERROR
    if status in (401, 403):
        return ErrorKind.AUTHENTICATION
    if status == 404:
        return ErrorKind.NOT_FOUND
    if "context" in detail.lower() and "length" in detail.lower():
        return ErrorKind.CONTEXT_LENGTH
    return ErrorKind.BAD_REQUEST


def completion_from_body(body: object) -> Completion:
    """A chat-completion body (as a batch output line holds it) as a Completion, checked as a
    live reply is; a body of any other shape raises BackendError."""
    return _completion(body)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: rare from model servers; fall back to backoff


def _cause(error: BaseException) -> str:
    """The innermost non-empty description in the exception chain, else the innermost
    exception's type name: a connection reset often arrives wrapped, with an empty message."""
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    for item in reversed(seen):
        if str(item).strip():
            return _short(str(item))
    return f"{type(seen[-1]).__name__} (no detail given)"


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_base_url(url: str) -> str:
    if not url.startswith(("http://", "https://")):
        raise ConfigError(
            f"base URL must start with http:// or https://: {public_url(url)!r}",
            hint="for a local llama.cpp server: --base-url http://127.0.0.1:8080/v1",
        )
    return url
