"""``assay bench run``: run a verifier pattern over a grounded-QA file into a run directory.

The run directory holds ``results.jsonl`` (one :class:`~.results.ResultRecord` per example,
appended as each finishes), ``summary.json``, ``plots/``, ``run.json`` / ``run_log.jsonl``
and, under ``--skip-invalid``, ``skipped_records.jsonl``.

The input file is read twice, streaming: a first pass validates every line (so bad input
stops the run before any model call) and counts the work left; the second pass runs it.
Ids already in ``results.jsonl`` are skipped, so an interrupted run resumes where it stopped
and a rerun of finished work makes no model call at all. An example with a model call that
failed after every retry is not finished: it is counted apart (never as a score), and the next
run redoes it and appends its new result, which supersedes the old line (failed calls are
never cached; the calls that succeeded come back from the cache). A run directory belongs to one
protocol (pattern, models, n, seed, threshold, revision, decoding, prompts): resuming with
another protocol is refused.

With batch files (``--executor batch``), a record with a call written to a batch input file is
not written at all this session (``deferred``): it waits for the answers, and a pattern with
dependent steps needs one session per step (docs/scaling.md says how many).
"""

from __future__ import annotations

import asyncio
import difflib
import itertools
import shutil
import sys
from array import array
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..data.grounded import SkippedRecord, iter_numbered_records, iter_records, record_lines
from ..errors import SHOWN_CHARS, ConfigError, RunError, shown
from ..model import (
    DEFAULT_MODEL,
    PROVIDERS,
    Backend,
    ModelOptions,
    Seed,
    UnopenedBackend,
    batch_scope,
    get_model,
    open_cache,
    split_model_name,
)
from ..runs import (
    JsonlWriter,
    Progress,
    RunDirLock,
    RunLog,
    RunLogger,
    RunStatus,
    check_run_kind,
    fingerprint,
    run_all,
    served_identity,
    served_warnings,
)
from ..runs._ray import NO_CPU_GRACE_S, NodeWait
from ..runs.shards import Shard, shard_record
from .defaults import DEFAULT_VERIFIER, MODEL_FREE_CHECKERS
from .metering import MeteredModel, metering
from .oracle import label_with_oracle
from .patterns import PatternContext, PatternName, PatternSettings, get_pattern
from .prompts import PROMPTS_FINGERPRINT
from .results import (
    RESULTS_FILE,
    CurrentResult,
    OracleVerdict,
    ResultRecord,
    dataset_label,
    iter_results,
    label_conflict,
    make_result,
    record_fingerprint,
    result_index,
)
from .types import AnswerVerifier, ClaimChecker, GroundedQARecord

if TYPE_CHECKING:
    from .checkers.single_pass import SinglePassConfig
    from .summary import SummaryTally

SKIPPED_FILE = "skipped_records.jsonl"
CHUNK_SIZE = 256  # records in flight per batch: bounds memory on files of any size


class BenchmarkConfig(BaseModel):
    """Everything a benchmark run needs. ``protocol()`` is what a resumed run must match."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    data: Path
    pattern: PatternName
    out_dir: Path
    n: int = Field(default=5, ge=1, le=64)
    seed: Seed = 0
    max_examples: int | None = Field(default=None, ge=1)  # None: every record of the file
    generator: str = DEFAULT_MODEL
    verifier: str = DEFAULT_VERIFIER  # a model, a model-free checker, or checker+model
    critic: str | None = None  # default: the verifier model, or the generator with "lexical"
    oracle: str | None = None
    revise: bool = True
    threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    max_tokens: int = Field(default=256, ge=8, le=4096)
    critique_max_tokens: int = Field(default=384, ge=16, le=4096)
    checker_votes: int = Field(default=1, ge=1, le=32)
    # a model verifier: one next-token label question per claim, or generated JSON; "auto" is
    # single-pass where the backend returns logprobs
    claim_check: Literal["auto", "single_pass", "json"] = "auto"
    claim_template: Literal["assay", "minicheck"] = "assay"
    # evidence over the single-pass budget: cut in page order, or keep the most relevant snippets
    claim_evidence_cut: Literal["page_order", "relevance"] = "page_order"
    # entailment's claim decomposition: the rules, or a model (the splitter model; default
    # the verifier model, else the generator) with the rules as visible fallback
    claim_splitter: Literal["rules", "model"] = "rules"
    splitter: str | None = None
    skip_invalid: bool = False
    concurrency: int = Field(default=4, ge=1, le=256)
    n_resamples: int = Field(default=1000, ge=0)
    injected_labels: bool = False  # the file's gold labels were made by `assay perturb`
    model_options: ModelOptions = Field(default_factory=ModelOptions)
    # where the records run (not in the protocol: results are the same either way)
    executor: Literal["live", "batch", "ray"] = "live"
    ray_batch_size: int = Field(default=256, ge=1)
    # seconds a Ray run waits for a node with CPUs when its cluster has none left; None: for ever
    ray_node_wait_s: NodeWait = NO_CPU_GRACE_S
    # this run holds one shard of the records, by question (`group`, else id): a question's
    # answers stay together, as the bootstrap draws them (`assay merge` joins the shards)
    shard: Shard | None = None

    @property
    def critic_name(self) -> str:
        if self.critic is not None:
            return self.critic
        return _verifier_model(self.verifier) or self.generator

    @property
    def splitter_name(self) -> str | None:
        """The model that splits answers into claims, or None for the rules."""
        if self.claim_splitter == "rules":
            return None
        return self.splitter or _verifier_model(self.verifier) or self.generator

    def settings(self) -> PatternSettings:
        return PatternSettings(
            n=self.n,
            seed=self.seed,
            threshold=self.threshold,
            revise=self.revise,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            critique_max_tokens=self.critique_max_tokens,
        )

    def protocol(self) -> dict[str, Any]:
        """The settings that decide each result; a run directory never mixes two of them."""
        return {
            "pattern": self.pattern,
            "settings": self.settings().model_dump(),
            "generator": self.generator,
            "verifier": self.verifier,
            "checker_votes": self.checker_votes,
            **_claim_check_protocol(self),
            **_splitter_protocol(self),
            **_answer_level_protocol(self),
            **_checker_version(self.verifier),
            "critic": self.critic_name,
            "oracle": self.oracle,
            "prompts": PROMPTS_FINGERPRINT,
            # a shard's directory holds its own records only; an unsharded run's fingerprint
            # has no such key, so the merged shards resume as that run
            **({"shard": str(self.shard)} if self.shard is not None else {}),
        }

    def public_dump(self) -> dict[str, Any]:
        """The config as recorded in run.json and summary.json (no secrets: keys are excluded)."""
        return self.model_dump(mode="json")

    def scorer(self) -> dict[str, str]:
        """What makes this run's ``p_error`` (:func:`assay.verify.calibration.scorer_of`)."""
        from .calibration import scorer_of

        return scorer_of(self.public_dump(), _checker_version(self.verifier).get("checker_version"))


def _claim_check_protocol(config: BenchmarkConfig) -> dict[str, Any]:
    """Every prompt, template and schema a model verifier may use, so none changes unseen."""
    if config.verifier in MODEL_FREE_CHECKERS:
        return {}
    from .checkers.model import SYSTEM_PROMPT, claim_check_schema

    return {
        "claim_check": config.claim_check,
        "single_pass": _single_pass_config(config).describe(),
        "json_prompt": SYSTEM_PROMPT,
        "json_schema": claim_check_schema(["id"]).model_dump(by_alias=True),
    }


def _splitter_protocol(config: BenchmarkConfig) -> dict[str, Any]:
    """How claims are made: the rules, or a model with its prompt and schema."""
    if config.splitter_name is None:
        return {"claim_splitter": "rules"}
    from .claims import DECOMPOSE_SCHEMA, decompose_messages

    return {
        "claim_splitter": "model",
        "splitter": config.splitter_name,
        "decompose_prompt": decompose_messages("")[0].content,
        "decompose_schema": DECOMPOSE_SCHEMA.model_dump(by_alias=True),
    }


def _answer_level_protocol(config: BenchmarkConfig) -> dict[str, Any]:
    """best_of_n's answer-level verifier: its prompts and settings."""
    if config.pattern != "best_of_n":
        return {}
    from .checkers.answer_level import AnswerLevelConfig

    return {"answer_level": AnswerLevelConfig(seed=config.seed).describe()}


def _check_splitter(config: BenchmarkConfig) -> None:
    if config.claim_splitter == "model" and config.pattern != "entailment":
        raise ConfigError(
            f"--claim-splitter model: only the entailment pattern splits answers into claims "
            f"(--pattern {config.pattern} does not)"
        )


def _checker_version(verifier: str) -> dict[str, str]:
    """The model-free checker's version (alone or as the ``checker+model`` primary), so that a
    run never mixes two versions of it."""
    checker = verifier.partition("+")[0]
    if checker == "learned":
        from .checkers.learned import CHECKER_VERSION

        return {"checker_version": CHECKER_VERSION}
    if checker == "lexical":
        from .checkers.baseline import LEXICAL_VERSION

        return {"checker_version": LEXICAL_VERSION}
    return {}


class BenchRunReport(BaseModel):
    """What one ``run`` call did."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_dir: Path
    selected: int  # records taken from the file (at most max_examples)
    already_done: int
    ran: int  # records taken up this session, the deferred ones included
    skipped_invalid: int
    left_out: int = 0  # valid records after the first max_examples, not run
    in_other_shards: int = 0  # selected records that belong to the other shards of --shard
    calls: int
    failed: int = 0  # selected examples whose model calls failed (the next run retries them)
    deferred: int = 0  # examples waiting on calls written to batch input files
    # a model whose served model name or system fingerprint changed during the run, in words
    served_warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Plan:
    selected: int
    already_done: int
    skipped: tuple[SkippedRecord, ...]
    left_out: int
    in_other_shards: int = 0
    generates: bool = False  # some record still to run has no answer: the generator is needed
    # Ray: the line numbers of the records to run, so their lines go to the workers unparsed,
    # and their ids (their earlier lines, failed ones, are superseded by this run's)
    todo_lines: array[int] = field(default_factory=lambda: array("L"))
    todo_ids: frozenset[str] = frozenset()
    # records whose error_type contradicts gold_error: how many, and the first one's place
    label_conflicts: int = 0
    first_label_conflict: str = ""


def run_benchmark(
    config: BenchmarkConfig,
    *,
    on_result: Callable[[ResultRecord], None] | None = None,
    backends: Mapping[str, Backend] | None = None,
    progress: bool | None = None,
    calibration: Path | None = None,
) -> BenchRunReport:
    """Run (or resume) the benchmark, then write summary.json and the plots.

    ``on_result`` sees each result after it is appended; ``backends`` maps model names to
    ready backends (scripted stubs in tests); ``calibration`` is a file from ``assay bench
    calibrate``, kept in the run once every check has passed (the caller gates with its
    ``raw_threshold``).
    """
    _check_splitter(config)
    _check_model_names(config)  # a misspelt name stops here, before anything is written
    with RunDirLock(config.out_dir) as lock:  # one writer per run directory
        if lock.stale_note:
            print(f"note: {lock.stale_note}", file=sys.stderr)
        return _run_locked(config, on_result, backends, progress, calibration)


def _run_locked(
    config: BenchmarkConfig,
    on_result: Callable[[ResultRecord], None] | None,
    backends: Mapping[str, Backend] | None,
    progress: bool | None,
    calibration: Path | None = None,
) -> BenchRunReport:
    from .summary import FAILED_CALLS, refresh_money, write_summary

    protocol_fp, previous = _check_protocol(config)
    # every finished result read whole, not only as JSON: a bad line found by the summary at
    # the end would come after run.json and the log were written
    recorded = result_index(config.out_dir / RESULTS_FILE)
    done = {key for key, current in recorded.items() if current.complete}
    # bad input, and input other than the run's, stop here, before anything is written
    plan = _plan(config, done, recorded)
    todo = plan.selected - plan.already_done
    # finished work opens no model; a model the run needs and cannot open stops it here
    from .calibration import CALIBRATION_FILE, check_adoption

    adopt = calibration is not None and check_adoption(
        calibration, config.out_dir, replace=False, scorer=config.scorer()
    )
    models = _open_models(config, backends or {}, plan.generates) if todo else {}
    if plan.label_conflicts:
        print(f"note: {_label_conflict_note(plan)}", file=sys.stderr)
    if plan.generates and config.n == 1 and (note := ONE_SAMPLE_NOTES.get(config.pattern)):
        print(f"note: {note}", file=sys.stderr)
    if adopt and calibration is not None:  # the first write: every check has passed
        shutil.copyfile(calibration, config.out_dir / CALIBRATION_FILE)
    logger = _open_run(config, protocol_fp, models, previous)
    _write_skipped(config.out_dir, plan.skipped)
    try:
        deferred: list[str] = []
        tally = _streamed_tally(config, plan) if config.executor == "ray" and todo else None
        on_ray: dict[str, dict[str, Any]] = {}  # the usage of the Ray batches written so far
        usage = asyncio.run(
            _run_pending(config, done, plan, on_result, models, progress, deferred, on_ray, tally)
        )
        summary = write_summary(config.out_dir, config=config.public_dump(), tally=tally)
    except BaseException as error:
        status: RunStatus = "cancelled" if isinstance(error, KeyboardInterrupt) else "error"
        # the replies received before the run stopped: this process's, or on Ray those of the
        # batches that came back (a batch still running is lost with its worker, and so are
        # the replies it received)
        so_far = (
            on_ray
            if config.executor == "ray"
            else {name: model.usage.summary() for name, model in models.items()}
        )
        served = served_identity(so_far, _earlier_served(previous))
        logger.finish(status, error=f"{type(error).__name__}: {error}", served=served)
        raise
    failed = int(summary.counts.get(FAILED_CALLS, 0))
    served = served_identity(usage, _earlier_served(previous))
    logger.finish(
        "success",
        sample_count=plan.selected,
        finished_count=plan.selected - failed - len(deferred),
        usage=usage,
        models=_models_as_used(config, usage, models, previous),
        served=served,
        shard=shard_record(config.shard, plan.selected + plan.in_other_shards),
    )
    refresh_money(config.out_dir)  # the session's tokens are in run_log.jsonl only now
    return BenchRunReport(
        run_dir=config.out_dir,
        selected=plan.selected,
        already_done=plan.already_done,
        ran=todo,
        skipped_invalid=len(plan.skipped),
        left_out=plan.left_out,
        in_other_shards=plan.in_other_shards,
        calls=sum(int(u["calls"]) for u in usage.values()),
        failed=failed,
        deferred=len(deferred),
        served_warnings=tuple(served_warnings(served)),
    )


def _earlier_served(previous: RunLog | None) -> dict[str, dict[str, Any]]:
    return previous.served if previous is not None else {}


def _check_model_names(config: BenchmarkConfig) -> None:
    for role, name in _roles(config).items():
        if name in MODEL_FREE_CHECKERS:
            if role == "verifier":
                continue
            raise ConfigError(f"--{role} {name}: a claim checker, usable only as --verifier")
        if role == "verifier" and name != (model := _verifier_model(name) or name):
            name = model  # learned+<model>: the model half must name a model
        try:
            split_model_name(name)
        except ConfigError as error:
            reason = error.message.replace(f" in model name {shown(name)}", "")
            raise ConfigError(
                f"--{role} {shown(name)}: {reason}", hint=_suggest(name, role)
            ) from None


def _suggest(name: str, role: str) -> str:
    """Close names a misspelling may have meant, and what the option takes."""
    provider, slash, model = name.partition("/")
    if slash:
        guesses = [
            _echoed(f"{p}/{model}") for p in difflib.get_close_matches(provider, PROVIDERS, n=1)
        ]
    else:
        checkers = MODEL_FREE_CHECKERS if role == "verifier" else ()
        guesses = difflib.get_close_matches(name, [*checkers, DEFAULT_MODEL], n=2, cutoff=0.5)
    meant = f"did you mean {' or '.join(guesses)}? " if guesses else ""
    takes = "a model-free checker (lexical, learned) or " if role == "verifier" else ""
    return f"{meant}--{role} takes {takes}provider/model, provider one of {', '.join(PROVIDERS)}"


def _echoed(text: str) -> str:
    """``text`` as it was given, or cut as error messages cut a value too long to echo."""
    return text if len(text) <= SHOWN_CHARS else shown(text)


def _check_protocol(config: BenchmarkConfig) -> tuple[str, RunLog | None]:
    """The protocol fingerprint and the earlier session's log; refuses a run directory made
    with other settings, one that holds another kind of run, and one with results but no
    readable run.json."""
    protocol_fp = fingerprint(config.protocol())
    previous = check_run_kind(config.out_dir, "bench", option="--out_dir")
    if previous is not None and previous.fingerprint not in (None, protocol_fp):
        raise RunError(
            f"{config.out_dir} was run with other settings (fingerprint "
            f"{previous.fingerprint}, now {protocol_fp})",
            hint="use a new --out_dir, or the same pattern, models, n, seed, threshold, "
            "revision and decoding as before",
        )
    return protocol_fp, previous


# What --n 1 leaves of each pattern in generate mode. The run is made (a one-sample run is the
# baseline the pattern's N is measured against), but said, so it is not read as the pattern.
def _label_conflict_note(plan: _Plan) -> str:
    """One line on the records whose error_type contradicts their gold_error."""
    others = plan.label_conflicts - 1
    more = f" (and {others} more record(s) like it)" if others else ""
    return (
        f"{plan.first_label_conflict}{more}; set gold_error to true for an answer with an "
        "error, or drop error_type"
    )


ONE_SAMPLE_NOTES: dict[str, str] = {
    "best_of_n": "--n 1: best_of_n verifies one generated answer per record, with nothing to "
    "rerank; --n 2 or more measures the selection",
    "self_consistency": "--n 1: self_consistency critiques each generated answer against the "
    "evidence alone, with no other sample to compare (critique.samples is 0); --n 2 or more "
    "measures self-consistency",
}


def _open_run(
    config: BenchmarkConfig,
    protocol_fp: str,
    models: Mapping[str, MeteredModel],
    previous: RunLog | None,
) -> RunLogger:
    log = RunLog(
        kind="bench",
        fingerprint=protocol_fp,
        models={
            role: {
                "name": name,
                **(_checker_version(name) if role == "verifier" else {}),
                **_versions_of(role, name, models, previous),
            }
            for role, name in _roles(config).items()
        },
        decoding=config.settings().answer_config().decoding_params(),
        config=config.public_dump(),
        # kept from the start: a session killed before its end loses only its own counts
        served=_earlier_served(previous),
        merged_from=previous.merged_from if previous is not None else None,  # its history
    )
    return RunLogger(config.out_dir, log)


def _versions(model: MeteredModel | None) -> dict[str, str]:
    """Backend and library versions, and for a server its address (never its key)."""
    return {} if model is None else model.backend.version_info()


def _versions_of(
    role: str, name: str, opened: Mapping[str, MeteredModel], previous: RunLog | None
) -> dict[str, str]:
    """The versions of a role's model: from the model when this session opened it, else what
    an earlier session of the run recorded for the same model (a rerun of finished work opens
    no model, and its run.json must not lose what the results were made with)."""
    model = opened.get(_verifier_model(name) or name)
    if model is not None:
        return _versions(model)
    earlier = previous.models.get(role, {}) if previous is not None else {}
    if earlier.get("name") != name:
        return {}
    session_only = {"name", "requests_this_session", "requests_shared_by", "note"}
    session_only |= {"reported_model", "checker_version"}
    return {key: value for key, value in earlier.items() if key not in session_only}


def _models_as_used(
    config: BenchmarkConfig,
    usage: dict[str, dict[str, Any]],
    opened: Mapping[str, MeteredModel],
    previous: RunLog | None,
) -> dict[str, dict[str, str]]:
    """Each role's model, saying whether it served any request (verify-only runs never call
    the generator, and a model-free checker is not a model)."""
    models: dict[str, dict[str, str]] = {}
    roles = _roles(config)
    for role, name in roles.items():
        served = usage.get(_verifier_model(name) or name, {})
        requests = int(served.get("calls", 0)) + int(served.get("cache_hits", 0))
        models[role] = {
            "name": name,
            "requests_this_session": str(requests),
            **_versions_of(role, name, opened, previous),
        }
        if sharing := _roles_sharing(roles, name):
            # one model, one meter: its requests are counted once, for all of these roles
            models[role]["requests_shared_by"] = ", ".join(sharing)
        if reported := served.get("reported_models"):
            models[role]["reported_model"] = ", ".join(reported)
        if role == "verifier":
            models[role].update(_checker_version(name))
        if name in usage and requests == 0:
            models[role]["note"] = "not called in this session"
    return models


def _roles_sharing(roles: Mapping[str, str], name: str) -> list[str]:
    """The roles served by the same model as ``name`` when there are several (none else)."""
    model = _verifier_model(name) or name
    sharing = [role for role, other in roles.items() if (_verifier_model(other) or other) == model]
    return sharing if len(sharing) > 1 else []


def _roles(config: BenchmarkConfig) -> dict[str, str]:
    roles = {"generator": config.generator, "verifier": config.verifier}
    roles["critic"] = config.critic_name
    if config.splitter_name is not None:
        roles["splitter"] = config.splitter_name
    if config.oracle is not None:
        roles["oracle"] = config.oracle
    return roles


def _plan(
    config: BenchmarkConfig, done: set[str], recorded: Mapping[str, CurrentResult] | None = None
) -> _Plan:
    """Validate the whole file (streaming) and count what is selected and already done.
    Every id with a result (``recorded``) must still be in the file, with the same content:
    a run never mixes two datasets, nor keeps a stale result of a record that changed."""
    recorded = recorded or {}
    unseen = set(recorded)
    skipped: list[SkippedRecord] = []
    selected = already = 0
    generates = False
    left_out = in_other_shards = 0
    todo_lines: array[int] = array("L")
    todo_ids: set[str] = set()
    conflicts: list[str] = []
    keep_lines = config.executor == "ray"
    records = iter_numbered_records(config.data, skip_invalid=config.skip_invalid, skipped=skipped)
    for index, (number, record) in enumerate(records):  # the whole file is validated
        if record.id in unseen:
            unseen.discard(record.id)
            _check_same_record(config, record, number, recorded[record.id])
        if config.max_examples is not None and index >= config.max_examples:
            left_out += 1
            continue
        if config.shard is not None and not config.shard.holds(record.cluster):
            in_other_shards += 1
            continue
        selected += 1
        if conflict := label_conflict(record.gold_error, record.error_type):
            conflicts.append(f"{config.data}:{number}: record {record.id!r}: {conflict}")
        already += record.id in done
        generates = generates or (record.answer is None and record.id not in done)
        if keep_lines and record.id not in done:
            todo_lines.append(number)
            todo_ids.add(record.id)
    if unseen:
        _refuse_missing(config, unseen, recorded)
    return _Plan(
        selected=selected,
        already_done=already,
        skipped=tuple(skipped),
        generates=generates,
        left_out=left_out,
        in_other_shards=in_other_shards,
        todo_lines=todo_lines,
        todo_ids=frozenset(todo_ids),
        label_conflicts=len(conflicts),
        first_label_conflict=conflicts[0] if conflicts else "",
    )


def _check_same_record(
    config: BenchmarkConfig, record: GroundedQARecord, number: int, current: CurrentResult
) -> None:
    if current.record_hash is None or current.record_hash == record_fingerprint(record):
        return
    raise RunError(
        f"{config.data}:{number}: record {record.id!r} is not the one {config.out_dir}/"
        f"{RESULTS_FILE}:{current.line} holds a result for (its question, answer, evidence, "
        "label or other fields changed); the run is not resumed with other data",
        hint="restore the data the run was made from, or give the changed data a new --out_dir",
    )


def _refuse_missing(
    config: BenchmarkConfig, unseen: set[str], recorded: Mapping[str, CurrentResult]
) -> None:
    first = min(unseen, key=lambda key: recorded[key].line)
    raise RunError(
        f"{config.data}: has no valid record {first!r}, which {config.out_dir}/{RESULTS_FILE}:"
        f"{recorded[first].line} holds a result for ({len(unseen)} such id(s)): the run was made "
        "from other data, and is not resumed with this file",
        hint="give the data the run was made from (a longer file with the same records is "
        "fine), or a new --out_dir",
    )


def _streamed_tally(config: BenchmarkConfig, plan: _Plan) -> SummaryTally:
    """A Ray run's summary tally, fed as batches arrive (each with its worker's tally of it):
    reading every result back after the workers would be serial time. It starts with the
    results of earlier sessions that this run does not redo, in file order."""
    from .summary import SummaryTally

    tally = SummaryTally()
    for result in iter_results(config.out_dir / RESULTS_FILE):
        if result.id not in plan.todo_ids:
            tally.add(result)
    return tally


def _selected_records(
    config: BenchmarkConfig, skipped: list[SkippedRecord] | None = None
) -> Iterator[GroundedQARecord]:
    records = iter_records(config.data, skip_invalid=config.skip_invalid, skipped=skipped)
    selected = itertools.islice(records, config.max_examples)
    shard = config.shard
    return selected if shard is None else (r for r in selected if shard.holds(r.cluster))


def _write_skipped(run_dir: Path, skipped: tuple[SkippedRecord, ...]) -> None:
    if not skipped:
        return
    path = run_dir / SKIPPED_FILE
    path.unlink(missing_ok=True)  # rewritten each session: it describes the current input
    with JsonlWriter(path) as writer:
        for item in skipped:
            writer.append(item)


async def _run_pending(
    config: BenchmarkConfig,
    done: set[str],
    plan: _Plan,
    on_result: Callable[[ResultRecord], None] | None,
    models: dict[str, MeteredModel],
    progress: bool | None,
    deferred: list[str],
    usage_on_ray: dict[str, dict[str, Any]],
    tally: SummaryTally | None = None,
) -> dict[str, dict[str, Any]]:
    """Run every selected record not in ``done``; returns each model's usage in this session.
    The ids of records left waiting on batch files are added to ``deferred``; a Ray run counts
    its results into ``tally`` and its batches' usage into ``usage_on_ray`` as they arrive."""
    todo = plan.selected - plan.already_done
    if todo == 0:
        return {}  # finished work: no model is even opened
    if config.executor == "ray":
        from .ray_batches import run_on_ray

        for model in models.values():  # the workers open their own
            await model.aclose()
        # checked lines go to the workers as they are: the driver does not parse them again
        lines = record_lines(config.data, plan.todo_lines)
        return run_on_ray(config, lines, todo, on_result, progress, usage_on_ray, tally)
    pending = (r for r in _selected_records(config) if r.id not in done)
    try:
        worker = _pattern_worker(config, models)
        bar = Progress(todo, f"bench {config.pattern}", show=progress, unit="ex")
        with JsonlWriter(config.out_dir / RESULTS_FILE) as writer, bar:

            def keep(outcome: tuple[str, ResultRecord | None]) -> None:
                record_id, result = outcome
                if result is None:  # waits on a batch file: written when its answers are in
                    deferred.append(record_id)
                    bar.update(1, waiting=1)
                    return
                writer.append(result)
                bar.update(1, failed=int(result.failure is not None or not result.complete))
                if on_result is not None:
                    on_result(result)

            # chunks bound the records in memory; one bar spans them all
            while chunk := list(itertools.islice(pending, CHUNK_SIZE)):
                await run_all(chunk, worker, keep, concurrency=config.concurrency, progress=False)
    finally:
        for model in models.values():
            await model.aclose()
    return {name: model.usage.summary() for name, model in models.items()}


def _open_models(
    config: BenchmarkConfig, backends: Mapping[str, Backend], generates: bool
) -> dict[str, MeteredModel]:
    """One model per distinct name the run will use: roles that share a model share its cache
    and its memory. Verify-only records are generated for only by the patterns that sample
    (self_consistency; best_of_n with n > 1), so model-free entailment or best_of_n with
    n = 1 over them opens (and needs to have installed) no model at all."""
    names = set()
    if generates:
        names |= {config.generator, config.critic_name}
    if _samples_verify_only(config):
        names.add(config.generator)
    if config.splitter_name is not None:
        names.add(config.splitter_name)
    if config.pattern == "self_consistency":
        names.add(config.critic_name)
    if (verifier_model := _verifier_model(config.verifier)) is not None:
        names.add(verifier_model)
    if config.oracle is not None:
        names.add(config.oracle)
    if misused := names & set(MODEL_FREE_CHECKERS):
        raise ConfigError(
            f"{', '.join(sorted(misused))}: a claim checker, usable only as --verifier"
        )
    from .stub_replies import RESPONDERS

    options = config.model_options.with_stub_responders(RESPONDERS)
    cache = open_cache(options)
    return {
        name: get_model(
            name, options, backend=backends.get(name), cache=cache, model_type=MeteredModel
        )
        for name in sorted(names)
    }


def _samples_verify_only(config: BenchmarkConfig) -> bool:
    """Whether the pattern asks the generator for samples even for a record with an answer:
    self_consistency's K samples, best_of_n's extra candidates when n > 1."""
    return config.pattern == "self_consistency" or (config.pattern == "best_of_n" and config.n > 1)


def _verifier_model(verifier: str) -> str | None:
    """The model a verifier spec asks: ``openai/x``, or the second half of ``learned+openai/x``."""
    if verifier in MODEL_FREE_CHECKERS:
        return None
    first, plus, second = verifier.partition("+")
    return second if plus and first in MODEL_FREE_CHECKERS else verifier


def _role_model(models: dict[str, MeteredModel], name: str) -> MeteredModel:
    """The role's model, or one that fails every call: a role the plan did not expect to use."""
    if name in models:
        return models[name]
    return MeteredModel(UnopenedBackend(name), cache=None, max_concurrency=1)


def _checker(config: BenchmarkConfig, models: dict[str, MeteredModel]) -> ClaimChecker:
    first, plus, second = config.verifier.partition("+")
    if plus and first in MODEL_FREE_CHECKERS:
        from .checkers.combined import CombinedChecker

        primary = _model_free_checker(first)
        return CombinedChecker(primary, _model_checker(config, models[second]))
    if config.verifier in MODEL_FREE_CHECKERS:
        return _model_free_checker(config.verifier)
    return _model_checker(config, models[config.verifier])


def _answer_verifier(
    config: BenchmarkConfig, models: dict[str, MeteredModel]
) -> AnswerVerifier | None:
    """best_of_n's verifier: a model's answer-level question (single-pass where the backend
    gives logprobs, else JSON), or the model-free checker applied to the whole answer."""
    if config.pattern != "best_of_n":
        return None
    from .checkers.answer_level import (
        AnswerLevelConfig,
        CheckerAnswerVerifier,
        JsonAnswerVerifier,
        SinglePassAnswerVerifier,
    )

    first, plus, _ = config.verifier.partition("+")
    if config.verifier in MODEL_FREE_CHECKERS or (plus and first in MODEL_FREE_CHECKERS):
        return CheckerAnswerVerifier(_checker(config, models))
    model = models[config.verifier]
    settings = AnswerLevelConfig(seed=config.seed)
    single_pass = config.claim_check == "single_pass" or (
        config.claim_check == "auto" and model.backend.supports_logprobs
    )
    if single_pass:
        return SinglePassAnswerVerifier(model, settings)
    return JsonAnswerVerifier(model, settings)


def _model_free_checker(name: str) -> ClaimChecker:
    if name == "lexical":
        from .checkers.baseline import LexicalChecker

        return LexicalChecker()
    from .checkers.learned import LearnedChecker

    return LearnedChecker()


def _single_pass_config(config: BenchmarkConfig) -> SinglePassConfig:
    from .checkers.single_pass import SinglePassConfig

    return SinglePassConfig(
        template=config.claim_template, seed=config.seed, evidence_cut=config.claim_evidence_cut
    )


def _model_checker(config: BenchmarkConfig, model: MeteredModel) -> ClaimChecker:
    single_pass = config.claim_check == "single_pass" or (
        config.claim_check == "auto"
        and model.backend.supports_logprobs
        and config.checker_votes == 1
    )
    if single_pass:
        from .checkers.single_pass import SinglePassChecker

        return SinglePassChecker(model, _single_pass_config(config))
    from .checkers.model import ModelChecker

    return ModelChecker(model, votes=config.checker_votes)


def _pattern_worker(
    config: BenchmarkConfig, models: dict[str, MeteredModel]
) -> Callable[[GroundedQARecord], Any]:
    """The coroutine that runs one record through the pattern (in-process and on Ray)."""
    context = PatternContext(
        generator=_role_model(models, config.generator),
        checker=_checker(config, models),
        critic=_role_model(models, config.critic_name),
        settings=config.settings(),
        answer_verifier=_answer_verifier(config, models),
        splitter=None if config.splitter_name is None else models[config.splitter_name],
    )
    oracle = models[config.oracle] if config.oracle is not None else None
    return _worker(config, context, oracle)


def _worker(
    config: BenchmarkConfig, context: PatternContext, oracle: MeteredModel | None
) -> Callable[[GroundedQARecord], Any]:
    pattern = get_pattern(config.pattern)

    async def work(record: GroundedQARecord) -> tuple[str, ResultRecord | None]:
        with metering() as meter, batch_scope() as batch:
            outcome = await pattern.run(record, context)
            if batch.deferred:  # the oracle labels the final answer: not known yet
                return record.id, None
            label = dataset_label(record, injected=config.injected_labels)
            verdicts: tuple[OracleVerdict | None, OracleVerdict | None] = (None, None)
            if label.error is None and oracle is not None:
                label, verdicts = await label_with_oracle(record, outcome, oracle)
        outcome = outcome.model_copy(update={"usage": meter.model_copy()})
        result = make_result(record, outcome, label, threshold=config.threshold, oracle=verdicts)
        return record.id, result

    return work
