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
from .robustness import OutputCheck, RobustnessSummary, check_outputs, summarize_robustness
from .types import MODES, CheckResult, InstructionChecker, InstructionResult, Mode
from .variants import VARIANT_KINDS, prompt_variants
from .varied_set import vary_inputs

__all__ = [
    "CHECKERS",
    "MODES",
    "VARIANT_KINDS",
    "AgreementReport",
    "AgreementRow",
    "CheckResult",
    "CheckSummary",
    "CheckedFile",
    "InstructionChecker",
    "InstructionResult",
    "Mode",
    "OutputCheck",
    "ResponseCheck",
    "RobustnessSummary",
    "check_kwargs",
    "check_one",
    "check_outputs",
    "check_response",
    "check_responses_file",
    "covered_instruction_ids",
    "loose_variants",
    "measure_agreement",
    "prompt_variants",
    "render_markdown",
    "summarize",
    "summarize_robustness",
    "vary_inputs",
]
