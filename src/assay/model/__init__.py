"""The model layer: every model call in assay goes through :class:`Model`.

A model is named ``provider/model`` (``openai/...``, ``llamacpp/...``, ``stub/...``).
:func:`get_model` opens one behind the response cache, a concurrency bound and retries;
:meth:`Model.generate` returns a :class:`Completion` or a :class:`CallFailure`, never raises
for a failed call.
"""

from ._backend import Backend, UnopenedBackend
from ._cache import ResponseCache, cache_key, default_cache_path
from ._model import Model, RetryPolicy
from ._registry import (
    PROVIDER_HELP,
    PROVIDERS,
    ModelOptions,
    create_backend,
    get_model,
    open_cache,
    split_model_name,
)
from ._types import (
    BackendError,
    CallFailure,
    ChatMessage,
    Completion,
    ErrorKind,
    GenerateConfig,
    JsonSchema,
    ModelResult,
    StubResponder,
    TokenLogprob,
    TopLogprob,
    system,
    texts,
    user,
)
from ._usage import Usage

DEFAULT_MODEL = "llamacpp/smollm2"

__all__ = [
    "DEFAULT_MODEL",
    "PROVIDERS",
    "PROVIDER_HELP",
    "Backend",
    "BackendError",
    "CallFailure",
    "ChatMessage",
    "Completion",
    "ErrorKind",
    "GenerateConfig",
    "JsonSchema",
    "Model",
    "ModelOptions",
    "ModelResult",
    "ResponseCache",
    "RetryPolicy",
    "StubResponder",
    "TokenLogprob",
    "TopLogprob",
    "UnopenedBackend",
    "Usage",
    "cache_key",
    "create_backend",
    "default_cache_path",
    "get_model",
    "open_cache",
    "split_model_name",
    "system",
    "texts",
    "user",
]
