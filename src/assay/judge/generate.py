"""``assay generate``: run every question x variant through each target model.

Writes ``<out>/<target>/<question>__<variant>.txt`` (with ``target_model.txt`` naming the model)
and ``<out>/manifest.jsonl`` (one line per output, the path relative to the manifest), which
``assay judge run --outputs <out>`` reads. Failed calls go to ``generation_failures.jsonl``
and are retried by the next run; finished outputs are never asked for again. With batch files
(``--executor batch``) a call that misses the cache is written to a batch input file and
nothing is written for it here (``deferred``) until its answer is imported.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..data.questions import (
    MANIFEST_NAME,
    TARGET_NAME_FILE,
    ManifestEntry,
    PromptVariant,
    QuestionSet,
    model_dir_name,
)
from ..model import (
    ChatMessage,
    Completion,
    GenerateConfig,
    Model,
    ModelResult,
    is_deferred,
    system,
    user,
)
from ..runs import (
    JsonlWriter,
    RunDirLock,
    RunLog,
    RunLogger,
    inside,
    read_jsonl,
    run_all,
    write_atomic,
)
from ..runs import utc_now as _now

FAILURES_NAME = "generation_failures.jsonl"


class GenerateSettings(BaseModel):
    """Decoding for the target models; ``system_prompt`` is sent before each prompt if set."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(default=512, ge=1, le=32768)
    seed: int = 0
    system_prompt: str | None = None
    concurrency: int = Field(default=4, ge=1)

    def config(self) -> GenerateConfig:
        return GenerateConfig(
            temperature=self.temperature,
            top_p=self.top_p,
            max_tokens=self.max_tokens,
            seed=self.seed,
        )


class GenerateSummary(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    out_dir: str
    expected: int
    already_done: int
    written: int
    failed: int
    deferred: int = 0  # calls written to a batch input file, waiting for their answers


class _Job(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str
    variant: PromptVariant
    model_index: int


async def generate_outputs(
    questions: QuestionSet, models: Sequence[Model], out_dir: Path, settings: GenerateSettings
) -> GenerateSummary:
    """Generate the missing outputs; returns counts. Appends, never rewrites, the manifest.

    Holds the output directory's lock throughout: a second writer is refused at once.
    """
    with RunDirLock(out_dir) as lock:
        if lock.stale_note:
            print(f"note: {lock.stale_note}", file=sys.stderr)
        return await _generate_locked(questions, models, out_dir, settings)


async def _generate_locked(
    questions: QuestionSet, models: Sequence[Model], out_dir: Path, settings: GenerateSettings
) -> GenerateSummary:
    out_dir.mkdir(parents=True, exist_ok=True)
    done = {(e["question_id"], e["prompt_variant"], e["target_model"]) for e in _manifest(out_dir)}
    jobs = [
        _Job(question_id=q.question_id, variant=v, model_index=i)
        for i, model in enumerate(models)
        for q in questions.questions
        for v in q.variants
        if (q.question_id, v.variant, model.name) not in done
    ]
    expected = len(models) * len(questions.cells())
    logger = RunLogger(out_dir, _run_log(models, settings, expected))
    counts = {"written": 0, "failed": 0, "deferred": 0}
    manifest = JsonlWriter(out_dir / MANIFEST_NAME)
    failures = JsonlWriter(out_dir / FAILURES_NAME)

    async def work(job: _Job) -> tuple[_Job, ModelResult]:
        model = models[job.model_index]
        return job, await model.generate(_messages(job.variant, settings), settings.config())

    def keep(result: tuple[_Job, ModelResult]) -> None:
        job, outcome = result
        model_name = models[job.model_index].name
        if isinstance(outcome, Completion):
            entry = _write_output(out_dir, job, model_name, outcome)
            manifest.append(entry.model_dump(mode="json", exclude_none=True))
            counts["written"] += 1
        elif is_deferred(outcome):
            counts["deferred"] += 1
        else:
            failures.append(_failure_line(job, model_name, outcome.describe()))
            counts["failed"] += 1

    try:
        await run_all(jobs, work, keep, concurrency=settings.concurrency, description="generate")
    except BaseException:
        logger.finish("cancelled", finished_count=len(done) + counts["written"])
        raise
    finally:
        manifest.close()
        failures.close()
    usage = {model.name: model.usage.summary() for model in models}
    logger.finish("success", finished_count=len(done) + counts["written"], usage=usage)
    return GenerateSummary(
        out_dir=str(out_dir), expected=expected, already_done=len(done), **counts
    )


def _manifest(out_dir: Path) -> list[dict[str, str]]:
    return list(read_jsonl(out_dir / MANIFEST_NAME))


def _messages(variant: PromptVariant, settings: GenerateSettings) -> list[ChatMessage]:
    prompt = [user(variant.prompt)]
    return prompt if settings.system_prompt is None else [system(settings.system_prompt), *prompt]


def _write_output(
    out_dir: Path, job: _Job, model_name: str, completion: Completion
) -> ManifestEntry:
    path = inside(
        out_dir, model_dir_name(model_name), f"{job.question_id}__{job.variant.variant}.txt"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path.parent / TARGET_NAME_FILE, model_name + "\n")
    write_atomic(path, completion.text)
    relative = str(path.relative_to(out_dir))
    return ManifestEntry(
        question_id=job.question_id,
        prompt_variant=job.variant.variant,
        target_model=model_name,
        output_id=relative,
        path=relative,
        finish_reason=completion.finish_reason,
        completion_tokens=completion.completion_tokens,
        generated_at=_now(),
    )


def _failure_line(job: _Job, model_name: str, reason: str) -> dict[str, str]:
    return {
        "question_id": job.question_id,
        "prompt_variant": job.variant.variant,
        "target_model": model_name,
        "reason": reason,
        "at": _now(),
    }


def _run_log(models: Sequence[Model], settings: GenerateSettings, expected: int) -> RunLog:
    return RunLog(
        kind="generate",
        models={model.name: model.backend.version_info() for model in models},
        decoding=settings.config().decoding_params(),
        sample_count=expected,
        config=settings.model_dump(mode="json"),
    )
