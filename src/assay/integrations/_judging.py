"""What the judge protocol inside other tools shares: the judge opened as ``judge run`` opens
it, one output judged, and the outcome in words (the verdict and evidence, or why there is no
score).

Imports no other tool, so every integration can use it (promptfoo loads its file by path, so
the imports here are absolute).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assay.data.importers._common import stable_key
from assay.judge.archive import EvaluationRecord
from assay.judge.evalset import Sample
from assay.judge.protocol import DIMENSION_KEYS
from assay.judge.run import JudgeRunConfig, judge_sample
from assay.judge.stub_replies import RESPONDERS
from assay.model import Model, ModelOptions, get_model

JUDGED_KEYS = (*DIMENSION_KEYS, "overall_score")
_MAX_OVERALL = 2 * len(DIMENSION_KEYS)


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
        raise JudgeGaveNoScore(f"assay judge: no score: {_why_unscored(records)}")
    return last


def text_sample(
    tool: str, prompt: str, output: str, *, target_model: str, held_to: Mapping[str, Any]
) -> Sample:
    """A prompt and an output a tool holds without ids of its own, as a sample to judge: ids
    from the texts (the same texts, the same ids, so the judge's cache answers a rerun)."""
    return Sample(
        question_id=f"{tool}-{stable_key(prompt)}",
        prompt_variant=tool,
        target_model=target_model,
        output_id=f"{tool}-{stable_key(prompt + output)}",
        output_text=output,
        prompt=prompt,
        **held_to,
    )


def held_to(fields: Mapping[str, Any], where: str) -> dict[str, Any]:
    """What a tool's sample says the judge holds the output to besides its prompt:
    ``constraints`` (a list of strings), ``required_structure`` and ``intent`` (strings), each
    optional; a ValueError names the field (``where.constraints``) of another type."""
    constraints = fields.get("constraints") or ()
    if isinstance(constraints, str) or not all(isinstance(c, str) for c in constraints):
        raise ValueError(f"{where}.constraints: expected a list of strings")
    texts = {key: fields.get(key) for key in ("required_structure", "intent")}
    for key, value in texts.items():
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{where}.{key}: expected a string, got {type(value).__name__}")
    return {"constraints": tuple(constraints), **texts}


def _why_unscored(records: Sequence[EvaluationRecord]) -> str:
    last = records[-1]
    if last.call_failure is not None:
        return f"the judge call failed: {last.call_failure.describe()}"
    problems = "; ".join(last.classification.problems()) or "invalid"
    asks = f"{len(records)} ask{'' if len(records) == 1 else 's'}"
    return f"invalid after {asks}: flags {', '.join(last.flags)}: {problems}"[:2000]


def judgment_explanation(record: EvaluationRecord) -> str:
    """The verdict and overall score, each evidence quote by dimension, the judge's notes."""
    reply = record.classification
    lines = [f"{reply.verdict}: overall_score {reply.overall_score} ({record.judge_model})"]
    lines += [f"{item.dimension}: {item.quote!r}" for item in reply.evidence]
    if reply.notes:
        lines.append(f"notes: {reply.notes}")
    return "\n".join(lines)


def judgment_values(record: EvaluationRecord) -> dict[str, int]:
    """The four dimensions' scores and ``overall_score`` of a valid record."""
    reply = record.classification
    assert reply.scores is not None and reply.overall_score is not None
    return {**reply.scores, "overall_score": reply.overall_score}


def judgment_score(record: EvaluationRecord) -> float:
    """A valid record's overall score on 0-1, for tools whose scores are (DSPy, promptfoo)."""
    return judgment_values(record)["overall_score"] / _MAX_OVERALL


def passes(record: EvaluationRecord) -> bool:
    return record.classification.verdict == "PASS"
