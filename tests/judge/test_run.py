"""Judge runs on stub models: archives, resume, re-asks, call failures, refusals."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from assay.data.questions import TargetOutput, load_outputs, load_questions
from assay.errors import RunError
from assay.judge.archive import INVALID_DIR, VALID_DIR, iter_archive, recheck_archive
from assay.judge.evalset import EvalSet, build_eval_set
from assay.judge.protocol import JUDGE_CALL_FAILED, DecodingSettings, Protocol
from assay.judge.run import (
    PROMPT_MANIFEST,
    JudgeRunConfig,
    _JudgeSession,
    iter_work,
    protocol_state,
    run_judges,
)
from assay.judge.stub_replies import RESPONDERS, clean_reply
from assay.model import (
    BackendError,
    ChatMessage,
    Completion,
    ErrorKind,
    GenerateConfig,
    Model,
    ModelOptions,
    get_model,
)
from assay.model.providers.stub import StubBackend

from .helpers import write_manifest

NO_CACHE = ModelOptions(cache=False).with_stub_responders(RESPONDERS)
Responder = Callable[[Sequence[ChatMessage], GenerateConfig, random.Random], str]


def stub(name: str, responder: Responder | None = None) -> Model:
    if responder is None:
        return get_model(f"stub/{name}", NO_CACHE)
    return get_model(f"stub/{name}", NO_CACHE, backend=StubBackend(name, replies=responder))


def judge(eval_set: EvalSet, judges: list[Model], run_dir: Path, **config: object) -> object:
    return asyncio.run(run_judges(eval_set, judges, run_dir, JudgeRunConfig(**config)))  # type: ignore[arg-type]


def files(run_dir: Path) -> list[Path]:
    return [item.path for item in iter_archive(run_dir)]


def test_every_reply_lands_in_exactly_one_archive(eval_set: EvalSet, tmp_path: Path) -> None:
    judges = [stub("a"), stub("b")]  # the default stub responder flaws some replies
    summary = judge(eval_set, judges, tmp_path / "run", mode="both")
    records = [(item.path, item.record) for item in iter_archive(tmp_path / "run")]
    assert len(records) == 16 == summary.attempts_made  # type: ignore[attr-defined]
    keys = [record.work_key for _, record in records if record is not None]
    assert len(set(keys)) == 16
    for path, record in records:
        assert record is not None
        top = path.relative_to(tmp_path / "run").parts[0]
        assert top == (VALID_DIR if record.valid else INVALID_DIR)
        assert record.method == (
            "self_judge" if record.judge_model == record.target_model else "cross_judge"
        )
    assert {r.valid for _, r in records if r is not None} == {True, False}
    assert recheck_archive(tmp_path / "run").consistent


def test_rerun_of_finished_work_calls_no_model(eval_set: EvalSet, tmp_path: Path) -> None:
    judge(eval_set, [stub("a"), stub("b")], tmp_path / "run", mode="cross")
    before = files(tmp_path / "run")
    again = [stub("a"), stub("b")]
    summary = judge(eval_set, again, tmp_path / "run", mode="cross")
    assert [m.usage.calls + m.usage.cache_hits for m in again] == [0, 0]
    assert [m.backend.calls for m in again] == [0, 0]  # type: ignore[attr-defined]
    assert summary.already_finished == 8 and summary.attempts_made == 0  # type: ignore[attr-defined]
    assert files(tmp_path / "run") == before
    log = json.loads((tmp_path / "run" / "run.json").read_text())
    assert log["kind"] == "judge" and log["status"] == "success"
    assert log["tool_access"] == "none" and log["sample_count"] == 8
    assert len((tmp_path / "run" / "run_log.jsonl").read_text().splitlines()) == 4


class _Stalling(StubBackend):
    """Answers ``allowed`` calls, then waits forever (until the run is cancelled)."""

    def __init__(self, allowed: int) -> None:
        super().__init__("a", replies=clean_reply)
        self.allowed = allowed

    async def generate(self, messages: Sequence[ChatMessage], config: GenerateConfig) -> Completion:
        if self.calls >= self.allowed:
            await asyncio.Event().wait()
        return await super().generate(messages, config)


def test_interrupted_run_resumes_where_it_stopped(eval_set: EvalSet, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    stalling = get_model("stub/a", NO_CACHE, backend=_Stalling(allowed=3))

    async def interrupted() -> None:
        task = asyncio.ensure_future(
            run_judges(eval_set, [stalling], run_dir, JudgeRunConfig(concurrency=1))
        )
        while len(files(run_dir)) < 3:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    assert len(files(run_dir)) == 3
    assert json.loads((run_dir / "run.json").read_text())["status"] == "cancelled"
    resumed = stub("a", clean_reply)
    judge(eval_set, [resumed], run_dir)
    assert resumed.usage.calls == 1  # 4 cross samples (targets stub/b) minus 3 finished
    assert len(files(run_dir)) == 4


def test_call_failures_are_recorded_invalid_never_scored(eval_set: EvalSet, tmp_path: Path) -> None:
    def broken(messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random) -> str:
        raise BackendError(ErrorKind.BAD_REQUEST, "the server said no")

    first = stub("a", broken)
    judge(eval_set, [first], tmp_path / "run")
    assert first.usage.calls == 5  # the first bad request also tried structure-only, once
    records = [item.record for item in iter_archive(tmp_path / "run")]
    assert len(records) == 4
    for record in records:
        assert record is not None and not record.valid
        assert record.flags == (JUDGE_CALL_FAILED,) and record.raw_reply is None
        assert record.call_failure is not None and record.call_failure.kind == "bad_request"
        assert record.classification.scores is None
    assert recheck_archive(tmp_path / "run").consistent
    again = stub("a", broken)
    judge(eval_set, [again], tmp_path / "run")  # a failed call is not a judgment: asked again,
    assert again.usage.calls == 5  # once per sample and session (+ the fallback), no loop
    fixed = stub("a", clean_reply)
    judge(eval_set, [fixed], tmp_path / "run")
    assert fixed.usage.calls == 4
    attempts = sorted(
        (r.attempt, r.valid) for r in map(lambda i: i.record, iter_archive(tmp_path / "run")) if r
    )
    assert attempts == [(1, False)] * 4 + [(2, False)] * 4 + [(3, True)] * 4
    done = stub("a", clean_reply)
    judge(eval_set, [done], tmp_path / "run")
    assert done.usage.calls == 0


def test_bounded_reasks_archive_every_attempt(eval_set: EvalSet, tmp_path: Path) -> None:
    def sloppy_first(
        messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random
    ) -> str:
        answer = clean_reply(messages, config, rng)
        return answer if messages[-1].role == "user" and len(messages) > 2 else "Sure! " + answer

    run_dir = tmp_path / "run"
    judge(eval_set, [stub("a", sloppy_first)], run_dir)  # evaluate once: all invalid
    assert {item.record.valid for item in iter_archive(run_dir)} == {False}  # type: ignore[union-attr]
    reasker = stub("a", sloppy_first)
    judge(eval_set, [reasker], run_dir, max_attempts=2)
    assert reasker.usage.calls == 4  # one re-ask per sample
    records = [item.record for item in iter_archive(run_dir) if item.record is not None]
    assert sorted((r.attempt, r.valid) for r in records) == [(1, False)] * 4 + [(2, True)] * 4
    second = next(r for r in records if r.attempt == 2)
    assert second.messages[2].role == "assistant" and second.messages[2].content.startswith("Sure")
    assert "no_text_outside_object" in second.messages[3].content
    idle = stub("a", sloppy_first)
    judge(eval_set, [idle], run_dir, max_attempts=2)
    assert idle.usage.calls == 0


@pytest.mark.parametrize(
    ("setting", "expected"), [("exact", "exact"), ("schema", "schema"), ("off", "off")]
)
def test_constrained_decoding_sends_the_schema(
    eval_set: EvalSet, tmp_path: Path, setting: str, expected: str
) -> None:
    seen: list[str] = []

    def capture(messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random) -> str:
        schema = config.json_schema
        seen.append("off" if schema is None else "exact" if "anyOf" in schema.schema_ else "schema")
        if schema is not None:
            assert schema.name == "judge_evaluation"
        return clean_reply(messages, config, rng)

    decoding = DecodingSettings(constrained=setting)  # type: ignore[arg-type]
    judge(eval_set, [stub("a", capture)], tmp_path / "run", decoding=decoding)
    assert seen == [expected] * 4
    records = [item.record for item in iter_archive(tmp_path / "run") if item.record is not None]
    assert {(r.decoding_mode, r.constrained, r.valid) for r in records} == {
        (expected, expected != "off", True)
    }


def test_exact_budget_covers_the_longest_reply(eval_set: EvalSet, tmp_path: Path) -> None:
    budgets: list[int] = []

    def capture(messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random) -> str:
        budgets.append(config.max_tokens)
        return clean_reply(messages, config, rng)

    decoding = DecodingSettings(constrained="exact", max_tokens=64)
    judge(eval_set, [stub("a", capture)], tmp_path / "run", decoding=decoding)
    records = [item.record for item in iter_archive(tmp_path / "run") if item.record is not None]
    assert all(budget > 64 for budget in budgets)
    assert sorted(r.reply_budget or 0 for r in records) == sorted(budgets)


def test_blind_judging_shows_aliases_and_archives_the_real_names(
    eval_set: EvalSet, tmp_path: Path
) -> None:
    judge(eval_set, [stub("a", clean_reply)], tmp_path / "run")
    records = [item.record for item in iter_archive(tmp_path / "run") if item.record is not None]
    assert records and all(r.valid for r in records)
    for record in records:
        assert record.aliases is not None
        identifiers = record.messages[1].content.split("TASK GIVEN")[0]
        assert record.target_model not in identifiers and record.output_id not in identifiers
        assert record.aliases["target_model"] in identifiers
        parsed = record.classification.parsed or {}
        assert parsed["meta"]["output_id"] == record.aliases["output_id"]
    assert recheck_archive(tmp_path / "run").consistent


def test_no_blind_shows_the_real_names(eval_set: EvalSet, tmp_path: Path) -> None:
    protocol = Protocol(blind=False)
    judge(eval_set, [stub("a", clean_reply)], tmp_path / "run", protocol=protocol)
    records = [item.record for item in iter_archive(tmp_path / "run") if item.record is not None]
    assert records and all(r.valid and r.aliases is None for r in records)
    assert all(r.target_model in r.messages[1].content for r in records)


def test_a_backend_refusing_the_exact_schema_falls_back_to_structure_only(
    eval_set: EvalSet, tmp_path: Path
) -> None:
    def picky(messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random) -> str:
        if config.json_schema is not None and "anyOf" in config.json_schema.schema_:
            raise BackendError(ErrorKind.BAD_REQUEST, "HTTP 400: unsupported schema: anyOf")
        return clean_reply(messages, config, rng)

    model = stub("a", picky)
    judge(eval_set, [model], tmp_path / "run")
    records = [item.record for item in iter_archive(tmp_path / "run") if item.record is not None]
    assert {r.decoding_mode for r in records} == {"schema"}
    assert all("exact schema refused" in (r.decoding_note or "") for r in records)
    assert all(r.valid for r in records)


def test_incomplete_set_is_refused_before_any_call(tmp_path: Path, questions_path: Path) -> None:
    manifest = write_manifest(tmp_path / "partial.jsonl", ["stub/a", "stub/b"], skip=1)
    eval_set = build_eval_set(load_questions(questions_path), load_outputs(manifest))
    model = stub("c", clean_reply)
    with pytest.raises(RunError, match="INCOMPLETE_COVERAGE") as caught:
        judge(eval_set, [model], tmp_path / "run")
    assert "missing: Q1 x A x stub/a" in str(caught.value)
    assert model.usage.calls == 0 and not (tmp_path / "run").exists()
    judge(eval_set, [model], tmp_path / "run", allow_incomplete=True)
    assert model.usage.calls == 7
    coverage = json.loads((tmp_path / "run" / "coverage.json").read_text())
    assert coverage["aligned"] == 7 and coverage["issues"][0]["kind"] == "missing"


def test_self_mode_needs_a_judge_that_is_a_target(eval_set: EvalSet, tmp_path: Path) -> None:
    with pytest.raises(RunError, match="nothing to judge"):
        judge(eval_set, [stub("c")], tmp_path / "run", mode="self")


def test_other_fingerprint_refused_without_calls(eval_set: EvalSet, tmp_path: Path) -> None:
    judge(eval_set, [stub("a", clean_reply)], tmp_path / "run")
    model = stub("a", clean_reply)
    with pytest.raises(RunError, match="fingerprint"):
        judge(eval_set, [model], tmp_path / "run", decoding=DecodingSettings(max_tokens=64))
    assert model.usage.calls == 0


def test_prompt_manifest_lists_cross_and_self_prompts(eval_set: EvalSet, tmp_path: Path) -> None:
    judge(eval_set, [stub("a", clean_reply)], tmp_path / "run", mode="both")
    text = (tmp_path / "run" / PROMPT_MANIFEST).read_text()
    assert "## cross_judge (first prompt" in text and "## self_judge (first prompt" in text
    assert "## Template: system" in text and "<<<BEGIN OUTPUT" in text
    record = next(item.record for item in iter_archive(tmp_path / "run"))
    assert record is not None
    assert record.messages[0].content in text  # the system prompt, verbatim


def test_rerun_with_fewer_asks_still_counts_a_late_valid_reply(
    eval_set: EvalSet, tmp_path: Path
) -> None:
    """A pair judged invalid then valid stays valid when rerun with one ask: the finished
    state kept per pair (an identity, not its attempts) does not depend on the order read."""

    def sloppy_first(
        messages: Sequence[ChatMessage], config: GenerateConfig, rng: random.Random
    ) -> str:
        answer = clean_reply(messages, config, rng)
        return answer if len(messages) > 2 else "Sure! " + answer

    run_dir = tmp_path / "run"
    judge(eval_set, [stub("a", sloppy_first)], run_dir, max_attempts=2)
    rerun = stub("a", sloppy_first)
    summary = judge(eval_set, [rerun], run_dir, max_attempts=1)
    assert rerun.usage.calls == 0
    assert (summary.work_items, summary.already_finished) == (4, 4)  # type: ignore[attr-defined]
    assert (summary.valid, summary.invalid) == (4, 0)  # type: ignore[attr-defined]
    # the archive happens to list valid records first; in attempt order the same holds
    records = sorted(
        (item.record for item in iter_archive(run_dir) if item.record is not None),
        key=lambda record: record.attempt,
    )
    assert [r.valid for r in records] == [False] * 4 + [True] * 4
    config = JudgeRunConfig(max_attempts=1)
    state = protocol_state(config.protocol, config.decoding)
    session = _JudgeSession([stub("a")], state, config, "2026-01-01", lambda _: None)
    for record in records:
        session.restore(record)
    session.restored()
    work = list(iter_work(eval_set, ["stub/a"], "cross"))
    assert len(work) == 4 and all(session.finished(w) and session.is_valid(w) for w in work)
    assert not session.previous  # finished pairs hold no attempts


def test_summary_counts_only_the_pairs_this_run_asks_for(eval_set: EvalSet, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    judge(eval_set, [stub("a", clean_reply), stub("b", clean_reply)], run_dir, mode="both")
    summary = judge(eval_set, [stub("a"), stub("b")], run_dir, mode="self")
    assert (summary.work_items, summary.already_finished) == (8, 8)  # type: ignore[attr-defined]
    assert (summary.valid, summary.invalid, summary.model_calls) == (8, 0, 0)  # type: ignore[attr-defined]
    log = json.loads((run_dir / "run.json").read_text())
    assert log["finished_count"] == 8


def test_a_run_reads_its_outputs_as_it_goes(
    questions_path: Path, manifest_path: Path, tmp_path: Path
) -> None:
    """The evaluation set holds no outputs: each pass reads them again from the source."""
    reads: list[int] = []
    outputs = load_outputs(manifest_path)

    def source() -> Iterator[TargetOutput]:
        reads.append(0)
        for output in outputs:
            reads[-1] += 1
            yield output

    eval_set = build_eval_set(load_questions(questions_path), source, held_up_to=0)
    assert reads == [8] and len(eval_set) == 8  # one pass checks coverage
    judge(eval_set, [stub("a", clean_reply)], tmp_path / "run")
    # the run: the first cross pair for the prompt manifest, then one pass for the pairs
    assert len(reads) == 3 and reads[2] == 8
    assert len(files(tmp_path / "run")) == 4
