"""``assay.integrations.ragas_collections.GroundedClaims``: assay's learned checker as a metric
of ragas' ``metrics.collections`` interface (ragas 0.4.3, no LLM, no embeddings), called one
sample at a time and in a batch beside ragas' own ``ExactMatch`` of that interface; each value
checked against ``assay bench run`` and the ``ragas.evaluate`` metric on the same samples."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from assay.verify.calibration import read_calibration
from tests.helpers.bench_scores import learned_calibration
from tests.helpers.eiffel_tower import CONTEXTS, QUESTION
from tests.helpers.ragas_env import run_ragas
from tests.integrations.test_ragas_metric import ANSWERS, bench_p_errors, by_name

SCRIPT = """
import asyncio
import json
from ragas import EvaluationDataset, evaluate
from ragas.metrics.collections import ExactMatch
from assay.integrations import ragas as for_evaluate
from assay.integrations.ragas_collections import GroundedClaims

QUESTION, CONTEXTS, ANSWERS = {question!r}, {contexts!r}, {answers!r}
metric = GroundedClaims()
calibrated = GroundedClaims(calibration={calibration!r})
samples = [
    {{"response": answer, "retrieved_contexts": CONTEXTS, "user_input": QUESTION}}
    for answer in ANSWERS.values()
]
one_by_one = [metric.score(**sample) for sample in samples]
batch = metric.batch_score(samples)
exact = ExactMatch().batch_score(
    [{{"reference": ANSWERS["grounded"], "response": answer}} for answer in ANSWERS.values()]
)
rows = [
    {{"user_input": QUESTION, "retrieved_contexts": CONTEXTS, "response": answer}}
    for answer in ANSWERS.values()
]
evaluated = evaluate(
    EvaluationDataset.from_list(rows), metrics=[for_evaluate.GroundedClaims()],
    show_progress=False,
)
out = {{
    "values": [result.value for result in one_by_one],
    "reasons": [result.reason for result in one_by_one],
    "batch": [result.value for result in batch],
    "exact_match": [result.value for result in exact],
    "evaluate": [row["assay_grounded_claims"] for row in evaluated.scores],
    "name": metric.name,
    "calibrated": [calibrated.score(**sample).value for sample in samples],
    "calibrated_reason": calibrated.score(**samples[1]).reason,
}}


async def in_a_loop():  # ragas' asynchronous form, as an application awaits it
    return await metric.ascore(response=ANSWERS["ungrounded"], retrieved_contexts=CONTEXTS)


out["awaited"] = asyncio.run(in_a_loop()).value
try:
    metric.score(response=ANSWERS["grounded"], retrieved_contexts=[])
except Exception as error:
    out["no_contexts_error"] = str(error)
try:
    GroundedClaims(threshold=2)
except ValueError as error:
    out["bad_threshold"] = str(error)
json.dump(out, open("ragas_result.json", "w"))
"""


@pytest.fixture(scope="module")
def collections_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    calibration = learned_calibration(tmp_path_factory.mktemp("calibration"))
    script = SCRIPT.format(
        question=QUESTION, contexts=CONTEXTS, answers=ANSWERS, calibration=str(calibration)
    )
    result: dict[str, Any] = run_ragas(script, tmp_path_factory.mktemp("ragas-collections"))
    result["calibration_file"] = str(calibration)
    return result


def test_each_value_is_one_minus_bench_runs_p_error_and_evaluates_score(
    collections_run: dict[str, Any], tmp_path: Path
) -> None:
    bench = bench_p_errors(tmp_path)
    values = by_name(collections_run["values"])
    for name in bench:
        p_error = bench[name]
        assert p_error is not None
        assert values[name] == pytest.approx(1 - p_error, abs=1e-12)
    assert values["grounded"] > 0.5 > values["ungrounded"]
    # one at a time, in a batch, awaited and through ragas.evaluate: the same numbers
    assert collections_run["batch"][:3] == collections_run["values"][:3]
    assert collections_run["evaluate"][:3] == collections_run["values"][:3]
    assert collections_run["awaited"] == values["ungrounded"]
    assert collections_run["name"] == "assay_grounded_claims"
    # ragas' own metric of the same interface ran beside it
    assert collections_run["exact_match"] == [1.0, 0.0, 0.0, 0.0]


def test_the_reason_gives_p_error_and_each_claims_evidence_window(
    collections_run: dict[str, Any],
) -> None:
    bad = by_name(collections_run["reasons"])["ungrounded"]
    p_error = 1 - by_name(collections_run["values"])["ungrounded"]
    assert bad.splitlines()[0].startswith(f"p_error {p_error:.3f} (not grounded: threshold 0.5")
    assert "claim 1: 'The Eiffel Tower is in Lyon.': unsupported" in bad
    assert "not in the evidence: Lyon" in bad


def test_what_cannot_be_scored_is_nan_with_its_reason_and_no_contexts_names_the_field(
    collections_run: dict[str, Any],
) -> None:
    empty = by_name(collections_run["values"])["empty"]
    assert math.isnan(empty) and math.isnan(collections_run["batch"][3])
    assert by_name(collections_run["reasons"])["empty"] == "no score: the answer states no claim"
    assert collections_run["no_contexts_error"].startswith(
        "retrieved_contexts: expected the evidence"
    )
    assert collections_run["bad_threshold"] == "threshold must be between 0 and 1, got 2"


def test_a_calibration_gives_the_value_its_map_gives(collections_run: dict[str, Any]) -> None:
    fitted = read_calibration(Path(collections_run["calibration_file"]))
    raw, calibrated = collections_run["values"], collections_run["calibrated"]
    for before, after in zip(raw[:3], calibrated[:3], strict=True):
        assert after == pytest.approx(1.0 - float(fitted.apply([1.0 - before])[0]))
    assert math.isnan(calibrated[3])
    assert "(calibrated; the checker's own" in collections_run["calibrated_reason"]
