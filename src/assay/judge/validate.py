"""Classify a judge reply: valid, or invalid with every flag that applies and the checks that
fired. :func:`classify` never raises.

What is checked, and the flag a failure carries:

- the reply is exactly one JSON object, nothing around it (PROTOCOL_VIOLATION for prose, code
  fences, several objects, a non-object, duplicate keys; a salvaged object is recorded and
  still checked so that every applicable flag is found, but the evaluation is invalid);
- JSON syntax, required fields, types (UNPARSABLE_OUTPUT);
- rubric and scale not altered: no unknown keys, scores in {0,1,2}, a known verdict and method
  (PROTOCOL_VIOLATION), and at least one evidence item per dimension (PROTOCOL_VIOLATION);
- meta identifiers present and equal to the sample's, method matching judge == target
  (INCOMPLETE_COVERAGE);
- refusal, empty reply, no scores, an object about something else (JUDGE_REFUSAL_OR_EVASION);
- overall_score == sum of D1-D4, verdict == what the thresholds give, fine scores that
  aggregate to D1-D4 (INTERNAL_INCONSISTENCY);
- each evidence quote occurs in the evaluated output after normalisation (EVIDENCE_NOT_FOUND;
  invalidating unless the protocol's evidence policy says otherwise).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from .evidence import quote_located
from .findings import Check, Findings
from .protocol import (
    ALL_FLAGS,
    DIMENSION_KEYS,
    EVIDENCE_NOT_FOUND,
    INCOMPLETE_COVERAGE,
    INTERNAL_INCONSISTENCY,
    JUDGE_REFUSAL_OR_EVASION,
    META_IDENTIFIERS,
    METHODS,
    PROTOCOL_VIOLATION,
    SCORE_VALUES,
    UNPARSABLE_OUTPUT,
    VERDICTS,
    EvidencePolicy,
    Protocol,
    verdict_for,
)
from .reply_json import parse_reply

ParseOutcome = Literal["clean", "salvaged", "none"]
REQUIRED_KEYS = ("meta", "scores", "verdict", "flags", "evidence")
SCORE_KEYS = (*DIMENSION_KEYS, "overall_score")
EVIDENCE_KEYS = ("dimension", "quote", "reason")
# ASCII digits only: \d would also take full-width and other Unicode digits.
DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# The judge prompt's format example gives every value as a description in angle brackets
# ("<why they support this score>"). A reason that is nothing but such a description was
# copied from the example, not written: it explains no score.
PLACEHOLDER = re.compile(r"<[^<>]*>")
REFUSAL = re.compile(
    r"\b(I\s*(cannot|can't|can not|won't|will not|am unable|'m unable|am not able|refuse)"
    r"|I'm sorry|I am sorry|as an AI|unable to (evaluate|score|judge|assess|rate))",
    re.IGNORECASE,
)


class EvidenceItem(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    dimension: str
    quote: str
    reason: str
    located: bool


class Classification(BaseModel):
    """The outcome of validating one reply. Scores are only filled when the reply is valid."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    valid: bool
    flags: tuple[str, ...]
    checks: tuple[Check, ...]
    parse: ParseOutcome
    objects_found: int = 0
    parsed: dict[str, Any] | None = None  # the (salvaged) object, kept for the record
    scores: dict[str, int] | None = None
    fine_scores: dict[str, int] | None = None
    overall_score: int | None = None
    verdict: str | None = None
    expected_verdict: str | None = None
    judge_flags: tuple[str, ...] = ()
    evidence: tuple[EvidenceItem, ...] = ()
    notes: str | None = None
    warnings: tuple[str, ...] = ()

    @property
    def failed_checks(self) -> tuple[Check, ...]:
        return tuple(check for check in self.checks if not check.passed)

    def problems(self) -> list[str]:
        return [f"{c.name}: {c.detail}" if c.detail else c.name for c in self.failed_checks]


def classify(
    reply: str, expected_meta: Mapping[str, str], output_text: str, protocol: Protocol
) -> Classification:
    """Validate ``reply`` against the protocol and the sample. Never raises."""
    findings = Findings()
    try:
        return _classify(reply, expected_meta, output_text, protocol, findings)
    except Exception as error:  # a validator bug must not lose the reply: record it as invalid
        findings.fail("validator_internal_error", UNPARSABLE_OUTPUT, repr(error)[:300])
        return Classification(
            valid=False, flags=findings.flags(), checks=tuple(findings.checks), parse="none"
        )


def _classify(
    reply: str,
    expected_meta: Mapping[str, str],
    output_text: str,
    protocol: Protocol,
    findings: Findings,
) -> Classification:
    objects, outside = parse_reply(reply, findings)
    parse: ParseOutcome = "none"
    obj: dict[str, Any] | None = None
    if objects:
        obj = objects[0]
        parse = "clean" if findings.flags() == () else "salvaged"
    fields: dict[str, Any] = {}
    if obj is not None:
        fields = _check_object(obj, expected_meta, output_text, protocol, findings)
    findings.check(
        "no_refusal_language",
        not REFUSAL.search(outside),
        JUDGE_REFUSAL_OR_EVASION,
        "the reply declines or apologises",
    )
    flags = findings.flags()
    blocking = _blocking_flags(flags, protocol.evidence)
    valid = not blocking
    return Classification(
        valid=valid,
        flags=flags,
        checks=tuple(findings.checks),
        parse=parse,
        objects_found=len(objects),
        parsed=obj,
        warnings=tuple(findings.warnings),
        **(fields if valid else _unscored(fields)),
    )


def _blocking_flags(flags: tuple[str, ...], policy: EvidencePolicy) -> tuple[str, ...]:
    if policy.unlocatable_invalidates:
        return flags
    return tuple(flag for flag in flags if flag != EVIDENCE_NOT_FOUND)


def _unscored(fields: dict[str, Any]) -> dict[str, Any]:
    """An invalid evaluation keeps what the judge said for the record, but no scores."""
    kept = dict(fields)
    for key in ("scores", "fine_scores", "overall_score", "verdict"):
        kept.pop(key, None)
    return kept


# ---------------------------------------------------------------- fields


def _check_object(
    obj: dict[str, Any],
    expected_meta: Mapping[str, str],
    output_text: str,
    protocol: Protocol,
    findings: Findings,
) -> dict[str, Any]:
    _check_keys(obj, protocol, findings)
    _check_meta(obj.get("meta"), expected_meta, findings)
    scores = _check_scores(obj.get("scores"), findings)
    overall = _check_overall(obj.get("scores"), findings)
    _check_not_null(obj, ("verdict", "flags"), findings)
    verdict, expected = _check_verdict(obj.get("verdict"), scores, protocol, findings)
    fine = _check_fine_scores(obj.get("fine_scores"), scores, protocol, findings)
    evidence = _check_evidence(obj.get("evidence"), output_text, protocol, findings)
    return {
        "scores": scores,
        "fine_scores": fine,
        "overall_score": overall,
        "verdict": verdict,
        "expected_verdict": expected,
        "judge_flags": _check_judge_flags(obj.get("flags"), findings),
        "evidence": evidence,
        "notes": _check_notes(obj.get("notes"), findings),
    }


def _check_not_null(obj: dict[str, Any], keys: tuple[str, ...], findings: Findings) -> None:
    """A required field given as null is of the wrong type (a string, a list), not absent."""
    for key in keys:
        if key in obj and obj[key] is None:
            findings.fail(f"{key}_type", UNPARSABLE_OUTPUT, f"{key} is null")


def _check_keys(obj: dict[str, Any], protocol: Protocol, findings: Findings) -> None:
    allowed = {*REQUIRED_KEYS, "notes"} | ({"fine_scores"} if protocol.finer_rubric else set())
    required = [*REQUIRED_KEYS, *(["fine_scores"] if protocol.finer_rubric else [])]
    missing = [key for key in required if key not in obj]
    unknown = sorted(set(obj) - allowed)
    findings.check("required_fields", not missing, UNPARSABLE_OUTPUT, f"missing {missing}")
    findings.check("no_unknown_fields", not unknown, PROTOCOL_VIOLATION, f"unknown {unknown}")
    on_topic = any(key in obj for key in ("scores", "verdict", "evidence"))
    findings.check("on_topic", on_topic, JUDGE_REFUSAL_OR_EVASION, "no scores, verdict or evidence")


def _check_meta(meta: Any, expected: Mapping[str, str], findings: Findings) -> None:
    if meta is None:
        findings.fail("meta_identifiers", INCOMPLETE_COVERAGE, "no meta object")
        return
    if not isinstance(meta, dict):
        findings.fail("meta_type", UNPARSABLE_OUTPUT, "meta is not an object")
        findings.fail("meta_identifiers", INCOMPLETE_COVERAGE, "no meta object")
        return
    bad = [
        key
        for key in ("judge_model", *META_IDENTIFIERS)
        if key in expected and meta.get(key) != expected[key]
    ]
    findings.check(
        "meta_identifiers", not bad, INCOMPLETE_COVERAGE, f"missing or not matching: {bad}"
    )
    _check_method(meta.get("method"), expected.get("method"), findings)
    _check_timestamp(meta.get("timestamp"), expected.get("timestamp"), findings)
    extra = sorted(set(meta) - {"judge_model", "method", "timestamp", *META_IDENTIFIERS})
    findings.check("meta_no_unknown_fields", not extra, PROTOCOL_VIOLATION, f"unknown {extra}")


def _check_timestamp(stamp: Any, expected: str | None, findings: Findings) -> None:
    """A date in the protocol's form and, like the other identifiers, the one the request
    carried: a judge that writes another day has not copied what it was given."""
    stamp_ok = isinstance(stamp, str) and is_protocol_date(stamp)
    findings.check("meta_timestamp", stamp_ok, UNPARSABLE_OUTPUT, f"timestamp {stamp!r}")
    if stamp_ok and expected is not None:
        findings.check(
            "timestamp_matches",
            stamp == expected,
            INCOMPLETE_COVERAGE,
            f"timestamp {stamp} but the request carried {expected}",
        )


def is_protocol_date(text: str) -> bool:
    """``YYYY-MM-DD`` in ASCII digits, and a real calendar date."""
    if not DATE.fullmatch(text):
        return False
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _check_method(method: Any, expected: str | None, findings: Findings) -> None:
    if not isinstance(method, str):
        findings.fail("method_present", UNPARSABLE_OUTPUT, f"method {method!r}")
        return
    if not findings.check(
        "method_known", method in METHODS, PROTOCOL_VIOLATION, f"unknown method {method!r}"
    ):
        return
    if expected is not None:
        findings.check(
            "method_matches", method == expected, INCOMPLETE_COVERAGE, f"{method} != {expected}"
        )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_scores(scores: Any, findings: Findings) -> dict[str, int] | None:
    """The four dimension scores when all are integers in the scale, else None."""
    if scores is None or (isinstance(scores, dict) and all(v is None for v in scores.values())):
        findings.fail("has_scores", JUDGE_REFUSAL_OR_EVASION, "no scores given")
    if scores is None:
        return None
    if not isinstance(scores, dict):
        findings.fail("scores_type", UNPARSABLE_OUTPUT, "scores is not an object")
        return None
    missing = [key for key in SCORE_KEYS if key not in scores]
    findings.check("scores_complete", not missing, UNPARSABLE_OUTPUT, f"missing {missing}")
    unknown = sorted(set(scores) - set(SCORE_KEYS))
    findings.check("rubric_unaltered", not unknown, PROTOCOL_VIOLATION, f"unknown {unknown}")
    present = {key: scores[key] for key in DIMENSION_KEYS if key in scores}
    untyped = [key for key, value in present.items() if not _is_int(value)]
    findings.check("scores_integers", not untyped, UNPARSABLE_OUTPUT, f"not integers: {untyped}")
    off_scale = [k for k, v in present.items() if _is_int(v) and v not in SCORE_VALUES]
    findings.check("scale_unaltered", not off_scale, PROTOCOL_VIOLATION, f"off scale: {off_scale}")
    complete = len(present) == len(DIMENSION_KEYS) and not untyped and not off_scale
    return {key: int(value) for key, value in present.items()} if complete else None


def _check_overall(raw: Any, findings: Findings) -> int | None:
    if not isinstance(raw, dict) or "overall_score" not in raw:
        return None
    overall = raw["overall_score"]
    if not findings.check(
        "overall_integer", _is_int(overall), UNPARSABLE_OUTPUT, f"overall {overall!r}"
    ):
        return None
    dims: list[Any] = [raw.get(key) for key in DIMENSION_KEYS]
    if all(_is_int(value) for value in dims):
        total: int = sum(dims)
        findings.check(
            "overall_is_sum", overall == total, INTERNAL_INCONSISTENCY, f"{overall} != {total}"
        )
    return int(overall)


def _check_verdict(
    verdict: Any, scores: dict[str, int] | None, protocol: Protocol, findings: Findings
) -> tuple[str | None, str | None]:
    expected = None if scores is None else verdict_for(scores, protocol.thresholds)
    if verdict is None:
        return None, expected
    if not findings.check(
        "verdict_type", isinstance(verdict, str), UNPARSABLE_OUTPUT, f"{verdict!r}"
    ):
        return None, expected
    if not findings.check(
        "verdict_known", verdict in VERDICTS, PROTOCOL_VIOLATION, f"unknown verdict {verdict!r}"
    ):
        return None, expected
    if expected is not None:
        findings.check(
            "verdict_follows_thresholds",
            verdict == expected,
            INTERNAL_INCONSISTENCY,
            f"{verdict} but the thresholds give {expected}",
        )
    return verdict, expected


def _check_fine_scores(
    fine: Any, scores: dict[str, int] | None, protocol: Protocol, findings: Findings
) -> dict[str, int] | None:
    rubric = protocol.finer_rubric
    if rubric is None or fine is None:
        return None
    if not isinstance(fine, dict):
        findings.fail("fine_scores_type", UNPARSABLE_OUTPUT, "fine_scores is not an object")
        return None
    keys = protocol.fine_keys
    missing = [key for key in keys if key not in fine]
    untyped = [key for key in keys if key in fine and not _is_int(fine[key])]
    findings.check("fine_scores_complete", not missing, UNPARSABLE_OUTPUT, f"missing {missing}")
    findings.check("fine_scores_integers", not untyped, UNPARSABLE_OUTPUT, f"{untyped}")
    unknown = sorted(set(fine) - set(keys))
    off = [k for k in keys if k in fine and _is_int(fine[k]) and fine[k] not in SCORE_VALUES]
    findings.check(
        "fine_rubric_unaltered",
        not unknown and not off,
        PROTOCOL_VIOLATION,
        f"unknown {unknown}, off scale {off}",
    )
    if missing or untyped or off:
        return None
    typed = {key: int(fine[key]) for key in keys}
    if scores is not None:
        implied = rubric.aggregate(typed)
        findings.check(
            "fine_scores_aggregate",
            implied == scores,
            INTERNAL_INCONSISTENCY,
            f"fine scores give {implied}",
        )
    return typed


def _check_judge_flags(flags: Any, findings: Findings) -> tuple[str, ...]:
    if flags is None:
        return ()
    ok = isinstance(flags, list) and all(isinstance(flag, str) for flag in flags)
    if not findings.check("flags_type", ok, UNPARSABLE_OUTPUT, "flags is not a list of strings"):
        return ()
    unknown = sorted(set(flags) - set(ALL_FLAGS))
    if unknown:
        findings.warnings.append(f"judge used flags outside the protocol: {unknown}")
    return tuple(flags)


def _check_notes(notes: Any, findings: Findings) -> str | None:
    if notes is None:
        return None
    findings.check("notes_type", isinstance(notes, str), UNPARSABLE_OUTPUT, "notes not a string")
    return notes if isinstance(notes, str) else None


def _check_evidence(
    evidence: Any, output_text: str, protocol: Protocol, findings: Findings
) -> tuple[EvidenceItem, ...]:
    if evidence is None:
        findings.fail("evidence_per_dimension", PROTOCOL_VIOLATION, "no evidence")
        return ()
    if not isinstance(evidence, list):
        findings.fail("evidence_type", UNPARSABLE_OUTPUT, "evidence is not a list")
        findings.fail("evidence_per_dimension", PROTOCOL_VIOLATION, "no evidence")
        return ()
    dimension_of = {key: key for key in DIMENSION_KEYS}
    if protocol.finer_rubric is not None:
        dimension_of.update({d.key: d.maps_to for d in protocol.finer_rubric.dimensions})
    items = [_evidence_item(raw, output_text, protocol, findings) for raw in evidence]
    kept = tuple(item for item in items if item is not None)
    unknown = sorted({item.dimension for item in kept} - set(dimension_of))
    findings.check("evidence_dimensions_known", not unknown, PROTOCOL_VIOLATION, f"{unknown}")
    covered = {
        dimension_of[i.dimension]
        for i in kept
        if i.dimension in dimension_of and (i.quote.strip() or i.located)
    }
    uncovered = [key for key in DIMENSION_KEYS if key not in covered]
    findings.check(
        "evidence_per_dimension", not uncovered, PROTOCOL_VIOLATION, f"none for {uncovered}"
    )
    # The protocol's evidence is a quote *and* the reason it supports the score: a blank
    # reason leaves the score unexplained, however well the quote is located. Recorded only
    # when it fails, so that records archived before this check still re-validate the same.
    blank = [item.dimension for item in kept if not item.reason.strip()]
    copied = [item.dimension for item in kept if PLACEHOLDER.fullmatch(item.reason.strip())]
    if blank or copied:
        findings.fail("evidence_reasons_given", PROTOCOL_VIOLATION, _unexplained(blank, copied))
    lost = [item.quote[:80] for item in kept if not item.located]
    findings.check("evidence_quotes_located", not lost, EVIDENCE_NOT_FOUND, f"not found: {lost}")
    return kept


def _unexplained(blank: list[str], copied: list[str]) -> str:
    # A blank reason keeps the detail it had before placeholders were checked, so that
    # records archived then re-validate the same.
    parts = [f"no reason for {blank}"] if blank else []
    if copied:
        parts.append(f"the format example's placeholder as the reason for {copied}")
    return "; ".join(parts)


def _evidence_item(
    raw: Any, output_text: str, protocol: Protocol, findings: Findings
) -> EvidenceItem | None:
    if not isinstance(raw, dict) or not all(isinstance(raw.get(k), str) for k in EVIDENCE_KEYS):
        findings.fail("evidence_item_fields", UNPARSABLE_OUTPUT, f"bad item {str(raw)[:80]}")
        return None
    extra = sorted(set(raw) - set(EVIDENCE_KEYS))
    findings.check("evidence_item_no_unknown_fields", not extra, PROTOCOL_VIOLATION, f"{extra}")
    quote = raw["quote"]
    if len(quote.split()) > protocol.evidence.long_quote_words:
        findings.warnings.append(f"long quote ({len(quote.split())} words)")
    located = quote_located(quote, output_text, casefold=protocol.evidence.casefold)
    return EvidenceItem(
        dimension=raw["dimension"], quote=quote, reason=raw["reason"], located=located
    )
