"""The model layer: every model call in assay goes through :class:`Model`.

A model is named ``provider/model`` (``openai/...``, ``llamacpp/...``, ``stub/...``).
:func:`get_model` opens one behind the response cache, a concurrency bound and retries;
:meth:`Model.generate` returns a :class:`Completion` or a :class:`CallFailure`, never raises
for a failed call.
"""

from ._backend import Backend, UnopenedBackend
from ._batch import (
    MAX_BYTES_PER_FILE,
    MAX_REQUESTS_PER_FILE,
    BatchFiles,
    BatchScope,
    BatchWriter,
    batch_scope,
    calls_deferred,
    input_files,
    is_deferred,
    requested_ids,
)
from ._batch_import import ImportReport, import_batch_output
from ._cache import ResponseCache, cache_key, default_cache_path
from ._model import Model, RetryPolicy
from ._registry import (
    PROVIDER_HELP,
    PROVIDERS,
    ModelOptions,
    create_backend,
    get_model,
    open_batch,
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
    "MAX_BYTES_PER_FILE",
    "MAX_REQUESTS_PER_FILE",
    "PROVIDERS",
    "PROVIDER_HELP",
    "Backend",
    "BackendError",
    "BatchFiles",
    "BatchScope",
    "BatchWriter",
    "CallFailure",
    "ChatMessage",
    "Completion",
    "ErrorKind",
    "GenerateConfig",
    "ImportReport",
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
    "batch_scope",
    "cache_key",
    "calls_deferred",
    "create_backend",
    "default_cache_path",
    "get_model",
    "import_batch_output",
    "input_files",
    "is_deferred",
    "open_batch",
    "open_cache",
    "requested_ids",
    "split_model_name",
    "system",
    "texts",
    "user",
]
