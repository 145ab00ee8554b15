"""assay's model-free checks as DSPy metrics, for ``dspy.Evaluate`` and for DSPy's optimizers
(GEPA's feedback included), at no model call: the claim checker (is the answer grounded in
its passages?) and the instruction checker (does the response follow IFEval's verifiable
instructions?).

``GroundedAnswerMetric()`` checks a prediction's answer against the passages the program
retrieved (or the example's own), where a DSPy program is measured or optimized::

    import dspy
    from assay.integrations.dspy import GroundedAnswerMetric

    grounded = GroundedAnswerMetric(answer="answer", evidence="context")
    dspy.Evaluate(devset=devset, metric=grounded)(rag_program)   # mean of 1 - p_error
    dspy.GEPA(metric=grounded, auto="light", reflection_lm=lm).compile(rag_program, trainset=train)

The answer is split into claims by assay's rules, each claim is checked by the ``learned``
checker against all the passages (and against the ones it cites, ``[cite:ID]``), and
``p_error`` is the one ``assay bench run --pattern entailment --verifier learned`` gives the
same answer and passages. What a call returns follows DSPy's conventions for a metric:

- ``metric(example, prediction)`` (``dspy.Evaluate``): the score ``1 - p_error``, a float;
- ``metric(example, prediction, trace)`` with a trace (``BootstrapFewShot`` and the optimizers
  that keep a demonstration only when it passes): whether the answer is grounded,
  ``p_error < threshold``;
- ``metric(example, prediction, trace, pred_name, pred_trace)`` (GEPA asking a predictor's
  feedback): ``dspy.Prediction(score=1 - p_error, feedback=...)``, the feedback being the
  checker's explanation: each claim with its verdict, the evidence window it was matched to and
  the words of the claim that no passage holds.

``answer`` names the prediction's field with the text to check (``"answer"``); ``evidence``
the field with the passages (``"context"``), read from the prediction first (what the program
retrieved) and from the example when the prediction has none. Passages are a string, a list
of strings, of passage dicts (``text``, ``id``, ``title``, ``source``) or of a retrieval
library's documents. The operating point is ``threshold`` on ``p_error`` (0.5 unless given) or
a ``calibration`` file ``assay bench calibrate`` fitted on a labelled dev run.

An answer the checker cannot score (an empty one, a script written without spaces) raises
:class:`UnscorableAnswer` (a ``ValueError``) with the reason; a prediction without its answer
field and passages that are missing or unreadable raise a ``ValueError`` naming the field.
DSPy's ``Evaluate`` logs either, counts it toward its ``max_errors`` and gives the example its
``failure_score`` (0.0 unless set), as for a program that failed; assay never turns it into a
score of its own.

``InstructionsFollowedMetric()`` checks a prediction's response against the verifiable
instructions of its example, given as IFEval gives them (``instruction_id_list``, ``kwargs``
and ``prompt``, each field renamable), with the checks ``assay instructions check`` makes
(``mode`` strict or loose). Its score is the share of instructions followed (IFEval's
instruction-level accuracy; ``level="prompt"``: 1.0 when all are followed, else 0.0), its
verdict for a trace whether all are followed, and its feedback each instruction's verdict with
the reason (``punctuation:no_comma: not followed: 2 commas``). An unknown instruction id or
argument raises a ``ValueError`` naming the example's field (``example.kwargs[1].relation``); an
empty response follows no instruction, as in IFEval.

``StrictJudgeMetric(judge)`` judges a prediction's answer to its example's question with
assay's judge protocol (``judge`` an assay model: its calls go through assay's model layer):
score ``overall_score / 8``, passing on the verdict ``PASS``, the verdict and evidence as
feedback; a reply still invalid after the asks, or a failed call, raises ``JudgeGaveNoScore``.

Each metric is a :class:`Metric`: it says what one prediction gives (:class:`Outcome`: score,
pass, feedback) and the base class answers DSPy's three ways of asking.

Needs the ``dspy`` extra (tested with 3.4.1). This module sits above every layer of assay: it
imports them, and nothing in assay imports it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Literal, NamedTuple

import dspy

from ..instructions import InstructionResult, Mode
from ..judge.archive import EvaluationRecord
from ..judge.run import JudgeRunConfig
from ..model import Model, ModelOptions
from ..verify.checkers.learned import CHECKER_VERSION
from ..verify.types import Evidence
from ._grounding import (
    Decision,
    UnscorableAnswer,
    decide,
    failure,
    library_evidence,
    operating_point,
    run_blocking,
    score_grounding,
)
from ._instructions import check_instructions, instruction_mode, instructions_explanation
from ._judging import (
    JudgeGaveNoScore,
    judge_model,
    judged,
    judgment_explanation,
    judgment_score,
    passes,
    text_sample,
)

__all__ = [
    "GroundedAnswerMetric",
    "InstructionsFollowedMetric",
    "JudgeGaveNoScore",
    "Metric",
    "Outcome",
    "StrictJudgeMetric",
    "UnscorableAnswer",
]


class Outcome(NamedTuple):
    """One prediction checked: the score, whether it passes, and why (the feedback)."""

    score: float
    passed: bool
    feedback: str


class Metric(ABC):
    """What DSPy asks of a metric, from one :meth:`outcome`: feedback for GEPA's predictor
    (``pred_name``), whether it passes when a trace is given (bootstrapping keeps a
    demonstration only then), else the score."""

    def __call__(
        self,
        example: Any,
        prediction: Any,
        trace: Any = None,
        pred_name: str | None = None,
        pred_trace: Any = None,
    ) -> float | bool | dspy.Prediction:
        outcome = self.outcome(example, prediction)
        if pred_name is not None:
            return dspy.Prediction(score=outcome.score, feedback=outcome.feedback)
        if trace is not None:
            return outcome.passed
        return outcome.score

    @abstractmethod
    def outcome(self, example: Any, prediction: Any) -> Outcome:
        """The prediction checked against its example."""


class GroundedAnswerMetric(Metric):
    """The grounding of a prediction's answer in its passages, by assay's ``learned`` checker:
    score ``1 - p_error``, grounded when ``p_error < threshold``."""

    def __init__(
        self,
        *,
        answer: str = "answer",
        evidence: str = "context",
        threshold: float | None = None,
        calibration: str | Path | None = None,
    ) -> None:
        # refuses a threshold outside [0, 1], or beside a calibration
        self._point = operating_point(threshold, calibration)
        self.threshold = self._point.threshold
        self.answer = answer
        self.evidence = evidence

    def outcome(self, example: Any, prediction: Any) -> Outcome:
        decision = self.decision(example, prediction)
        return Outcome(1.0 - decision.p_error, decision.grounded, decision.explanation)

    def decision(self, example: Any, prediction: Any) -> Decision:
        """The verdict on ``prediction``'s answer, with its ``p_error`` and explanation."""
        answer = _text(prediction, self.answer, "prediction")
        result = run_blocking(
            score_grounding(
                answer,
                record_id="dspy",
                question=_question(example),
                evidence=self._passages(example, prediction),
            )
        )
        decision = decide(result, self._point)
        if decision is None:
            raise UnscorableAnswer(
                f"prediction.{self.answer}: assay {CHECKER_VERSION}: no score: {failure(result)}"
            )
        return decision

    def _passages(self, example: Any, prediction: Any) -> tuple[Evidence, ...]:
        for holder, name in ((prediction, "prediction"), (example, "example")):
            value = _field(holder, self.evidence)
            if value is not None:
                return library_evidence(value, field=f"{name}.{self.evidence}", holder=name)
        raise ValueError(
            f"{self.evidence}: missing: neither the prediction nor the example gives evidence "
            "passages to check against"
        )


class InstructionsFollowedMetric(Metric):
    """The verifiable instructions (IFEval's ids and arguments) a prediction's response
    follows, by assay's instruction checker: score the share followed (or 1.0 / 0.0 for all of
    them, ``level="prompt"``), passing when every one is followed."""

    def __init__(
        self,
        *,
        response: str = "response",
        instructions: str = "instruction_id_list",
        kwargs: str = "kwargs",
        prompt: str = "prompt",
        mode: Mode = "strict",
        level: Literal["instruction", "prompt"] = "instruction",
    ) -> None:
        mode = instruction_mode(mode)
        if level not in ("instruction", "prompt"):
            raise ValueError(f"level must be 'instruction' or 'prompt', got {level!r}")
        self.response, self.instructions, self.kwargs = response, instructions, kwargs
        self.prompt, self.mode, self.level = prompt, mode, level

    def outcome(self, example: Any, prediction: Any) -> Outcome:
        verdicts = self.verdicts(example, prediction)
        followed = sum(verdict.followed for verdict in verdicts)
        every = followed == len(verdicts)
        score = float(every) if self.level == "prompt" else followed / len(verdicts)
        return Outcome(score, every, instructions_explanation(verdicts, self.mode))

    def verdicts(self, example: Any, prediction: Any) -> list[InstructionResult]:
        """Each instruction of ``example`` with its verdict on ``prediction``'s response and
        the reason, in order."""
        response = _text(prediction, self.response, "prediction")
        prompt = _field(example, self.prompt)
        return check_instructions(
            _field(example, self.instructions),
            _field(example, self.kwargs),
            prompt=prompt if isinstance(prompt, str) else "",
            response=response,
            mode=self.mode,
            fields=(f"example.{self.instructions}", f"example.{self.kwargs}"),
        )


class StrictJudgeMetric(Metric):
    """A prediction's answer judged with assay's judge protocol by ``judge`` (an assay model
    name, opened with ``options``, or an opened model): score ``overall_score / 8``, passing
    when the verdict is ``PASS``; the feedback the verdict, the evidence and the notes."""

    def __init__(
        self,
        judge: str | Model,
        *,
        question: str = "question",
        answer: str = "answer",
        options: ModelOptions | None = None,
        config: JudgeRunConfig | None = None,
    ) -> None:
        self.model = judge_model(judge, options)
        self.question, self.answer = question, answer
        self.config = config or JudgeRunConfig()

    def outcome(self, example: Any, prediction: Any) -> Outcome:
        record = self.judgment(example, prediction)
        return Outcome(judgment_score(record), passes(record), judgment_explanation(record))

    def judgment(self, example: Any, prediction: Any) -> EvaluationRecord:
        """The valid record of the judgment (raises :class:`JudgeGaveNoScore` when the reply
        stayed invalid or the call failed)."""
        question = _text(example, self.question, "example")
        answer = _text(prediction, self.answer, "prediction")
        sample = text_sample("dspy", question, answer, target_model="dspy-program", held_to={})
        return run_blocking(judged(sample, self.model, self.config))


def _text(holder: Any, name: str, kind: str) -> str:
    """A text field of an example or prediction; a ValueError naming it otherwise."""
    value = _field(holder, name)
    if not isinstance(value, str):
        got = "missing" if value is None else f"a {type(value).__name__}, not text"
        raise ValueError(f"{kind}.{name}: {got}")
    return value


def _field(holder: Any, name: str) -> Any:
    """A field of a DSPy ``Example`` or ``Prediction`` (or any object), None when absent."""
    getter = getattr(holder, "get", None)
    if callable(getter):
        return getter(name, None)
    return getattr(holder, name, None)


def _question(example: Any) -> str:
    """The example's question, kept with the checked record as the benchmark keeps it (the
    checker itself reads only the answer and the passages)."""
    question = _field(example, "question")
    return question if isinstance(question, str) else ""
