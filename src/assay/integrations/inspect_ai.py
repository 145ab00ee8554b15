"""assay's model-free checks as inspect_ai scorers: the claim checker (``grounded_claims``) and
the instruction checker (``instructions_followed``).

``grounded_claims()`` scores a sample's output against evidence passages given in the sample's
metadata, without a model call: the output is split into claims by assay's rules, each claim is
checked by the ``learned`` checker against all the passages (and against the passages it cites,
``[cite:ID]``), and the answer's ``p_error`` is the one ``assay bench run --pattern entailment
--verifier learned`` gives the same answer and evidence (the weakest claim decides). The score
is ``C`` (grounded) when ``p_error < threshold``, else ``I`` (or at the operating point of a
``calibration`` file ``assay bench calibrate`` fitted); the explanation gives ``p_error`` and,
per claim, its verdict and the evidence window it was matched to::

    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate
    from assay.integrations.inspect_ai import grounded_claims

    Task(
        dataset=[Sample(input="Where is the Eiffel Tower?",
                        metadata={"evidence": ["The Eiffel Tower stands in Paris."]})],
        solver=generate(),
        scorer=grounded_claims(),
    )

An output the checker cannot score (empty, or a claim in a script written without spaces) is
left unscored (the scorer returns no score, and the reason goes into the sample's transcript),
never counted as ``I``. A sample without evidence is an error of that sample, naming the field.

``instructions_followed()`` checks a sample's output against IFEval's verifiable instructions
given in its metadata (``instruction_id_list`` and ``kwargs``, IFEval's own fields), the
sample's input being the prompt, with the checks ``assay instructions check`` makes (``mode``
strict or loose), offline: no NLTK data or language model is downloaded. Its value has IFEval's
two levels, ``prompt_level`` (``C`` when every instruction is followed) and
``instruction_level`` (the share followed), each with its mean and standard error over the
samples; the explanation gives each instruction's verdict and reason. An empty output follows
no instruction, as in IFEval; an unknown instruction id or argument is an error of that sample,
naming the metadata field::

    Task(
        dataset=[Sample(input="Describe a cat without commas.",
                        metadata={"instruction_id_list": ["punctuation:no_comma"],
                                  "kwargs": [{}]})],
        solver=generate(),
        scorer=instructions_followed(),
    )

``strict_judge(judge)`` scores each sample's output with assay's judge protocol: a judge model
(an assay model name, ``openai/gpt-4o-mini``, ``llamacpp/smollm2``, ``stub/j``; called through
assay's model layer, its cache and retries) scores four rubric dimensions 0-2 with evidence
quotes as exactly one JSON object, and the reply is validated as ``assay judge run`` validates
it (schema, the score sum, the verdict's thresholds, the identifiers, each quote found in the
output). A valid reply's scores are the sample's value (the four dimensions and
``overall_score``, each with its mean and standard error), its verdict the score's answer, its
evidence and notes the explanation. A reply that stays invalid after the asks allowed, or a
judge call that failed, leaves the sample unscored, with the flags and problems (or the
failure) in its transcript: never a score of 0::

    Task(dataset=..., solver=generate(), scorer=strict_judge("openai/gpt-4o-mini"))

Needs the ``inspect`` extra. This module sits above every layer of assay: it imports them, and
nothing in assay imports it.
"""

from __future__ import annotations

from inspect_ai.log import transcript
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Score,
    Scorer,
    Target,
    accuracy,
    mean,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from ..data.importers.inspect_logs import variant_of
from ..instructions import Mode
from ..judge.evalset import Sample as JudgedSample
from ..judge.run import JudgeRunConfig
from ..model import Model, ModelOptions
from ..verify.checkers.learned import CHECKER_VERSION
from ._grounding import (
    decide,
    evidence_items,
    failure,
    operating_point,
    score_grounding,
)
from ._instructions import check_instructions, instruction_mode, instructions_explanation
from ._judging import (
    JUDGED_KEYS,
    JudgeGaveNoScore,
    held_to,
    judge_model,
    judged,
    judgment_explanation,
    judgment_values,
)

__all__ = ["evidence_items", "grounded_claims", "instructions_followed", "strict_judge"]


@scorer(metrics=[accuracy(), stderr()])
def grounded_claims(
    evidence: str = "evidence", threshold: float | None = None, calibration: str | None = None
) -> Scorer:
    """Score the output's grounding in ``metadata[evidence]`` with assay's ``learned`` checker.

    ``metadata[evidence]`` holds the passages: a string, a list of strings (ids ``1``, ``2``,
    ...) or a list of objects with ``text`` and ``id`` (or ``evidence_id``), optionally
    ``title`` and ``source``. ``C`` when ``p_error < threshold`` (0.5 unless given), or at the
    operating point of ``calibration``, a file ``assay bench calibrate`` fitted (its map gives
    ``p_error``, its threshold decides); the score's metadata keeps ``p_error``, the threshold
    and every claim check.
    """
    point = operating_point(threshold, calibration)

    async def score(state: TaskState, target: Target) -> Score | None:
        passages = evidence_items(state.metadata.get(evidence), field=f"metadata.{evidence}")
        answer = state.output.completion
        result = await score_grounding(
            answer,
            record_id=str(state.sample_id),
            question=state.input_text,
            evidence=passages,
        )
        decision = decide(result, point)
        if decision is None:
            transcript().info(f"assay {CHECKER_VERSION}: no score: {failure(result)}")
            return None
        return Score(
            value=CORRECT if decision.grounded else INCORRECT,
            answer=answer,
            explanation=decision.explanation,
            metadata=decision.metadata,
        )

    return score


@scorer(
    metrics={
        "prompt_level": [accuracy(), stderr()],
        "instruction_level": [mean(), stderr()],
    }
)
def instructions_followed(
    mode: Mode = "strict", instructions: str = "instruction_id_list", kwargs: str = "kwargs"
) -> Scorer:
    """Score the output against the verifiable instructions in ``metadata[instructions]`` (IFEval
    ids) with their arguments in ``metadata[kwargs]`` (one object per id; may be left out when no
    instruction takes any), by assay's instruction checker in ``mode`` (strict or loose).

    ``prompt_level`` is ``C`` when every instruction is followed, else ``I``;
    ``instruction_level`` the share followed. The score's metadata keeps every verdict.
    """
    mode = instruction_mode(mode)

    async def score(state: TaskState, target: Target) -> Score:
        output = state.output.completion
        verdicts = check_instructions(
            state.metadata.get(instructions),
            state.metadata.get(kwargs),
            prompt=state.input_text,
            response=output,
            mode=mode,
            fields=(f"metadata.{instructions}", f"metadata.{kwargs}"),
        )
        followed = sum(verdict.followed for verdict in verdicts)
        return Score(
            value={
                "prompt_level": CORRECT if followed == len(verdicts) else INCORRECT,
                "instruction_level": followed / len(verdicts),
            },
            answer=output,
            explanation=instructions_explanation(verdicts, mode),
            metadata={"instructions": [verdict.model_dump() for verdict in verdicts]},
        )

    return score


@scorer(metrics={key: [mean(), stderr()] for key in JUDGED_KEYS})
def strict_judge(
    judge: str | Model,
    options: ModelOptions | None = None,
    config: JudgeRunConfig | None = None,
) -> Scorer:
    """Score the output with assay's judge protocol, judged by ``judge`` (an assay model name,
    opened with ``options``, or an opened :class:`~assay.model.Model`); ``config`` sets the
    protocol, decoding and ``max_attempts`` as for ``assay judge run`` (one ask by default).

    The sample's metadata may give what the judge holds the output to besides its prompt:
    ``constraints`` (a list of strings), ``required_structure`` and ``intent``.
    """
    model = judge_model(judge, options)
    settings = config or JudgeRunConfig()

    async def score(state: TaskState, target: Target) -> Score | None:
        try:
            record = await judged(_judged_sample(state), model, settings)
        except JudgeGaveNoScore as unscored:
            transcript().info(str(unscored))
            return None
        return Score(
            value=dict(judgment_values(record)),
            answer=record.classification.verdict,
            explanation=judgment_explanation(record),
            metadata={
                "verdict": record.classification.verdict,
                "judge": model.name,
                "method": record.method,
                "attempts": record.attempt,
                "fingerprint": record.fingerprint,
                "judge_flags": list(record.classification.judge_flags),
                "evidence": [e.model_dump(mode="json") for e in record.classification.evidence],
            },
        )

    return score


def _judged_sample(state: TaskState) -> JudgedSample:
    """The sample as the judge protocol sees it: the prompt, the output, what it is held to."""
    variant = variant_of(state.epoch)  # as `assay import inspect` names the sample's cell
    return JudgedSample(
        question_id=str(state.sample_id),
        prompt_variant=variant,
        target_model=str(state.model),
        output_id=f"{state.sample_id}:{variant}",
        output_text=state.output.completion,
        prompt=state.input_text,
        **held_to(state.metadata or {}, "metadata"),
    )
