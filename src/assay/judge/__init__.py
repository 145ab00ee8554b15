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
