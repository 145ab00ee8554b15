"""inspect_ai eval logs as judge data: the outputs a model already wrote under inspect_ai
(UK AISI's evaluation framework), judged with assay's strict protocol.

Each log (``.eval`` or ``.json``, read with ``inspect_ai.log.read_eval_log``) gives:

- one question per sample (``question_id`` = the sample id), whose prompt is the sample's
  input: a string as it is, a list of chat messages as ``role: text`` blocks (a lone user
  message as its text);
- one prompt variant per epoch, ``epoch-1``, ``epoch-2``, ...: every epoch answers the same
  input, so the epochs of one model are the cells of one question the way prompt variants are,
  and several logs of several models over one dataset meet in the question x variant x target
  cross product;
- one output per sample and epoch, ``target_model`` = the log's model.

A sample whose metadata names the question and the variant it stands for, ``{"assay":
{"question_id": ..., "variant": ...}}`` (the dataset ``assay instructions vary --inspect``
writes: one sample per prompt x wording), is that question's variant instead, so the wordings
of one prompt meet in one question; its k-th epoch is ``<variant> (repeat k)``, as for
promptfoo's repeats.

Two logs that give one sample id two different inputs (two datasets), or one model's output
for the same sample and epoch twice, are refused naming both files: either would make the
judge's evaluation set ambiguous. A sample with an error, or without an output, is skipped and
reported (how many, and the first ids); its cell stays in the question set, so the judge's
coverage report names it as missing rather than judging an empty text.

``inspect_ai`` is the optional extra ``inspect``: it is imported only when a log is read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ...errors import ConfigError, InputError, shown
from ..jsonl import check_input_file
from ..questions import ManifestEntry, PromptVariant, Question
from ._common import ImportReport, log_import_report, repeat_variant, stable_key

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample

DATASET = "inspect"
EXTRA_HINT = "pip install 'assay[inspect]'"
LABEL_CONVENTION = (
    "none: the judge scores the outputs; inspect's own scores are kept in each output's "
    "meta.scores (scorer name -> value) for comparison"
)
SKIP_ERROR = "sample with an error"
SKIP_NO_OUTPUT = "sample without an output"
SKIP_NON_TEXT = "input with non-text content (image, audio, video)"
SKIP_EMPTY_INPUT = "empty input"
# the order the report lists them in, whatever order the logs hold the samples in
SKIP_REASONS = (SKIP_ERROR, SKIP_NO_OUTPUT, SKIP_NON_TEXT, SKIP_EMPTY_INPUT)
# sample metadata naming the question and variant a sample stands for
PLACEMENT_KEY = "assay"


class InspectImport(BaseModel):
    """The question set and outputs manifest of an import of inspect eval logs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    questions: tuple[Question, ...]
    outputs: tuple[ManifestEntry, ...]
    report: ImportReport


def variant_of(epoch: int) -> str:
    return f"epoch-{epoch}"


def import_inspect_logs(paths: Sequence[Path]) -> InspectImport:
    """Read every log in ``paths`` (needs ``inspect_ai``) into one question set and manifest."""
    read = _log_reader()
    builder = _JudgeSetBuilder()
    for path in paths:
        builder.add_log(path, _read_finished_log(path, read))
    return builder.result(paths)


def _log_reader() -> Callable[[str], EvalLog]:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise ConfigError(
            f"assay import inspect needs inspect_ai, which is not installed: {EXTRA_HINT}"
        ) from None
    return read_eval_log


def _read_finished_log(path: Path, read: Callable[[str], EvalLog]) -> EvalLog:
    check_input_file(path, hint="LOG is an inspect_ai eval log (.eval or .json)")
    try:
        log = read(str(path))
    except Exception as error:  # inspect_ai raises many kinds for a file it cannot read
        raise InputError(
            f"not an inspect_ai eval log ({type(error).__name__}: {_read_error(error)})",
            path=path,
        ) from None
    if log.status != "success":
        raise InputError(_unfinished(log), path=path)
    if not log.samples:
        raise InputError(
            "the log holds no samples (was the eval run with --no-log-samples?)", path=path
        )
    return log


def _unfinished(log: EvalLog) -> str:
    why = "" if log.error is None else f": {_first_line(log.error.message)}"
    return (
        f"the log of a run that did not finish (status {log.status!r}{why}); assay imports "
        "logs of finished runs: rerun the eval (inspect eval-retry) and import its log"
    )


def _read_error(error: Exception) -> str:
    """What inspect_ai found wrong with the file: for a log of another shape, also where in it
    (pydantic's first line names only the model)."""
    if isinstance(error, ValidationError) and error.errors():
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the log"
        return _first_line(f"{_first_line(str(error))}; the first at {where}: {first['msg']}")
    return _first_line(str(error))


def _first_line(text: str, limit: int = 200) -> str:
    """The first line of an error message, cut to ``limit`` characters (a traceback's last
    line can run to pages)."""
    lines = text.strip().splitlines()
    line = lines[0] if lines else "no detail"
    return line if len(line) <= limit else line[:limit] + "…"


@dataclass
class _QuestionDraft:
    meta: dict[str, Any]
    path: Path  # the first log that gave this question
    placed: bool  # its samples name their question and variant (PLACEMENT_KEY)
    prompts: dict[str, str] = field(default_factory=dict)  # variant -> the variant's input
    epochs: set[int] = field(default_factory=set)


@dataclass(frozen=True)
class _Placement:
    question_id: str
    variant: str
    placed: bool


@dataclass
class _JudgeSetBuilder:
    questions: dict[str, _QuestionDraft] = field(default_factory=dict)
    outputs: list[ManifestEntry] = field(default_factory=list)
    output_logs: dict[tuple[str, str, str], Path] = field(default_factory=dict)
    skipped: dict[str, list[str]] = field(default_factory=dict)
    samples: int = 0
    models: set[str] = field(default_factory=set)

    def add_log(self, path: Path, log: EvalLog) -> None:
        model = _target_model(log, path)
        self.models.add(model)
        for sample in log.samples or ():
            self.samples += 1
            self._add_sample(path, log, model, sample)

    def _add_sample(self, path: Path, log: EvalLog, model: str, sample: EvalSample) -> None:
        place = _placement(sample, path)
        named = f"{_question_id(sample, path)} (epoch {sample.epoch}, {path.name})"
        prompt = _prompt(sample.input)
        if prompt is None or not prompt.strip():
            self._skip(SKIP_NON_TEXT if prompt is None else SKIP_EMPTY_INPUT, named)
            return
        draft = self._question(place, prompt, sample, path)
        draft.epochs.add(sample.epoch)
        if sample.error is not None:
            self._skip(SKIP_ERROR, named)
            return
        text = sample.output.completion if sample.output is not None else ""
        if not text.strip():
            self._skip(SKIP_NO_OUTPUT, named)
            return
        self._claim_cell(place.question_id, place.variant, model, path)
        self.outputs.append(_output(place, prompt, model, path, log, sample, text))

    def _question(
        self, place: _Placement, prompt: str, sample: EvalSample, path: Path
    ) -> _QuestionDraft:
        draft = self.questions.get(place.question_id)
        if draft is None:
            meta = {"target": sample.target, "metadata": sample.metadata or {}}
            draft = _QuestionDraft(meta, path, place.placed)
            self.questions[place.question_id] = draft
        if draft.placed != place.placed:
            raise InputError(
                f"question {place.question_id} is named by a sample's metadata.{PLACEMENT_KEY} "
                f"in one log and is a sample id without it in another ({draft.path})",
                path=path,
                hint="import the logs of each dataset into a directory of its own",
            )
        earlier = _earlier_input(draft, place)
        if earlier is not None and earlier != prompt:
            raise InputError(
                f"sample {_question_id(sample, path)} has another input here than in "
                f"{draft.path} ({shown(prompt)} vs {shown(earlier)}): the logs are of "
                "different datasets, whose sample ids would name two questions alike",
                path=path,
                hint="import the logs of each dataset into a directory of its own",
            )
        draft.prompts[place.variant] = prompt
        return draft

    def _claim_cell(self, question_id: str, variant: str, model: str, path: Path) -> None:
        cell = (question_id, variant, model)
        earlier = self.output_logs.get(cell)
        if earlier is not None:
            where = "this log too (is the log named twice?)" if earlier == path else str(earlier)
            raise InputError(
                f"{model}'s output for sample {question_id} {variant} is also in {where}: "
                "the judge takes one output per question x variant x target model",
                path=path,
                hint="import each run of a model over a dataset into a directory of its own",
            )
        self.output_logs[cell] = path

    def _skip(self, reason: str, named: str) -> None:
        self.skipped.setdefault(reason, []).append(named)

    def result(self, paths: Sequence[Path]) -> InspectImport:
        questions = tuple(
            Question(
                question_id=question_id,
                variants=_variants(draft),
                meta=draft.meta,
            )
            for question_id, draft in self.questions.items()
            if draft.epochs
        )
        report = log_import_report(
            dataset=DATASET,
            paths=paths,
            rows=self.samples,
            units={"samples": self.samples},
            kept=len(self.outputs),
            skipped=self.skipped,
            reasons=SKIP_REASONS,
            counts={
                "questions": len(questions),
                "epochs": max((len(d.epochs) for d in self.questions.values()), default=0),
                "target models": len(self.models),
            },
            convention=LABEL_CONVENTION,
        )
        return InspectImport(questions=questions, outputs=tuple(self.outputs), report=report)


def _earlier_input(draft: _QuestionDraft, place: _Placement) -> str | None:
    """The input a sample must repeat: its variant's, for a placed sample; for a plain one,
    the input of its other epochs (every epoch answers the same input)."""
    if place.placed:
        return draft.prompts.get(place.variant)
    return next(iter(draft.prompts.values()), None)


def _variants(draft: _QuestionDraft) -> tuple[PromptVariant, ...]:
    """A question's variants: its placed samples' in the order the logs gave them, else its
    epochs in order."""
    if draft.placed:
        return tuple(PromptVariant(variant=v, prompt=p) for v, p in draft.prompts.items())
    (prompt,) = set(draft.prompts.values())
    return tuple(
        PromptVariant(variant=variant_of(epoch), prompt=prompt) for epoch in sorted(draft.epochs)
    )


def _placement(sample: EvalSample, path: Path) -> _Placement:
    """The question and variant a sample stands for: those its metadata names under
    PLACEMENT_KEY (the k-th epoch a repeat of the variant), else its id and its epoch."""
    named = (sample.metadata or {}).get(PLACEMENT_KEY)
    if named is None:
        return _Placement(_question_id(sample, path), variant_of(sample.epoch), placed=False)
    fields = named if isinstance(named, dict) else {}
    question_id = _named_string(fields, "question_id", sample, path)
    variant = _named_string(fields, "variant", sample, path)
    return _Placement(question_id, repeat_variant(variant, sample.epoch), placed=True)


def _named_string(fields: Mapping[str, Any], key: str, sample: EvalSample, path: Path) -> str:
    value = fields.get(key)
    if not isinstance(value, str) or not value.strip() or value != value.strip():
        raise InputError(
            f"sample {shown(sample.id)}: expected a non-empty string without surrounding "
            f"spaces, got {shown(value)}",
            path=path,
            field=f"metadata.{PLACEMENT_KEY}.{key}",
        )
    return value


def _target_model(log: EvalLog, path: Path) -> str:
    model = log.eval.model
    if not model or model != model.strip() or len(model) > 200:
        raise InputError(
            f"the log's model name {shown(model)} cannot name a target model", path=path
        )
    return model


def _question_id(sample: EvalSample, path: Path) -> str:
    question_id = str(sample.id)
    if not question_id.strip() or question_id != question_id.strip() or len(question_id) > 200:
        raise InputError(
            f"sample id {shown(sample.id)} cannot be a question id (at most 200 characters, no "
            "surrounding spaces)",
            path=path,
        )
    return question_id


def _prompt(sample_input: str | Sequence[Any]) -> str | None:
    """The text of a sample's input; None when a message holds content other than text,
    which the judge would not see."""
    if isinstance(sample_input, str):
        return sample_input
    messages = list(sample_input)
    if any(not _text_only(message.content) for message in messages):
        return None
    if len(messages) == 1 and messages[0].role == "user":
        return str(messages[0].text)
    return "\n\n".join(f"{message.role}: {message.text}" for message in messages)


def _text_only(content: str | Sequence[Any]) -> bool:
    return isinstance(content, str) or all(
        getattr(part, "type", None) in ("text", "reasoning") for part in content
    )


def _output(
    place: _Placement,
    prompt: str,
    model: str,
    path: Path,
    log: EvalLog,
    sample: EvalSample,
    text: str,
) -> ManifestEntry:
    variant = PromptVariant(variant=place.variant, prompt=prompt)
    return ManifestEntry(
        question_id=place.question_id,
        prompt_variant=variant.variant,
        target_model=model,
        output_id=_output_id(log.eval.task, place.question_id, variant.variant),
        text=text,
        finish_reason=_finish_reason(sample),
        completion_tokens=_completion_tokens(sample),
        prompt_hash=variant.prompt_hash,
        meta=_output_meta(path, log, sample),
    )


def _output_id(task: str, question_id: str, variant: str) -> str:
    """``<task>:<sample id>:<variant>``: one per target model and cell (two outputs for one
    cell are refused), the same for every run of the eval, so a judge prompt, which shows it
    (as a blind alias), does not change with inspect's random log names (the log's name is in
    ``meta.log``); a hash stands for the sample id where the id would pass 200 characters."""
    output_id = f"{task}:{question_id}:{variant}"
    if len(output_id) <= 200:
        return output_id
    return f"{task[:100]}:{stable_key(question_id)}:{variant}"


def _output_meta(path: Path, log: EvalLog, sample: EvalSample) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "log": path.name,
        "task": log.eval.task,
        "epoch": sample.epoch,
        "scores": _scores(sample.scores or {}),
    }
    if sample.limit is not None:  # the output was cut by a token, time or message limit
        meta["limit"] = sample.limit.type
    return meta


def _scores(scores: Mapping[str, Any]) -> dict[str, Any]:
    return {name: score.value for name, score in scores.items()}


def _finish_reason(sample: EvalSample) -> str | None:
    choices = sample.output.choices if sample.output is not None else []
    return str(choices[0].stop_reason) if choices else None


def _completion_tokens(sample: EvalSample) -> int | None:
    usage = sample.output.usage if sample.output is not None else None
    return usage.output_tokens if usage is not None else None
