"""``assay.integrations.deepeval.GroundedClaimsMetric``: assay's learned checker as the metric of
real ``deepeval.evaluate`` runs (async and sync) and of ``assert_test``, checked against ``assay
bench run`` on the same answers and evidence."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from assay.verify.calibration import read_calibration

# deepeval runs in processes of its own (tests/helpers/deepeval_runs.py): imported here it would
# write its .deepeval folder into the repository
if importlib.util.find_spec("deepeval") is None:  # the deepeval extra, in the dev extra
    pytest.skip("needs the deepeval extra", allow_module_level=True)

from tests.helpers.bench_scores import learned_calibration, learned_p_errors
from tests.helpers.deepeval_runs import run_deepeval

EVIDENCE = [
    "The Eiffel Tower is a wrought-iron lattice tower in Paris, France.",
    "The tower is 330 metres tall and was completed in 1889.",
]
ANSWERS = {
    "grounded": "The Eiffel Tower is in Paris. It was completed in 1889.",
    "ungrounded": "The Eiffel Tower is in Lyon. It was completed in 1925.",
    "one wrong claim": "The Eiffel Tower is in Paris. It is 500 metres tall.",
}
QUESTIONS = {name: f"Tell me about the Eiffel Tower ({name})." for name in ANSWERS}
NAME = "Grounded Claims (assay)"


def cases() -> list[dict[str, Any]]:
    """The three answers, a retrieved passage with its source, and the test cases the metric
    cannot score: no retrieval context, an output without a claim."""
    scored = [
        {"name": name, "input": QUESTIONS[name], "actual_output": answer,
         "retrieval_context": EVIDENCE}
        for name, answer in ANSWERS.items()
    ]  # fmt: skip
    sourced = {
        "name": "sourced",
        "input": QUESTIONS["grounded"],
        "actual_output": ANSWERS["grounded"],
        "retrieval_context": [{"context": text, "source": "wiki"} for text in EVIDENCE],
    }
    unscorable = [
        {"name": "no retrieval context", "input": "Where is it?", "actual_output": "In Paris.",
         "context": EVIDENCE},
        {"name": "no claim", "input": "Where is it?", "actual_output": "   ",
         "retrieval_context": EVIDENCE},
    ]  # fmt: skip
    return [*scored, sourced, *unscorable]


@pytest.fixture(scope="module")
def calibration(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return learned_calibration(tmp_path_factory.mktemp("calibration"))


@pytest.fixture(scope="module")
def evaluated(
    tmp_path_factory: pytest.TempPathFactory, calibration: Path
) -> dict[str, dict[str, Any]]:
    """Each run's metric data by test case name: async, sync, and a metric of threshold 0.9
    next to the default one, and one at the operating point of a calibration file."""
    workdir = tmp_path_factory.mktemp("deepeval")
    runs = {
        "async": {"metrics": [{}], "run_async": True},
        "sync": {"metrics": [{}], "run_async": False},
        "strict": {"metrics": [{"threshold": 0.9}], "run_async": True},
        "calibrated": {"metrics": [{"calibration": str(calibration)}], "run_async": True},
    }
    return {
        run: run_deepeval(
            "evaluate",
            {"cases": cases(), "errors": {"ignore_errors": True}, **spec},
            workdir / run,
        )
        for run, spec in runs.items()
    }


def only(data: list[dict[str, Any]]) -> dict[str, Any]:
    (metric,) = data
    assert metric["name"] == NAME
    return metric


def test_scores_are_one_minus_the_p_error_bench_run_gives(
    evaluated: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    evidence = [{"evidence_id": str(n), "text": text} for n, text in enumerate(EVIDENCE, 1)]
    bench = learned_p_errors(tmp_path, evidence, QUESTIONS, ANSWERS)
    for run in ("async", "sync"):
        for name in ANSWERS:
            p_error = bench[name]
            assert p_error is not None
            assert only(evaluated[run][name])["score"] == 1.0 - p_error, (run, name)
        # a passage's source changes nothing in the score
        assert only(evaluated[run]["sourced"])["score"] == 1.0 - (bench["grounded"] or 0.0)


def test_success_is_score_at_least_threshold_and_the_reason_explains_it(
    evaluated: dict[str, dict[str, Any]],
) -> None:
    good, bad = only(evaluated["async"]["grounded"]), only(evaluated["async"]["ungrounded"])
    assert (good["success"], bad["success"]) == (True, False)
    assert good["score"] >= 0.5 > bad["score"] and good["threshold"] == 0.5
    assert good["model"] == "assay learned-10"
    p_bad = 1.0 - bad["score"]
    assert bad["reason"].splitlines()[0] == (
        f"score {bad['score']:.3f} = 1 - p_error {p_bad:.3f} (not grounded: threshold 0.5; "
        "weakest-claim, 2 claims, checker learned-10)"
    )
    assert "claim 1: 'The Eiffel Tower is in Lyon.': unsupported" in bad["reason"]
    assert "evidence window: 'The Eiffel Tower is a wrought-iron lattice tower in" in bad["reason"]
    assert "not in the evidence: Lyon" in bad["reason"]
    assert "supporting ids 2" in good["reason"]
    # the weakest claim decides: one wrong claim fails the answer
    assert only(evaluated["async"]["one wrong claim"])["success"] is False


def test_the_threshold_is_the_metrics_own(evaluated: dict[str, dict[str, Any]]) -> None:
    default, strict = only(evaluated["async"]["grounded"]), only(evaluated["strict"]["grounded"])
    assert strict["score"] == default["score"] < 0.9
    assert (default["success"], strict["success"]) == (True, False)
    assert strict["threshold"] == 0.9 and "not grounded: threshold 0.9" in strict["reason"]


def test_a_calibration_gives_the_operating_point(
    evaluated: dict[str, dict[str, Any]], calibration: Path
) -> None:
    fitted = read_calibration(calibration)
    for name in ("grounded", "ungrounded"):
        raw, calibrated = only(evaluated["async"][name]), only(evaluated["calibrated"][name])
        p_error = float(fitted.apply([1.0 - raw["score"]])[0])
        assert calibrated["score"] == pytest.approx(1.0 - p_error)
        assert calibrated["threshold"] == pytest.approx(1.0 - fitted.threshold)
        assert calibrated["success"] is (calibrated["score"] >= calibrated["threshold"])
        assert "(calibrated; the checker's own" in calibrated["reason"].splitlines()[0]


def test_a_threshold_beside_a_calibration_must_be_the_one_it_gives(calibration: Path) -> None:
    from assay.integrations.deepeval import GroundedClaimsMetric

    metric = GroundedClaimsMetric(calibration=str(calibration))
    # what deepeval's copy of a metric passes: its attributes named like the parameters
    copied = GroundedClaimsMetric(threshold=metric.threshold, calibration=metric.calibration)
    threshold = metric.threshold
    assert threshold is not None and threshold < 0.5  # the calibration's, not the default
    assert copied.threshold == threshold
    with pytest.raises(ValueError, match="not both"):
        GroundedClaimsMetric(threshold=0.5, calibration=str(calibration))


def test_what_cannot_be_scored_is_an_error_of_its_test_case(
    evaluated: dict[str, dict[str, Any]],
) -> None:
    for run in ("async", "sync"):
        missing = only(evaluated[run]["no retrieval context"])
        assert missing["score"] is None and missing["success"] is False
        no_evidence = "retrieval_context: missing: the test case gives no evidence passages"
        assert no_evidence in missing["error"]
        blank = only(evaluated[run]["no claim"])
        assert blank["success"] is False
        no_claim = "actual_output: assay learned-10: no score: the answer states no claim"
        assert no_claim in blank["error"]


def test_evidence_from_context_and_skipping_what_is_missing(tmp_path: Path) -> None:
    """``evidence="context"`` reads ``context``; with ``skip_on_missing_params`` a test case
    without the field is skipped, not failed."""
    spec = {
        "cases": cases(),
        "metrics": [{"evidence": "context"}],
        "run_async": True,
        "errors": {"skip_on_missing_params": True},
    }
    result = run_deepeval("evaluate", spec, tmp_path)
    assert only(result["no retrieval context"])["success"] is True
    assert result["grounded"] == []  # no context: skipped


def test_assert_test_passes_and_fails_with_the_reason(tmp_path: Path) -> None:
    chosen = [case for case in cases() if case["name"] in ("grounded", "ungrounded")]
    outcomes = run_deepeval("assert", {"cases": chosen, "metric": {}}, tmp_path)
    assert outcomes["grounded"] == "passed"
    assert f"Metrics: {NAME} (score: " in outcomes["ungrounded"]
    assert "not in the evidence: Lyon" in outcomes["ungrounded"]


def test_measure_by_hand_in_plain_code_and_in_a_running_event_loop(tmp_path: Path) -> None:
    """One metric measures one test case after another (nothing of one is left on the next),
    also where an event loop runs (a notebook cell), and keeps every claim check."""
    chosen = [c for c in cases() if c["name"] in ("grounded", "no retrieval context", "ungrounded")]
    result = run_deepeval("measure", {"cases": chosen, "metric": {}}, tmp_path)
    for name in ("grounded", "no retrieval context", "ungrounded"):
        assert result[name]["in_loop"] == result[name]["plain"], name
    good, missing, bad = (
        result[n]["plain"] for n in ("grounded", "no retrieval context", "ungrounded")
    )
    assert good["returned"] == good["score"] and good["success"] is good["is_successful"] is True
    breakdown = good["breakdown"]
    assert good["score"] == 1.0 - breakdown["p_error"] and breakdown["threshold"] == 0.5
    assert [claim["supporting_ids"] for claim in breakdown["claims"]] == [["1"], ["2"]]
    assert missing["raised"] == missing["error"] and missing["raised"].startswith(
        "retrieval_context: missing"
    )
    assert (missing["score"], missing["reason"], missing["is_successful"]) == (None, None, False)
    assert bad["error"] is None and bad["success"] is False and bad["score"] < 0.5
