"""What the judge protocol inside other tools shares: the judge opened as ``judge run`` opens
it, one output judged, and the outcome in words (the verdict and evidence, or why there is no
score).

Imports no other tool, so every integration can use it (promptfoo loads its file by path, so
the imports here are absolute).
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.judge.archive import EvaluationRecord
from assay.judge.evalset import Sample
from assay.judge.protocol import DIMENSION_KEYS
from assay.judge.run import JudgeRunConfig, judge_sample
from assay.judge.stub_replies import RESPONDERS
from assay.model import Model, ModelOptions, get_model

JUDGED_KEYS = (*DIMENSION_KEYS, "overall_score")
MAX_OVERALL = 2 * len(DIMENSION_KEYS)


class JudgeGaveNoScore(ValueError):
    """The judge's reply stayed invalid after every ask, or its call failed: the message says
    why. Raised where a tool records an evaluator's exception as that evaluation's failure."""


def judge_model(judge: str | Model, options: ModelOptions | None = None) -> Model:
    """An assay model to judge with; ``stub/...`` answers judge prompts as in ``judge run``."""
    if isinstance(judge, Model):
        return judge
    return get_model(judge, (options or ModelOptions()).with_stub_responders(RESPONDERS))


async def judged(sample: Sample, judge: Model, config: JudgeRunConfig) -> EvaluationRecord:
    """The deciding record of ``sample`` judged by ``judge``: valid, or why not
    (:class:`JudgeGaveNoScore`, with the flags and problems or the call's failure)."""
    records = await judge_sample(sample, judge, config)
    last = records[-1]
    if not last.valid:
        raise JudgeGaveNoScore(f"assay judge: no score: {why_unscored(records)}")
    return last


def why_unscored(records: Sequence[EvaluationRecord]) -> str:
    last = records[-1]
    if last.call_failure is not None:
        return f"the judge call failed: {last.call_failure.describe()}"
    problems = "; ".join(last.classification.problems()) or "invalid"
    asks = f"{len(records)} ask{'' if len(records) == 1 else 's'}"
    return f"invalid after {asks}: flags {', '.join(last.flags)}: {problems}"[:2000]


def judgment_explanation(record: EvaluationRecord) -> str:
    """The verdict and overall score, each evidence quote by dimension, the judge's notes."""
    judged = record.classification
    lines = [f"{judged.verdict}: overall_score {judged.overall_score} ({record.judge_model})"]
    lines += [f"{item.dimension}: {item.quote!r}" for item in judged.evidence]
    if judged.notes:
        lines.append(f"notes: {judged.notes}")
    return "\n".join(lines)


def judgment_values(record: EvaluationRecord) -> dict[str, int]:
    """The four dimensions' scores and ``overall_score`` of a valid record."""
    judged = record.classification
    assert judged.scores is not None and judged.overall_score is not None
    return {**judged.scores, "overall_score": judged.overall_score}
