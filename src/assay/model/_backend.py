"""The one interface every provider implements."""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any

from ._types import ChatMessage, Completion, GenerateConfig


class Backend(abc.ABC):
    """A provider of completions.

    ``generate`` always receives single-sample settings (``config.n == 1``); the model layer
    fans out samples, caches, bounds concurrency and retries. A backend raises
    :class:`~assay.model.BackendError` for a failed call and never returns error text as output.
    """

    #: provider name, the part before the slash in ``provider/model``
    provider: str = ""

    def __init__(self, model: str) -> None:
        self.model = model

    @property
    def name(self) -> str:
        return f"{self.provider}/{self.model}"

    @property
    def cache_identity(self) -> dict[str, str]:
        """What, beyond the model name, decides the replies (a base URL, a file hash)."""
        return {}

    @property
    def supports_json_schema(self) -> bool:
        """Whether ``config.json_schema`` constrains decoding (else it is only a hint)."""
        return False

    @property
    def supports_logprobs(self) -> bool:
        return False

    @property
    def max_parallel_calls(self) -> int | None:
        """How many calls the backend can really serve at once (None: no limit of its own).

        The model layer never has more in flight, so its timeout measures a call's own run,
        not time spent queueing behind other calls inside the backend.
        """
        return None

    def batch_request(
        self, messages: Sequence[ChatMessage], config: GenerateConfig
    ) -> dict[str, Any] | None:
        """The HTTP body of this call for a batch input file; None: the backend has no batch
        form (it runs in this process, as :data:`~assay.model.IN_PROCESS_PROVIDERS` says) and
        its calls are made live."""
        return None

    @abc.abstractmethod
    async def generate(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> Completion:
        """Produce one completion or raise BackendError."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook, most backends hold nothing
        """Release connections or model memory."""

    def version_info(self) -> dict[str, str]:
        """Model and library versions for run logs, as far as the backend knows them."""
        return {}


class UnopenedBackend(Backend):
    """Stands in for a model a run did not open because its plan does not use it.

    Every call fails with a clear reason (a recorded call failure, never a crash), so a plan
    that was wrong about a role shows up in the results instead of loading a model for nothing.
    """

    provider = "unopened"

    async def generate(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> Completion:
        from ._types import BackendError, ErrorKind

        raise BackendError(
            ErrorKind.BAD_REQUEST,
            f"{self.model} was not opened: this run's plan did not expect to call it",
        )
