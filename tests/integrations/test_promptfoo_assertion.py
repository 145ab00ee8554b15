"""``assay.integrations.promptfoo.get_assert``: assay's learned checker as the assertion of a
real promptfoo eval (its ``echo`` provider repeats each scripted answer), checked against
``assay bench run`` on the same answers and evidence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.verify.calibration import read_calibration
from tests.helpers.bench_scores import learned_calibration, learned_p_errors
from tests.helpers.promptfoo_cli import promptfoo_command, rows, run_promptfoo

REPO_ROOT = Path(__file__).resolve().parents[2]
MODULE = REPO_ROOT / "src" / "assay" / "integrations" / "promptfoo.py"
EVIDENCE = [
    {"id": "1", "text": "The Eiffel Tower is a wrought-iron lattice tower in Paris, France."},
    {"id": "height", "text": "The tower is 330 metres tall and was completed in 1889."},
]
ANSWERS = {
    "grounded": "The Eiffel Tower is in Paris. It was completed in 1889.",
    "ungrounded": "The Eiffel Tower is in Lyon. It was completed in 1925.",
    "empty": " ",
}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Each test case's row: the module named by its path for three answers, through a file
    of the user's own that imports it for a fourth, and a test without evidence."""
    workdir = tmp_path_factory.mktemp("promptfoo")
    (workdir / "assay_grounded.py").write_text(
        "from assay.integrations.promptfoo import get_assert  # noqa: F401\n", encoding="utf-8"
    )
    direct = {"type": "python", "value": f"file://{MODULE}"}
    tests: list[dict[str, Any]] = [
        {"description": name, "vars": {"answer": answer}, "assert": [direct]}
        for name, answer in ANSWERS.items()
    ]
    tests.append(
        {
            "description": "own file, strict threshold",
            "vars": {"answer": ANSWERS["grounded"]},
            "assert": [
                {
                    "type": "python",
                    "value": "file://assay_grounded.py",
                    "config": {"threshold": 0.1},
                }
            ],
        }
    )
    calibration = learned_calibration(tmp_path_factory.mktemp("calibration"))
    tests += [
        {
            "description": f"calibrated {name}",
            "vars": {"answer": ANSWERS[name]},
            "assert": [direct | {"config": {"calibration": str(calibration)}}],
        }
        for name in ("grounded", "ungrounded")
    ]
    tests.append(
        {
            "description": "no evidence",
            "vars": {"answer": "It is in Paris.", "evidence": None},
            "assert": [direct],
        }
    )
    config = {
        "prompts": ["{{answer}}"],
        "providers": ["echo"],
        # a list of objects stays one var (a list of strings would be one test case each)
        "defaultTest": {"vars": {"evidence": EVIDENCE}},
        "tests": tests,
    }
    out = run_promptfoo(promptfoo_command(), config, workdir)
    return {row["testCase"]["description"]: row for row in rows(out)}


def assertion(row: dict[str, Any]) -> dict[str, Any]:
    (result,) = row["gradingResult"]["componentResults"]
    return dict(result)


def test_verdicts_give_p_error_and_each_claims_evidence_window(
    results: dict[str, dict[str, Any]],
) -> None:
    good, bad = assertion(results["grounded"]), assertion(results["ungrounded"])
    assert (good["pass"], bad["pass"]) == (True, False)
    assert (results["grounded"]["success"], results["ungrounded"]["success"]) == (True, False)
    p_good, p_bad = good["metadata"]["p_error"], bad["metadata"]["p_error"]
    assert p_good < 0.5 <= p_bad
    assert good["score"] == pytest.approx(1 - p_good) and bad["score"] == pytest.approx(1 - p_bad)
    reason = bad["reason"]
    assert reason.splitlines()[0].startswith(f"p_error {p_bad:.3f} (not grounded: threshold 0.5")
    assert "claim 1: 'The Eiffel Tower is in Lyon.': unsupported" in reason
    assert "evidence window: 'The Eiffel Tower is a wrought-iron lattice tower in Paris" in reason
    assert "not in the evidence: Lyon" in reason
    claims = good["metadata"]["claims"]
    assert [c["supporting_ids"] for c in claims] == [["1"], ["height"]]


def test_a_file_of_ones_own_and_the_threshold_of_the_config(
    results: dict[str, dict[str, Any]],
) -> None:
    strict = assertion(results["own file, strict threshold"])
    good = assertion(results["grounded"])
    # the same answer: its p_error passes 0.5 but not 0.1
    assert strict["metadata"]["p_error"] == good["metadata"]["p_error"]
    assert good["metadata"]["p_error"] >= 0.1
    assert strict["pass"] is False and "not grounded: threshold 0.1" in strict["reason"]


def test_a_calibration_of_the_config_gives_the_operating_point(
    results: dict[str, dict[str, Any]],
) -> None:
    for name in ("grounded", "ungrounded"):
        raw, calibrated = assertion(results[name]), assertion(results[f"calibrated {name}"])
        meta = calibrated["metadata"]
        (asserted,) = results[f"calibrated {name}"]["testCase"]["assert"]
        fitted = read_calibration(Path(asserted["config"]["calibration"]))
        assert meta["raw_p_error"] == raw["metadata"]["p_error"]
        assert meta["p_error"] == pytest.approx(float(fitted.apply([meta["raw_p_error"]])[0]))
        assert meta["threshold"] == fitted.threshold
        assert meta["calibration"] == fitted.fingerprint()
        assert calibrated["pass"] is (meta["p_error"] < fitted.threshold)
        assert calibrated["score"] == pytest.approx(1 - meta["p_error"])
        assert "(calibrated; the checker's own" in calibrated["reason"].splitlines()[0]


def test_what_cannot_be_scored_fails_with_the_reason(results: dict[str, dict[str, Any]]) -> None:
    empty = assertion(results["empty"])
    assert (empty["pass"], empty["score"]) == (False, 0)
    assert empty["reason"] == "assay learned-10: no score: the answer states no claim"
    missing = assertion(results["no evidence"])
    assert missing["pass"] is False
    assert (
        "vars.evidence: missing: the test gives no evidence passages to check against"
        in (missing["reason"])
    )


def test_p_error_is_what_the_bench_gives_the_same_answer(
    results: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    evidence = [{"evidence_id": e["id"], "text": e["text"]} for e in EVIDENCE]
    names = ("grounded", "ungrounded")
    chosen = {name: ANSWERS[name] for name in names}
    bench = learned_p_errors(tmp_path, evidence, chosen, chosen)
    for name in ("grounded", "ungrounded"):
        assert assertion(results[name])["metadata"]["p_error"] == bench[name]
