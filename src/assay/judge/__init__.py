"""The judge protocol: a judge model scores target outputs on a fixed rubric, with evidence, as
exactly one strict JSON object; every reply is validated and archived as valid or invalid.

Python API, in the order of a run::

    questions = load_questions(Path("questions.jsonl"))
    outputs = load_outputs(Path("outputs/"))            # or: await generate_outputs(...)
    eval_set = build_eval_set(questions, outputs)       # coverage report before any call
    summary = await run_judges(eval_set, [judge_model], Path("run"), JudgeRunConfig())
    report = recheck_archive(Path("run"))               # offline re-validation
    result = analyze_run(Path("run"))                   # summary.json, results_analysis.md

:func:`classify` validates a single reply; see ``docs/judge.md`` for the rules and artifacts.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Where each public name lives. Loaded on first use, so that ``import assay.judge.x`` (and the
# CLI's start) does not pay for the analysis stack (numpy, the metrics) it may never touch.
_SOURCES = {
    "QuestionSet": "..data.questions",
    "TargetOutput": "..data.questions",
    "load_outputs": "..data.questions",
    "load_questions": "..data.questions",
    "AnalysisSettings": ".analysis_types",
    "JudgeSummary": ".analysis_types",
    "analyze_run": ".analyze",
    "EvaluationRecord": ".archive",
    "RecheckReport": ".archive",
    "load_records": ".archive",
    "recheck_archive": ".archive",
    "CoverageReport": ".evalset",
    "EvalSet": ".evalset",
    "Sample": ".evalset",
    "build_eval_set": ".evalset",
    "GenerateSettings": ".generate",
    "generate_outputs": ".generate",
    "ALL_FLAGS": ".protocol",
    "DIMENSION_KEYS": ".protocol",
    "DecodingSettings": ".protocol",
    "FineDimension": ".protocol",
    "FinerRubric": ".protocol",
    "Protocol": ".protocol",
    "Thresholds": ".protocol",
    "output_schema": ".protocol",
    "protocol_fingerprint": ".protocol",
    "verdict_for": ".protocol",
    "JudgeRunConfig": ".run",
    "JudgeRunSummary": ".run",
    "run_judges": ".run",
    "Classification": ".validate",
    "classify": ".validate",
}


def __getattr__(name: str) -> Any:
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_SOURCES[name], __name__), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from ..data.questions import QuestionSet, TargetOutput, load_outputs, load_questions
    from .analysis_types import AnalysisSettings, JudgeSummary
    from .analyze import analyze_run
    from .archive import EvaluationRecord, RecheckReport, load_records, recheck_archive
    from .evalset import CoverageReport, EvalSet, Sample, build_eval_set
    from .generate import GenerateSettings, generate_outputs
    from .protocol import (
        ALL_FLAGS,
        DIMENSION_KEYS,
        DecodingSettings,
        FineDimension,
        FinerRubric,
        Protocol,
        Thresholds,
        output_schema,
        protocol_fingerprint,
        verdict_for,
    )
    from .run import JudgeRunConfig, JudgeRunSummary, run_judges
    from .validate import Classification, classify

__all__ = [
    "ALL_FLAGS",
    "DIMENSION_KEYS",
    "AnalysisSettings",
    "Classification",
    "CoverageReport",
    "DecodingSettings",
    "EvalSet",
    "EvaluationRecord",
    "FineDimension",
    "FinerRubric",
    "GenerateSettings",
    "JudgeRunConfig",
    "JudgeRunSummary",
    "JudgeSummary",
    "Protocol",
    "QuestionSet",
    "RecheckReport",
    "Sample",
    "TargetOutput",
    "Thresholds",
    "analyze_run",
    "build_eval_set",
    "classify",
    "generate_outputs",
    "load_outputs",
    "load_questions",
    "load_records",
    "output_schema",
    "protocol_fingerprint",
    "recheck_archive",
    "run_judges",
    "verdict_for",
]
