"""assay's model-free claim checker as a promptfoo assertion.

A ``type: python`` assertion whose value is this file (or a file of your own that imports
``get_assert`` from here) checks a test case's output against evidence passages in one of the
test's vars, without a model call: the output is split into claims by assay's rules, each claim
is checked by the ``learned`` checker against all the passages (and against the passages it
cites, ``[cite:ID]``), and the answer's ``p_error`` is the one ``assay bench run --pattern
entailment --verifier learned`` gives the same answer and evidence (the weakest claim decides)::

    tests:
      - vars:
          question: Where is the Eiffel Tower?
          evidence: The Eiffel Tower stands in Paris.
        assert:
          - type: python
            value: file://assay_grounded.py  # from assay.integrations.promptfoo import get_assert
            config: {evidence_var: evidence, threshold: 0.5}  # the defaults

The assertion passes when ``p_error < threshold``, or at the operating point of ``config:
{calibration: FILE}``, a file ``assay bench calibrate`` fitted (its map gives ``p_error``, its
threshold decides); its score is ``1 - p_error``; its reason
gives ``p_error`` and, per claim, its verdict and the evidence window it was matched to; its
metadata keeps ``p_error``, the threshold and every claim check. The evidence var is a string
(one passage) or a list of objects with ``text`` and ``id`` (or ``evidence_id``), optionally
``title`` and ``source``. A list of plain strings is split by promptfoo into one test case per
string unless the test sets ``options: {disableVarExpansion: true}``.

An output the checker cannot score (empty, or a claim in a script written without spaces)
fails the assertion with the reason and score 0: promptfoo has no "unscored". A test without
the evidence var fails with an error naming it.

``get_assert_instructions`` (``value: file://assay_grounded.py:get_assert_instructions``)
checks IFEval's verifiable instructions instead, with the checks ``assay instructions check``
makes, offline: the ids in the var ``instruction_id_list`` and their arguments in ``kwargs``
(IFEval's fields; ``config: {instructions_var, kwargs_var, mode: strict|loose}``). It passes when
every instruction is followed; its score is the share followed, its reason each instruction's
verdict and why. promptfoo splits a list of strings in a test's vars into one test case per
string, so give the ids with ``options: {disableVarExpansion: true}`` or as JSON text
(``'["punctuation:no_comma"]'``). An unknown id or argument fails the test with an error
naming the var.

``get_assert_judge`` (``config: {judge: MODEL, base_url: URL, max_attempts: N}``) judges the
output with assay's judge protocol, the judge an assay model (``openai/NAME``, ``stub/NAME`` for
a dry run): it passes on the verdict PASS, its score is ``overall_score / 8`` and its metadata
the four dimensions; the test's vars ``constraints`` (a list, or JSON text of one),
``required_structure`` and ``intent`` are what the judge holds the output to besides the
prompt. A reply still invalid after the asks, or a failed judge call, fails with the reason and
score 0.

promptfoo runs the file with the Python of ``PROMPTFOO_PYTHON`` (else ``python``), which must
have assay installed. This module sits above every layer of assay: it imports them, and nothing
in assay imports it. promptfoo loads it by its file path, not as ``assay.integrations.promptfoo``,
so its imports are absolute.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Mapping
from typing import Any

if __name__ != "assay.integrations.promptfoo":
    # Loaded by its path, promptfoo has put this file's directory first on sys.path, where
    # inspect_ai.py (assay's inspect integration) would shadow the real inspect_ai package.
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != _here]

from assay.integrations._grounding import (
    decide,
    evidence_items,
    failure,
    operating_point,
    score_grounding,
)
from assay.integrations._instructions import (
    check_instructions,
    instruction_mode,
    instructions_explanation,
)
from assay.integrations._judging import (
    JudgeGaveNoScore,
    held_to,
    judge_model,
    judged,
    judgment_explanation,
    judgment_score,
    judgment_values,
    passes,
    text_sample,
)
from assay.judge.run import JudgeRunConfig
from assay.model import ModelOptions
from assay.verify.checkers.learned import CHECKER_VERSION

__all__ = ["get_assert", "get_assert_instructions", "get_assert_judge"]

DEFAULT_EVIDENCE_VAR = "evidence"
DEFAULT_INSTRUCTIONS_VAR = "instruction_id_list"
DEFAULT_KWARGS_VAR = "kwargs"


def get_assert(output: Any, context: Mapping[str, Any]) -> dict[str, Any]:
    """promptfoo's assertion protocol: the output and the test's context (``vars``,
    ``prompt``, the assertion's ``config``) -> ``{pass, score, reason, ...}``."""
    config = context.get("config") or {}
    evidence_var = str(config.get("evidence_var", DEFAULT_EVIDENCE_VAR))
    threshold = config.get("threshold")
    calibration = config.get("calibration")
    point = operating_point(
        None if threshold is None else float(threshold),
        None if calibration is None else str(calibration),
    )
    variables = context.get("vars") or {}
    passages = evidence_items(
        variables.get(evidence_var), field=f"vars.{evidence_var}", holder="the test"
    )
    answer = output if isinstance(output, str) else ""
    result = asyncio.run(
        score_grounding(
            answer,
            record_id="promptfoo",
            question=str(context.get("prompt") or ""),
            evidence=passages,
        )
    )
    decision = decide(result, point)
    if decision is None:
        return {
            "pass": False,
            "score": 0.0,
            "reason": f"assay {CHECKER_VERSION}: no score: {failure(result)}",
        }
    return {
        "pass": decision.grounded,
        "score": 1.0 - decision.p_error,
        "reason": decision.explanation,
        "metadata": decision.metadata,
    }


def get_assert_instructions(output: Any, context: Mapping[str, Any]) -> dict[str, Any]:
    """IFEval's verifiable instructions of the test's vars checked on the output
    (``file://.../promptfoo.py:get_assert_instructions``): passes when every instruction is
    followed; its score is the share followed, its reason each instruction's verdict."""
    config = context.get("config") or {}
    ids_var = str(config.get("instructions_var", DEFAULT_INSTRUCTIONS_VAR))
    kwargs_var = str(config.get("kwargs_var", DEFAULT_KWARGS_VAR))
    mode = instruction_mode(config.get("mode", "strict"), "config.mode")
    variables = context.get("vars") or {}
    verdicts = check_instructions(
        _listed(variables.get(ids_var), f"vars.{ids_var}"),
        _listed(variables.get(kwargs_var), f"vars.{kwargs_var}"),
        prompt=str(context.get("prompt") or ""),
        response=output if isinstance(output, str) else "",
        mode=mode,
        fields=(f"vars.{ids_var}", f"vars.{kwargs_var}"),
    )
    followed = sum(verdict.followed for verdict in verdicts)
    return {
        "pass": followed == len(verdicts),
        "score": followed / len(verdicts),
        "reason": instructions_explanation(verdicts, mode),
        "metadata": {"instructions": [verdict.model_dump() for verdict in verdicts]},
    }


def _listed(value: Any, field: str) -> Any:
    """A var as the list it holds: promptfoo splits a list of strings in a test's vars into one
    test case per string, so the list may also come as JSON text (``'["a", "b"]'``)."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        raise ValueError(f"{field}: expected a list, or JSON text of one, got {value!r}") from None


def get_assert_judge(output: Any, context: Mapping[str, Any]) -> dict[str, Any]:
    """The output judged with assay's judge protocol (``file://.../promptfoo.py:get_assert_judge``,
    ``config: {judge: MODEL}``): passes on the verdict PASS; its score is ``overall_score / 8``,
    its reason the verdict and evidence; a reply that stays invalid, or a failed judge call,
    fails with the reason and score 0 (promptfoo has no "unscored")."""
    config = context.get("config") or {}
    judge = config.get("judge")
    if not isinstance(judge, str) or not judge:
        raise ValueError("config.judge: missing: the assay model that judges (openai/NAME, ...)")
    options = ModelOptions(base_url=config.get("base_url"))
    settings = JudgeRunConfig(max_attempts=int(config.get("max_attempts", 1)))
    variables = context.get("vars") or {}
    constraints = _listed(variables.get("constraints"), "vars.constraints")
    sample = text_sample(
        "promptfoo",
        str(context.get("prompt") or ""),
        output if isinstance(output, str) else "",
        target_model=str((context.get("provider") or {}).get("id") or "promptfoo"),
        held_to=held_to({**variables, "constraints": constraints}, "vars"),
    )
    try:
        record = asyncio.run(judged(sample, judge_model(judge, options), settings))
    except JudgeGaveNoScore as unscored:
        return {"pass": False, "score": 0.0, "reason": str(unscored)}
    return {
        "pass": passes(record),
        "score": judgment_score(record),
        "reason": judgment_explanation(record),
        "metadata": {
            **judgment_values(record),
            "verdict": record.classification.verdict,
            "attempts": record.attempt,
        },
    }
