"""Question sets and target outputs, loaded with errors that name file, line and field.

A question set (JSONL, one question per line, or YAML, a list of questions) gives for each
question its prompt variants: the prompt given to the target model and, optionally, the required
structure and the constraints the judge holds the output to.

Target outputs come from a manifest JSONL (one output per line: identifiers plus ``text`` or a
``path``) or from a directory with one sub-directory per target model holding
``<question_id>__<variant>.<txt|md|json>`` files.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol, TypeVar

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)

from ..errors import InputError, describe_problem, shown, yaml_input_error
from .jsonl import (
    check_input_file,
    check_parsed,
    decode_line,
    iter_json_objects,
    iter_lines,
    parse_object_line,
)
from .yaml_keys import check_keys, node_line

ID_PATTERN = r"^\S(.{0,198}\S)?$"  # no surrounding whitespace, at most 200 characters
OUTPUT_SUFFIXES = (".txt", ".md", ".json")
MANIFEST_NAME = "manifest.jsonl"
TARGET_NAME_FILE = "target_model.txt"

_M = TypeVar("_M", bound=BaseModel)


class PromptVariant(BaseModel):
    """One way of asking a question."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    variant: str = Field(pattern=ID_PATTERN)
    prompt: str = Field(min_length=1)
    required_structure: str | None = None
    constraints: tuple[str, ...] = ()

    @property
    def prompt_hash(self) -> str:
        """The fingerprint of the prompt text: an output that records it can be told apart
        from one generated before the prompt was edited under the same question and variant."""
        return hashlib.sha256(self.prompt.encode("utf-8")).hexdigest()[:16]


def refuse_edited_prompt(
    recorded: str | None,
    variant: PromptVariant,
    output: str,
    where: tuple[str, int | None],
    hint: str,
) -> None:
    """An InputError when an output records answering another prompt than ``variant``'s now
    (the prompt was edited under the same question and variant after the output was made).
    ``output`` names the output, ``where`` its manifest file and line."""
    if recorded is not None and recorded != variant.prompt_hash:
        raise InputError(
            f"{output} answered another prompt than the question set now gives (prompt_hash "
            f"{recorded}, the current prompt's {variant.prompt_hash})",
            path=where[0],
            line=where[1],
            field="prompt_hash",
            hint=hint,
        )


class Question(BaseModel):
    """A question and its prompt variants; ``intent`` says what the task is for (optional)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str = Field(pattern=ID_PATTERN)
    intent: str | None = None
    variants: tuple[PromptVariant, ...] = Field(min_length=1)
    meta: dict[str, Any] | None = None  # the user's own fields, carried into the archive

    @field_validator("variants", mode="before")
    @classmethod
    def _mapping_to_list(cls, value: object) -> object:
        if isinstance(value, Mapping):
            return [
                {"variant": str(k), **v} if isinstance(v, Mapping) else {"variant": k, "prompt": v}
                for k, v in value.items()
            ]
        return value

    @field_validator("variants", mode="after")
    @classmethod
    def _unique_variants(cls, variants: tuple[PromptVariant, ...]) -> tuple[PromptVariant, ...]:
        labels = [v.variant for v in variants]
        if len(set(labels)) != len(labels):
            raise ValueError(f"variant labels repeat: {labels}")
        return variants


class QuestionSet(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    questions: tuple[Question, ...]

    def variant(self, question_id: str, variant: str) -> tuple[Question, PromptVariant] | None:
        return self._variants.get((question_id, variant))

    @cached_property
    def _variants(self) -> dict[tuple[str, str], tuple[Question, PromptVariant]]:
        # built once: an evaluation set looks up one variant per output
        index: dict[tuple[str, str], tuple[Question, PromptVariant]] = {}
        for question in self.questions:
            for item in question.variants:
                index.setdefault((question.question_id, item.variant), (question, item))
        return index

    def cells(self) -> list[tuple[str, str]]:
        return [(q.question_id, v.variant) for q in self.questions for v in q.variants]

    @property
    def question_count(self) -> int:
        return len(self.questions)

    def has_variant(self, question_id: str, variant: str) -> bool:
        return (question_id, variant) in self._variants


class QuestionLookup(Protocol):
    """What an evaluation set needs of a question set: a :class:`QuestionSet` held whole, or
    a :class:`QuestionIndex` that reads each question from its file when asked."""

    @property
    def source(self) -> str: ...

    @property
    def question_count(self) -> int: ...

    def variant(self, question_id: str, variant: str) -> tuple[Question, PromptVariant] | None: ...

    def has_variant(self, question_id: str, variant: str) -> bool: ...

    def cells(self) -> Iterable[tuple[str, str]]: ...


class QuestionIndex:
    """A JSONL question set checked whole but held as byte offsets and variant labels.

    A parsed question takes some 1-5 KB; a large judge run with 100,000 questions would hold
    hundreds of MB of them. Here each question is read again from its line when a sample
    needs it, and the last few hundred are kept (outputs usually come grouped by question).
    """

    _CACHED = 512

    def __init__(
        self, path: Path, offsets: dict[str, int], variants: dict[str, tuple[str, ...]]
    ) -> None:
        self.path = path
        self._offsets = offsets
        self._variants = variants
        self._recent: OrderedDict[str, Question] = OrderedDict()

    @property
    def source(self) -> str:
        return str(self.path)

    @property
    def question_count(self) -> int:
        return len(self._offsets)

    def cells(self) -> Iterator[tuple[str, str]]:
        for question_id, labels in self._variants.items():
            for label in labels:
                yield question_id, label

    def has_variant(self, question_id: str, variant: str) -> bool:
        return variant in self._variants.get(question_id, ())

    def variant(self, question_id: str, variant: str) -> tuple[Question, PromptVariant] | None:
        labels = self._variants.get(question_id)
        if labels is None or variant not in labels:
            return None
        question = self._question(question_id)
        return question, question.variants[labels.index(variant)]

    def _question(self, question_id: str) -> Question:
        question = self._recent.get(question_id)
        if question is not None:
            self._recent.move_to_end(question_id)
            return question
        question = self._read(question_id)
        self._recent[question_id] = question
        if len(self._recent) > self._CACHED:
            self._recent.popitem(last=False)
        return question

    def _read(self, question_id: str) -> Question:
        with self.path.open("rb") as handle:
            handle.seek(self._offsets[question_id])
            raw = handle.readline()
        question = Question.model_validate(json.loads(raw))
        if question.question_id != question_id:  # the file changed under the run
            raise InputError(
                f"question {question_id!r} is no longer where it was read: the file changed "
                "during the run",
                path=self.path,
            )
        return question


class QuestionSubset:
    """The questions of a question set that ``keep`` takes (a shard's), as a question set of
    their own: the rest is neither expected nor judged."""

    def __init__(self, questions: QuestionLookup, keep: Callable[[str], bool]) -> None:
        self.questions = questions
        self.keep = keep

    @property
    def source(self) -> str:
        return self.questions.source

    @cached_property
    def question_count(self) -> int:
        return len({question for question, _ in self.cells()})

    def cells(self) -> Iterator[tuple[str, str]]:
        return (cell for cell in self.questions.cells() if self.keep(cell[0]))

    def has_variant(self, question_id: str, variant: str) -> bool:
        return self.keep(question_id) and self.questions.has_variant(question_id, variant)

    def variant(self, question_id: str, variant: str) -> tuple[Question, PromptVariant] | None:
        if not self.keep(question_id):
            return None
        return self.questions.variant(question_id, variant)


HELD_WHOLE_UP_TO = 4096
"""A JSONL set of at most this many questions is held parsed (a few MB at most): reading each
question again when a sample needs it would cost more CPU than the memory saves."""


def load_question_index(
    path: Path, held_up_to: int = HELD_WHOLE_UP_TO
) -> QuestionIndex | QuestionSet:
    """A question set for a large run: a plain JSONL file of more than ``held_up_to``
    questions is checked line by line and held as a :class:`QuestionIndex`; a smaller one,
    and YAML and gzip files (small in practice), are held whole."""
    check_input_file(path, hint="--questions names a .jsonl or .yaml question set")
    if path.suffix != ".jsonl" or _is_gzip(path):
        return load_questions(path)
    offsets: dict[str, int] = {}
    variants: dict[str, tuple[str, ...]] = {}
    held: list[Question] | None = []
    for number, offset, data in _json_objects_at(path):
        question = _validated(Question, data, path, number)
        _refuse_repeat(question.question_id, offsets.keys(), path, number)
        offsets[question.question_id] = offset
        variants[question.question_id] = tuple(sys.intern(v.variant) for v in question.variants)
        if held is not None:
            held.append(question)
            if len(held) > held_up_to:
                held = None  # a large set: from here on only offsets and labels
    if not offsets:
        raise InputError("the question set holds no questions", path=path)
    if held is not None:
        return QuestionSet(source=str(path), questions=tuple(held))
    return QuestionIndex(path, offsets, variants)


def _json_objects_at(path: Path) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """``(line number, byte offset, object)`` for each non-blank line of a plain file."""
    offset = 0
    for number, raw in iter_lines(path):
        line = decode_line(raw, path, number)
        if line.strip():
            yield number, offset, parse_object_line(line, path, number)  # json reads a BOM
        offset += len(raw)


def _is_gzip(path: Path) -> bool:
    with path.open("rb") as probe:
        return probe.read(2) == b"\x1f\x8b"


class TargetOutput(BaseModel):
    """One output of a target model, traceable by ``output_id`` to where it came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str = Field(pattern=ID_PATTERN)
    prompt_variant: str = Field(pattern=ID_PATTERN)
    target_model: str = Field(pattern=ID_PATTERN)
    output_id: str = Field(pattern=ID_PATTERN)
    text: str
    source: str  # file and line (manifest) or file (directory layout)
    meta: dict[str, Any] | None = None  # the manifest line's own fields
    prompt_hash: str | None = None  # the prompt it answered, when its manifest says

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.question_id, self.prompt_variant, self.target_model)


class ManifestEntry(BaseModel):
    """A line of an outputs manifest: identifiers plus the text or a path to it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question_id: str = Field(pattern=ID_PATTERN)
    prompt_variant: str = Field(pattern=ID_PATTERN)
    target_model: str = Field(pattern=ID_PATTERN)
    output_id: str | None = Field(default=None, pattern=ID_PATTERN)
    text: str | None = None
    path: str | None = None
    # written by `assay generate`, informational
    finish_reason: str | None = None
    completion_tokens: StrictInt | None = Field(default=None, ge=0)
    generated_at: str | None = None
    # the fingerprint of the prompt it answered (PromptVariant.prompt_hash): a changed prompt
    # under the same question and variant is refused instead of reusing the old output
    prompt_hash: str | None = None
    meta: dict[str, Any] | None = None  # the user's own fields, carried into the archive

    @model_validator(mode="after")
    def _text_or_path(self) -> ManifestEntry:
        if (self.text is None) == (self.path is None):
            raise ValueError("give exactly one of 'text' and 'path'")
        if self.output_id is None and self.path is None:
            raise ValueError("'output_id' is required when the text is inline")
        return self


# ---------------------------------------------------------------- question sets


def load_questions(path: Path) -> QuestionSet:
    """Read a question set (.jsonl, .yaml or .yml)."""
    check_input_file(path, hint="--questions names a .jsonl or .yaml question set")
    if path.suffix in (".yaml", ".yml"):
        questions = list(_questions_from_yaml(path))
    elif path.suffix == ".jsonl":
        questions = list(_questions_from_jsonl(path))
    else:
        raise InputError("a question set must be .jsonl, .yaml or .yml", path=path)
    if not questions:
        raise InputError("the question set holds no questions", path=path)
    return QuestionSet(source=str(path), questions=tuple(questions))


def _questions_from_jsonl(path: Path) -> Iterator[Question]:
    seen: set[str] = set()
    for number, data in iter_json_objects(path):
        question = _validated(Question, data, path, number)
        _refuse_repeat(question.question_id, seen, path, number)
        seen.add(question.question_id)
        yield question


def _questions_from_yaml(path: Path) -> Iterator[Question]:
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise yaml_input_error(error, path, "not valid YAML") from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {error.start + 1})", path=path) from None
    except RecursionError:
        raise InputError("nested too deeply to read", path=path) from None
    if root is not None:
        check_keys(root, path)  # before any dict is built: a repeated key would be lost
    if isinstance(root, yaml.MappingNode):
        root = dict((k.value, v) for k, v in root.value).get("questions", root)
    if not isinstance(root, yaml.SequenceNode):
        raise InputError("expected a list of questions (or 'questions:' holding one)", path=path)
    seen: set[str] = set()
    for node in root.value:
        data = yaml.safe_load(yaml.serialize(node))
        check_parsed(data, path, node.start_mark.line + 1)
        question = _validated(Question, data, path, node.start_mark.line + 1, node=node)
        _refuse_repeat(question.question_id, seen, path, node.start_mark.line + 1)
        seen.add(question.question_id)
        yield question


def _refuse_repeat(question_id: str, seen: AbstractSet[str], path: Path, line: int) -> None:
    if question_id in seen:
        raise InputError(
            f"question_id {question_id!r} appears twice", path=path, line=line, field="question_id"
        )


# ---------------------------------------------------------------- target outputs


def load_outputs(path: Path, *, allow_outside_paths: bool = False) -> list[TargetOutput]:
    """Outputs from a manifest JSONL, a directory holding one, or a per-model directory tree.

    A manifest's ``path`` must name a file inside the manifest's folder (after resolving
    ``..`` and symbolic links), unless ``allow_outside_paths``: a manifest from elsewhere must
    not send ``/etc/passwd`` or ``~/.ssh/id_rsa`` to a judge and into the archive.
    """
    return list(iter_outputs(path, allow_outside_paths=allow_outside_paths))


def iter_outputs(path: Path, *, allow_outside_paths: bool = False) -> Iterator[TargetOutput]:
    """:func:`load_outputs` one output at a time (a manifest is read line by line)."""
    if path.is_file():
        return _outputs_from_manifest(path, allow_outside_paths)
    if not path.is_dir():
        raise InputError("outputs not found (expected a manifest .jsonl or a directory)", path=path)
    if (path / MANIFEST_NAME).is_file():
        return _outputs_from_manifest(path / MANIFEST_NAME, allow_outside_paths)
    if draw_folders(path):
        raise InputError(
            "holds draw-K folders (the draws of `assay generate --draws`), not one set of outputs",
            path=path,
            hint="give one draw-K folder, or read them all as draws: `assay judge run "
            "--draws` or `assay instructions robustness --draws`",
        )
    return _outputs_from_tree(path)


def draw_folders(path: Path) -> list[Path]:
    """The ``draw-K`` folders with a manifest that ``generate --draws`` writes into ``path``,
    in the order of K (none for a path that is not such a directory)."""
    if not path.is_dir() or (path / MANIFEST_NAME).exists():
        return []
    found = [
        p
        for p in path.iterdir()
        if re.fullmatch(r"draw-[1-9][0-9]*", p.name) and (p / MANIFEST_NAME).is_file()
    ]
    return sorted(found, key=lambda p: int(p.name.removeprefix("draw-")))


LABELS_FILE = "labels.jsonl"  # judge labels, as `instructions robustness` writes them
DRAW_LABELS = re.compile(r"labels-draw-([1-9][0-9]*)\.jsonl")
DRAW_LABELS_GLOB = "labels-draw-*.jsonl"


def draw_labels_file(draw: int) -> str:
    """Draw k's judge labels, as `instructions robustness --draws` writes them and `judge
    agreement` of a directory of draws reads them from a labels folder."""
    return f"labels-draw-{draw}.jsonl"


_OUTSIDE_HINT = (
    "keep output files beside the manifest, or pass --allow-outside-paths if this manifest is yours"
)


def _outputs_from_manifest(path: Path, allow_outside_paths: bool) -> Iterator[TargetOutput]:
    for number, data in iter_json_objects(path):
        entry = _validated(ManifestEntry, data, path, number)
        text = entry.text
        if entry.path is not None:
            file = path.parent / entry.path
            if not allow_outside_paths:
                confine(file, path, number)
            text = _read_output_file(file, path, number)
        yield TargetOutput(
            question_id=entry.question_id,
            prompt_variant=entry.prompt_variant,
            target_model=entry.target_model,
            output_id=entry.output_id or entry.path or "",
            text=text or "",
            source=f"{path}:{number}",
            meta=entry.meta,
            prompt_hash=entry.prompt_hash,
        )


def manifest_entry(data: Any, path: Path, line: int) -> ManifestEntry:
    """One manifest line, checked: an InputError names the file, line and field."""
    return _validated(ManifestEntry, data, path, line)


def confine(file: Path, manifest: Path, line: int, *, hint: str = _OUTSIDE_HINT) -> None:
    """Refuse a manifest line's ``path`` (``file``) that leads outside the manifest's folder
    (after ``..`` and symbolic links)."""
    folder = manifest.parent.resolve()
    if not file.resolve().is_relative_to(folder):
        raise InputError(
            f"path leads outside the manifest's folder {folder}",
            path=manifest,
            line=line,
            field="path",
            hint=hint,
        )


def _read_output_file(file: Path, manifest: Path, line: int) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(
            f"output file not found: {shown(str(file))}", path=manifest, line=line, field="path"
        ) from None
    except UnicodeDecodeError as error:
        raise InputError(
            f"{shown(str(file))} is not UTF-8 text (byte {error.start + 1})",
            path=manifest,
            line=line,
            field="path",
        ) from None
    except OSError as error:
        raise InputError(
            f"cannot read {shown(str(file))}: {error.strerror or error}",
            path=manifest,
            line=line,
            field="path",
        ) from None


def _outputs_from_tree(root: Path) -> Iterator[TargetOutput]:
    model_dirs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not model_dirs:
        raise InputError(
            "no target-model directories and no manifest.jsonl",
            path=root,
            hint="use <dir>/<target_model>/<question_id>__<variant>.txt or a manifest.jsonl",
        )
    for model_dir in model_dirs:
        target = _target_name(model_dir)
        for file in sorted(model_dir.iterdir()):
            if file.suffix in OUTPUT_SUFFIXES and not _kept_beside_outputs(file):
                yield _output_from_file(file, root, target)


def _kept_beside_outputs(file: Path) -> bool:
    """The name file, and hidden files (an interrupted write's ``.NAME.PID.tmp``)."""
    return file.name == TARGET_NAME_FILE or file.name.startswith(".")


def _output_from_file(file: Path, root: Path, target: str) -> TargetOutput:
    """An output named ``<question_id>__<variant>.txt``: any other name with an output's
    suffix is refused rather than skipped, so an output is never silently left out."""
    question_id, _, variant = file.stem.rpartition("__")
    data = {
        "question_id": question_id,
        "prompt_variant": variant,
        "target_model": target,
        "output_id": str(file.relative_to(root)),
        "text": "",
        "source": str(file),
    }
    try:
        TargetOutput.model_validate(data)
    except ValidationError:
        raise InputError(
            "not an output name: an output file is named <question_id>__<variant>"
            f"{file.suffix} (both parts non-empty)",
            path=file,
            hint="rename the file, or move it out of the outputs directory",
        ) from None
    return TargetOutput.model_validate({**data, "text": _read_output_file(file, file, 1)})


def _target_name(model_dir: Path) -> str:
    name_file = model_dir / TARGET_NAME_FILE
    if name_file.is_file():
        name = name_file.read_text(encoding="utf-8").strip()
        if not name:
            raise InputError("empty target model name", path=name_file, line=1)
    else:
        name = model_dir.name
    if not re.match(ID_PATTERN, name):
        raise InputError(
            f"not a target model name ({len(name)} characters): a name is one line of at most "
            "200 characters",
            path=name_file if name_file.is_file() else model_dir,
        )
    return name


# ---------------------------------------------------------------- shared helpers


def model_dir_name(model_name: str) -> str:
    """A directory name for a model: ``provider/model`` reads better as ``provider--model``
    than as the hashed name sanitising would make (callers still sanitise the result)."""
    return model_name.replace("/", "--")


def _validated(
    model: type[_M], data: Any, path: Path, line: int, node: yaml.Node | None = None
) -> _M:
    try:
        return model.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        loc = tuple(first["loc"])
        field = _field_name(loc) or None
        exact_line = line if node is None else node_line(node, loc, line)
        message = describe_problem(first)
        if first["type"] == "extra_forbidden":
            message += " (check its spelling; fields of your own go in the 'meta' object)"
        raise InputError(message, path=path, line=exact_line, field=field) from None


def _field_name(loc: tuple[Any, ...]) -> str:
    name = ""
    for part in loc:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name
