"""Cost in money: a price table (USD per million tokens per model) applied to a run's usage.

The table is a JSON, YAML or TOML file::

    models:
      openai/gpt-4o-mini: {input: 0.15, output: 0.60, cached_input: 0.075, batch_discount: 0.5}
      "openai/*":         {input: 2.50, output: 10.00}     # a pattern: first match wins

Model names are assay's (``provider/model``); an exact name wins over a pattern. Tokens come
from each session's usage in ``run_log.jsonl`` (all sessions of a resumed run): the work's
tokens (cache hits included: what the results cost to make) and the tokens billed in these
sessions (calls actually sent; cached-input tokens at their own price). A model that runs in
assay's own process (the model layer says which: ``in_process``) is billed by nobody per token:
without a price of its own in the table it costs zero, and the note says why. Any other model
without a price makes the total unknown, and says which model it is: never a silent zero.
"""

from __future__ import annotations

import fnmatch
import json
import tomllib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..data.yaml_keys import line_at, strict_load
from ..errors import (
    InputError,
    describe_problem,
    field_path,
    validation_problems,
    yaml_input_error,
)

PRICES_FILE = "prices.json"  # the table a run was given, kept in the run directory
PER = 1_000_000


class ModelPrice(BaseModel):
    # strict: a price written as a string is a mistake in the table, not a number
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    # finite: an infinite price would be kept in the run as null, which no later read accepts
    input: float = Field(ge=0, allow_inf_nan=False)  # USD per million prompt tokens
    output: float = Field(ge=0, allow_inf_nan=False)  # USD per million completion tokens
    cached_input: float | None = Field(default=None, ge=0, allow_inf_nan=False)  # default: input
    batch_discount: float = Field(default=0.0, ge=0, lt=1)  # share taken off batch calls


# what an in-process model costs when the table does not price it
ZERO_PRICE = ModelPrice(input=0.0, output=0.0)


class PriceTable(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    currency: str = "USD"
    models: dict[str, ModelPrice]

    def price_of(self, model: str) -> ModelPrice | None:
        if model in self.models:
            return self.models[model]
        return next((p for k, p in self.models.items() if fnmatch.fnmatchcase(model, k)), None)


class ModelCost(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt_tokens: int
    completion_tokens: int
    usd: float | None  # the work's tokens at list price (None: no price for the model)
    billed_usd: float | None  # what the calls sent in these sessions cost


class Money(BaseModel):
    """A run's cost in money, or why it is unknown."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    currency: str = "USD"
    known: bool
    total: float | None
    billed: float | None
    per_item: float | None  # per example (bench) or per sample x judge (judge)
    items: int
    by_model: dict[str, ModelCost]
    missing_prices: tuple[str, ...] = ()
    # models run in assay's process and priced by no table: zero, as nobody bills their tokens
    in_process: tuple[str, ...] = ()
    batch: bool = False
    note: str = ""


def load_prices(path: Path) -> PriceTable:
    """The table in ``path`` (.json, .yaml/.yml or .toml); a bad file is a located error."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot read the price table: {error.strerror}", path=path) from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {error.start + 1})", path=path) from None
    try:
        data = _parse(path, text)
    except yaml.YAMLError as error:
        raise yaml_input_error(error, path, "not a price table") from None
    except ValueError as error:
        raise InputError(f"not a price table: {error}", path=path) from None
    try:
        return PriceTable.model_validate(data)
    except ValidationError as error:
        first = validation_problems(error)[0]
        field = field_path(first["loc"]) or None
        line = None if path.suffix == ".toml" else line_at(text, tuple(first["loc"]))
        raise InputError(describe_problem(first), path=path, line=line, field=field) from None


def read_run_prices(run_dir: Path) -> PriceTable | None:
    """The table kept in a run directory by an earlier ``--prices``, if any."""
    path = run_dir / PRICES_FILE
    return load_prices(path) if path.is_file() else None


def keep_prices(run_dir: Path, table: PriceTable) -> None:
    from ._runlog import write_atomic

    run_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(run_dir / PRICES_FILE, table.model_dump_json(indent=2))


def run_money(
    run_dir: Path,
    table: PriceTable | None,
    items: int,
    *,
    batch: bool,
    in_process: Callable[[str], bool],
) -> Money:
    """``money`` over the sessions in ``run_dir/run_log.jsonl``."""
    from ._jsonl import read_jsonl

    log = run_dir / "run_log.jsonl"
    lines = list(read_jsonl(log)) if log.is_file() else []
    return money(table, session_usage(lines), items, batch=batch, in_process=in_process)


def _parse(path: Path, text: str) -> Any:
    if path.suffix == ".toml":
        return tomllib.loads(text)
    if path.suffix in (".yaml", ".yml"):
        return strict_load(text)  # a model priced twice is an error, not the last price
    return json.loads(text)


def session_usage(run_log_lines: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Token counts per model summed over every finished session of a run."""
    totals: dict[str, dict[str, int]] = {}
    for line in run_log_lines:
        if line.get("event") != "end":
            continue
        for model, usage in (line.get("usage") or {}).items():
            into = totals.setdefault(model, {})
            for key, value in usage.items():
                if isinstance(value, int) and not isinstance(value, bool):
                    into[key] = into.get(key, 0) + value
    return totals


def money(
    table: PriceTable | None,
    usage: Mapping[str, Mapping[str, int]],
    items: int,
    *,
    batch: bool,
    in_process: Callable[[str], bool],
) -> Money:
    """The run's cost under ``table``: total, billed, per item, per model.

    ``in_process`` says which model names run in assay's own process (the model layer knows;
    this layer may not ask it): those the table does not price cost zero.
    """
    if not usage:
        return Money(
            known=True, total=0.0, billed=0.0, per_item=0.0, items=items, by_model={},
            note="no model calls",
        )  # fmt: skip
    listed = {model: None if table is None else table.price_of(model) for model in usage}
    # a price in the table wins: someone may charge their own machine's time per token
    free = tuple(sorted(m for m, price in listed.items() if price is None and in_process(m)))
    prices = {m: ZERO_PRICE if m in free else price for m, price in listed.items()}
    by_model = {model: _model_cost(prices[model], u, batch) for model, u in usage.items()}
    missing = tuple(sorted(m for m, cost in by_model.items() if cost.usd is None))
    known = not missing
    total = sum(c.usd or 0.0 for c in by_model.values()) if known else None
    return Money(
        currency="USD" if table is None else table.currency,
        known=known,
        total=total,
        billed=sum(c.billed_usd or 0.0 for c in by_model.values()) if known else None,
        per_item=total / items if total is not None and items else None,
        items=items,
        by_model=by_model,
        missing_prices=missing,
        in_process=free,
        batch=batch,
        note=_money_note(table, missing, free, batch),
    )


def in_process_note(models: Iterable[str]) -> str:
    """Why these models cost nothing, in the words of summaries, the money line and reports."""
    names = sorted(models)
    kind = "model" if len(names) == 1 else "models"
    return f"in-process {kind} {', '.join(names)}: no per-token price"


def _money_note(
    table: PriceTable | None, missing: tuple[str, ...], free: tuple[str, ...], batch: bool
) -> str:
    if missing and table is None:
        return f"no price table: give --prices FILE (USD per 1M tokens) for {', '.join(missing)}"
    if missing:
        return f"no price for {', '.join(missing)}: the total is unknown"
    parts = [in_process_note(free)] if free else []
    return "; ".join([*parts, "batch prices"] if batch else parts)


def _model_cost(price: ModelPrice | None, usage: Mapping[str, int], batch: bool) -> ModelCost:
    prompt, completion = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
    if price is None:
        return ModelCost(
            prompt_tokens=prompt, completion_tokens=completion, usd=None, billed_usd=None
        )
    factor = 1.0 - price.batch_discount if batch else 1.0
    listed = (prompt * price.input + completion * price.output) / PER * factor
    cached = usage.get("billed_cached_prompt_tokens", 0)
    fresh = usage.get("billed_prompt_tokens", 0) - cached
    cached_price = price.input if price.cached_input is None else price.cached_input
    billed_tokens = fresh * price.input + cached * cached_price
    billed = (billed_tokens + usage.get("billed_completion_tokens", 0) * price.output) / PER
    return ModelCost(
        prompt_tokens=prompt, completion_tokens=completion, usd=listed, billed_usd=billed * factor
    )
