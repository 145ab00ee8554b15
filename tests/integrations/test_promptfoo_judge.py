"""``assay.integrations.promptfoo.get_assert_judge``: assay's judge protocol as the assertion of a
real promptfoo eval (its ``echo`` provider repeats each answer), judged by assay's stub judge
(the protocol's stub replies, a flawed one now and then)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.judge.protocol import DIMENSION_KEYS, Thresholds, verdict_for
from tests.helpers.promptfoo_cli import promptfoo_command, rows, run_promptfoo

REPO_ROOT = Path(__file__).resolve().parents[2]
MODULE = REPO_ROOT / "src" / "assay" / "integrations" / "promptfoo.py"
JUDGE = {"type": "python", "value": f"file://{MODULE}:get_assert_judge"}
TESTS = 12


def _tests(asks: int) -> list[dict[str, Any]]:
    return [
        {
            "description": f"{asks} asks {i}",
            "vars": {
                "answer": f"Apples, pears and plums grow on trees ({i}).",
                "constraints": '["exactly one sentence"]',
            },
            "assert": [JUDGE | {"config": {"judge": "stub/judge", "max_attempts": asks}}],
        }
        for i in range(TESTS)
    ]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    no_judge = {"description": "no judge", "vars": {"answer": "x"}, "assert": [JUDGE]}
    config = {
        "prompts": ["{{answer}}"],
        "providers": ["echo"],
        "tests": [*_tests(1), *_tests(2), no_judge],
    }
    out = run_promptfoo(promptfoo_command(), config, tmp_path_factory.mktemp("promptfoo-judge"))
    return {row["testCase"]["description"]: row for row in rows(out)}


def _assertion(row: dict[str, Any]) -> dict[str, Any]:
    (result,) = row["gradingResult"]["componentResults"]
    return dict(result)


def _check_protocol(result: dict[str, Any]) -> None:
    meta = result["metadata"]
    dimensions = {key: meta[key] for key in DIMENSION_KEYS}
    assert meta["overall_score"] == sum(dimensions.values())
    assert meta["verdict"] == verdict_for(dimensions, Thresholds())
    assert result["pass"] is (meta["verdict"] == "PASS")
    assert result["score"] == pytest.approx(meta["overall_score"] / 8)
    assert result["reason"].splitlines()[0].startswith(f"{meta['verdict']}: overall_score ")


def test_valid_judgments_decide_and_invalid_ones_fail_with_the_reason(
    results: dict[str, dict[str, Any]],
) -> None:
    one_ask = [_assertion(results[f"1 asks {i}"]) for i in range(TESTS)]
    unscored = [r for r in one_ask if "metadata" not in r or "verdict" not in r["metadata"]]
    assert unscored and len(unscored) < TESTS  # the stub flaws about one reply in six
    for result in one_ask:
        if result in unscored:
            assert (result["pass"], result["score"]) == (False, 0)
            assert "assay judge: no score: invalid after 1 ask: flags" in result["reason"]
        else:
            _check_protocol(result)


def test_a_second_ask_scores_every_output(results: dict[str, dict[str, Any]]) -> None:
    attempts = set()
    for i in range(TESTS):
        result = _assertion(results[f"2 asks {i}"])
        _check_protocol(result)
        attempts.add(result["metadata"]["attempts"])
    assert attempts == {1, 2}


def test_an_assertion_without_its_judge_fails_naming_the_config(
    results: dict[str, dict[str, Any]],
) -> None:
    result = _assertion(results["no judge"])
    assert result["pass"] is False and "config.judge: missing" in result["reason"]
