"""The model layer: every model call in assay goes through :class:`Model`.

A model is named ``provider/model`` (``openai/...``, ``llamacpp/...``, ``stub/...``).
:func:`get_model` opens one behind the response cache, a concurrency bound and retries;
:meth:`Model.generate` returns a :class:`Completion` or a :class:`CallFailure`, never raises
for a failed call.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

DEFAULT_MODEL = "llamacpp/smollm2"

# Where each public name lives, loaded on first use: the CLI's start (`assay --help`) and
# model-free runs do not pay for pydantic models, asyncio and the HTTP client they never touch.
_SOURCES = {
    "MAX_BYTES_PER_FILE": "._batch",
    "MAX_REQUESTS_PER_FILE": "._batch",
    "BatchFiles": "._batch",
    "BatchScope": "._batch",
    "BatchWriter": "._batch",
    "batch_scope": "._batch",
    "calls_deferred": "._batch",
    "input_files": "._batch",
    "is_deferred": "._batch",
    "requested_ids": "._batch",
    "ImportReport": "._batch_import",
    "import_batch_output": "._batch_import",
    "Backend": "._backend",
    "UnopenedBackend": "._backend",
    "ResponseCache": "._cache",
    "cache_key": "._cache",
    "default_cache_path": "._cache",
    "Model": "._model",
    "RetryPolicy": "._model",
    "IN_PROCESS_PROVIDERS": "._registry",
    "PROVIDER_HELP": "._registry",
    "PROVIDERS": "._registry",
    "ModelOptions": "._registry",
    "NodeContext": "._registry",
    "create_backend": "._registry",
    "get_model": "._registry",
    "open_batch": "._registry",
    "open_cache": "._registry",
    "runs_in_process": "._registry",
    "split_model_name": "._registry",
    "BackendError": "._types",
    "CallFailure": "._types",
    "ChatMessage": "._types",
    "describe_failure": "._types",
    "Completion": "._types",
    "ErrorKind": "._types",
    "GenerateConfig": "._types",
    "JsonSchema": "._types",
    "ModelResult": "._types",
    "Seed": "._types",
    "StubResponder": "._types",
    "TokenLogprob": "._types",
    "TopLogprob": "._types",
    "system": "._types",
    "texts": "._types",
    "user": "._types",
    "Usage": "._usage",
}


def __getattr__(name: str) -> Any:
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_SOURCES[name], __name__), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
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
        IN_PROCESS_PROVIDERS,
        PROVIDER_HELP,
        PROVIDERS,
        ModelOptions,
        NodeContext,
        create_backend,
        get_model,
        open_batch,
        open_cache,
        runs_in_process,
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
        Seed,
        StubResponder,
        TokenLogprob,
        TopLogprob,
        describe_failure,
        system,
        texts,
        user,
    )
    from ._usage import Usage


__all__ = [
    "DEFAULT_MODEL",
    "IN_PROCESS_PROVIDERS",
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
    "NodeContext",
    "ResponseCache",
    "RetryPolicy",
    "Seed",
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
    "describe_failure",
    "get_model",
    "import_batch_output",
    "input_files",
    "is_deferred",
    "open_batch",
    "open_cache",
    "requested_ids",
    "runs_in_process",
    "split_model_name",
    "system",
    "texts",
    "user",
]
