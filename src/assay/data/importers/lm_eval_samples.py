"""lm-evaluation-harness samples files as judge data: the outputs a model already wrote under
lm-eval (``lm_eval ... --log_samples --output_path P``), judged with assay's strict protocol.

lm-eval writes, per task, ``P/<model>/samples_<task>_<timestamp>.jsonl`` (one line per
document and filter) and beside it ``results_<timestamp>.json`` (the model, its arguments and
each task's config). Each document of a generation task (``generate_until``) gives:

- its question: ``doc-<doc_id>``, or ``ifeval-<key>`` for an IFEval document (``key``,
  ``prompt``, ``instruction_id_list``, ``kwargs``), the id ``assay import ifeval`` gives it;
  the question's meta keeps lm-eval's ``doc`` and ``target``;
- its prompt variant: the task's name, so two tasks (two templates) over one dataset are two
  variants of its questions; a task run with ``repeats: N`` gives ``<task> (repeat k)`` for the
  k-th response, as promptfoo's repeats do; the variant's prompt is the context lm-eval sent (a
  chat request's messages as ``role: text`` blocks, a lone user message as its text);
- its output: ``target_model`` = the results file's ``model_name`` (the samples file's folder,
  lm-eval's sanitised model name, where there is no results file); the text is the model's
  response as it came back, before lm-eval's filters; the output's meta keeps lm-eval's
  per-sample metric values under each filter, and a filter's response where it is another text
  (a regex filter's extracted answer).

Documents of log-likelihood tasks (``multiple_choice``, ``loglikelihood``) hold scores of given
continuations, no text a model wrote: they are skipped and reported, and left out of the
question set. IFEval documents are also written in IFEval's own layout (prompts, responses and
lm-eval's strict and loose verdicts, :class:`IFEvalFiles`), which ``assay instructions`` reads.

Refused, naming the file and the line and field (one error, nothing written): a file not named
or shaped as lm-eval writes them; a results file that is not JSON; a document given another
content, or a variant another prompt, by another file; one model's output for the same cell
twice. Read with the standard library: lm-eval need not be installed to import its files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictInt

from ...errors import InputError, shown
from ..jsonl import check_input_file
from ..questions import ID_PATTERN, ManifestEntry, PromptVariant, Question
from ._common import (
    ImportReport,
    RowReader,
    log_import_report,
    read_rows,
    repeat_variant,
    stable_key,
)

DATASET = "lm-eval"
ROWS = "per-sample lm-eval"  # what read_rows and RowReader call the file in their errors
LABEL_CONVENTION = (
    "none: the judge scores the outputs; lm-eval's own per-sample metric values are kept in "
    "each output's meta.lm_eval (filter -> metric -> value) for comparison"
)
SKIP_LOGLIKELIHOOD = "sample of a log-likelihood task (no text output)"
SKIP_NO_TEXT = "sample without a text output"
SKIP_REASONS = (SKIP_LOGLIKELIHOOD, SKIP_NO_TEXT)
GENERATION = "generate_until"
#: Where, under an import's ``--out``, IFEval documents go in IFEval's layout, one folder per
#: model and variant: the inputs, ``input_response_data_<model>.jsonl`` and these verdicts.
IFEVAL_FOLDER = "ifeval"
IFEVAL_LAYOUT_NAMES = ("input_data.jsonl", "eval_results_strict.jsonl", "eval_results_loose.jsonl")
WRITE_IT = "write it with lm_eval ... --log_samples --output_path DIR"
SAMPLES_NAME = re.compile(
    r"samples_(?P<task>.+)_(?P<stamp>\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d+)\.jsonl"
)
IFEVAL_VERDICTS = {"strict": "inst_level_strict_acc", "loose": "inst_level_loose_acc"}


class IFEvalInput(BaseModel):
    """One IFEval prompt with its instructions (a line of IFEval's ``input_data.jsonl``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: StrictInt
    prompt: str
    instruction_id_list: tuple[str, ...]
    kwargs: tuple[dict[str, Any], ...]


class IFEvalResponse(BaseModel):
    """A line of IFEval's ``input_response_data_<model>.jsonl``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt: str
    response: str


class IFEvalVerdicts(BaseModel):
    """A line of IFEval's ``eval_results_{strict,loose}.jsonl``: lm-eval's verdict on each
    instruction of a prompt."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt: str
    response: str
    instruction_id_list: tuple[str, ...]
    follow_instruction_list: tuple[bool, ...]


class IFEvalFiles(BaseModel):
    """One target model's responses to one IFEval variant, in IFEval's layout: ``directory``
    (relative to the import's output) holds input_data.jsonl, the responses and lm-eval's
    verdicts as eval_results_strict.jsonl and eval_results_loose.jsonl."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    directory: str
    target_model: str
    prompt_variant: str
    inputs: tuple[IFEvalInput, ...]
    responses: tuple[IFEvalResponse, ...]
    verdicts: dict[str, tuple[IFEvalVerdicts, ...]]  # "strict" / "loose" -> lines

    @property
    def responses_name(self) -> str:
        """The responses file's name, from which ``assay import ifeval`` takes the model."""
        return f"input_response_data_{Path(self.directory).parent.name}.jsonl"


class LmEvalImport(BaseModel):
    """The question set and outputs manifest of an import of lm-eval samples files, and the
    IFEval files of its IFEval documents."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    questions: tuple[Question, ...]
    outputs: tuple[ManifestEntry, ...]
    report: ImportReport
    ifeval: tuple[IFEvalFiles, ...] = ()


def import_lm_eval_samples(paths: Sequence[Path]) -> LmEvalImport:
    """Read every samples file in ``paths`` (each with the results file beside it, where there
    is one) into one question set and manifest."""
    builder = _JudgeSetBuilder()
    for path in paths:
        task, stamp = _name_parts(path)
        run = _read_run(path, task, stamp)
        builder.add_file(path, task, run, _read_docs(path, run))
    return builder.result(paths)


# ---------------------------------------------------------------- the results file


@dataclass(frozen=True)
class _Run:
    """What the results file beside a samples file says of its run and task."""

    model: str
    model_source: str | None  # lm-eval's model type: local-chat-completions, hf, ...
    output_type: str | None  # the task's; None where no results file says


def _name_parts(path: Path) -> tuple[str, str]:
    """The task and time stamp in the name lm-eval gives a samples file."""
    check_input_file(path, hint=f"SAMPLES is a samples_<task>_<timestamp>.jsonl file; {WRITE_IT}")
    match = SAMPLES_NAME.fullmatch(path.name)
    if match is None:
        raise InputError(
            "not named as lm-eval names a samples file (samples_<task>_<timestamp>.jsonl): "
            "the task's name is read from it",
            path=path,
            hint=f"give the file lm-eval wrote, under its own name; {WRITE_IT}",
        )
    return match["task"], match["stamp"]


def _read_run(path: Path, task: str, stamp: str) -> _Run:
    results = path.with_name(f"results_{stamp}.json")
    if not results.is_file():  # lm-eval writes samples into a folder named after the model
        model = _model_name(path.parent.name, path, "the folder name")
        return _Run(model=model, model_source=None, output_type=None)
    document = _read_results(results)
    config = document.get("config")
    configs = document.get("configs")
    task_config = configs.get(task) if isinstance(configs, Mapping) else None
    output_type = task_config.get("output_type") if isinstance(task_config, Mapping) else None
    source = config.get("model") if isinstance(config, Mapping) else None
    name = document.get("model_name") or source  # model_name is empty for some model types
    return _Run(
        model=_model_name(name, results, "model_name"),
        model_source=source if isinstance(source, str) else None,
        output_type=output_type if isinstance(output_type, str) else None,
    )


def _read_results(path: Path) -> Mapping[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"not an lm-eval results file (not JSON: {error})", path=path) from None
    if not isinstance(document, Mapping):
        raise InputError(
            f"not an lm-eval results file (a JSON {type(document).__name__}, not an object)",
            path=path,
        )
    return document


def _model_name(name: Any, path: Path, where: str) -> str:
    if not isinstance(name, str) or re.fullmatch(ID_PATTERN, name) is None:
        raise InputError(
            f"{where}: {shown(name)} cannot name a target model (at most 200 characters, no "
            "surrounding spaces)",
            path=path,
        )
    return name


# ---------------------------------------------------------------- the samples file


@dataclass(frozen=True)
class _Generation:
    """What a generation task's sample asked and got."""

    prompt: str
    gen_kwargs: dict[str, Any]
    responses: tuple[str, ...]  # one per repeat


@dataclass
class _Doc:
    """One document of a samples file: its lines (one per filter) merged."""

    line: int
    doc_id: int
    doc: dict[str, Any]
    target: Any
    generation: _Generation | None  # None: a log-likelihood task's sample
    filtered: dict[str, Any] = field(default_factory=dict)  # filter -> its response
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)  # filter -> values


def _read_docs(path: Path, run: _Run) -> list[_Doc]:
    docs: dict[int, _Doc] = {}
    for line, row in read_rows(path, ROWS):
        reader = RowReader(row, path=path, line=line, dataset=ROWS)
        read = _read_line(reader, run)
        doc = docs.setdefault(read.doc_id, read)
        if doc is not read:
            _check_same_doc(doc, read, reader)
        _add_filter(doc, reader)
    return sorted(docs.values(), key=lambda d: d.doc_id)


def _read_line(reader: RowReader, run: _Run) -> _Doc:
    doc_id = reader.row.get("doc_id")
    if not isinstance(doc_id, int) or isinstance(doc_id, bool) or doc_id < 0:
        reader.fail("doc_id", f"expected a document index, got {shown(doc_id)}")
    generation = _generation(reader)
    if run.output_type == GENERATION and generation is None:
        reader.fail("resps", "expected one text per repeat, as a generate_until task writes them")
    if run.output_type not in (None, GENERATION):
        generation = None
    return _Doc(
        line=reader.line,
        doc_id=doc_id,
        doc=reader.mapping("doc"),
        target=reader.row.get("target"),
        generation=generation,
    )


def _generation(reader: RowReader) -> _Generation | None:
    """The prompt, generation settings and responses of a generate_until sample; None for a
    sample of another shape (a log-likelihood task's: several requests, or numbers)."""
    requests = _requests(reader)
    responses = reader.items("resps")
    if len(requests) != 1 or len(responses) != 1 or not isinstance(responses[0], list):
        return None
    context, *rest = requests[0] or [None]
    texts = all(isinstance(response, str) for response in responses[0])
    if not rest or not isinstance(rest[0], dict) or not texts:
        return None
    prompt = _prompt_text(context)
    if prompt is None:
        reader.fail("arguments", "expected the context lm-eval sent the model (a text)")
    if not responses[0]:
        reader.fail("resps", "expected one text per repeat, got none")
    return _Generation(prompt=prompt, gen_kwargs=dict(rest[0]), responses=tuple(responses[0]))


def _requests(reader: RowReader) -> list[list[Any]]:
    """Each request's arguments: lm-eval 0.4.13 writes ``{"gen_args_0": {"arg_0": ...,
    "arg_1": ...}}``, older releases a list of argument lists, ``[[..., ...]]``."""
    arguments = reader.row.get("arguments")
    if isinstance(arguments, dict) and all(isinstance(a, dict) for a in arguments.values()):
        return [list(request.values()) for request in arguments.values()]
    if isinstance(arguments, list) and all(isinstance(a, list) for a in arguments):
        return arguments
    reader.fail("arguments", f"expected the requests' arguments, got {shown(arguments)}")


def _prompt_text(context: Any) -> str | None:
    """The context as text: a string as it is; a chat request (lm-eval logs it as a list
    holding the messages' JSON) as ``role: text`` blocks, a lone user message as its text."""
    if isinstance(context, str):
        return context
    if not (isinstance(context, list) and len(context) == 1 and isinstance(context[0], str)):
        return None
    try:
        messages = json.loads(context[0])
    except json.JSONDecodeError:
        return context[0]
    if not isinstance(messages, list) or not all(_is_message(m) for m in messages):
        return context[0]
    if len(messages) == 1 and messages[0]["role"] == "user":
        return str(messages[0]["content"])
    return "\n\n".join(f"{m['role']}: {m['content']}" for m in messages)


def _is_message(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and isinstance(message.get("role"), str)
        and isinstance(message.get("content"), str)
    )


def _check_same_doc(doc: _Doc, other: _Doc, reader: RowReader) -> None:
    """lm-eval writes a document once per filter; the lines must be of one document."""
    if other.doc != doc.doc or other.generation != doc.generation:
        what = "doc" if other.doc != doc.doc else "resps"
        reader.fail(
            what,
            f"doc_id {doc.doc_id} is also on line {doc.line}, with another {what}",
            shape=False,
        )


def _add_filter(doc: _Doc, reader: RowReader) -> None:
    name = reader.text("filter", optional=True) or "none"  # lm-eval's name of no filter
    if name in doc.metrics:
        reader.fail(
            "filter",
            f"doc_id {doc.doc_id} under filter {name!r} is also on line {doc.line} (is the file "
            "two files joined?)",
            shape=False,
        )
    filtered = reader.items("filtered_resps")
    doc.filtered[name] = filtered[0] if len(filtered) == 1 else filtered
    doc.metrics[name] = _metric_values(reader)


def _metric_values(reader: RowReader) -> dict[str, Any]:
    """The sample's per-sample metric values: numbers, truth values and lists of them (IFEval's
    per-instruction verdicts). A corpus-level metric's item (bleu's reference and prediction)
    is no per-sample score and is left out."""
    names = reader.items("metrics", optional=True)
    values = {name: reader.row.get(name) for name in names if isinstance(name, str)}
    return {name: value for name, value in values.items() if _is_score(value)}


def _is_score(value: Any) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_is_number(item) for item in value)
    return _is_number(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float)  # bool is an int


# ---------------------------------------------------------------- building


def question_id_of(doc: _Doc) -> str:
    """``ifeval-<key>`` for an IFEval document (as ``assay import ifeval`` names it), else
    ``doc-<doc_id>``."""
    return f"ifeval-{doc.doc['key']}" if _ifeval_input(doc) is not None else f"doc-{doc.doc_id}"


def _ifeval_input(doc: _Doc) -> IFEvalInput | None:
    """The document as an IFEval prompt, where it is one."""
    fields = {"key", "prompt", "instruction_id_list", "kwargs"}
    if not fields <= doc.doc.keys():
        return None
    try:
        return IFEvalInput.model_validate({name: doc.doc[name] for name in fields})
    except ValueError:
        return None


def variant_of(task: str, repeat: int) -> str:
    return repeat_variant(task, repeat)


@dataclass
class _QuestionDraft:
    doc: dict[str, Any]
    meta: dict[str, Any]
    path: Path  # the first file that gave this document
    variants: dict[str, str] = field(default_factory=dict)  # variant -> prompt
    prompt_files: dict[str, Path] = field(default_factory=dict)  # variant -> its first file


@dataclass
class _IFEvalDraft:
    inputs: dict[int, IFEvalInput] = field(default_factory=dict)
    responses: list[IFEvalResponse] = field(default_factory=list)
    verdicts: dict[str, list[IFEvalVerdicts]] = field(default_factory=dict)


@dataclass
class _JudgeSetBuilder:
    questions: dict[str, _QuestionDraft] = field(default_factory=dict)
    outputs: list[ManifestEntry] = field(default_factory=list)
    output_files: dict[tuple[str, str, str], Path] = field(default_factory=dict)
    ifeval: dict[tuple[str, str], _IFEvalDraft] = field(default_factory=dict)
    skipped: dict[str, list[str]] = field(default_factory=dict)
    rows: int = 0
    samples: int = 0
    models: set[str] = field(default_factory=set)

    def add_file(self, path: Path, task: str, run: _Run, docs: Sequence[_Doc]) -> None:
        if re.fullmatch(ID_PATTERN, task) is None:
            raise InputError(f"task {shown(task)} cannot name a prompt variant", path=path)
        self.models.add(run.model)
        for doc in docs:
            self.rows += len(doc.metrics)
            self.samples += 1
            self._add_doc(path, task, run, doc)

    def _add_doc(self, path: Path, task: str, run: _Run, doc: _Doc) -> None:
        question_id = question_id_of(doc)
        named = f"{question_id} ({task}, {path.name})"
        if doc.generation is None:
            self._skip(SKIP_LOGLIKELIHOOD, named)
            return
        draft = self._question(question_id, doc, path)
        for repeat, text in enumerate(doc.generation.responses, start=1):
            variant = variant_of(task, repeat)
            self._render(draft, question_id, variant, doc, path)
            if not text.strip():
                self._skip(SKIP_NO_TEXT, named if repeat == 1 else f"{named} repeat {repeat}")
                continue
            self._claim_cell((question_id, variant, run.model), path)
            prompt = PromptVariant(variant=variant, prompt=doc.generation.prompt)
            meta = _output_meta(path, task, run, doc, repeat, text)
            self.outputs.append(_output(question_id, prompt, run.model, text, meta))
            self._add_ifeval(run.model, variant, doc, text)

    def _question(self, question_id: str, doc: _Doc, path: Path) -> _QuestionDraft:
        draft = self.questions.get(question_id)
        if draft is None:
            meta = {"doc": doc.doc, "target": doc.target}
            draft = self.questions[question_id] = _QuestionDraft(doc.doc, meta, path)
        elif draft.doc != doc.doc:
            raise InputError(
                f"{question_id} is another document here than in {draft.path} "
                f"({shown(json.dumps(doc.doc))} vs {shown(json.dumps(draft.doc))}): the files are "
                "samples of different datasets, whose documents would be one question",
                path=path,
                line=doc.line,
                field="doc",
                hint="import the samples of each dataset into a directory of its own",
            )
        return draft

    def _render(
        self, draft: _QuestionDraft, question_id: str, variant: str, doc: _Doc, path: Path
    ) -> None:
        assert doc.generation is not None
        prompt = doc.generation.prompt
        earlier = draft.variants.setdefault(variant, prompt)
        first = draft.prompt_files.setdefault(variant, path)
        if earlier != prompt:
            raise InputError(
                f"prompt {variant!r} of {question_id} reads {shown(prompt)} here, "
                f"{shown(earlier)} in {first}: the judge takes one prompt per question and "
                "variant",
                path=path,
                line=doc.line,
                field="arguments",
                hint="import the samples of each prompt format (chat template, system "
                "instruction, few-shot examples) into a directory of its own",
            )

    def _claim_cell(self, cell: tuple[str, str, str], path: Path) -> None:
        earlier = self.output_files.get(cell)
        if earlier is not None:
            question_id, variant, model = cell
            where = "this file too (is the file named twice?)" if earlier == path else earlier
            raise InputError(
                f"{model}'s output for {question_id} under {variant!r} is also in {where}: the "
                "judge takes one output per question x variant x target model",
                path=path,
                hint="import each run of a model over a task into a directory of its own",
            )
        self.output_files[cell] = path

    def _add_ifeval(self, model: str, variant: str, doc: _Doc, text: str) -> None:
        item = _ifeval_input(doc)
        if item is None:
            return
        draft = self.ifeval.setdefault((model, variant), _IFEvalDraft())
        draft.inputs.setdefault(item.key, item)
        draft.responses.append(IFEvalResponse(prompt=item.prompt, response=text))
        for mode, verdicts in _ifeval_verdicts(doc, item, text).items():
            draft.verdicts.setdefault(mode, []).append(verdicts)

    def _skip(self, reason: str, named: str) -> None:
        self.skipped.setdefault(reason, []).append(named)

    def result(self, paths: Sequence[Path]) -> LmEvalImport:
        questions = tuple(
            Question(
                question_id=question_id,
                variants=tuple(
                    PromptVariant(variant=variant, prompt=prompt)
                    for variant, prompt in draft.variants.items()
                ),
                meta=draft.meta,
            )
            for question_id, draft in self.questions.items()
        )
        report = log_import_report(
            dataset=DATASET,
            paths=paths,
            rows=self.rows,
            units={"samples": self.samples},
            kept=len(self.outputs),
            skipped=self.skipped,
            reasons=SKIP_REASONS,
            counts={
                "questions": len(questions),
                "prompt variants": len({v.variant for q in questions for v in q.variants}),
                "target models": len(self.models),
            },
            convention=LABEL_CONVENTION,
        )
        return LmEvalImport(
            questions=questions,
            outputs=tuple(self.outputs),
            report=report,
            ifeval=_ifeval_files(self.ifeval),
        )


def _ifeval_verdicts(doc: _Doc, item: IFEvalInput, text: str) -> dict[str, IFEvalVerdicts]:
    """lm-eval's strict and loose verdicts on ``text``, from the filter that checked this very
    text (a filter that changed the response checked another text)."""
    found: dict[str, IFEvalVerdicts] = {}
    for name, values in doc.metrics.items():
        if doc.filtered.get(name) != text:
            continue
        for mode, metric in IFEVAL_VERDICTS.items():
            followed = values.get(metric)
            if isinstance(followed, list) and len(followed) == len(item.instruction_id_list):
                found.setdefault(
                    mode,
                    IFEvalVerdicts(
                        prompt=item.prompt,
                        response=text,
                        instruction_id_list=item.instruction_id_list,
                        follow_instruction_list=tuple(bool(f) for f in followed),
                    ),
                )
    return found


def _ifeval_files(drafts: Mapping[tuple[str, str], _IFEvalDraft]) -> tuple[IFEvalFiles, ...]:
    files: dict[str, IFEvalFiles] = {}
    for (model, variant), draft in drafts.items():
        directory = f"{IFEVAL_FOLDER}/{_file_name(model)}/{_file_name(variant)}"
        earlier = files.get(directory)
        if earlier is not None:
            raise InputError(
                f"{model}'s IFEval responses under {variant!r} and {earlier.target_model}'s "
                f"under {earlier.prompt_variant!r} would both be written to {directory}",
                path=directory,
                hint="import them into directories of their own",
            )
        files[directory] = IFEvalFiles(
            directory=directory,
            target_model=model,
            prompt_variant=variant,
            inputs=tuple(draft.inputs.values()),
            responses=tuple(draft.responses),
            verdicts={mode: tuple(lines) for mode, lines in draft.verdicts.items()},
        )
    return tuple(files.values())


def _file_name(name: str) -> str:
    """A model or variant name as one path component: characters other than letters, digits,
    ``.``, ``_`` and ``-`` become ``_`` (``org/model`` -> ``org_model``)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    return "_" + safe if safe.startswith(".") else safe


def _output(
    question_id: str, variant: PromptVariant, model: str, text: str, meta: dict[str, Any]
) -> ManifestEntry:
    return ManifestEntry(
        question_id=question_id,
        prompt_variant=variant.variant,
        target_model=model,
        output_id=_output_id(question_id, variant.variant),
        text=text,
        prompt_hash=variant.prompt_hash,
        meta=meta,
    )


def _output_id(question_id: str, variant: str) -> str:
    """``<question id>:<variant>``: one per target model and cell, the same for every run of
    the task (the samples file's time-stamped name is in ``meta.file``), so a judge prompt,
    which shows it as a blind alias, does not change from run to run."""
    output_id = f"{question_id}:{variant}"
    return output_id if len(output_id) <= 200 else f"{question_id}:{stable_key(variant)}"


def _output_meta(
    path: Path, task: str, run: _Run, doc: _Doc, repeat: int, text: str
) -> dict[str, Any]:
    assert doc.generation is not None
    meta: dict[str, Any] = {
        "file": path.name,
        "task": task,
        "doc_id": doc.doc_id,
        "model_source": run.model_source,
        "gen_kwargs": doc.generation.gen_kwargs,
        "lm_eval": doc.metrics,
    }
    if len(doc.generation.responses) > 1:
        meta["repeat"] = repeat
    filtered = {
        name: response
        for name, response in doc.filtered.items()
        if isinstance(response, str) and response != text
    }
    if filtered:
        meta["filtered"] = filtered
    return meta
