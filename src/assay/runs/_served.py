"""What served a run's replies: the model names and system fingerprints servers reported.

A hosted API may answer one model name with another build from one day to the next, and says
so only in each reply (OpenAI's ``model`` and ``system_fingerprint``). A run that saw more
than one of either cannot be trusted to reproduce: its log says which, with their counts,
and warns. Counts are summed over the run's sessions (``run.json``'s ``served`` holds every
session's so far); a reply taken from the response cache counts as what first served it.

This module reads the usage summaries of the model layer as plain JSON (the ``served_*``
counts of :meth:`assay.model.Usage.summary`): the run layer does not import the model layer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

NOT_REPORTED = "not reported by the server"

# what each count is called in a usage summary, in run.json, and in a warning
_FIELDS = (
    ("served_model_names", "model_names", "served model name"),
    ("system_fingerprints", "system_fingerprints", "system_fingerprint"),
)


def served_identity(
    usage: Mapping[str, Mapping[str, Any]], earlier: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    """Per model, what served its replies in this session (``usage``, per model name) and
    in the sessions before it (``earlier``, the ``served`` of the previous run.json)."""
    names = [name for name in earlier if isinstance(earlier[name], Mapping)]
    names += [name for name in usage if name not in earlier]
    served: dict[str, dict[str, Any]] = {}
    for name in names:
        before = earlier.get(name)
        entry = _merged(usage.get(name, {}), before if isinstance(before, Mapping) else {})
        if entry["replies"]:
            served[name] = entry
    return served


def combined_served(logs: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """What served the replies of several runs (each a run.json ``served``, as the shards of
    a merged run keep it), as one run's: counts summed, and a warning where the runs together
    saw more than one build."""
    served: dict[str, dict[str, Any]] = {}
    for log in logs:
        as_usage = {
            name: {
                "served_replies": entry.get("replies"),
                **{usage_key: entry.get(log_key) for usage_key, log_key, _ in _FIELDS},
            }
            for name, entry in log.items()
            if isinstance(entry, Mapping)
        }
        served = served_identity(as_usage, served)
    return served


def served_warnings(served: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The warning of each model whose served name or fingerprint changed during the run."""
    return [
        f"{name}: {entry['warning']}"
        for name, entry in served.items()
        if isinstance(entry.get("warning"), str)
    ]


def _merged(now: Mapping[str, Any], before: Mapping[str, Any]) -> dict[str, Any]:
    replies = _count(now.get("served_replies")) + _count(before.get("replies"))
    entry: dict[str, Any] = {"replies": replies}
    changed = []
    for usage_key, log_key, label in _FIELDS:
        counts = _counts(now.get(usage_key)) + _counts(before.get(log_key))
        entry[log_key] = _shown(counts, replies)
        if len(counts) > 1:
            changed.append(f"the {label} changed during the run ({_listed(counts)})")
    if changed:
        entry["warning"] = (
            f"{'; '.join(changed)}: the replies came from more than one model build or "
            "backend configuration, so a rerun may not reproduce them"
        )
    return entry


def _shown(counts: Counter[str], replies: int) -> dict[str, int] | str:
    """The counts, with the replies that reported nothing under NOT_REPORTED; NOT_REPORTED
    alone when none reported anything."""
    if not counts:
        return NOT_REPORTED
    shown = dict(sorted(counts.items()))
    unreported = replies - sum(counts.values())
    if unreported > 0:
        shown[NOT_REPORTED] = unreported
    return shown


def _listed(counts: Counter[str]) -> str:
    return ", ".join(f"{value} for {count} replies" for value, count in counts.most_common())


def _counts(value: object) -> Counter[str]:
    """The reported values of a summary or of run.json, without NOT_REPORTED (recounted
    from the replies) and without anything that is not a count (a hand-edited file)."""
    if not isinstance(value, Mapping):
        return Counter()
    return Counter(
        {
            str(key): count
            for key, count in value.items()
            if key != NOT_REPORTED and _count(count) > 0
        }
    )


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
