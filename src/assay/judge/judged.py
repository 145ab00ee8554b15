"""What an evaluation judged, as fingerprints: the output text and the task it was held to.

A run resumes by ids (question, variant, target, output id, judge). An output edited in place,
or a question whose prompt, required structure, constraints or intent changed, keeps its ids,
so without more the archive would keep judgments of a text or a task the inputs no longer
hold and call them finished. Each record therefore keeps :class:`Judged`, and a resumed run
refuses a sample whose fingerprints differ from its archived evaluation's (as ``bench run``
does with ``record_hash`` and ``generate`` with ``prompt_hash``). Records written before the
fingerprints existed have none and are not checked.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..errors import RunError
from .evalset import Sample

_HINT = (
    "restore the outputs and the question set the run judged, or judge the changed inputs "
    "into a new --out directory"
)


class Judged(BaseModel):
    """Fingerprints of what the judge was shown besides the sample's ids."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    output: str  # the evaluated output's text
    task: str  # the prompt, required structure, constraints and intent of the question


def _digest(value: Any) -> str:
    # ASCII JSON: a lone surrogate (a manifest may hold "\ud800") still hashes
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


def output_fingerprint(text: str) -> str:
    return _digest(text)


def judged_of(sample: Sample) -> Judged:
    """The fingerprints of what a judge of ``sample`` is shown (the ids are the record's)."""
    task = [sample.prompt, sample.required_structure, list(sample.constraints), sample.intent]
    return Judged(output=output_fingerprint(sample.output_text), task=_digest(task))


def judged_id(key: tuple[str, ...], judged: Judged) -> int:
    """A pair's 8-byte identity together with what it judged: a run holds one per pair."""
    joined = "\x1f".join((*key, judged.output, judged.task)).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(joined, digest_size=8).digest(), "big")


def changed_input_error(
    run_dir: Path, sample: Sample, key: tuple[str, ...], questions_source: str
) -> RunError:
    """The error for a sample whose output or task is not what its archived evaluation
    judged, naming the input (the output's file and line, or the question set) and the
    archived record."""
    from .archive import iter_archive

    now = judged_of(sample)
    for item in iter_archive(run_dir, summary_only=True):
        record = item.record
        if record is None or record.work_key != key or record.judged in (None, now):
            continue
        assert record.judged is not None
        return _error(sample, item.where, record.judged, now, questions_source)
    return RunError(  # the pair's records changed during this run: say so, not nothing
        f"the output {sample.output_id!r} of question {sample.question_id!r} variant "
        f"{sample.prompt_variant!r} is not what {run_dir} judged",
        hint=_HINT,
    )


def _error(
    sample: Sample, where: str, then: Judged, now: Judged, questions_source: str
) -> RunError:
    cell = (
        f"question {sample.question_id!r} variant {sample.prompt_variant!r} "
        f"(target {sample.target_model})"
    )
    if then.output != now.output:
        return RunError(
            f"{sample.source or sample.output_id}: the output {sample.output_id!r} for {cell} "
            f"is not the text {where} holds a judgment of (output fingerprint {then.output}, "
            f"now {now.output}); the run is not resumed with changed outputs",
            hint=_HINT,
        )
    return RunError(
        f"{questions_source}: {cell} is not the task {where} holds a judgment of (its "
        f"prompt, required structure, constraints or intent changed: task fingerprint "
        f"{then.task}, now {now.task}); the run is not resumed with a changed question set",
        hint=_HINT,
    )
