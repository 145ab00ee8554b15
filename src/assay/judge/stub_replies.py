"""The stub responder for ``[assay:judge]`` prompts: plausible seeded judge replies.

Listed in :data:`RESPONDERS`, which judge runs hand to the stub provider, so a whole judge run works
on ``stub/<name>`` without a model. It reads the identifiers and the fenced output from the
prompt and answers in the protocol's format with quotes taken from the output. About one first
reply in six carries a realistic flaw (a code fence, a wrong sum, a missing evidence item), so
dry runs exercise the invalid archive too; a re-ask is always answered cleanly.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence

from ..model import ChatMessage, GenerateConfig, StubResponder
from .protocol import DIMENSION_KEYS, SCORE_VALUES, Thresholds, verdict_for

_META = re.compile(r'Identifiers to copy into "meta" exactly:\n(\{.*?\})\n')
_FENCE = re.compile(r"<<<BEGIN OUTPUT (\w+)>>>\n(.*)\n<<<END OUTPUT \1>>>", re.DOTALL)
_FINE = re.compile(r"^- (\w+) \(counts toward (\w+)\)", re.MULTILINE)
_FAIL_MAX = re.compile(r"FAIL if overall_score <= (-?\d+)")
_PASS = re.compile(r"PASS if overall_score >= (\d+) and (.*?) are not 0")
FLAW_RATE = 1 / 6


def reply(messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random) -> str:
    """A judgment, with a realistic flaw in about one first reply in six."""
    body = _judgment_for(messages, rng)
    reasked = any(m.role == "assistant" for m in messages)
    if not reasked and rng.random() < FLAW_RATE:
        return _with_flaw(body, rng)
    return json.dumps(body, ensure_ascii=False)


def clean_reply(messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random) -> str:
    """A judgment that follows every rule of the protocol (for scripted stubs in tests)."""
    return json.dumps(_judgment_for(messages, rng), ensure_ascii=False)


def _judgment_for(messages: Sequence[ChatMessage], rng: random.Random) -> dict[str, object]:
    system_text = next((m.content for m in messages if m.role == "system"), "")
    first_user = next((m.content for m in messages if m.role == "user"), "")
    meta_match = _META.search(first_user)
    meta = json.loads(meta_match.group(1)) if meta_match else {}
    fence = _FENCE.search(first_user)
    output = fence.group(2) if fence else ""
    return _judgment(meta, output, system_text, rng)


def _judgment(
    meta: dict[str, str], output: str, system_text: str, rng: random.Random
) -> dict[str, object]:
    fine = _fine_scores(system_text, rng)
    scores = _dimension_scores(fine, system_text, rng)
    body: dict[str, object] = {
        "meta": meta,
        "scores": {**scores, "overall_score": sum(scores.values())},
        "verdict": verdict_for(scores, _thresholds(system_text)),
        "flags": [],
        "evidence": [
            {"dimension": key, "quote": _quote(output, rng), "reason": f"supports {key}"}
            for key in DIMENSION_KEYS
        ],
        "notes": "stub judgment",
    }
    if fine:
        body["fine_scores"] = fine
    return body


def _fine_scores(system_text: str, rng: random.Random) -> dict[str, int]:
    return {key: rng.choice(SCORE_VALUES) for key, _ in _FINE.findall(system_text)}


def _dimension_scores(fine: dict[str, int], system_text: str, rng: random.Random) -> dict[str, int]:
    if not fine:
        return {key: rng.choice((0, 1, 2, 2)) for key in DIMENSION_KEYS}
    groups: dict[str, list[int]] = {key: [] for key in DIMENSION_KEYS}
    for key, target in _FINE.findall(system_text):
        groups[target].append(fine[key])
    use_min = "the lowest" in system_text
    return {
        key: min(values) if use_min else int(sum(values) / len(values) + 0.5)
        for key, values in groups.items()
    }


def _thresholds(system_text: str) -> Thresholds:
    fail = _FAIL_MAX.search(system_text)
    passing = _PASS.search(system_text)
    if fail is None or passing is None:
        return Thresholds()
    required = tuple(k for k in passing.group(2).split(" and ") if k in DIMENSION_KEYS)
    return Thresholds(
        fail_max=int(fail.group(1)),
        pass_min=int(passing.group(1)),
        pass_requires_nonzero=required,
        zero_caps_at_partial="PARTIAL if any dimension is 0" in system_text,
    )


def _quote(output: str, rng: random.Random) -> str:
    words = output.split()
    if not words:
        return ""
    start = rng.randrange(len(words))
    return " ".join(words[start : start + rng.randint(1, 8)])


def _with_flaw(body: dict[str, object], rng: random.Random) -> str:
    flaw = rng.choice(("fence", "sum", "evidence"))
    if flaw == "fence":
        return "```json\n" + json.dumps(body, ensure_ascii=False) + "\n```"
    if flaw == "sum":
        scores = dict(body["scores"])  # type: ignore[call-overload]
        scores["overall_score"] = (scores["overall_score"] + 1) % 9
        return json.dumps({**body, "scores": scores}, ensure_ascii=False)
    evidence = list(body["evidence"])  # type: ignore[call-overload]
    return json.dumps({**body, "evidence": evidence[1:]}, ensure_ascii=False)


#: task tag -> responder; passed to the stub provider by judge runs (ModelOptions).
RESPONDERS: dict[str, StubResponder] = {"judge": reply}
