"""Seeded, plausible replies of the ``stub/`` backend to assay's verifier prompts.

Each function is a stub responder ``(messages, config, rng) -> str`` listed by task tag in
:data:`RESPONDERS`, which the benchmark hands to the stub provider. They read the prompt the
way a model would (the claim, the evidence lines) and answer from cheap text signals, with
seeded noise, so whole pipelines run without a model and still produce a mix of verdicts.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence

from ..model import ChatMessage, GenerateConfig, StubResponder
from .checkers.baseline import LexicalChecker
from .claims import split_claims
from .types import Claim, Evidence

_EVIDENCE_LINE = re.compile(r"^\[([^\]]+)\](?: \(cited\))? (.*)$")
_CLAIM_FLIP_RATE = 0.1  # how often the stub checker disagrees with the lexical signal


def _last_user(messages: Sequence[ChatMessage]) -> str:
    return next((m.content for m in reversed(messages) if m.role == "user"), "")


# ------------------------------------------------------------------------ [assay:claim_check]


def claim_check(messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random) -> str:
    """A verdict from lexical overlap of the claim with the evidence lines, flipped now and then."""
    prompt = _last_user(messages)
    claim_match = re.search(r"^Claim: (.*)$", prompt, re.MULTILINE)
    claim = Claim(text=claim_match.group(1) if claim_match else "")
    evidence = [
        Evidence(evidence_id=m.group(1), text=m.group(2))
        for line in prompt.splitlines()
        if (m := _EVIDENCE_LINE.match(line))
    ]
    if not evidence:
        return json.dumps(
            {"label": "unsupported", "supporting_ids": [], "rationale": "no evidence"}
        )
    verdict = LexicalChecker().check_sync(claim, evidence)
    p = verdict.p_supported or 0.0
    if config.temperature > 0:
        p += rng.gauss(0.0, 0.15)
    supported = p >= 0.5
    if rng.random() < _CLAIM_FLIP_RATE:
        supported = not supported
    ids = list(verdict.supporting_ids) or [evidence[0].evidence_id]
    return json.dumps(
        {
            "label": "supported" if supported else "unsupported",
            "supporting_ids": ids if supported else [],
            "rationale": f"stub: {verdict.rationale}",
        }
    )


def claim_label(messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random) -> str:
    """Yes/No for a single-pass label question (``[assay:claim_label]``), lexical and noisy."""
    prompt = _last_user(messages)
    claim_match = re.search(r"^Claim: (.*)$", prompt, re.MULTILINE)
    evidence = [
        Evidence(evidence_id=m.group(1), text=m.group(2))
        for line in prompt.splitlines()
        if (m := _EVIDENCE_LINE.match(line))
    ]
    if not claim_match or not evidence:
        return "No"
    verdict = LexicalChecker().check_sync(Claim(text=claim_match.group(1)), evidence)
    supported = (verdict.p_supported or 0.0) >= 0.5
    if rng.random() < _CLAIM_FLIP_RATE:
        supported = not supported
    return "Yes" if supported else "No"


# --------------------------------------------------- [assay:answer_label] [assay:answer_check]

_ANSWER_LINE = re.compile(r"^Answer: (.*)$", re.MULTILINE)


def _answer_verdict(messages: Sequence[ChatMessage], rng: random.Random) -> bool:
    """Whether the stub finds the whole answer grounded: lexical support of the answer against
    all the evidence and against the snippets it cites, flipped now and then."""
    prompt = _last_user(messages)
    match = _ANSWER_LINE.search(prompt)
    evidence = [
        Evidence(evidence_id=m.group(1), text=m.group(2))
        for line in prompt.split("\n\nQuestion:")[0].splitlines()
        if (m := _EVIDENCE_LINE.match(line))
    ]
    if match is None or not evidence:
        return False
    cited = set(re.findall(r"\[cite:([^\]]+)\]", match.group(1)))
    text = re.sub(r"\s*\[cite:[^\]]*\]", "", match.group(1))
    checker = LexicalChecker()
    grounded = (checker.check_sync(Claim(text=text), evidence).p_supported or 0.0) >= 0.5
    own = [e for e in evidence if e.evidence_id in cited]
    if grounded and own:
        grounded = (checker.check_sync(Claim(text=text), own).p_supported or 0.0) >= 0.5
    return grounded != (rng.random() < _CLAIM_FLIP_RATE)


def answer_label(
    messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random
) -> str:
    """Yes/No for the answer-level label question."""
    return "Yes" if _answer_verdict(messages, rng) else "No"


def answer_check(
    messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random
) -> str:
    """The answer-level question as JSON."""
    grounded = _answer_verdict(messages, rng)
    label = "supported" if grounded else "unsupported"
    return json.dumps({"label": label, "rationale": "stub: lexical support of the answer"})


# -------------------------------------------------------------------- [assay:claim_decompose]


def claim_decompose(
    messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random
) -> str:
    """The rule-based claims of the answer in the prompt, as the model decomposer's JSON."""
    answer = _last_user(messages).removeprefix("Answer:\n")
    claims = [{"text": c.text, "cited_ids": list(c.cited_ids)} for c in split_claims(answer)]
    return json.dumps({"claims": claims})


# ------------------------------------------ [assay:answer] [assay:revise] [assay:critique] ...
# Seeded stand-ins for [assay:answer], [assay:revise], [assay:critique] and [assay:oracle]:
# they read the evidence back from the prompt layout of assay.verify.prompts, so a stub run
# produces grounded answers, answers with an unsupported sentence and answers citing the wrong
# snippet, and critiques/oracle labels that react to them.

_PAT_EVIDENCE_LINE = re.compile(r"^(.*) \[cite:([^\]]+)\]$")  # "title | text [cite:id]"
_PAT_WORD = re.compile(r"[a-z0-9]+")
_PAT_STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        "a an the of in on at to for and or but is are was were be by with as that this it its "
        "from has have had not no",
    )
)
_PAT_INVENTED = (
    "It was later expanded to twice its original size in 1987.",
    "Most experts consider it the largest of its kind in the world.",
    "This was confirmed by a national survey published in 2004.",
    "The figure has since doubled according to official estimates.",
)


def _stub_evidence(text: str) -> dict[str, str]:
    """Evidence id -> snippet text, read from the ``Evidence:`` block of a prompt."""
    found: dict[str, str] = {}
    in_block = False
    for line in text.splitlines():
        if line.strip() == "Evidence:":
            in_block = True
        elif in_block and (match := _PAT_EVIDENCE_LINE.match(line)):
            found[match.group(2)] = match.group(1).split(" | ", 1)[-1]
        elif in_block and not line.strip():
            break
    return found


def _stub_section(text: str, header: str, end: str) -> str:
    start = text.find(header)
    if start < 0:
        return ""
    start += len(header)
    stop = text.find(end, start)
    return text[start : stop if stop >= 0 else len(text)].strip()


def _stub_words(text: str) -> set[str]:
    text = re.sub(r"\[cite:[^\]]*\]", " ", text.lower())
    return {w for w in _PAT_WORD.findall(text) if w not in _PAT_STOPWORDS}


def _stub_supported(sentence: str, snippet: str) -> bool:
    words = _stub_words(sentence)
    return bool(words) and len(words & _stub_words(snippet)) / len(words) >= 0.75


def _stub_first_sentence(text: str) -> str:
    match = re.search(r"(.+?[.!?])(\s|$)", text)
    sentence = (match.group(1) if match else text).strip()
    return sentence if sentence.endswith((".", "!", "?")) else sentence + "."


def _stub_sentences(answer: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?\]])\s+(?=[A-Z])", answer) if s.strip()]


def _stub_user_text(messages: Sequence[ChatMessage]) -> str:
    return "\n".join(m.content for m in messages if m.role == "user")


def answer(messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random) -> str:
    """Cite one or two snippets; sometimes (seeded) add an invented or misattributed sentence."""
    prompt = _stub_user_text(messages)
    evidence = _stub_evidence(prompt)
    if not evidence:
        return "The evidence does not answer the question."
    question = _stub_words(prompt.rsplit("Question:", 1)[-1])
    ranked = sorted(evidence, key=lambda i: (-len(question & _stub_words(evidence[i])), i))
    chosen = ranked[: rng.choice((1, 1, 2))]
    ids = list(evidence)
    draw = rng.random()
    parts = []
    for evidence_id in chosen:
        cite = evidence_id
        if draw < 0.12 and len(ids) > 1:  # misattribution: the right text, the wrong snippet
            cite = rng.choice([i for i in ids if i != evidence_id])
        parts.append(f"{_stub_first_sentence(evidence[evidence_id])} [cite:{cite}]")
    if 0.12 <= draw < 0.35:  # a plausible sentence no snippet states
        parts.append(f"{rng.choice(_PAT_INVENTED)} [cite:{rng.choice(chosen)}]")
    return " ".join(parts)


def revise(messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random) -> str:
    """Keep the claims marked supported, cited by the snippets found to support them."""
    prompt = _stub_user_text(messages)
    verdicts = _stub_section(prompt, "Claim verdicts:", "Revised answer:")
    kept = []
    for line in verdicts.splitlines():
        match = re.match(r"- supported \(supported by: ([^)]*)\): (.*)$", line.strip())
        if match and match.group(1) != "none":
            kept.append(f"{match.group(2)} [cite:{match.group(1).split(',')[0]}]")
    if kept:
        return " ".join(kept)
    evidence = _stub_evidence(prompt)
    if not evidence:
        return "The evidence does not answer the question."
    first = next(iter(evidence))
    return f"{_stub_first_sentence(evidence[first])} [cite:{first}]"


def _stub_findings(text: str, evidence: dict[str, str]) -> tuple[list[str], list[str]]:
    """(sentences without a citation, sentences no cited snippet supports)."""
    missing, unsupported = [], []
    for sentence in _stub_sentences(text):
        cited = re.findall(r"\[cite:([^\]]*)\]", sentence)
        if not cited:
            missing.append(sentence)
        snippets = [evidence.get(i.strip(), "") for c in cited for i in c.split(",")]
        if not any(_stub_supported(sentence, s) for s in snippets):
            unsupported.append(sentence)
    return missing, unsupported


def critique(messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random) -> str:
    """Flag uncited and unsupported sentences of the selected sample; a noisy error estimate."""
    prompt = _stub_user_text(messages)
    evidence = _stub_evidence(prompt)
    pattern = r"Sample \d+:\n(.*?)(?=\n\nSample \d+:|\n\nSelected sample:|$)"
    bodies = [b.strip() for b in re.findall(pattern, prompt, re.DOTALL)]
    match = re.search(r"Selected sample: (\d+)", prompt)
    chosen = int(match.group(1)) if match else 1
    selected = bodies[min(chosen, len(bodies)) - 1] if bodies else ""
    missing, unsupported = _stub_findings(selected, evidence)
    numbers = set(re.findall(r"\b\d+\b", re.sub(r"\[cite:[^\]]*\]", "", selected)))
    others = " ".join(b for i, b in enumerate(bodies) if i != chosen - 1)
    contradictions = [
        f"only the selected sample says {n}" for n in sorted(numbers) if n not in others
    ]
    p_error = 0.1 + 0.5 * bool(unsupported) + 0.15 * bool(missing) + 0.1 * bool(contradictions)
    p_error = min(1.0, max(0.0, p_error + rng.uniform(-0.08, 0.08)))
    reply = {
        "contradictions": contradictions if others else [],
        "missing_citations": missing,
        "unsupported_claims": unsupported,
        "error_probability": round(p_error, 3),
        "rationale": "stub critique: lexical support of each cited sentence",
    }
    return json.dumps(reply)


def oracle(messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random) -> str:
    """A lexical annotator: an error when no cited snippet supports a sentence."""
    prompt = _stub_user_text(messages)
    checked = _stub_section(prompt, "Answer to check:", "Judge the answer as JSON:")
    missing, unsupported = _stub_findings(checked, _stub_evidence(prompt))
    has_error = bool(unsupported)
    reply = {
        "has_error": has_error,
        "error_type": "unsupported_claim" if has_error else "grounded",
        "rationale": f"{len(unsupported)} unsupported, {len(missing)} uncited sentence(s)",
    }
    return json.dumps(reply)


#: task tag -> responder; passed to the stub provider by the benchmark (ModelOptions).
RESPONDERS: dict[str, StubResponder] = {
    "claim_check": claim_check,
    "claim_label": claim_label,
    "claim_decompose": claim_decompose,
    "answer_label": answer_label,
    "answer_check": answer_check,
    "answer": answer,
    "revise": revise,
    "critique": critique,
    "oracle": oracle,
}
