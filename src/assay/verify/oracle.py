"""The optional oracle: a (stronger) model that labels generated answers.

Generated answers have no gold label. With ``--oracle MODEL`` each selected answer is labelled
by that model (``label_source="oracle"``), and so is the answer before a revision, so that the
answers a revision fixed or broke can be counted. An oracle reply that cannot be used leaves
the answer unlabelled, with the reason in ``oracle.failure``; it is never guessed.
"""

from __future__ import annotations

import asyncio

from ..model import CallFailure, GenerateConfig, Model
from .patterns.base import PatternOutcome
from .prompts import ORACLE_ERROR_TYPES, ORACLE_SCHEMA, oracle_messages
from .reply_object import reply_object
from .results import GoldLabel, OracleVerdict, oracle_label
from .types import GroundedQARecord

ORACLE_MAX_TOKENS = 256


async def judge_answer(record: GroundedQARecord, answer: str, oracle: Model) -> OracleVerdict:
    schema = ORACLE_SCHEMA if oracle.backend.supports_json_schema else None
    config = GenerateConfig(temperature=0.0, max_tokens=ORACLE_MAX_TOKENS, json_schema=schema)
    result = await oracle.generate(oracle_messages(record, answer), config)
    if isinstance(result, CallFailure):
        return OracleVerdict(model=oracle.name, failure=f"oracle call: {result.describe()}")
    return parse_verdict(result.text, oracle.name)


def parse_verdict(text: str, model: str) -> OracleVerdict:
    """The oracle's label from its reply, or an unlabelled verdict with the reason."""
    data = reply_object(text)
    if isinstance(data, str):
        return OracleVerdict(model=model, failure=f"oracle reply {data}")
    has_error = data.get("has_error")
    if not isinstance(has_error, bool):
        return OracleVerdict(model=model, failure="oracle reply has no boolean has_error")
    error_type = data.get("error_type")
    if error_type not in ORACLE_ERROR_TYPES:
        error_type = None if not has_error else "other"
    return OracleVerdict(
        model=model,
        has_error=has_error,
        error_type=error_type if has_error else "grounded",
        rationale=str(data.get("rationale", ""))[:2000],
    )


async def label_with_oracle(
    record: GroundedQARecord, outcome: PatternOutcome, oracle: Model
) -> tuple[GoldLabel, tuple[OracleVerdict | None, OracleVerdict | None]]:
    """The label of the selected answer, and the verdicts (selected, before revision)."""
    if outcome.selected_answer is None:
        return GoldLabel(), (None, None)
    before = outcome.revision.before.answer if outcome.revision_used and outcome.revision else None
    jobs = [judge_answer(record, outcome.selected_answer, oracle)]
    if before is not None:
        jobs.append(judge_answer(record, before, oracle))
    verdicts = await asyncio.gather(*jobs)
    after_verdict = verdicts[0]
    before_verdict = verdicts[1] if len(verdicts) > 1 else None
    return oracle_label(after_verdict), (after_verdict, before_verdict)
