"""Slicing by the user's own fields: ``--by meta.KEY`` on a record's ``meta`` object.

Records of every kind (grounded-QA records, judge questions, manifest lines) may carry a
``meta`` object of any JSON; results and archives keep it, and summaries can be cut by one of
its keys. A nested key is written with dots (``meta.source.system``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from ..errors import ConfigError

T = TypeVar("T")
MISSING = "(none)"  # the slice of records whose meta has no such key
KEYS_SHOWN = 20  # meta keys an error lists at most


def parse_by(option: str) -> tuple[str, ...]:
    """``meta.KEY[.SUB]`` as the key path inside ``meta``; anything else is a usage error."""
    parts = _meta_path(option)
    if parts is None:
        raise ConfigError(
            f"--by {option!r}: slices are named meta.KEY (a key of the records' 'meta' object)",
            hint="for example: --by meta.system",
        )
    return parts


def _meta_path(name: str) -> tuple[str, ...] | None:
    """The key path of ``meta.KEY[.SUB]``, or None for a name that is not one."""
    prefix, dot, rest = name.partition(".")
    parts = tuple(rest.split("."))
    return parts if prefix == "meta" and dot and all(parts) else None


def _listed(names: Iterable[str]) -> str:
    """``a, b, c`` (the first :data:`KEYS_SHOWN`, then how many more), or ``none``."""
    names = list(names)
    shown = ", ".join(names[:KEYS_SHOWN]) or "none"
    return shown + (f" and {len(names) - KEYS_SHOWN} more" if len(names) > KEYS_SHOWN else "")


def meta_value(meta: Mapping[str, Any] | None, path: tuple[str, ...]) -> str:
    """The slice a record falls in: the value at ``path`` as text (JSON for non-strings)."""
    node: Any = meta
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return MISSING
        node = node[part]
    return node if isinstance(node, str) else json.dumps(node, sort_keys=True)


def slices(
    items: Iterable[T], meta_of: Callable[[T], Mapping[str, Any] | None], path: tuple[str, ...]
) -> dict[str, list[T]]:
    """The items grouped by their value at ``path``, slices in sorted order; a key no item
    has is a ConfigError listing the keys the items' meta objects do have."""
    key = SliceKey(path)
    groups: dict[str, list[T]] = {}
    for item in items:
        groups.setdefault(key.value_of(meta_of(item)), []).append(item)
    key.check()
    return dict(sorted(groups.items()))


class SliceKey:
    """The slice of each record at one key path, one record at a time (for a pass that keeps
    counts, not records); :meth:`check` afterwards refuses a key no record had."""

    def __init__(self, path: tuple[str, ...]) -> None:
        self.path = path
        self._values: set[str] = set()
        self._keys: set[str] = set()  # of the records without it, for the error

    def value_of(self, meta: Mapping[str, Any] | None) -> str:
        value = meta_value(meta, self.path)
        if value == MISSING:
            self._keys.update(_key_paths(meta))
        self._values.add(value)
        return value

    def check(self) -> None:
        """A ConfigError listing the keys the records' meta objects do have, when none had
        this one."""
        if self._values == {MISSING}:
            option = "meta." + ".".join(self.path)
            raise ConfigError(
                f"--by {option}: no record has this key in its meta; the keys records have: "
                + _listed(f"meta.{k}" for k in sorted(self._keys))
            )


def _key_paths(meta: Mapping[str, Any] | None, prefix: str = "") -> Iterable[str]:
    """Every key path of a meta object (``system``, ``source``, ``source.name``)."""
    if not isinstance(meta, Mapping):
        return
    for key, value in meta.items():
        name = f"{prefix}{key}"
        yield name
        if isinstance(value, Mapping) and len(name) < 200:
            yield from _key_paths(value, name + ".")


def parse_where(options: Iterable[str]) -> dict[tuple[str, ...], frozenset[str]]:
    """``meta.KEY=VALUE`` options as key path -> the values kept (a key given twice keeps
    either value; different keys must all match)."""
    where: dict[tuple[str, ...], set[str]] = {}
    for option in options:
        name, equals, value = option.partition("=")
        if not equals:
            raise ConfigError(
                f"--where {option!r}: expected meta.KEY=VALUE",
                hint="for example: --where meta.dataset=Lfqa",
            )
        path = _meta_path(name.strip())
        if path is None:
            raise ConfigError(f"--where {option!r}: the key is named meta.KEY (a key of 'meta')")
        where.setdefault(path, set()).add(value)
    return {path: frozenset(values) for path, values in where.items()}


def keep_where(
    items: Iterable[T],
    meta_of: Callable[[T], Mapping[str, Any] | None],
    where: Mapping[tuple[str, ...], frozenset[str]],
) -> list[T]:
    """The items whose meta matches every key of ``where``; a value that no item has is a
    ConfigError listing the values the items do have (a misspelt value would keep nothing)."""
    seen: dict[tuple[str, ...], set[str]] = {path: set() for path in where}
    kept = []
    for item in items:
        values = {path: meta_value(meta_of(item), path) for path in where}
        for path, value in values.items():
            seen[path].add(value)
        if all(values[path] in wanted for path, wanted in where.items()):
            kept.append(item)
    for path, wanted in where.items():
        missing = sorted(wanted - seen[path])
        if missing:
            raise ConfigError(
                f"--where meta.{'.'.join(path)}: no record has the value "
                f"{', '.join(map(repr, missing))}; the values records have: "
                + _listed(sorted(seen[path] - {MISSING}))
            )
    return kept
