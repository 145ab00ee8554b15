"""What the generate run logs of outputs say about reading them as draws, for every command
that reads draws (`instructions robustness --draws`, `judge run --draws`): draws must differ
only in their seed, and one sampled draw per cell is said to mix a wording's effect with
sampling noise."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..judge.generate import PROTOCOL_SETTINGS
from ..runs import read_run_log


def _generate_settings(paths: list[Path]) -> dict[Path, dict[str, Any]]:
    """The decoding settings of each path that a generate run wrote (others are left out)."""
    logs: dict[Path, dict[str, Any]] = {}
    for path in paths:
        log = read_run_log(path if path.is_dir() else path.parent)
        if log is not None and log.kind == "generate":
            logs[path] = {name: log.config.get(name) for name in PROTOCOL_SETTINGS}
    return logs


def note_sampled_single_draws(paths: list[Path], command: str) -> None:
    """One draw per cell of sampled outputs mixes a wording's effect with sampling noise
    (``command``: the one that reads draws instead)."""
    settings = _generate_settings(paths).items()
    sampled = next(((path, s["temperature"]) for path, s in settings if s["temperature"]), None)
    if sampled is not None:
        print(
            f"note: {sampled[0]} was sampled at --temperature {sampled[1]} with one draw per "
            "cell: a variant's effect is mixed with sampling noise; `assay generate --draws N` "
            f"and `{command}` separate them",
            file=sys.stderr,
        )


def check_draw_settings(paths: list[Path]) -> None:
    """Draws must differ only in their seed: refuse draws generated with other decoding
    settings, and say when the draws cannot differ (one seed, or temperature 0). Outputs with
    no generate run log (a manifest of your own, an import) are not checked."""
    logs = _generate_settings(paths)
    if not logs:
        return
    first_path, first = next(iter(logs.items()))
    changed = [
        f"{PROTOCOL_SETTINGS[name]} {first[name]!r} in {first_path}, {value!r} in {path}"
        for path, settings in logs.items()
        for name, value in settings.items()
        if name != "seed" and value != first[name]
    ]
    if changed:
        raise ConfigError(
            "--draws: the draws were generated with other settings: " + "; ".join(changed),
            hint="draws of one set differ only in --seed; compare other settings as other "
            "targets, or in separate robustness runs",
        )
    seeds = [settings["seed"] for settings in logs.values()]
    if first["temperature"] == 0:
        print(
            "note: the draws were generated at temperature 0: they differ only by the "
            "backend's own nondeterminism",
            file=sys.stderr,
        )
    elif len(set(seeds)) < len(seeds):
        print(
            "note: two draws were generated with one --seed: a seeded backend gives the same "
            "outputs, which are then not independent draws",
            file=sys.stderr,
        )
