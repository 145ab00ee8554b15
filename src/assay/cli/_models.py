"""``assay models`` and ``assay ping``."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from ..errors import ConfigError
from ..model import (
    DEFAULT_MODEL,
    PROVIDER_HELP,
    CallFailure,
    GenerateConfig,
    ModelOptions,
    get_model,
    user,
)
from ._common import add_model_options, model_options


def register(subparsers: Any) -> None:
    models = subparsers.add_parser("models", help="list model providers")
    models.set_defaults(handler=_list_models)

    ping = subparsers.add_parser("ping", help="send one prompt to a model and print the reply")
    ping.add_argument("model", nargs="?", default=DEFAULT_MODEL, help="provider/model")
    ping.add_argument(
        "--prompt",
        default="Say hello in one short sentence.",
        help="the prompt to send (default: %(default)r)",
    )
    ping.add_argument("--max-tokens", type=int, default=64, help="tokens of the reply (64)")
    ping.add_argument("--temperature", type=float, default=0.0, help="sampling (0)")
    ping.add_argument("--seed", type=int, default=0, help="sampling seed, 0 to 2^31-1 (0)")
    ping.add_argument("--json", action="store_true", help="print the result as JSON")
    add_model_options(ping)
    ping.set_defaults(handler=_ping)


def _list_models(args: argparse.Namespace) -> int:
    for provider, text in PROVIDER_HELP.items():
        print(f"{provider + '/':<11} {text}")
    print(f"\ndefault model: {DEFAULT_MODEL}")
    return 0


def _ping(args: argparse.Namespace) -> int:
    config = GenerateConfig(
        max_tokens=args.max_tokens, temperature=args.temperature, seed=args.seed
    )
    result = asyncio.run(_ping_once(args.model, model_options(args), args.prompt, config))
    if isinstance(result, CallFailure):
        raise ConfigError(f"{args.model}: the call failed: {result.describe()}")
    if args.json:
        print(json.dumps(result.model_dump(mode="json"), indent=2))
        return 0
    print(result.text)
    took = f"{result.latency_s * 1000:.0f} ms"
    if result.cached:  # the time is the first call's, not this answer's
        took = f"from the response cache (the call took {took})"
    print(
        f"-- {args.model}: {result.prompt_tokens} prompt + {result.completion_tokens} "
        f"completion tokens, {took}, finish={result.finish_reason}"
    )
    return 0


async def _ping_once(name: str, options: ModelOptions, prompt: str, config: GenerateConfig) -> Any:
    model = get_model(name, options)
    try:
        return await model.generate([user(prompt)], config)
    finally:
        await model.aclose()
