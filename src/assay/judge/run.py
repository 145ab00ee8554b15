"""A judge run: every sample x judge (by mode), validated and archived, resumable.

A unit of work is one sample judged by one judge. It is finished when a reply was valid or
``max_attempts`` replies are archived; finished work is skipped without a model call, so a
rerun of a finished run calls no model. Re-ask ``k`` (k >= 1) is bounded: the first prompt,
the last rejected reply and what was wrong with it, sampled with seed + k. Every attempt is
archived, failed calls too; a failed call is not a judgment, so it does not use up
``max_attempts``: the next run asks again (with the same prompt and seed).

With batch files (``--executor batch``), a judge call that misses the cache is written to a
batch input file and nothing is archived for it: the pair waits (``deferred``) until its answer
is imported and the command is run again. Re-asks come one per round.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from ..errors import RunError
from ..model import (
    CallFailure,
    ChatMessage,
    ErrorKind,
    GenerateConfig,
    JsonSchema,
    Model,
    ModelOptions,
    ModelResult,
    is_deferred,
)
from ..runs import (
    RunDirLock,
    RunLog,
    RunLogger,
    RunStatus,
    check_run_kind,
    run_all,
    served_identity,
    served_warnings,
    write_atomic,
)
from ..runs._ray import NO_CPU_GRACE_S, NodeWait
from ..runs.id_set import IdentitySet
from ..runs.shards import Shard, shard_record
from .archive import (
    Archive,
    ArchiveLayout,
    CallInfo,
    EvaluationRecord,
    FailureInfo,
    ProtocolState,
    refuse_other_fingerprint,
)
from .evalset import EvalSet, Sample
from .exact_schema import exact_schema
from .findings import Check
from .judged import changed_input_error, judged_id, judged_of
from .prompts import PROMPT_TEMPLATES, JudgeRequest, judge_messages, reask_messages
from .protocol import (
    JUDGE_CALL_FAILED,
    DecodingMode,
    DecodingSettings,
    Method,
    Protocol,
    output_schema,
    protocol_fingerprint,
)
from .validate import Classification, classify

Mode = Literal["cross", "self", "both"]
COVERAGE_FILE = "coverage.json"
PROMPT_MANIFEST = "used_prompt_manifest.md"


class JudgeRunConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Mode = "cross"
    max_attempts: int = Field(default=1, ge=1, le=10)
    concurrency: int = Field(default=4, ge=1)
    allow_incomplete: bool = False
    protocol: Protocol = Protocol()
    decoding: DecodingSettings = DecodingSettings()
    timestamp: str | None = None  # YYYY-MM-DD written into meta; default: today (UTC)
    archive_layout: ArchiveLayout = "shards"  # a new archive's layout; an old one keeps its own
    # ray: sample x judge pairs go to Ray workers in batches, which rebuild the judges from
    # model_options (a llamacpp/ judge is loaded by each worker); the driver archives
    executor: Literal["live", "batch", "ray"] = "live"
    ray_batch_size: int = Field(default=64, ge=1)
    # seconds a Ray run waits for a node with CPUs when its cluster has none left; None: for ever
    ray_node_wait_s: NodeWait = NO_CPU_GRACE_S
    model_options: ModelOptions | None = None
    # this run judges one shard of the questions (`assay merge` joins the shards' runs), of
    # a question set of shard_items question x variant cells
    shard: Shard | None = None
    shard_items: int = Field(default=0, ge=0)


class JudgeRunSummary(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    run_dir: str
    fingerprint: str
    work_items: int
    already_finished: int
    attempts_made: int
    valid: int
    invalid: int
    model_calls: int
    # sample x judge pairs whose model call failed after every retry in this session: left
    # unjudged (counted in ``invalid``), never cached, retried by the next run
    call_failed: int = 0
    # why those calls failed (``connection after 4 attempt(s): cannot reach ...``), how often
    call_failure_reasons: dict[str, int] = Field(default_factory=dict)
    # pairs whose call was written to a batch input file: not judged yet, not invalid
    deferred: int = 0
    # a judge whose served model name or system fingerprint changed during the run, in words
    served_warnings: tuple[str, ...] = ()


class DecodingPlan(BaseModel):
    """How one judge call is decoded: the mode, its schema, the token budget, any fallback."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: DecodingMode
    schema_: dict[str, Any] | None = None
    max_tokens: int
    note: str | None = None


# how one sample x judge pair ended in this session: archived, its call failed after every
# retry, or its call was written to a batch input file and waits for the answer
PairOutcome = Literal["judged", "failed", "waiting"]


class _Work(NamedTuple):
    """One sample x judge pair (a tuple: a run holds one per pair)."""

    sample: Sample
    judge_index: int
    method: Method


def protocol_state(
    protocol: Protocol, decoding: DecodingSettings, layout: ArchiveLayout = "shards"
) -> ProtocolState:
    return ProtocolState(
        fingerprint=protocol_fingerprint(protocol, decoding, PROMPT_TEMPLATES),
        protocol=protocol,
        decoding=decoding,
        prompt_templates=PROMPT_TEMPLATES,
        output_schema=output_schema(protocol),
        layout=layout,
    )


async def judge_sample(
    sample: Sample, judge: Model, config: JudgeRunConfig | None = None
) -> list[EvaluationRecord]:
    """One sample judged by one judge outside a run directory (for a scorer inside another
    tool): every attempt's record in order, as a run would archive them, the last one
    deciding; nothing is written. Asks as a run asks: up to ``config.max_attempts`` replies,
    each re-ask showing the last reply's problems; a call that fails after its retries ends
    the sample with that record (``call_failure``)."""
    config = config or JudgeRunConfig()
    state = protocol_state(config.protocol, config.decoding)
    records: list[EvaluationRecord] = []
    session = _JudgeSession([judge], state, config, request_date(config), records.append)
    await session.judge(_Work(sample, 0, method_for(judge.name, sample)))
    return records


def request_date(config: JudgeRunConfig) -> str:
    """The date the judge is told (``meta.timestamp``): the config's, else today's (UTC)."""
    return config.timestamp or dt.datetime.now(dt.UTC).date().isoformat()


def method_for(judge_name: str, sample: Sample) -> Method:
    return "self_judge" if judge_name == sample.target_model else "cross_judge"


_WANTED: dict[Mode, frozenset[Method]] = {
    "cross": frozenset({"cross_judge"}),
    "self": frozenset({"self_judge"}),
    "both": frozenset({"cross_judge", "self_judge"}),
}


def iter_work(eval_set: EvalSet, judge_names: Sequence[str], mode: Mode) -> Iterator[_Work]:
    """Sample x judge pairs the mode asks for, sample by sample: one pass over the outputs,
    nothing held (a run over a million samples never lists its pairs)."""
    for sample in eval_set:
        for index, name in enumerate(judge_names):
            method = method_for(name, sample)
            if method in _WANTED[mode]:
                yield _Work(sample=sample, judge_index=index, method=method)


def count_work(eval_set: EvalSet, judge_names: Sequence[str], mode: Mode) -> dict[Method, int]:
    """How many pairs :func:`iter_work` yields, per method, from the coverage counts alone."""
    counts: dict[Method, int] = {"cross_judge": 0, "self_judge": 0}
    for name in judge_names:
        for target, aligned in eval_set.aligned_by_target.items():
            method: Method = "self_judge" if name == target else "cross_judge"
            if method in _WANTED[mode]:
                counts[method] += aligned
    return counts


class _Attempt(NamedTuple):
    """What a run needs of an archived attempt: small, so a resumed run over millions of
    samples does not hold their records (the reply is kept only where a re-ask needs it)."""

    number: int
    valid: bool
    call_failed: bool
    raw_reply: str | None
    problems: tuple[str, ...]

    @classmethod
    def of(cls, record: EvaluationRecord) -> _Attempt:
        keep = not record.valid and record.call_failure is None
        return cls(
            number=record.attempt,
            valid=record.valid,
            call_failed=record.call_failure is not None,
            raw_reply=record.raw_reply if keep else None,
            problems=tuple(record.classification.problems()) if keep else (),
        )


class _JudgeSession:
    """State shared by the workers of one run session.

    ``sink`` receives every finished attempt: the archive in the process that owns the run
    directory, a list on a Ray worker (whose records the driver archives).

    A pair's attempts are held only while it is open (no valid reply yet, asks left); once it
    is finished only its 8-byte identity is kept, in ``done_valid`` or ``done_invalid``, so
    the session stays small however many pairs a run has.
    """

    def __init__(
        self,
        judges: Sequence[Model],
        state: ProtocolState,
        config: JudgeRunConfig,
        today: str,
        sink: Callable[[EvaluationRecord], object],
    ) -> None:
        self.judges = judges
        self.state = state
        self.sink = sink
        self.config = config
        self.today = today
        self.previous: dict[tuple[str, ...], list[_Attempt]] = {}  # open pairs only
        self.done_valid = IdentitySet()
        self.done_invalid = IdentitySet()  # out of asks; a later valid attempt still counts
        self.failed_now = IdentitySet()  # the call failed in this session: retried next run
        self.failure_reasons: Counter[str] = Counter()  # why, as the CLI prints it
        # what the archived attempts judged (pair and fingerprints, 8 bytes each), and the
        # pairs with an attempt archived before the fingerprints existed (not checked)
        self.judged = IdentitySet()
        self.unfingerprinted = IdentitySet()
        self.attempts_made = 0
        self.finished_now = 0  # pairs this session finished
        self.valid_now = 0  # ... of which valid
        self.reported_models: dict[str, set[str]] = defaultdict(set)
        # per judge, the lowest and highest max_tokens its calls were sent with: exact decoding
        # raises --judge-max-tokens per sample, so the setting alone is not what was sent
        self.max_tokens_sent: dict[str, tuple[int, int]] = {}
        self.exact_refused: dict[str, str] = {}  # judge -> why its backend refused the schema
        self.deferred = 0
        self.remote_usage: dict[str, dict[str, Any]] = {}  # per judge, summed over Ray workers

    def key_of(self, work: _Work) -> tuple[str, ...]:
        return _work_key(work, self.judges[work.judge_index].name)

    def attempts_of(self, work: _Work) -> list[_Attempt]:
        """The attempts of an open pair (none for a pair not begun or finished)."""
        return self.previous.get(self.key_of(work), [])

    def replies_of(self, work: _Work) -> list[_Attempt]:
        """The attempts that got a reply (a failed call is not a judgment)."""
        return [a for a in self.attempts_of(work) if not a.call_failed]

    def finished(self, work: _Work) -> bool:
        """Valid, or out of asks, or its call failed in this session (a rerun retries it)."""
        pair = pair_id(self.key_of(work))
        return pair in self.done_valid or pair in self.done_invalid or pair in self.failed_now

    def is_valid(self, work: _Work) -> bool:
        return pair_id(self.key_of(work)) in self.done_valid

    def judged_other(self, work: _Work) -> bool:
        """Whether the pair's archived attempts judged another output text or task than the
        sample now has (the inputs changed under the same ids since)."""
        key = self.key_of(work)
        pair = pair_id(key)
        archived = pair in self.done_valid or pair in self.done_invalid or key in self.previous
        if not archived or pair in self.unfingerprinted:
            return False
        return judged_id(key, judged_of(work.sample)) not in self.judged

    def restore(self, record: EvaluationRecord) -> None:
        """Take in an attempt archived by an earlier session (call :meth:`restored` after)."""
        self._take(record, now=False)

    def restored(self) -> None:
        """Put the open pairs' attempts in order (the re-ask answers the last reply)."""
        for attempts in self.previous.values():
            attempts.sort(key=lambda a: a.number)

    async def judge(self, work: _Work) -> PairOutcome:
        """Ask until the pair is finished, or its call waits in a batch file; "failed" when
        its call failed after every retry (the progress line counts both apart)."""
        while not self.finished(work):
            record = await self._attempt(work, len(self.attempts_of(work)) + 1)
            if record is None:  # the call waits in a batch file: nothing to archive yet
                self.deferred += 1
                return "waiting"
            self.keep(record)
        return "failed" if pair_id(self.key_of(work)) in self.failed_now else "judged"

    def keep(self, record: EvaluationRecord) -> None:
        """Hand a finished attempt to the sink and count it."""
        self.sink(record)
        self.attempts_made += 1
        if record.reply_budget is not None:
            self._note_max_tokens(record.judge_model, record.reply_budget)
        self._take(record, now=True)

    def _take(self, record: EvaluationRecord, *, now: bool) -> None:
        """Add an attempt to its pair; a pair that this finishes drops its attempts."""
        key = record.work_key
        pair = pair_id(key)
        if record.judged is None:
            self.unfingerprinted.add(pair)
        else:
            self.judged.add(judged_id(key, record.judged))
        if pair in self.done_valid:
            return
        if record.valid:
            self.done_valid.add(pair)
            self.previous.pop(key, None)
            self._count_finished(now, valid=True)
            return
        if pair in self.done_invalid:
            return
        attempts = self.previous.setdefault(key, [])
        attempts.append(_Attempt.of(record))
        if now and record.call_failure is not None:
            self.failed_now.add(pair)
            self.failure_reasons[record.call_failure.describe()] += 1
            self.previous.pop(key)
            self.finished_now += 1
        elif sum(1 for a in attempts if not a.call_failed) >= self.config.max_attempts:
            self.done_invalid.add(pair)
            self.previous.pop(key)
            self._count_finished(now, valid=False)

    def _count_finished(self, now: bool, *, valid: bool) -> None:
        if now:  # a session finishes only pairs that were open when it began
            self.finished_now += 1
            self.valid_now += int(valid)

    async def _attempt(self, work: _Work, attempt: int) -> EvaluationRecord | None:
        model = self.judges[work.judge_index]
        request = JudgeRequest(
            judge_model=model.name,
            method=work.method,
            timestamp=self.today,
            blind=self.config.protocol.blind,
        )
        ask = len(self.replies_of(work))  # 0: the first ask; k: the k-th re-ask, seed + k
        messages = self.messages_for(work, request, ask)
        plan = self.plan(model, work.sample, request)
        result = await model.generate(messages, self._config(plan), sample_index=ask)
        if plan.mode == "exact" and _schema_refused(result):
            # The backend cannot take the exact schema (e.g. no anyOf/prefixItems): fall back
            # to structure-only for this judge, and say so in every record it makes.
            assert isinstance(result, CallFailure)
            self.exact_refused[model.name] = f"exact schema refused: {result.describe()[:200]}"
            plan = self.plan(model, work.sample, request)
            result = await model.generate(messages, self._config(plan), sample_index=ask)
        if is_deferred(result):
            return None
        if not isinstance(result, CallFailure):
            self.reported_models[model.name].add(result.model or model.name)
        return self._record(work, request, attempt, messages, plan, result)

    def plan(self, model: Model, sample: Sample, request: JudgeRequest) -> DecodingPlan:
        """The decoding of one call: the run's setting, as far as backend and sample allow."""
        decoding = self.config.decoding
        if decoding.constrained == "off":
            return DecodingPlan(mode="off", max_tokens=decoding.max_tokens)
        if not model.backend.supports_json_schema:
            why = "the backend takes no JSON schema"
            return DecodingPlan(mode="off", max_tokens=decoding.max_tokens, note=why)
        note: str | None = None
        if decoding.constrained == "exact":
            exact = self._exact_plan(model, sample, request)
            if isinstance(exact, DecodingPlan):
                return exact
            note = exact
        schema = self.state.output_schema
        return DecodingPlan(
            mode="schema", schema_=schema, max_tokens=decoding.max_tokens, note=note
        )

    def _exact_plan(
        self, model: Model, sample: Sample, request: JudgeRequest
    ) -> DecodingPlan | str:
        """The exact plan, or why there is none for this judge and sample."""
        refused = self.exact_refused.get(model.name)
        if refused is not None:
            return refused
        exact = exact_schema(self.config.protocol, request.meta(sample), sample.output_text)
        if exact.schema_ is None:
            return f"no exact schema: {exact.unavailable}"
        # The budget covers the longest reply the schema admits, so a reply is never cut.
        budget = max(self.config.decoding.max_tokens, exact.max_reply_bytes + 1)
        return DecodingPlan(mode="exact", schema_=exact.schema_, max_tokens=budget)

    def messages_for(self, work: _Work, request: JudgeRequest, ask: int) -> list[ChatMessage]:
        """The first prompt, or for a re-ask the prompt, the last reply and its problems."""
        first = judge_messages(work.sample, request, self.config.protocol, self.state.fingerprint)
        replies = self.replies_of(work)
        last = replies[-1] if replies else None
        if ask == 0 or last is None or last.raw_reply is None:
            return first
        return reask_messages(first, last.raw_reply, list(last.problems))

    def _config(self, plan: DecodingPlan) -> GenerateConfig:
        decoding = self.config.decoding
        schema = None
        if plan.schema_ is not None:
            schema = JsonSchema(name="judge_evaluation", schema=plan.schema_)
        return GenerateConfig(
            temperature=decoding.temperature,
            top_p=decoding.top_p,
            max_tokens=plan.max_tokens,
            seed=decoding.seed,
            json_schema=schema,
        )

    def _note_max_tokens(self, judge: str, max_tokens: int) -> None:
        low, high = self.max_tokens_sent.get(judge, (max_tokens, max_tokens))
        self.max_tokens_sent[judge] = (min(low, max_tokens), max(high, max_tokens))

    def _record(
        self,
        work: _Work,
        request: JudgeRequest,
        attempt: int,
        messages: list[ChatMessage],
        plan: DecodingPlan,
        result: ModelResult,
    ) -> EvaluationRecord:
        sample = work.sample
        if isinstance(result, CallFailure):
            classification, raw, call = _failed_call(result), None, None
            failure = FailureInfo(
                kind=result.kind.value, message=result.message, attempts=result.attempts
            )
        else:
            meta = request.meta(sample)
            classification = classify(result.text, meta, sample.output_text, self.config.protocol)
            raw, failure = result.text, None
            call = CallInfo(
                finish_reason=result.finish_reason,
                prompt_tokens=result.prompt_tokens,
                completion_tokens=result.completion_tokens,
                latency_s=result.latency_s,
                cached=result.cached,
                reported_model=result.model,
                system_fingerprint=result.system_fingerprint,
            )
        return EvaluationRecord(
            fingerprint=self.state.fingerprint,
            question_id=sample.question_id,
            prompt_variant=sample.prompt_variant,
            target_model=sample.target_model,
            output_id=sample.output_id,
            judge_model=request.judge_model,
            method=work.method,
            attempt=attempt,
            valid=classification.valid,
            flags=classification.flags,
            classification=classification,
            raw_reply=raw,
            call=call,
            call_failure=failure,
            constrained=plan.mode != "off",
            messages=tuple(messages),
            evaluated_output=sample.output_text,
            decoding_mode=plan.mode,
            decoding_note=plan.note,
            reply_budget=plan.max_tokens,
            aliases=request.aliases(sample),
            request_date=request.timestamp,
            sample_meta=sample.meta,
            judged=judged_of(sample),
        )


def _schema_refused(result: ModelResult) -> bool:
    return isinstance(result, CallFailure) and result.kind == ErrorKind.BAD_REQUEST


def _failed_call(failure: CallFailure) -> Classification:
    check = Check(
        name="model_call", passed=False, flag=JUDGE_CALL_FAILED, detail=failure.describe()
    )
    return Classification(valid=False, flags=(JUDGE_CALL_FAILED,), checks=(check,), parse="none")


def _work_key(work: _Work, judge_name: str) -> tuple[str, ...]:
    s = work.sample
    return (s.question_id, s.prompt_variant, s.target_model, s.output_id, judge_name)


def pair_id(key: Sequence[str]) -> int:
    """A sample x judge pair's 8-byte identity (ids hold no control characters)."""
    joined = "\x1f".join(key).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(joined, digest_size=8).digest(), "big")


async def run_judges(
    eval_set: EvalSet, judges: Sequence[Model], run_dir: Path, config: JudgeRunConfig
) -> JudgeRunSummary:
    """Judge every planned sample not finished yet; archive each attempt as it ends.

    Holds the run directory's lock throughout: a second writer is refused at once.
    """
    with RunDirLock(run_dir) as lock:
        if lock.stale_note:
            print(f"note: {lock.stale_note}", file=sys.stderr)
        return await _run_judges_locked(eval_set, judges, run_dir, config)


def refuse_unresumable(run_dir: Path, config: JudgeRunConfig) -> None:
    """The refusals a run of ``config`` into ``run_dir`` meets before any model is made: another
    kind of run there, or evaluations under another protocol fingerprint. A command calls this
    before printing anything, so that a refused run prints only its error."""
    check_run_kind(run_dir, "judge", option="--out", needs_log=False)
    refuse_other_fingerprint(
        run_dir, protocol_state(config.protocol, config.decoding, config.archive_layout)
    )


async def _run_judges_locked(
    eval_set: EvalSet, judges: Sequence[Model], run_dir: Path, config: JudgeRunConfig
) -> JudgeRunSummary:
    # another kind of run in the directory is refused before anything is written (the archive
    # checks its own protocol, so a judge archive whose run.json is gone is still resumed)
    previous = check_run_kind(run_dir, "judge", option="--out", needs_log=False)
    _refuse_other_shard(run_dir, previous, config)
    _require_coverage(eval_set, config)
    plan = _Plan(eval_set, [j.name for j in judges], config.mode)
    if not plan.total:
        raise RunError(
            f"nothing to judge in mode {config.mode!r}: self-judging needs a judge that is "
            "also a target model, cross-judging a judge that is not",
            hint=f"targets: {', '.join(eval_set.coverage.target_models)}",
        )
    state = protocol_state(config.protocol, config.decoding, config.archive_layout)
    archive = Archive.open(run_dir, state)
    try:
        return await _run_session(eval_set, judges, run_dir, config, archive, plan, previous)
    finally:
        archive.close()


def _refuse_other_shard(run_dir: Path, previous: RunLog | None, config: JudgeRunConfig) -> None:
    """A shard's run directory holds that shard's questions only: it is resumed as the same
    shard, never as another or as a whole run (a merged run is whole)."""
    if previous is None:
        return
    before = previous.config.get("shard")
    now = None if config.shard is None else str(config.shard)
    if before != now:
        raise RunError(
            f"{run_dir} holds {_shard_words(before)} of a judge run; this run is "
            f"{_shard_words(now)}",
            hint="use a new --out directory, or the --shard of the existing run",
        )


def _shard_words(shard: object) -> str:
    return f"shard {shard}" if shard is not None else "every question"


class _Plan:
    """The pairs a run asks for, read afresh from the evaluation set on each pass."""

    def __init__(self, eval_set: EvalSet, judge_names: list[str], mode: Mode) -> None:
        self.eval_set = eval_set
        self.judge_names = judge_names
        self.mode = mode
        self.counts = count_work(eval_set, judge_names, mode)
        self.total = sum(self.counts.values())
        self.already = 0  # finished before this session
        self.already_valid = 0

    def __iter__(self) -> Iterator[_Work]:
        return iter_work(self.eval_set, self.judge_names, self.mode)

    def pending(self, session: _JudgeSession, run_dir: Path) -> Iterator[_Work]:
        """The pairs not finished yet, counting the finished ones (once, if none is held).

        A pair whose archived attempts judged another output text or task than the inputs now
        give is refused here, before any model call."""
        if session.done_valid or session.done_invalid or session.previous:
            for item in self:
                if session.judged_other(item):
                    key = session.key_of(item)
                    source = self.eval_set.questions.source
                    raise changed_input_error(run_dir, item.sample, key, source)
                if session.finished(item):
                    self.already += 1
                    self.already_valid += int(session.is_valid(item))
        if not self.already:
            return iter(self)
        return (item for item in self if not session.finished(item))


async def _run_session(
    eval_set: EvalSet,
    judges: Sequence[Model],
    run_dir: Path,
    config: JudgeRunConfig,
    archive: Archive,
    plan: _Plan,
    previous: RunLog | None,
) -> JudgeRunSummary:
    for moved in archive.quarantine_unreadable():  # never let an unreadable file brick the run
        print(
            f"note: unreadable record moved to {moved}; its sample is judged again", file=sys.stderr
        )
    session = _JudgeSession(judges, archive.state, config, request_date(config), archive.add)
    for record in archive.existing_records():
        session.restore(record)
    session.restored()
    pending = plan.pending(session, run_dir)  # refuses changed inputs before writing
    write_atomic(run_dir / COVERAGE_FILE, eval_set.coverage.model_dump_json(indent=2))
    write_prompt_manifest(run_dir, plan, judges, session, [m for m, n in plan.counts.items() if n])
    logger = RunLogger(run_dir, _run_log(archive, judges, config, plan.total, previous))
    try:
        if config.executor == "ray":
            from .ray_batches import judge_on_ray

            judge_on_ray(session, pending, plan.total - plan.already)
        else:
            await run_all(
                pending,
                session.judge,
                lambda _: None,
                concurrency=config.concurrency,
                description="judge",
                unit="pairs",
                total=plan.total - plan.already,
                is_failure=lambda outcome: outcome == "failed",
                is_waiting=lambda outcome: outcome == "waiting",
            )
    except BaseException as error:
        status: RunStatus = "error" if isinstance(error, Exception) else "cancelled"
        logger.finish(status, error=repr(error)[:500], **_end_fields(session, plan, previous))
        raise
    end = _end_fields(session, plan, previous)
    logger.finish("success", **end)
    return _summary(run_dir, archive, session, plan, served_warnings(end["served"]))


def _require_coverage(eval_set: EvalSet, config: JudgeRunConfig) -> None:
    coverage = eval_set.coverage
    if not coverage.complete and not config.allow_incomplete:
        raise RunError(
            "the evaluation set is incomplete (INCOMPLETE_COVERAGE); no judge was called\n"
            + coverage.describe(),
            hint="fix the outputs, or pass --allow-incomplete to judge what is aligned",
        )
    if not len(eval_set):
        raise RunError("the evaluation set has no aligned samples\n" + coverage.describe())


def _end_fields(session: _JudgeSession, plan: _Plan, previous: RunLog | None) -> dict[str, Any]:
    """run.json's end of a session. ``usage`` is this session's (``run_log.jsonl`` keeps
    each session's, and prices sum them); ``reported`` holds every model name the replies
    reported in any session, so a rerun of finished work (no call) does not blank it."""
    finished = plan.already + session.finished_now
    usage = {j.name: j.usage.summary() for j in session.judges}
    if session.remote_usage:  # Ray: the workers made the calls (counts summed, no latencies)
        usage = dict(session.remote_usage)
    earlier = previous.models if previous is not None else {}
    models = {
        j.name: {
            **j.backend.version_info(),
            "reported": _reported(session.reported_models[j.name], earlier.get(j.name, {})),
        }
        for j in session.judges
    }
    decoding = {**session.config.decoding.model_dump(mode="json"), **_sent(session)}
    served = served_identity(usage, previous.served if previous is not None else {})
    return {
        "finished_count": finished,
        "usage": usage,
        "models": models,
        "decoding": decoding,
        "served": served,
    }


def _sent(session: _JudgeSession) -> dict[str, Any]:
    """The max_tokens this session's calls were sent with, per judge (none: it judged nothing)."""
    if not session.max_tokens_sent:
        return {}
    sent = sorted(session.max_tokens_sent.items())
    return {"max_tokens_sent": {judge: {"min": lo, "max": hi} for judge, (lo, hi) in sent}}


def _reported(now: set[str], earlier: Mapping[str, Any]) -> str:
    before = str(earlier.get("reported") or "")
    return ", ".join(sorted(now | {name for name in before.split(", ") if name}))


def _run_log(
    archive: Archive,
    judges: Sequence[Model],
    config: JudgeRunConfig,
    count: int,
    previous: RunLog | None,
) -> RunLog:
    constrained = {
        j.name: config.decoding.constrained if j.backend.supports_json_schema else "off"
        for j in judges
    }
    return RunLog(
        kind="judge",
        fingerprint=archive.state.fingerprint,
        models={j.name: j.backend.version_info() for j in judges},
        decoding=config.decoding.model_dump(mode="json"),
        tool_access="none",
        sample_count=count,
        # kept from the start: a session killed before its end loses only its own counts
        served=previous.served if previous is not None else {},
        merged_from=previous.merged_from if previous is not None else None,  # its history
        shard=shard_record(config.shard, config.shard_items),
        config={
            "mode": config.mode,
            **({"shard": str(config.shard)} if config.shard is not None else {}),
            "executor": config.executor,
            **_ray_options(config),
            "max_attempts": config.max_attempts,
            "allow_incomplete": config.allow_incomplete,
            "decoding_mode_by_judge": constrained,
            "blind": config.protocol.blind,
            "protocol": config.protocol.model_dump(mode="json"),
        },
    )


def _ray_options(config: JudgeRunConfig) -> dict[str, Any]:
    """The Ray executor's options, as run.json records them (none for another executor)."""
    if config.executor != "ray":
        return {}
    return {"ray_batch_size": config.ray_batch_size, "ray_node_wait_s": config.ray_node_wait_s}


def _summary(
    run_dir: Path,
    archive: Archive,
    session: _JudgeSession,
    plan: _Plan,
    warnings: Sequence[str],
) -> JudgeRunSummary:
    valid = plan.already_valid + session.valid_now
    return JudgeRunSummary(
        run_dir=str(run_dir),
        fingerprint=archive.state.fingerprint,
        work_items=plan.total,
        already_finished=plan.already,
        attempts_made=session.attempts_made,
        valid=valid,
        invalid=plan.total - valid - session.deferred,
        model_calls=sum(j.usage.calls for j in session.judges)
        + sum(u.get("calls", 0) for u in session.remote_usage.values()),
        call_failed=len(session.failed_now),
        call_failure_reasons=dict(session.failure_reasons.most_common()),
        deferred=session.deferred,
        served_warnings=tuple(warnings),
    )


def write_prompt_manifest(
    run_dir: Path,
    work: Iterable[_Work],
    judges: Sequence[Model],
    session: _JudgeSession,
    methods: Collection[Method],
) -> None:
    """used_prompt_manifest.md: the templates and, verbatim, one prompt per method."""
    parts = [
        "# Judge prompts used\n",
        f"Protocol fingerprint: `{session.state.fingerprint}`. Every prompt of this run is "
        "rendered from the templates below; each archived record also keeps its exact prompt "
        "(`messages`). The fence code in the user prompt differs per output.\n",
    ]
    for name, template in PROMPT_TEMPLATES.items():
        parts.append(f"## Template: {name}\n\n````text\n{template}\n````\n")
    examples = _first_pair_per_method(work, methods)
    for method in ("cross_judge", "self_judge"):
        example = examples.get(method)
        if example is None:
            parts.append(f"## {method}\n\nNot used in this run.\n")
            continue
        request = JudgeRequest(
            judge_model=judges[example.judge_index].name,
            method=method,
            timestamp=session.today,
            blind=session.config.protocol.blind,
        )
        messages = session.messages_for(example, request, 0)
        rendered = "\n\n".join(f"### {m.role}\n\n````text\n{m.content}\n````" for m in messages)
        parts.append(f"## {method} (first prompt of this run, verbatim)\n\n{rendered}\n")
    write_atomic(run_dir / PROMPT_MANIFEST, "\n".join(parts))


def _first_pair_per_method(
    work: Iterable[_Work], methods: Collection[Method]
) -> dict[Method, _Work]:
    """The first pair of each method the run uses, reading only as far as needed."""
    found: dict[Method, _Work] = {}
    for item in work:
        found.setdefault(item.method, item)
        if len(found) >= len(methods):
            break
    return found
