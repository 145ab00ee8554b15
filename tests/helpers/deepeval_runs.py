"""The real deepeval for tests, run in a process of its own in a working directory of the test's
(deepeval writes ``.deepeval/`` into the working directory and reads ``.env`` files there).

Every run has deepeval's telemetry off (``DEEPEVAL_TELEMETRY_OPT_OUT``), no ``.env`` loading,
its home (the telemetry id's folder) in the working directory, no update check and no Confident
AI key; the script checks that deepeval's telemetry backend is the no-op one.

Run as a script (``python deepeval_runs.py MODE SPEC OUT``) it does one of:

- ``evaluate``: ``deepeval.evaluate`` over the spec's test cases with
  :class:`assay.integrations.deepeval.GroundedClaimsMetric` (its options from the spec), and
  writes each test case's metric data (score, success, reason, error) by test case name;
- ``assert``: ``deepeval.assert_test`` on each test case, and writes ``"passed"`` or the
  assertion's message by name;
- ``measure``: the metric's ``measure`` called by hand, from plain code and from inside a
  running event loop, and writes what it returned or raised and the metric's attributes;
- ``save``: an ``EvaluationDataset`` of the spec's goldens (and test cases, saved with
  ``include_test_cases=True``) written by ``save_as`` in each file type, and writes their paths.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve()


def deepeval_env(workdir: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("CONFIDENT_", "DEEPEVAL_"))
    }
    env.update(
        DEEPEVAL_TELEMETRY_OPT_OUT="1",
        DEEPEVAL_DISABLE_DOTENV="1",
        DEEPEVAL_HOME=str(workdir / "deepeval-home"),
    )
    return env


def run_deepeval(mode: str, spec: dict[str, Any], workdir: Path) -> Any:
    """Run the script in ``mode`` on ``spec`` in ``workdir``; its JSON answer."""
    workdir.mkdir(parents=True, exist_ok=True)
    spec_path, out_path = workdir / f"{mode}-spec.json", workdir / f"{mode}-out.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), mode, str(spec_path), str(out_path)],
        cwd=workdir,
        env=deepeval_env(workdir),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(out_path.read_text(encoding="utf-8"))


# ------------------------------------------------------------- the script (deepeval imported)


def _test_case(fields: dict[str, Any]) -> Any:
    from deepeval.test_case import LLMTestCase, RetrievedContextData

    context = fields.get("retrieval_context")
    if context is not None:
        fields = {
            **fields,
            "retrieval_context": [
                RetrievedContextData(**item) if isinstance(item, dict) else item for item in context
            ],
        }
    return LLMTestCase(**fields)


def _evaluate(spec: dict[str, Any]) -> dict[str, Any]:
    # from the subpackage that defines it: the package itself binds ``deepeval.evaluate`` to
    # this function only while it is imported, which a type checker cannot follow
    from deepeval.evaluate import evaluate
    from deepeval.evaluate.configs import AsyncConfig, DisplayConfig, ErrorConfig
    from deepeval.metrics import BaseMetric

    from assay.integrations.deepeval import GroundedClaimsMetric

    metrics: list[BaseMetric] = [GroundedClaimsMetric(**options) for options in spec["metrics"]]
    result = evaluate(
        [_test_case(fields) for fields in spec["cases"]],
        metrics=metrics,
        async_config=AsyncConfig(run_async=spec["run_async"]),
        display_config=DisplayConfig(show_indicator=False, print_results=False),
        error_config=ErrorConfig(**spec.get("errors", {})),
    )
    return {
        test.name: [
            {
                "name": data.name,
                "score": data.score,
                "threshold": data.threshold,
                "success": data.success,
                "reason": data.reason,
                "error": data.error,
                "model": data.evaluation_model,
            }
            for data in test.metrics_data or []
        ]
        for test in result.test_results
    }


def _assert(spec: dict[str, Any]) -> dict[str, str]:
    from deepeval.evaluate import assert_test  # defined there (see _evaluate)
    from deepeval.metrics import BaseMetric

    from assay.integrations.deepeval import GroundedClaimsMetric

    outcomes = {}
    for fields in spec["cases"]:
        try:
            metrics: list[BaseMetric] = [GroundedClaimsMetric(**spec["metric"])]
            assert_test(_test_case(fields), metrics)
        except AssertionError as error:
            outcomes[fields["name"]] = str(error)
        else:
            outcomes[fields["name"]] = "passed"
    return outcomes


def _measure(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``metric.measure`` called on each test case by hand, by one metric for all (as a loop
    of one's own does), from plain code and from inside a running event loop (a notebook)."""
    import asyncio

    from deepeval.errors import MissingTestCaseParamsError

    from assay.integrations.deepeval import GroundedClaimsMetric

    metric = GroundedClaimsMetric(**spec["metric"])

    def measured(fields: dict[str, Any]) -> dict[str, Any]:
        try:
            returned: float | None = metric.measure(_test_case(fields))
        except MissingTestCaseParamsError as error:
            returned = None
            raised: str | None = str(error)
        else:
            raised = None
        return {
            "returned": returned,
            "raised": raised,
            "score": metric.score,
            "success": metric.success,
            "is_successful": metric.is_successful(),
            "reason": metric.reason,
            "error": metric.error,
            "breakdown": metric.score_breakdown,
        }

    async def in_a_running_loop(fields: dict[str, Any]) -> dict[str, Any]:
        return measured(fields)

    return {
        fields["name"]: {
            "plain": measured(fields),
            "in_loop": asyncio.run(in_a_running_loop(fields)),
        }
        for fields in spec["cases"]
    }


def _save(spec: dict[str, Any]) -> dict[str, str]:
    from deepeval.dataset import EvaluationDataset, Golden

    dataset = EvaluationDataset(goldens=[Golden(**fields) for fields in spec["goldens"]])
    for fields in spec.get("test_cases", []):
        dataset.add_test_case(_test_case(fields))
    return {
        file_type: dataset.save_as(
            file_type=file_type,
            directory=spec["directory"],
            file_name="dataset",
            include_test_cases=bool(spec.get("test_cases")),
        )
        for file_type in ("json", "jsonl", "csv")
    }


def _main(mode: str, spec_path: str, out_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    modes = {"evaluate": _evaluate, "assert": _assert, "measure": _measure, "save": _save}
    answer = modes[mode](spec)
    from deepeval.telemetry import NoopBackend, get_backend

    assert isinstance(get_backend(), NoopBackend), "deepeval's telemetry is on"
    Path(out_path).write_text(json.dumps(answer), encoding="utf-8")


if __name__ == "__main__":
    _main(*sys.argv[1:])
