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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..data.questions import (
    MANIFEST_NAME,
    TARGET_NAME_FILE,
    ManifestEntry,
    PromptVariant,
    QuestionSet,
    confine,
    manifest_entry,
    model_dir_name,
    refuse_edited_prompt,
)
from ..errors import RunError
from ..json_safe import displayable
from ..model import (
    CallFailure,
    ChatMessage,
    Completion,
    GenerateConfig,
    Model,
    ModelOptions,
    ModelResult,
    NodeContext,
    Seed,
    is_deferred,
    system,
    user,
)
from ..runs import (
    JsonlWriter,
    RunDirLock,
    RunLog,
    RunLogger,
    RunStatus,
    check_run_kind,
    fingerprint,
    inside,
    read_numbered_jsonl,
    remove_stale_temps,
    run_all,
    served_identity,
    served_warnings,
    write_atomic,
)
from ..runs import utc_now as _now
from ..runs._ray import NO_CPU_GRACE_S, NodeWait
from ..runs.shards import Shard, shard_record

FAILURES_NAME = "generation_failures.jsonl"
# the settings an output depends on (besides its model and prompt), by their option names
PROTOCOL_SETTINGS = {
    "temperature": "--temperature",
    "top_p": "--top-p",
    "max_tokens": "--max-tokens",
    "seed": "--seed",
    "system_prompt": "--system-prompt",
}


class GenerateSettings(BaseModel):
    """Decoding for the target models; ``system_prompt`` is sent before each prompt if set."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(default=512, ge=1, le=32768)
    seed: Seed = 0
    system_prompt: str | None = None
    concurrency: int = Field(default=4, ge=1)
    # ray: jobs go to Ray workers in batches, which rebuild the models from model_options
    executor: Literal["live", "batch", "ray"] = "live"
    ray_batch_size: int = Field(default=64, ge=1)
    # seconds a Ray run waits for a node with CPUs when its cluster has none left; None: for ever
    ray_node_wait_s: NodeWait = NO_CPU_GRACE_S
    model_options: ModelOptions | None = None
    # this run generates one shard of the questions (`assay merge` joins the shards' folders)
    shard: Shard | None = None

    def protocol(self) -> dict[str, Any]:
        """The settings that decide each output; an output directory never mixes two. A
        shard's directory holds its own questions only; an unsharded run's fingerprint has no
        such key, so the merged shards resume as that run."""
        protocol = {name: getattr(self, name) for name in PROTOCOL_SETTINGS}
        return protocol if self.shard is None else {**protocol, "shard": str(self.shard)}

    def holds(self, question_id: str) -> bool:
        """Whether this run generates the outputs of the question (all do, unsharded)."""
        return self.shard is None or self.shard.holds(question_id)

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
    # a model whose served model name or system fingerprint changed during the run, in words
    served_warnings: tuple[str, ...] = ()


class _Job(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str
    variant: PromptVariant
    model_index: int
    # an output the manifest lists but whose file is gone: written again to this path (relative
    # to the output directory), under the manifest line that names it (None: a new output)
    rewrite: str | None = None


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
    previous = _check_settings(out_dir, settings)  # before anything is written
    _remove_interrupted_writes(out_dir)
    done, lost = _finished_cells(out_dir, questions)
    out_dir.mkdir(parents=True, exist_ok=True)
    jobs = [
        _Job(
            question_id=q.question_id,
            variant=v,
            model_index=i,
            rewrite=lost.get((q.question_id, v.variant, model.name)),
        )
        for i, model in enumerate(models)
        for q in questions.questions
        if settings.holds(q.question_id)
        for v in q.variants
        if (q.question_id, v.variant, model.name) not in done
    ]
    cells = questions.cells()
    expected = len(models) * sum(settings.holds(question) for question, _ in cells)
    earlier_served = previous.served if previous is not None else {}
    logger = RunLogger(out_dir, _run_log(models, settings, expected, previous))
    counts = {"written": 0, "failed": 0, "deferred": 0}
    usage_on_ray: dict[str, dict[str, Any]] = {}
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
            if job.rewrite is None:
                manifest.append(entry.model_dump(mode="json", exclude_none=True))
            else:  # the manifest is append-only: the line that names the file stays
                missing = out_dir / job.rewrite
                print(f"note: {missing} was missing; generated again", file=sys.stderr)
            counts["written"] += 1
        elif is_deferred(outcome):
            counts["deferred"] += 1
        else:
            failures.append(_failure_line(job, model_name, outcome.describe()))
            counts["failed"] += 1

    try:
        if settings.executor == "ray":
            generate_on_ray(jobs, [m.name for m in models], settings, keep, usage_on_ray)
        else:
            await run_all(
                jobs,
                work,
                keep,
                concurrency=settings.concurrency,
                description="generate",
                unit="outputs",
                is_failure=_call_failed,
                is_waiting=_waits_on_batch,
            )
    except BaseException as error:
        # an error is "error" with its reason, as judge run and bench run record it; only an
        # interrupt (Ctrl-C, SIGTERM) is "cancelled"
        status: RunStatus = "error" if isinstance(error, Exception) else "cancelled"
        served = served_identity(_usage(models, settings, usage_on_ray), earlier_served)
        finished_count = len(done) + counts["written"]
        reason = None if status == "cancelled" else f"{type(error).__name__}: {error}"
        logger.finish(status, error=reason, finished_count=finished_count, served=served)
        raise
    finally:
        manifest.close()
        failures.close()
    usage = _usage(models, settings, usage_on_ray)
    served = served_identity(usage, earlier_served)
    finished = len(done) + counts["written"]
    shard = shard_record(settings.shard, len(models) * len(cells))
    logger.finish("success", finished_count=finished, usage=usage, served=served, shard=shard)
    return GenerateSummary(
        out_dir=str(out_dir),
        expected=expected,
        already_done=len(done),
        served_warnings=tuple(served_warnings(served)),
        **counts,
    )


def _usage(
    models: Sequence[Model], settings: GenerateSettings, usage_on_ray: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """This session's usage per model; on Ray the workers made the calls (counts summed)."""
    if settings.executor == "ray":
        return usage_on_ray
    return {model.name: model.usage.summary() for model in models}


def _waits_on_batch(result: tuple[_Job, ModelResult]) -> bool:
    """Whether the call was written to a batch input file (counted apart in the progress
    line, as waiting on batch answers)."""
    return is_deferred(result[1])


def _call_failed(result: tuple[_Job, ModelResult]) -> bool:
    """Whether a call failed after every retry (counted as failed in the progress line); a
    call that waits in a batch file has not failed."""
    return isinstance(result[1], CallFailure) and not is_deferred(result[1])


def _remove_interrupted_writes(out_dir: Path) -> None:
    """A run killed mid-write leaves ``.NAME.PID.tmp`` beside an output: clear them."""
    folders = [out_dir, *(p for p in out_dir.iterdir() if p.is_dir())] if out_dir.is_dir() else []
    for folder in folders:
        for path in remove_stale_temps(folder):
            print(f"note: removed {path}, left by an interrupted run", file=sys.stderr)


def _check_settings(out_dir: Path, settings: GenerateSettings) -> RunLog | None:
    """Refuse an output directory of another kind of run, or made with other settings;
    returns the earlier session's log."""
    previous = check_run_kind(out_dir, "generate", option="--out")
    if previous is None:
        return None
    before = previous.config
    changed = [
        f"{option} {before.get(name)!r} (now {getattr(settings, name)!r})"
        for name, option in PROTOCOL_SETTINGS.items()
        if name in before and before[name] != getattr(settings, name)
    ]
    shard_before = before.get("shard")
    shard_now = None if settings.shard is None else settings.shard.model_dump()
    if shard_before != shard_now:
        changed.append(f"--shard {_shard_text(shard_before)} (now {_shard_text(shard_now)})")
    if changed:
        raise RunError(
            f"{out_dir}: its outputs were generated with other settings: " + ", ".join(changed),
            hint="use a new --out directory, or the settings of the existing outputs",
        )
    return previous


def _shard_text(shard: object) -> str:
    if isinstance(shard, dict):
        return f"{shard.get('index')}/{shard.get('count')}"
    return "none"


def _finished_cells(
    out_dir: Path, questions: QuestionSet
) -> tuple[set[tuple[str, str, str]], dict[tuple[str, str, str], str]]:
    """The (question, variant, model) cells the manifest holds with their output file, and the
    cells whose file is gone (each with the path its line names, to write it again there).

    An output whose recorded prompt is not the question set's prompt now is refused, not kept
    as if it answered it.
    """
    path = out_dir / MANIFEST_NAME
    done: set[tuple[str, str, str]] = set()
    lost: dict[tuple[str, str, str], str] = {}
    for number, data in read_numbered_jsonl(path):
        entry = manifest_entry(data, path, number)
        cell = (entry.question_id, entry.prompt_variant, entry.target_model)
        found = questions.variant(cell[0], cell[1])
        if found is not None:
            refuse_edited_prompt(
                entry.prompt_hash,
                found[1],
                f"the output for question {cell[0]!r} variant {cell[1]!r} ({cell[2]})",
                (str(path), number),
                hint="use a new --out directory for the edited prompts, or the question set the "
                "outputs were generated from",
            )
        if found is not None and _file_lost(out_dir, entry, number):
            lost[cell] = str(entry.path)
            continue
        done.add(cell)
    return done, {cell: where for cell, where in lost.items() if cell not in done}


def _file_lost(out_dir: Path, entry: ManifestEntry, number: int) -> bool:
    """Whether the output file a manifest line names is gone (deleted by hand, or a disk
    fault). A ``judge run`` on the directory would stop at the line; generating it again (from
    the response cache, when it holds the answer) repairs the directory."""
    if entry.path is None:
        return False
    file = out_dir / entry.path
    hint = "generate writes its outputs inside --out; restore the manifest line"
    confine(file, out_dir / MANIFEST_NAME, number, hint=hint)
    return not file.exists()


def _messages(variant: PromptVariant, settings: GenerateSettings) -> list[ChatMessage]:
    prompt = [user(variant.prompt)]
    return prompt if settings.system_prompt is None else [system(settings.system_prompt), *prompt]


def _write_output(
    out_dir: Path, job: _Job, model_name: str, completion: Completion
) -> ManifestEntry:
    path = inside(
        out_dir, model_dir_name(model_name), f"{job.question_id}__{job.variant.variant}.txt"
    )
    if job.rewrite is not None:  # checked inside out_dir when the manifest was read
        path = out_dir / job.rewrite
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path.parent / TARGET_NAME_FILE, model_name + "\n")
    text = displayable(completion.text)
    if text != completion.text:  # a text file holds UTF-8, which a lone surrogate is not
        print(f"note: {path}: the reply held a lone surrogate, written as U+FFFD", file=sys.stderr)
    write_atomic(path, text)
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
        prompt_hash=job.variant.prompt_hash,
    )


def _failure_line(job: _Job, model_name: str, reason: str) -> dict[str, str]:
    return {
        "question_id": job.question_id,
        "prompt_variant": job.variant.variant,
        "target_model": model_name,
        "reason": reason,
        "at": _now(),
    }


def _run_log(
    models: Sequence[Model],
    settings: GenerateSettings,
    expected: int,
    previous: RunLog | None,
) -> RunLog:
    return RunLog(
        kind="generate",
        fingerprint=fingerprint(settings.protocol()),
        models={model.name: model.backend.version_info() for model in models},
        decoding=settings.config().decoding_params(),
        sample_count=expected,
        config=settings.model_dump(mode="json"),
        # kept from the start: a session killed before its end loses only its own counts
        served=previous.served if previous is not None else {},
        merged_from=previous.merged_from if previous is not None else None,  # its history
    )


# ---------------------------------------------------------------- on a Ray cluster

# the settings, the model names, and the jobs as JSON
_RayBatch = tuple[str, list[str], list[str]]


def generate_on_ray(
    jobs: Sequence[_Job],
    names: list[str],
    settings: GenerateSettings,
    keep: Callable[[tuple[_Job, ModelResult]], None],
    usage: dict[str, dict[str, Any]],
) -> None:
    """Send ``jobs`` to Ray workers in batches; ``keep`` gets each (job, result) on the
    driver, which alone writes the output directory. The workers' usage is summed into
    ``usage`` batch by batch, so a run that stops midway still has its written batches'."""
    from ..json_safe import load_model
    from ..runs import Progress
    from ..runs._ray import add_usage, ray_map

    head = settings.model_dump_json()
    size = settings.ray_batch_size
    chunks = (
        (head, names, [job.model_dump_json() for job in jobs[i : i + size]])
        for i in range(0, len(jobs), size)
    )
    with Progress(len(jobs), "generate (ray)", unit="outputs") as bar:

        def arrived(done: dict[str, Any]) -> None:
            for job_json, kind, result_json in done["results"]:
                result: ModelResult = (
                    load_model(Completion, result_json)
                    if kind == "completion"
                    else load_model(CallFailure, result_json)
                )
                job = load_model(_Job, job_json)
                keep((job, result))
                bar.update(1, failed=int(_call_failed((job, result))))
            add_usage(usage, done["usage"])

        options = settings.model_options or ModelOptions()
        context = options.node_context()
        ray_map(
            _generate_batch,
            chunks,
            arrived,
            context=context,
            describe=_jobs_of,
            node_wait_s=settings.ray_node_wait_s,
        )


def _jobs_of(batch: _RayBatch) -> str:
    """A batch's outputs to generate, as the error on a lost batch names them."""
    from ..json_safe import load_model
    from ..runs._ray import span

    jobs = [load_model(_Job, line) for line in batch[2]]
    names = [f"{j.question_id}/{j.variant.variant} by {batch[1][j.model_index]}" for j in jobs]
    return span("output", names)


def _generate_batch(batch: _RayBatch, context: NodeContext) -> dict[str, Any]:
    import asyncio

    return asyncio.run(_generate_batch_async(batch, context))


async def _generate_batch_async(batch: _RayBatch, context: NodeContext) -> dict[str, Any]:
    from ..json_safe import load_model, model_json
    from ..model import get_model, open_cache

    settings = GenerateSettings.model_validate_json(batch[0])
    options = (settings.model_options or ModelOptions()).on_worker(context)
    cache = open_cache(options)
    models = [get_model(name, options, cache=cache) for name in batch[1]]
    jobs = [load_model(_Job, line) for line in batch[2]]
    results: list[tuple[str, str, str]] = []

    async def one(job: _Job) -> tuple[_Job, ModelResult]:
        model = models[job.model_index]
        return job, await model.generate(_messages(job.variant, settings), settings.config())

    def note(done: tuple[_Job, ModelResult]) -> None:
        kind = "completion" if isinstance(done[1], Completion) else "failure"
        results.append((model_json(done[0]), kind, model_json(done[1])))

    try:
        await run_all(jobs, one, note, concurrency=settings.concurrency, progress=False)
    finally:
        for model in models:
            await model.aclose()
    return {"results": results, "usage": {m.name: m.usage.summary() for m in models}}
