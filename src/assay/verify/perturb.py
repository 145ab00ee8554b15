"""Error injection: labelled answers with known grounding errors, one per failure bucket.

From a record with a gold answer (with ``[cite:...]`` markers) and gold citations, each bucket
edits the gold answer in one place:

- ``grounded``: the gold answer unchanged (``gold_error=false``).
- ``unsupported_claim``: a sentence is added whose year and name occur in no evidence
  (cited to a gold snippet half of the time, so the citation looks plausible).
- ``wrong_citation``: a cited sentence now cites a snippet outside ``gold_citations`` whose
  words do not cover the sentence (lexical recall below :data:`WRONG_CITATION_MAX_RECALL`).
- ``overgeneralization``: a cited sentence is made broader than its evidence: a hedged
  quantifier becomes universal ("some" -> "all", "often" -> "always", "can" -> "will"), or a
  dated event becomes a habitual one ("in 1932" -> "every year").
- ``evidence_omission``: a qualifying clause ("..., if ...", "..., unless ...", "only ...") is
  dropped so the claim is no longer backed as stated; without such a clause, every citation
  is dropped, so no claim is backed by a cited snippet.
- ``contradiction``: a number of a cited sentence is changed to one that occurs in no
  evidence, or the sentence's verb is negated.

Labels are by construction (``gold_error`` true for every bucket but ``grounded``), the bucket
is ``error_type``, ``group`` is the source id so confidence intervals cluster by question, and
ids are ``<id>::<bucket>``. Every choice is seeded by ``(seed, id, bucket)``: the output does
not depend on record order. A bucket that cannot be built for a record is skipped and counted.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence

from pydantic import BaseModel, ConfigDict, Field

from ..data.citations import cited_ids, format_marker, strip_citations
from ..errors import ConfigError
from .checkers._lexical import features
from .claims import split_sentences
from .types import GroundedQARecord

BUCKETS = (
    "grounded",
    "unsupported_claim",
    "wrong_citation",
    "overgeneralization",
    "evidence_omission",
    "contradiction",
)
WRONG_CITATION_MAX_RECALL = 0.5

# White space before a marker or a clause is taken from where it starts: "\s*" tried from each
# character of a long run of it rescanned the run every time (quadratic).
_MARKER_RE = re.compile(r"(?:(?<!\s)\s+)?\[\s*cite\s*:[^\[\]]*\]", re.IGNORECASE)
_NUMBER_RE = re.compile(
    r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.,])\d+(?:\.\d+)?(?![\w])"
)
_AUXILIARY_RE = re.compile(
    r"\b(is|are|was|were|has|have|had|could|will|would|should|must|does|do|did)\b(?! not)"
    r"|\b(can)\b(?!not)"
)
_QUANTIFIERS = (
    # a hedged quantifier opening the sentence or a clause: "Some tardigrades" -> "All ..."
    (r"(?:^|(?<=[,;] ))(some|several|many|most|certain|a few)\b", "all"),
    (r"\b(often|usually|sometimes|typically|frequently|generally|occasionally|mostly)\b", "always"),
    (r"\b(can|may|might)\b", "will"),
    (r"\b(partly|partially|largely|mainly)\b", "entirely"),
)
_DATED_EVENT = re.compile(r"\b(?:in|during|since) (1[5-9]\d\d|20\d\d)\b")
_QUALIFYING_CLAUSE = re.compile(
    r"(?:,\s*|(?<!\s)\s+)?"
    r"\b(?:if|unless|provided that|as long as|only when|only if|except when|when)\b[^.;,]*",
    re.IGNORECASE,
)
_ONLY = re.compile(r"\bonly\s+", re.IGNORECASE)

_ADDED_CLAIMS = (
    "This was first documented in {year} by {name}.",
    "{name} confirmed these findings in a review published in {year}.",
    "The arrangement was revised in {year} after a report by {name}.",
    "According to {name}, the same result was reproduced in {year}.",
)
_INVENTED_NAMES = (
    "Halvorsen", "Okonkwo-Reyes", "Vasquez-Lindqvist", "Tamura Institute", "Brightwater Trust",
    "Delacroix", "Marwick Foundation", "Adeyemi", "Kowalczyk", "Ellsworth Commission",
)  # fmt: skip


class PerturbedAnswer(BaseModel):
    """One injected (or untouched) answer before it becomes a record."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bucket: str
    answer: str


class PerturbStats(BaseModel):
    """What was made and what was skipped, per bucket, with the reasons."""

    model_config = ConfigDict(extra="forbid")

    records: int = 0
    records_skipped: int = 0
    record_reasons: dict[str, int] = Field(default_factory=dict)
    made: dict[str, int] = Field(default_factory=dict)
    skipped: dict[str, dict[str, int]] = Field(default_factory=dict)

    def count_made(self, bucket: str) -> None:
        self.made[bucket] = self.made.get(bucket, 0) + 1

    def count_skip(self, bucket: str, reason: str) -> None:
        reasons = self.skipped.setdefault(bucket, {})
        reasons[reason] = reasons.get(reason, 0) + 1


class Skip(Exception):
    """This bucket cannot be built for this record (the message says why)."""


def perturb_records(
    records: Iterable[GroundedQARecord],
    *,
    seed: int = 0,
    buckets: Sequence[str] = BUCKETS,
    stats: PerturbStats | None = None,
) -> Iterator[GroundedQARecord]:
    """Labelled verify-only records, ``len(buckets)`` per usable input record at most.

    A bucket named twice is refused before any record is read: each bucket's record has the id
    ``<id>::<bucket>``, so a repeat would write every such id twice (``bench run`` refuses it).
    """
    repeated = sorted(bucket for bucket, count in Counter(buckets).items() if count > 1)
    if repeated:
        raise ConfigError(
            f"--buckets names {', '.join(repeated)} more than once: each bucket makes one "
            "record per input (id <id>::<bucket>), so a repeat would write duplicate ids",
            hint="give each bucket once",
        )
    return _perturbed(records, seed, buckets, stats if stats is not None else PerturbStats())


def _perturbed(
    records: Iterable[GroundedQARecord], seed: int, buckets: Sequence[str], stats: PerturbStats
) -> Iterator[GroundedQARecord]:
    for record in records:
        stats.records += 1
        reason = _unusable(record)
        if reason is not None:
            stats.records_skipped += 1
            stats.record_reasons[reason] = stats.record_reasons.get(reason, 0) + 1
            continue
        record = with_cited_gold_answer(record)
        for bucket in buckets:
            rng = random.Random(f"{seed}:{record.id}:{bucket}")
            try:
                answer = INJECTORS[bucket](record, rng)
            except Skip as skip:
                stats.count_skip(bucket, str(skip))
                continue
            stats.count_made(bucket)
            yield labelled_record(record, PerturbedAnswer(bucket=bucket, answer=answer))


def _unusable(record: GroundedQARecord) -> str | None:
    if not record.gold_answer.strip():
        return "no gold answer"
    if not record.gold_citations:
        return "no gold citations"
    same = record.answer is None or strip_citations(record.answer) == strip_citations(
        record.gold_answer
    )
    if record.gold_error is True and same:
        return "the gold answer itself is labelled as a grounding error"
    return None


def with_cited_gold_answer(record: GroundedQARecord) -> GroundedQARecord:
    """A one-sentence gold answer without markers cites its gold citations (as WiCE-style
    claim records do implicitly); longer answers are left as they are."""
    answer = record.gold_answer.strip()
    if cited_ids(answer) or len(split_sentences(answer)) != 1:
        return record
    ids = list(dict.fromkeys(g.evidence_id for g in record.gold_citations))
    body, end = (answer[:-1], answer[-1]) if answer[-1] in ".!?" else (answer, ".")
    return record.model_copy(update={"gold_answer": f"{body} {format_marker(ids)}{end}"})


def labelled_record(record: GroundedQARecord, perturbed: PerturbedAnswer) -> GroundedQARecord:
    return GroundedQARecord(
        id=f"{record.id}::{perturbed.bucket}",
        question=record.question,
        gold_answer=record.gold_answer,
        evidence=record.evidence,
        gold_citations=record.gold_citations,
        answer=perturbed.answer,
        citations=cited_ids(perturbed.answer),
        gold_error=perturbed.bucket != "grounded",
        error_type=perturbed.bucket,
        group=record.cluster,
    )


# ------------------------------------------------------------------------------- injectors


def grounded(record: GroundedQARecord, rng: random.Random) -> str:
    return record.gold_answer.strip()


def unsupported_claim(record: GroundedQARecord, rng: random.Random) -> str:
    evidence = features(" ".join(e.text for e in record.evidence))
    years = [y for y in range(1890, 2020) if str(y) not in evidence.numbers]
    names = [n for n in _INVENTED_NAMES if not (features(n).content & evidence.stems)]
    if not names:
        raise Skip("every invented name occurs in the evidence")
    added = rng.choice(_ADDED_CLAIMS).format(year=rng.choice(years), name=rng.choice(names))
    if rng.random() < 0.5:
        gold_id = rng.choice([g.evidence_id for g in record.gold_citations])
        added = f"{added[:-1]} {format_marker([gold_id])}."
    sentences = split_sentences(record.gold_answer)
    sentences.insert(rng.randint(1, len(sentences)), added)
    return " ".join(sentences)


def wrong_citation(record: GroundedQARecord, rng: random.Random) -> str:
    gold = {g.evidence_id for g in record.gold_citations}
    sentences = split_sentences(record.gold_answer)
    cited = [i for i, s in enumerate(sentences) if cited_ids(s)]
    if not cited:
        raise Skip("the gold answer has no citation marker")
    index = rng.choice(cited)
    wrong = _unsupporting_ids(record, strip_citations(sentences[index]), gold)
    if not wrong:
        raise Skip("no evidence outside gold_citations leaves the sentence unsupported")
    sentences[index] = _replace_markers(sentences[index], [rng.choice(wrong)])
    return " ".join(sentences)


def overgeneralization(record: GroundedQARecord, rng: random.Random) -> str:
    return _edit_one_sentence(record, rng, _broaden, "no hedge or date to broaden")


def evidence_omission(record: GroundedQARecord, rng: random.Random) -> str:
    try:
        return _edit_one_sentence(record, rng, _drop_qualifier, "no qualifying clause")
    except Skip:
        stripped = " ".join(_MARKER_RE.sub("", s) for s in split_sentences(record.gold_answer))
        if stripped == record.gold_answer.strip():
            raise Skip("no qualifying clause and no citation to drop") from None
        return stripped


def contradiction(record: GroundedQARecord, rng: random.Random) -> str:
    evidence_numbers = features(" ".join(e.text for e in record.evidence)).numbers

    def contradict(sentence: str, rng: random.Random) -> str | None:
        edits = [_change_number(sentence, rng, evidence_numbers), _negate(sentence)]
        usable = [e for e in edits if e is not None]
        return rng.choice(usable) if usable else None

    return _edit_one_sentence(record, rng, contradict, "no number or verb to contradict")


INJECTORS: dict[str, Callable[[GroundedQARecord, random.Random], str]] = {
    "grounded": grounded,
    "unsupported_claim": unsupported_claim,
    "wrong_citation": wrong_citation,
    "overgeneralization": overgeneralization,
    "evidence_omission": evidence_omission,
    "contradiction": contradiction,
}


# --------------------------------------------------------------------------------- helpers

SentenceEdit = Callable[[str, random.Random], str | None]


def _edit_one_sentence(
    record: GroundedQARecord, rng: random.Random, edit: SentenceEdit, reason: str
) -> str:
    """Apply ``edit`` to one sentence (cited sentences first, in seeded order)."""
    sentences = split_sentences(record.gold_answer)
    order = list(range(len(sentences)))
    rng.shuffle(order)
    order.sort(key=lambda i: not cited_ids(sentences[i]))
    for index in order:
        edited = edit(sentences[index], rng)
        if edited is not None and edited != sentences[index]:
            sentences[index] = edited
            return " ".join(sentences)
    raise Skip(reason)


def _unsupporting_ids(record: GroundedQARecord, sentence: str, gold: set[str]) -> list[str]:
    claim = features(sentence)
    out = []
    for item in record.evidence:
        if item.evidence_id in gold:
            continue
        seen = features(item.text)
        recall = len(claim.content & seen.stems) / max(1, len(claim.content))
        if recall < WRONG_CITATION_MAX_RECALL:
            out.append(item.evidence_id)
    return out


def _replace_markers(sentence: str, ids: Sequence[str]) -> str:
    plain = _MARKER_RE.sub("", sentence).rstrip()
    end = plain[-1] if plain and plain[-1] in ".!?" else ""
    body = plain[:-1] if end else plain
    return f"{body} {format_marker(ids)}{end or '.'}"


def _broaden(sentence: str, rng: random.Random) -> str | None:
    rules = list(_QUANTIFIERS)
    rng.shuffle(rules)
    for pattern, replacement in rules:
        edited = _sub_keep_case(pattern, replacement, sentence)
        if edited != sentence:
            return edited
    if _DATED_EVENT.search(sentence):
        return _DATED_EVENT.sub("every year", sentence, count=1)
    return None


def _sub_keep_case(pattern: str, replacement: str, text: str) -> str:
    def keep_case(match: re.Match[str]) -> str:
        first = match.group(0)[0]
        return replacement.capitalize() if first.isupper() else replacement

    return re.sub(pattern, keep_case, text, count=1, flags=re.IGNORECASE)


def _drop_qualifier(sentence: str, rng: random.Random) -> str | None:
    match = _QUALIFYING_CLAUSE.search(sentence)
    if match is not None and len(sentence[: match.start()].split()) >= 3:
        return _remove_span(sentence, match.start(), match.end())
    only = _ONLY.search(sentence)
    if only is not None:
        return _remove_span(sentence, only.start(), only.end())
    return None


def _remove_span(sentence: str, start: int, end: int) -> str:
    """``sentence`` without ``[start, end)``, keeping any citation marker inside the span."""
    kept = "".join(m.group(0) for m in _MARKER_RE.finditer(sentence[start:end]))
    return _tidy(f"{sentence[:start]}{kept} {sentence[end:]}")


def _change_number(sentence: str, rng: random.Random, taken: frozenset[str]) -> str | None:
    numbers = [m for m in _NUMBER_RE.finditer(sentence) if not _inside_marker(sentence, m.start())]
    if not numbers:
        return None
    match = rng.choice(numbers)
    original = match.group(0)
    value = float(original.replace(",", ""))
    for _ in range(20):
        new = _nearby(value, rng, is_int="." not in original)
        if new not in taken and new != original.replace(",", ""):
            shown = f"{int(new):,}" if "," in original else new
            return sentence[: match.start()] + shown + sentence[match.end() :]
    return None


def _inside_marker(sentence: str, offset: int) -> bool:
    return any(m.start() <= offset < m.end() for m in _MARKER_RE.finditer(sentence))


def _nearby(value: float, rng: random.Random, *, is_int: bool) -> str:
    if is_int and 1500 <= value <= 2100:  # a year: move it a few years
        return str(int(value) + rng.choice([-1, 1]) * rng.randint(2, 15))
    factor = rng.choice([0.5, 0.6, 0.75, 1.3, 1.5, 2.0, 3.0])
    new = value * factor
    return str(max(1, round(new))) if is_int else f"{new:.1f}"


def _negate(sentence: str) -> str | None:
    match = _AUXILIARY_RE.search(sentence)
    if match is None:
        return None
    negation = "not" if match.group(0).lower() == "can" else " not"
    return sentence[: match.end()] + negation + sentence[match.end() :]


def _tidy(text: str) -> str:
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)
    text = re.sub(r",\s*(\[cite:[^\]]*\])?\s*\.", r" \1.", text)
    return re.sub(r"\s{2,}", " ", text).replace(" .", ".").strip()


def stats_lines(stats: PerturbStats) -> list[str]:
    """A short human report of what was made and skipped."""
    why = "; ".join(f"{reason}: {n}" for reason, n in Counter(stats.record_reasons).most_common())
    lines = [
        f"{stats.records} records read, {stats.records_skipped} not usable"
        + (f" ({why})" if why else "")
    ]
    for bucket in BUCKETS:
        made = stats.made.get(bucket, 0)
        reasons = stats.skipped.get(bucket, {})
        if made or reasons:
            skipped = sum(reasons.values())
            why = "; ".join(f"{reason}: {n}" for reason, n in Counter(reasons).most_common())
            lines.append(
                f"  {bucket:<19} {made:>6} made"
                + (f", {skipped} skipped ({why})" if skipped else "")
            )
    return lines
