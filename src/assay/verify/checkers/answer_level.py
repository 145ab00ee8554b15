"""Answer-level verifiers: one verdict on a whole answer's faithfulness and attribution.

``best_of_n`` scores each candidate with one of these, not with claim decomposition (which is
``entailment``'s mechanism). Each returns a :class:`~assay.verify.types.ClaimCheck` whose claim
is the whole answer; ``p_supported`` is the probability that the answer is grounded, so
``p_error = 1 - p_supported``.

- :class:`SinglePassAnswerVerifier` (a model with logprobs): one label question
  ("is every sentence supported by the evidence and every citation right? Yes or No"),
  ``max_tokens=1``; ``p = P(Yes) / (P(Yes) + P(No))`` from the next-token distribution, formed
  as in :mod:`.single_pass` (``probability_source`` ``next_token`` or ``next_token_bounded``).
  One call per answer.
- :class:`JsonAnswerVerifier` (a model without logprobs): the same question answered as JSON
  ``{"label": "supported"|"unsupported", "rationale": ...}``; the stated label gives
  ``p_supported`` 0.9 / 0.1 (``probability_source = "stated"``). One call per answer.
- :class:`CheckerAnswerVerifier` (the model-free checkers ``lexical`` and ``learned``): the
  claim checker applied once to the whole answer as one claim against all the evidence and,
  when the answer cites snippets none of which the checker found supporting, once more against
  the cited snippets together; ``p_supported`` is the lower of the two. No claim splitting: the
  learned checker still takes the weakest of the answer's *sentences* (its own rule against
  padding), but all against the whole evidence and the union of the cited snippets, where
  ``entailment`` checks each clause against its own citations.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ...model import CallFailure, ChatMessage, GenerateConfig, Model, system, user
from ..types import Claim, ClaimCheck, ClaimChecker, ClaimLabel, GroundedQARecord, band_label
from .model import parse_verdict
from .single_pass import TOP_LOGPROBS, evidence_text, next_token_probability

ANSWER_LABEL_TAG = "[assay:answer_label]"
ANSWER_CHECK_TAG = "[assay:answer_check]"
STATED_P = {"supported": 0.9, "unsupported": 0.1}
_RULE = (
    "An answer is grounded only if the evidence states or directly implies every sentence "
    "of it, including every number, name and date, and every [cite:ID] names a snippet that "
    "supports its sentence."
)
LABEL_SYSTEM = (
    f"{ANSWER_LABEL_TAG} You check whether an answer is grounded in evidence. {_RULE} "
    "Answer with one word: Yes if it is grounded, No otherwise."
)
JSON_SYSTEM = (
    f"{ANSWER_CHECK_TAG} You check whether an answer is grounded in evidence. {_RULE} "
    'Reply with JSON only: {"label": "supported" or "unsupported", '
    '"rationale": "one short sentence"}'
)
ANSWER_USER = (
    "Evidence:\n{evidence}\n\nQuestion: {question}\n\nAnswer: {answer}\n\n"
    "Is the answer grounded in the evidence, with correct citations?"
)


@dataclass(frozen=True)
class AnswerLevelConfig:
    seed: int = 0
    max_evidence_chars: int = 6000
    json_max_tokens: int = 120
    supported_above: float = 0.6
    unsupported_below: float = 0.4

    def describe(self) -> dict[str, object]:
        """Everything that decides a verdict, for the run's fingerprint."""
        return {
            **asdict(self),
            "label_system": LABEL_SYSTEM,
            "json_system": JSON_SYSTEM,
            "user": ANSWER_USER,
        }


def answer_messages(
    system_text: str, answer: Claim, record: GroundedQARecord, max_chars: int
) -> list[ChatMessage]:
    """Evidence first (a shared prefix for the candidates of one record), then the answer."""
    body = ANSWER_USER.format(
        evidence=evidence_text(record.evidence, max_chars),
        question=" ".join(record.question.split()),
        answer=_shown(answer),
    )
    return [system(system_text), user(body)]


def _shown(answer: Claim) -> str:
    """The answer as the verifier reads it: its text and the ids it cites."""
    cites = "".join(f" [cite:{i}]" for i in answer.cited_ids)
    return f"{answer.text}{cites}"


def _band(p: float, config: AnswerLevelConfig) -> ClaimLabel:
    return band_label(p, config.supported_above, config.unsupported_below)


def _verdict(
    answer: Claim, p: float, source: str, checker: str, rationale: str, config: AnswerLevelConfig
) -> ClaimCheck:
    label = _band(p, config)
    # a whole-answer verdict names no snippet: a grounded answer is supported by what it cites
    supporting = answer.cited_ids if label == "supported" else ()
    return ClaimCheck(
        claim=answer,
        label=label,
        p_supported=round(p, 6),
        probability_source=source,
        supporting_ids=supporting,
        cited_supporting_ids=supporting,
        checker=checker,
        rationale=rationale,
    )


class SinglePassAnswerVerifier:
    """One next-token Yes/No question per answer (see the module doc)."""

    def __init__(self, model: Model, config: AnswerLevelConfig | None = None) -> None:
        self.model = model
        self.config = config or AnswerLevelConfig()
        self.name = f"answer:{model.name}"

    async def verify(self, answer: Claim, record: GroundedQARecord) -> ClaimCheck:
        messages = answer_messages(LABEL_SYSTEM, answer, record, self.config.max_evidence_chars)
        config = GenerateConfig(
            temperature=0.0,
            max_tokens=1,
            seed=self.config.seed,
            logprobs=True,
            top_logprobs=TOP_LOGPROBS,
            logprob_tokens=("Yes", "No"),
        )
        result = await self.model.generate(messages, config)
        if isinstance(result, CallFailure):
            return ClaimCheck.failed(answer, self.name, f"call failed: {result.describe()}")
        p, source = next_token_probability(result, "Yes", "No")
        if p is None:
            reason = f"no probability: {source} (replied {result.text!r})"
            return ClaimCheck.failed(answer, self.name, reason)
        rationale = f"next token {result.text!r}; answer-level label question"
        return _verdict(answer, p, source, self.name, rationale, self.config)


class JsonAnswerVerifier:
    """The answer-level question answered as JSON, where the backend gives no logprobs."""

    def __init__(self, model: Model, config: AnswerLevelConfig | None = None) -> None:
        self.model = model
        self.config = config or AnswerLevelConfig()
        self.name = f"answer:{model.name}"

    async def verify(self, answer: Claim, record: GroundedQARecord) -> ClaimCheck:
        messages = answer_messages(JSON_SYSTEM, answer, record, self.config.max_evidence_chars)
        config = GenerateConfig(
            temperature=0.0, max_tokens=self.config.json_max_tokens, seed=self.config.seed
        )
        result = await self.model.generate(messages, config)
        if isinstance(result, CallFailure):
            return ClaimCheck.failed(answer, self.name, f"call failed: {result.describe()}")
        verdict = parse_verdict(result.text)
        if isinstance(verdict, str):
            return ClaimCheck.failed(answer, self.name, f"unparsable reply: {verdict}")
        p = STATED_P[verdict.label]
        return _verdict(answer, p, "stated", self.name, verdict.rationale, self.config)


class CheckerAnswerVerifier:
    """A claim checker applied to the whole answer as one claim (see the module doc)."""

    def __init__(self, checker: ClaimChecker) -> None:
        self.checker = checker
        self.name = f"answer:{checker.name}"

    async def verify(self, answer: Claim, record: GroundedQARecord) -> ClaimCheck:
        check = await self.checker.check(answer, record.evidence)
        check = check.model_copy(update={"checker": self.name})
        if check.failure is not None or check.p_supported is None:
            return check
        cited = [e for e in record.evidence if e.evidence_id in answer.cited_ids]
        if not cited or check.cited_supporting_ids or check.label == "unsupported":
            return check
        against_cited = await self.checker.check(answer, cited)
        if against_cited.failure is not None:
            return check.model_copy(update={"failure": against_cited.failure})
        if against_cited.p_supported is None or against_cited.p_supported >= check.p_supported:
            return check
        # the verdict now rests on the cited snippets, and so does its explanation
        return check.model_copy(
            update={
                "label": against_cited.label,
                "p_supported": against_cited.p_supported,
                "rationale": f"against the cited snippets: {against_cited.rationale}",
                "evidence_window": against_cited.evidence_window,
                "deciding_features": against_cited.deciding_features,
                "missing_words": against_cited.missing_words,
            }
        )
