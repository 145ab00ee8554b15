"""Deterministic checks of verifiable instructions, keyed by IFEval's instruction ids.

>>> from assay.instructions import check_response
>>> [r.followed for r in check_response(["punctuation:no_comma"], [{}], "prompt", "No commas.")]
[True]
"""

from .agreement import AgreementReport, AgreementRow, measure_agreement, render_markdown
from .batch import CheckedFile, CheckSummary, ResponseCheck, check_responses_file, summarize
from .registry import (
    CHECKERS,
    check_kwargs,
    check_one,
    check_response,
    covered_instruction_ids,
    loose_variants,
)
from .types import MODES, CheckResult, InstructionChecker, InstructionResult, Mode

__all__ = [
    "CHECKERS",
    "MODES",
    "AgreementReport",
    "AgreementRow",
    "CheckResult",
    "CheckSummary",
    "CheckedFile",
    "InstructionChecker",
    "InstructionResult",
    "Mode",
    "ResponseCheck",
    "check_kwargs",
    "check_one",
    "check_response",
    "check_responses_file",
    "covered_instruction_ids",
    "loose_variants",
    "measure_agreement",
    "render_markdown",
    "summarize",
]
