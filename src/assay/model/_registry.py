"""From a model name ``provider/model`` and options to a ready :class:`Model`."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NoReturn, TypeVar, overload

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from ..errors import ConfigError, shown
from ..redact import public_url
from ._backend import Backend
from ._batch import BatchWriter
from ._cache import ResponseCache, default_cache_path
from ._model import Model, RetryPolicy
from ._types import StructuredOutput, StubResponder

M = TypeVar("M", bound=Model)


class ModelOptions(BaseModel):
    """Settings shared by every model a run opens (from the CLI or Python)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False, exclude=True)
    request_timeout_s: float = Field(default=120.0, gt=0)
    max_attempts: int = Field(default=4, ge=1, le=20)
    max_retry_after_s: float = Field(default=120.0, ge=0)
    max_concurrency: int = Field(default=8, ge=1, le=1024)
    cache: bool = True
    cache_path: Path | None = None
    # --executor batch: calls that miss the cache go to batch input files in this directory
    batch_dir: Path | None = None
    n_ctx: int = Field(default=4096, ge=256)
    structured_output: StructuredOutput = "auto"
    # Replies the stub gives to assay's tagged prompts, supplied by the layer that writes those
    # prompts (verify, judge); not a setting, so not serialised.
    stub_responders: Mapping[str, StubResponder] = Field(
        default_factory=dict, exclude=True, repr=False
    )
    # The variable api_key was read from (--api-key-env): a Ray worker reads its node's key
    # from the same one, for the key itself is never sent to workers. Not serialised.
    api_key_env: str = Field(default="OPENAI_API_KEY", exclude=True, repr=False)
    # On a Ray worker (from the driver's NodeContext, not serialised): the directory relative
    # paths in the settings (--cache-path, llamacpp/ and stub/ files) are resolved against,
    # the driver's, since a worker's own working directory is anywhere; and whether the
    # driver had a key that this node's api_key_env does not hold.
    workdir: Path | None = Field(default=None, exclude=True, repr=False)
    api_key_unset: bool = Field(default=False, exclude=True, repr=False)

    @field_serializer("base_url")
    def _public_base_url(self, base_url: str | None) -> str | None:
        # Settings are stored in run.json and summaries: never with credentials.
        return None if base_url is None else public_url(base_url)

    def with_stub_responders(self, responders: Mapping[str, StubResponder]) -> ModelOptions:
        return self.model_copy(update={"stub_responders": {**self.stub_responders, **responders}})

    def local_path(self, path: Path) -> Path:
        """``path`` as this process must open it: a relative one against ``workdir`` when set
        (a Ray worker resolves what the driver's user typed as the driver does)."""
        path = path.expanduser()
        if self.workdir is None or path.is_absolute():
            return path
        return self.workdir / path

    def node_context(self) -> NodeContext:
        """What a Ray worker needs from the driver besides these settings: the driver's working
        directory, the server URL the driver resolved (``OPENAI_BASE_URL`` when no --base-url:
        the worker's environment may name another or none), and, when the driver had a key,
        the variable each node reads its own key from."""
        from ..redact import url_secrets

        url = self.base_url or os.environ.get("OPENAI_BASE_URL") or None
        if url is not None and url_secrets(url):
            where = "--base-url" if self.base_url else "OPENAI_BASE_URL"
            raise ConfigError(
                f"{where} carries credentials, which are not sent to Ray workers",
                hint=f"give the key in the variable --api-key-env names ({self.api_key_env}), set "
                "on every node, and the URL without it",
            )
        return NodeContext(
            workdir=str(Path.cwd()),
            base_url=url,
            api_key_env=self.api_key_env if self.api_key is not None else None,
        )

    def on_worker(self, context: NodeContext) -> ModelOptions:
        """These settings as a Ray worker uses them: with what the driver sent, and the API
        key from this node's environment."""
        variable = context.api_key_env
        key = (os.environ.get(variable) or None) if variable is not None else None
        return self.model_copy(
            update={
                "workdir": Path(context.workdir),
                "base_url": context.base_url,
                "api_key": key,
                "api_key_env": variable or self.api_key_env,
                "api_key_unset": variable is not None and key is None,
            }
        )


class NodeContext(BaseModel):
    """What the driver sends a Ray worker besides the run's settings (see
    :meth:`ModelOptions.node_context`). Never a secret: each node reads its own API key."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    workdir: str
    base_url: str | None = None
    api_key_env: str | None = None


def _openai(model: str, options: ModelOptions) -> Backend:
    from .providers.openai import OpenAIBackend, check_base_url

    base_url = None if options.base_url is None else check_base_url(options.base_url)
    return OpenAIBackend(
        model,
        base_url=base_url,
        api_key=options.api_key if not options.api_key_unset else _no_key(options.api_key_env),
        timeout_s=options.request_timeout_s,
        structured_output=options.structured_output,
        api_key_env=options.api_key_env,
    )


def _no_key(variable: str) -> NoReturn:
    """The error of a Ray worker on a node whose ``variable`` is unset where the driver's held
    the key: sent without it, or with OPENAI_API_KEY's, the calls would fail or bill another
    account."""
    raise ConfigError(
        f"the API key variable {variable} is not set on this node (the driver had it)",
        hint=f"set {variable} in the environment `ray start` runs in on every node: the key "
        "is read on each node, never sent to the workers",
    )


def _llamacpp(model: str, options: ModelOptions) -> Backend:
    from .providers.llamacpp import LlamaCppBackend

    return LlamaCppBackend(model, n_ctx=options.n_ctx, workdir=options.workdir)


def _stub(model: str, options: ModelOptions) -> Backend:
    from .providers.stub import StubBackend

    return StubBackend(model, task_responders=options.stub_responders, workdir=options.workdir)


#: provider name -> factory. A new backend is one module in providers/ and one line here.
PROVIDERS: dict[str, Callable[[str, ModelOptions], Backend]] = {
    "openai": _openai,
    "llamacpp": _llamacpp,
    "stub": _stub,
}

#: Providers whose models run inside assay's own process, not behind a server: nobody bills
#: their tokens (their cost is the machine's time, which runs record as latency), so money
#: counts them at zero unless a price table prices them; and they have no batch form (their
#: backends' ``batch_request`` is None, so their calls run live).
IN_PROCESS_PROVIDERS: frozenset[str] = frozenset({"llamacpp", "stub"})

PROVIDER_HELP: dict[str, str] = {
    "openai": "any OpenAI-compatible HTTP server (OPENAI_BASE_URL, OPENAI_API_KEY)",
    "llamacpp": "a GGUF model in this process; llamacpp/smollm2 is the embedded default",
    "stub": "deterministic replies for dry runs and tests; stub/<file>.jsonl replays a file",
}


def split_model_name(name: str) -> tuple[str, str]:
    provider, slash, model = name.partition("/")
    if not slash or not model:
        raise ConfigError(
            f"model name {shown(name)} is not of the form provider/model",
            hint=f"providers: {', '.join(PROVIDERS)}; e.g. llamacpp/smollm2 or openai/gpt-4o-mini",
        )
    if provider not in PROVIDERS:
        raise ConfigError(
            f"unknown provider {shown(provider)} in model name {shown(name)}",
            hint=f"known providers: {', '.join(PROVIDERS)} (see `assay models`)",
        )
    return provider, model


def runs_in_process(name: str) -> bool:
    """Whether the model ``provider/model`` runs in this process (a name of another form, or
    of another provider, is taken as one behind a server, which may bill per token)."""
    provider, slash, _ = name.partition("/")
    return bool(slash) and provider in IN_PROCESS_PROVIDERS


def create_backend(name: str, options: ModelOptions | None = None) -> Backend:
    provider, model = split_model_name(name)
    return PROVIDERS[provider](model, options or ModelOptions())


def open_cache(options: ModelOptions) -> ResponseCache | None:
    if not options.cache:
        return None
    if options.cache_path is None:  # this node's default (its own environment and home)
        return ResponseCache.shared(default_cache_path())
    return ResponseCache.shared(options.local_path(options.cache_path))


def open_batch(options: ModelOptions) -> BatchWriter | None:
    """The process's batch writer for ``options.batch_dir`` (None: calls are sent live)."""
    if options.batch_dir is None:
        return None
    if not options.cache:
        raise ConfigError(
            "--executor batch needs the response cache (batch answers are imported into it)",
            hint="drop --no-cache",
        )
    return BatchWriter.shared(options.batch_dir)


@overload
def get_model(
    name: str,
    options: ModelOptions | None = None,
    *,
    cache: ResponseCache | None = None,
    backend: Backend | None = None,
) -> Model: ...


@overload
def get_model(
    name: str,
    options: ModelOptions | None = None,
    *,
    cache: ResponseCache | None = None,
    backend: Backend | None = None,
    model_type: type[M],
) -> M: ...


def get_model(
    name: str,
    options: ModelOptions | None = None,
    *,
    cache: ResponseCache | None = None,
    backend: Backend | None = None,
    model_type: type[Model] = Model,
) -> Model:
    """Open ``provider/model`` behind the cache and the retry policy.

    Pass ``backend`` to wrap an already built backend (a scripted stub in tests), and
    ``model_type`` for a :class:`Model` subclass (the verifier benchmark's per-example meter).
    Models of one run should share one ``cache``: two SQLite connections writing the same
    file in batches lock each other out.
    """
    options = options or ModelOptions()
    return model_type(
        backend if backend is not None else create_backend(name, options),
        cache=cache if cache is not None else open_cache(options),
        max_concurrency=options.max_concurrency,
        retry=RetryPolicy(
            max_attempts=options.max_attempts, max_retry_after_s=options.max_retry_after_s
        ),
        request_timeout_s=options.request_timeout_s,
        batch=open_batch(options),
    )
