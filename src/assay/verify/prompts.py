"""The prompts of the verifier patterns: answer, revise, critique, and the optional oracle.

Each system message starts with its task tag (``[assay:answer]`` ...), which is how the stub
backend recognises assay's own prompts and answers them plausibly without a model. The user
message lays the evidence out one snippet per line as ``title | text [cite:id]``, the form the
answer is asked to cite in and the form the stub responders read back.

Changing any text here changes :data:`PROMPTS_FINGERPRINT`, which a run records, so results
made with different prompts are never mixed in one run directory.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model import ChatMessage, JsonSchema, system, user
from ..runs import fingerprint
from .types import ClaimCheck, Evidence, GroundedQARecord

ANSWER_TAG = "[assay:answer]"
REVISE_TAG = "[assay:revise]"
CRITIQUE_TAG = "[assay:critique]"
ORACLE_TAG = "[assay:oracle]"

EVIDENCE_HEADER = "Evidence:"
QUESTION_HEADER = "Question:"
DRAFT_HEADER = "Draft answer:"
VERDICTS_HEADER = "Claim verdicts:"
SAMPLE_HEADER = "Sample"
ANSWER_HEADER = "Answer to check:"

ANSWER_SYSTEM = (
    f"{ANSWER_TAG} Answer the question using only the evidence below. End every sentence "
    "with the citation of the snippet that supports it, [cite:ID], as shown after each "
    "snippet. Do not add facts that the evidence does not state. If the evidence does not "
    "answer the question, say so. Answer in one to three short sentences."
)

REVISE_SYSTEM = (
    f"{REVISE_TAG} Rewrite the draft answer so that every sentence is supported by the "
    "evidence. Keep the supported sentences, each with a [cite:ID] marker naming a snippet "
    "that supports it. Remove every claim marked unsupported or uncertain unless the evidence "
    "clearly states it; fix citations that name the wrong snippet. Add nothing new. "
    "Reply with the revised answer only."
)

CRITIQUE_SYSTEM = (
    f"{CRITIQUE_TAG} You check one answer, the selected sample, against the evidence and "
    "against the other samples, which answer the same question independently: a statement "
    "the other samples do not repeat is likely made up. List the selected sample's "
    "contradictions (with the evidence or with the other samples), its claims that neither "
    "the evidence nor any other sample supports, and its sentences without a [cite:ID] "
    "citation. Then give error_probability: your probability (0 to 1) that the selected "
    "sample has a grounding error (an unsupported claim, a wrong citation or a contradiction "
    "with the evidence). Reply with one JSON object: "
    '{"contradictions": [...], "missing_citations": [...], "unsupported_claims": [...], '
    '"error_probability": 0.0, "rationale": "..."}'
)

ORACLE_SYSTEM = (
    f"{ORACLE_TAG} You are a careful annotator. Decide whether the answer has a grounding "
    "error: a claim the evidence does not support, a citation naming a snippet that does not "
    "support its sentence, a contradiction with the evidence, or an overgeneralisation beyond "
    "the evidence. Reply with one JSON object: "
    '{"has_error": true|false, "error_type": "grounded|unsupported_claim|wrong_citation|'
    'overgeneralization|evidence_omission|contradiction|other", "rationale": "..."}'
)

_STRING_LIST = {"type": "array", "items": {"type": "string"}}

CRITIQUE_SCHEMA = JsonSchema(
    name="assay_critique",
    schema={
        "type": "object",
        "properties": {
            "contradictions": _STRING_LIST,
            "missing_citations": _STRING_LIST,
            "unsupported_claims": _STRING_LIST,
            "error_probability": {"type": "number", "minimum": 0.0, "maximum": 1.0},
            "rationale": {"type": "string"},
        },
        "required": [
            "contradictions",
            "missing_citations",
            "unsupported_claims",
            "error_probability",
            "rationale",
        ],
        "additionalProperties": False,
    },
)

ORACLE_ERROR_TYPES = (
    "grounded",
    "unsupported_claim",
    "wrong_citation",
    "overgeneralization",
    "evidence_omission",
    "contradiction",
    "other",
)

ORACLE_SCHEMA = JsonSchema(
    name="assay_oracle",
    schema={
        "type": "object",
        "properties": {
            "has_error": {"type": "boolean"},
            "error_type": {"type": "string", "enum": list(ORACLE_ERROR_TYPES)},
            "rationale": {"type": "string"},
        },
        "required": ["has_error", "error_type", "rationale"],
        "additionalProperties": False,
    },
)


def evidence_block(evidence: Sequence[Evidence]) -> str:
    """One snippet per line, ``title | text [cite:id]``, whitespace collapsed.

    The marker comes *after* the text, as an answer should cite: small models that copy
    evidence sentences then copy a correct citation with them.
    """
    lines = [EVIDENCE_HEADER]
    for item in evidence:
        text = " ".join(item.text.split())
        title = " ".join((item.title or "").split())
        shown = f"{title} | {text}" if title else text
        lines.append(f"{shown} [cite:{item.evidence_id}]")
    return "\n".join(lines)


def _context(record: GroundedQARecord) -> str:
    return f"{evidence_block(record.evidence)}\n\n{QUESTION_HEADER} {record.question}"


def answer_messages(record: GroundedQARecord) -> list[ChatMessage]:
    # small models follow the last instruction best: restate the format with a real id
    example = record.evidence[0].evidence_id
    ask = (
        "Answer the question in one or two sentences, using only the evidence. End each "
        f"sentence with the citation of its snippet, like [cite:{example}].\nAnswer:"
    )
    return [system(ANSWER_SYSTEM), user(f"{_context(record)}\n\n{ask}")]


def verdict_lines(checks: Sequence[ClaimCheck]) -> str:
    """One line per claim: its label, the ids found to support it, the claim."""
    lines = []
    for check in checks:
        support = ",".join(check.supporting_ids) or "none"
        lines.append(f"- {check.label} (supported by: {support}): {check.claim.text}")
    return "\n".join(lines) if lines else "- (no claims found)"


def revise_messages(
    record: GroundedQARecord, draft: str, checks: Sequence[ClaimCheck]
) -> list[ChatMessage]:
    body = (
        f"{_context(record)}\n\n{DRAFT_HEADER}\n{draft}\n\n"
        f"{VERDICTS_HEADER}\n{verdict_lines(checks)}\n\nRevised answer:"
    )
    return [system(REVISE_SYSTEM), user(body)]


def critique_messages(
    record: GroundedQARecord, samples: Sequence[str], selected: int
) -> list[ChatMessage]:
    """The samples numbered from 1; ``selected`` is the 0-based index of the gated sample."""
    shown = "\n\n".join(f"{SAMPLE_HEADER} {i + 1}:\n{text}" for i, text in enumerate(samples))
    body = (
        f"{_context(record)}\n\n{shown}\n\nSelected sample: {selected + 1}\n"
        "Critique the selected sample as JSON:"
    )
    return [system(CRITIQUE_SYSTEM), user(body)]


def oracle_messages(record: GroundedQARecord, answer: str) -> list[ChatMessage]:
    body = f"{_context(record)}\n\n{ANSWER_HEADER}\n{answer}\n\nJudge the answer as JSON:"
    return [system(ORACLE_SYSTEM), user(body)]


PROMPTS_FINGERPRINT = fingerprint(
    {
        "answer": ANSWER_SYSTEM,
        "revise": REVISE_SYSTEM,
        "critique": CRITIQUE_SYSTEM,
        "oracle": ORACLE_SYSTEM,
        "critique_schema": CRITIQUE_SCHEMA.model_dump(by_alias=True),
        "oracle_schema": ORACLE_SCHEMA.model_dump(by_alias=True),
        "layout": [EVIDENCE_HEADER, QUESTION_HEADER, DRAFT_HEADER, VERDICTS_HEADER],
    }
)
