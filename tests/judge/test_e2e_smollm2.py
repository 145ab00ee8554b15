"""End to end with the embedded SmolLM2 model as target and judge, a stub as the second model.

SmolLM2-135M breaks the protocol often; what must hold is that every reply lands in exactly one
archive with the flags the validator gives it, and that the analysis runs on whatever is valid.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from assay.data.questions import load_outputs, load_questions
from assay.judge.analysis_types import AnalysisSettings
from assay.judge.analyze import analyze_run
from assay.judge.archive import INVALID_DIR, VALID_DIR, iter_archive, recheck_archive
from assay.judge.evalset import build_eval_set
from assay.judge.generate import GenerateSettings, generate_outputs
from assay.judge.protocol import DecodingSettings, Thresholds, verdict_for
from assay.judge.run import JudgeRunConfig, run_judges
from assay.model import Model, ModelOptions, get_model, open_cache

from .helpers import QUESTIONS_JSONL, write_questions

# The shared fixture makes ~10 embedded-model calls (seconds each on an idle 2-core machine,
# a minute each on a crowded one); the timeout is generous so load alone does not fail it.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

SMOLLM2 = "llamacpp/smollm2"
OPTIONS = ModelOptions(max_concurrency=1, request_timeout_s=600)


def open_models(cache_dir: Path) -> list[Model]:
    cache = open_cache(OPTIONS.model_copy(update={"cache_path": cache_dir / "cache.sqlite"}))
    return [get_model(name, OPTIONS, cache=cache) for name in (SMOLLM2, "stub/second")]


async def _close(models: list[Model]) -> None:
    for model in models:
        await model.aclose()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Generates the outputs and runs both judge runs once, sharing one loaded model."""
    workdir = tmp_path_factory.mktemp("e2e")
    one_question = QUESTIONS_JSONL[:1]  # two prompt variants; one question keeps it quick
    questions = load_questions(write_questions(workdir / "questions.jsonl", one_question))

    async def everything() -> None:
        models = open_models(workdir)
        try:
            settings = GenerateSettings(max_tokens=64, concurrency=1)
            summary = await generate_outputs(questions, models, workdir / "outputs", settings)
            assert summary.written + summary.failed == 4
            eval_set = build_eval_set(questions, load_outputs(workdir / "outputs"))
            assert eval_set.coverage.complete
            for constrained in ("on", "off"):
                await run_judges(
                    eval_set, models, workdir / f"run-{constrained}", config(constrained)
                )
        finally:
            await _close(models)

    asyncio.run(everything())
    return workdir


def config(constrained: str) -> JudgeRunConfig:
    return JudgeRunConfig(
        mode="both",
        concurrency=1,
        decoding=DecodingSettings(max_tokens=128, constrained=constrained),  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("constrained", ["on", "off"])
def test_smollm2_judge_run_archives_every_reply(workdir: Path, constrained: str) -> None:
    run_dir = workdir / f"run-{constrained}"
    items = list(iter_archive(run_dir))
    records = [item.record for item in items]
    assert len(items) == 8  # 2 judges x 4 samples, one attempt each
    assert all(record is not None for record in records)
    assert len({r.work_key for r in records if r is not None}) == 8
    for item in items:
        record = item.record
        assert record is not None
        archive = item.path.relative_to(run_dir).parts[0]
        assert archive == (VALID_DIR if record.valid else INVALID_DIR)
        assert record.constrained is (constrained == "on")
        assert record.method == (
            "self_judge" if record.judge_model == record.target_model else "cross_judge"
        )
        fired = {check.flag for check in record.classification.failed_checks}
        assert set(record.flags) == fired
        if record.valid:
            scores = record.classification.scores
            assert scores is not None and not record.flags
            assert record.classification.overall_score == sum(scores.values())
            assert record.classification.verdict == verdict_for(scores, Thresholds())
        else:
            assert record.flags and record.classification.scores is None
    assert recheck_archive(run_dir).consistent
    smol_records = [r for r in records if r is not None and r.judge_model == SMOLLM2]
    assert {r.method for r in smol_records} == {"cross_judge", "self_judge"}

    result = analyze_run(run_dir, AnalysisSettings(n_resamples=100, plots=False))
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["kind"] == "judge"
    valid_count = sum(r.valid for r in records if r is not None)
    assert result.summary.counts.valid == valid_count
    assert sum(row["n"] for row in summary["verdicts"]) == valid_count
    assert sum(row["n"] for row in summary["invalid_rates"]) == 8
    assert (run_dir / "results_analysis.md").is_file()

    eval_set = build_eval_set(
        load_questions(workdir / "questions.jsonl"), load_outputs(workdir / "outputs")
    )
    rerun = open_models(workdir)
    asyncio.run(run_judges(eval_set, rerun, run_dir, config(constrained)))
    assert [m.usage.calls + m.usage.cache_hits for m in rerun] == [0, 0]
