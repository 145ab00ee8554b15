"""Every checker gives a verdict, never an exception, on any text with IFEval's own kwargs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.instructions import CHECKERS, check_one

# One real kwargs example per id, as IFEval writes them (nulls included).
_EXAMPLES = Path(__file__).resolve().parents[2].parent / "shared/data/ifeval/input_data.jsonl"


def _kwargs_by_id() -> dict[str, dict[str, Any]]:
    examples: dict[str, dict[str, Any]] = {}
    for line in _EXAMPLES.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for instruction_id, kwargs in zip(
            record["instruction_id_list"], record["kwargs"], strict=True
        ):
            examples.setdefault(instruction_id, kwargs)
    return examples


KWARGS = _kwargs_by_id()
PIECES = [*"aZ *-#<>[]\"',.!?\n0{}:É", "******", "P.S.", "***", "Dr.", "My answer is yes."]
TEXT = st.lists(st.sampled_from(PIECES), max_size=80).map("".join)


def test_every_ifeval_id_has_a_checker() -> None:
    assert set(KWARGS) == set(CHECKERS)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(response=TEXT, mode=st.sampled_from(["strict", "loose"]))
def test_checkers_are_total_and_deterministic(response: str, mode: str) -> None:
    for instruction_id, kwargs in KWARGS.items():
        first = check_one(instruction_id, kwargs, "prompt", response, mode=mode)  # type: ignore[arg-type]
        again = check_one(instruction_id, kwargs, "prompt", response, mode=mode)  # type: ignore[arg-type]
        assert first == again and first.reason
        if not response.strip():
            assert not first.followed
