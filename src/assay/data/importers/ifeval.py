"""IFEval (Zhou et al., 2023) as judge data: prompts with verifiable instructions, one model's
responses, and IFEval's own per-instruction pass/fail as ground truth.

Writes three files the judge protocol reads: a question set (one question per prompt, one
prompt variant ``original`` whose constraints are the prompt's instructions), an outputs
manifest (one output per response) and a labels file (:mod:`.ifeval_labels`). Prompts and
responses are matched by the exact prompt text, as IFEval's own evaluation does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ...errors import ConfigError, InputError, shown, type_name
from ..questions import ID_PATTERN, ManifestEntry, PromptVariant, Question
from ._common import ImportReport, RowReader, read_rows
from .ifeval_labels import IFEvalLabel, InstructionLabel, is_format_instruction

DATASET = "ifeval"
VARIANT = "original"
LABEL_CONVENTION = (
    "IFEval's per-instruction pass/fail (--labels: eval_results_strict.jsonl, --loose-labels: "
    "eval_results_loose.jsonl) is the ground truth. INSTRUCTION_COMPLIANCE counts every "
    "instruction, FORMAT_COMPLIANCE the detectable_format:, change_case:, startend:, "
    "punctuation: and length_constraints: ones; score 2 = all followed, 1 = some, 0 = none."
)
SKIP_NO_RESPONSE = "prompt without a response"
SKIP_NO_LABEL = "response without programmatic labels"
SKIP_ORPHAN_RESPONSE = "response to a prompt not in SRC"


KwargsCheck = Callable[[Sequence[str], Sequence[Mapping[str, Any]], str], None]


@dataclass(frozen=True)
class IFEvalSources:
    """The files of one IFEval import."""

    prompts: Path  # input_data.jsonl
    responses: Path
    labels: Path  # eval_results_strict.jsonl
    loose_labels: Path | None = None
    target_model: str | None = None  # default: from the responses file name
    constraints: bool = True  # list the instructions as the variant's constraints
    # refuses bad instruction arguments (an InputError naming kwargs[i].NAME): the checker of
    # `assay instructions check`, assay.instructions.check_kwargs, given by the caller (data
    # sits below instructions); None reads the arguments unchecked
    check_kwargs: KwargsCheck | None = None


class IFEvalImport(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    questions: tuple[Question, ...]
    outputs: tuple[ManifestEntry, ...]
    labels: tuple[IFEvalLabel, ...]
    report: ImportReport


@dataclass(frozen=True)
class _Prompt:
    key: int
    text: str
    instruction_ids: tuple[str, ...]
    kwargs: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class _Response:
    line: int
    text: str


@dataclass(frozen=True)
class _Verdicts:
    path: Path
    line: int
    response: str
    instruction_ids: tuple[str, ...]
    followed: tuple[bool, ...]


def import_ifeval(sources: IFEvalSources) -> IFEvalImport:
    prompts = _read_prompts(sources.prompts, sources.check_kwargs)
    responses = _read_responses(sources.responses)
    strict = _read_verdicts(sources.labels)
    loose = None if sources.loose_labels is None else _read_verdicts(sources.loose_labels)
    target = _checked_target(sources.target_model or default_target_model(sources.responses))
    skipped: dict[str, int] = {}
    questions, outputs, labels = [], [], []
    for prompt in prompts:
        response = responses.get(prompt.text)
        verdicts = strict.get(prompt.text)
        if response is None or verdicts is None:
            reason = SKIP_NO_RESPONSE if response is None else SKIP_NO_LABEL
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        loose_verdicts = None if loose is None else loose.get(prompt.text)
        label = _label(prompt, response, verdicts, loose_verdicts, target, sources.responses)
        questions.append(_question(prompt, sources.constraints))
        outputs.append(_output(label, response))
        labels.append(label)
    orphans = len(responses.keys() - {p.text for p in prompts})
    if orphans:
        skipped[SKIP_ORPHAN_RESPONSE] = orphans
    report = _report(sources, prompts, responses, labels, skipped)
    return IFEvalImport(
        questions=tuple(questions), outputs=tuple(outputs), labels=tuple(labels), report=report
    )


def default_target_model(responses: Path) -> str:
    """``input_response_data_gpt4_20231107_145030.jsonl`` -> ``gpt4_20231107_145030``."""
    return responses.stem.removeprefix("input_response_data_") or responses.stem


def _checked_target(name: str) -> str:
    if re.fullmatch(ID_PATTERN, name) is None:
        raise ConfigError(
            f"target model name {name!r} cannot be used as an identifier",
            hint="pass --target-model: up to 200 characters, no surrounding spaces",
        )
    return name


def question_id(key: int) -> str:
    return f"{DATASET}-{key}"


# ---------------------------------------------------------------- reading


def _read_prompts(path: Path, check_kwargs: KwargsCheck | None = None) -> list[_Prompt]:
    prompts: list[_Prompt] = []
    seen: set[str] = set()
    key_lines: dict[int, int] = {}
    for line, row in read_rows(path, "IFEval input_data"):
        reader = RowReader(row, path=path, line=line, dataset="IFEval input_data")
        key = reader.row.get("key")
        if not isinstance(key, int) or isinstance(key, bool):
            reader.fail("key", f"expected a JSON integer key, got {shown(key)}", shape=False)
        text = reader.text("prompt")
        ids = _instruction_ids(reader)
        kwargs = reader.items("kwargs")
        if len(kwargs) != len(ids) or not all(isinstance(k, dict) for k in kwargs):
            reader.fail("kwargs", f"expected {len(ids)} objects, one per instruction")
        _refuse_repeat(text, seen, reader)
        seen.add(text)
        if key in key_lines:  # two questions would get the id ifeval-KEY
            reader.fail("key", f"key {key} is also the key of line {key_lines[key]}", shape=False)
        key_lines[key] = line
        arguments = tuple(_drop_nulls(k) for k in kwargs)
        if check_kwargs is not None:
            try:
                check_kwargs(ids, arguments, text)
            except InputError as error:
                raise InputError(
                    error.reason, path=path, line=line, field=error.field, hint=error.hint
                ) from None
        prompts.append(_Prompt(key, text, ids, arguments))
    return prompts


def _read_responses(path: Path) -> dict[str, _Response]:
    responses: dict[str, _Response] = {}
    for line, row in read_rows(path, "IFEval responses"):
        reader = RowReader(row, path=path, line=line, dataset="IFEval responses")
        prompt = reader.text("prompt")
        if reader.row.get("response", "") is None:
            # a null would read as the empty response, which the labels then score as a real
            # answer that follows nothing; IFEval's own evaluation cannot read a null either
            reader.fail("response", "null, not a response text", shape=False)
        text = reader.text("response")
        _refuse_repeat(prompt, responses.keys(), reader)
        responses[prompt] = _Response(line, text)
    return responses


def _read_verdicts(path: Path) -> dict[str, _Verdicts]:
    verdicts: dict[str, _Verdicts] = {}
    for line, row in read_rows(path, "IFEval eval_results"):
        reader = RowReader(row, path=path, line=line, dataset="IFEval eval_results")
        prompt = reader.text("prompt")
        ids = _instruction_ids(reader)
        followed = reader.items("follow_instruction_list")
        if len(followed) != len(ids) or not all(isinstance(f, bool) for f in followed):
            kinds = ", ".join(sorted({type_name(f) for f in followed}))
            reader.fail(
                "follow_instruction_list",
                f"expected one true or false per instruction of instruction_id_list ({len(ids)}),"
                f" got {len(followed)} values" + (f" ({kinds})" if kinds else ""),
            )
        _refuse_repeat(prompt, verdicts.keys(), reader)
        verdicts[prompt] = _Verdicts(path, line, reader.text("response"), ids, tuple(followed))
    return verdicts


def _instruction_ids(reader: RowReader) -> tuple[str, ...]:
    ids = reader.items("instruction_id_list")
    if not ids or not all(isinstance(i, str) and i for i in ids):
        reader.fail("instruction_id_list", "expected a non-empty list of instruction ids")
    return tuple(ids)


def _refuse_repeat(prompt: str, seen: Collection[str], reader: RowReader) -> None:
    if prompt in seen:
        reader.fail("prompt", "the same prompt appears on an earlier line", shape=False)


def _drop_nulls(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Some IFEval releases list every argument with null for the unused ones."""
    return {name: value for name, value in kwargs.items() if value is not None}


# ---------------------------------------------------------------- building


def _label(
    prompt: _Prompt,
    response: _Response,
    strict: _Verdicts,
    loose: _Verdicts | None,
    target: str,
    responses_path: Path,
) -> IFEvalLabel:
    for verdicts in (strict, loose):
        if verdicts is not None:
            _check_consistent(prompt, response, verdicts)
    instructions = tuple(
        InstructionLabel(
            instruction_id=instruction_id,
            kwargs=prompt.kwargs[index],
            format=is_format_instruction(instruction_id),
            followed_strict=strict.followed[index],
            followed_loose=None if loose is None else loose.followed[index],
        )
        for index, instruction_id in enumerate(prompt.instruction_ids)
    )
    return IFEvalLabel(
        question_id=question_id(prompt.key),
        prompt_variant=VARIANT,
        target_model=target,
        output_id=f"{responses_path.name}:{response.line}",
        ifeval_key=prompt.key,
        instructions=instructions,
    )


def _check_consistent(prompt: _Prompt, response: _Response, verdicts: _Verdicts) -> None:
    """Labels computed on another response, or on other instructions, are not ground truth."""
    problem = field = ""
    if verdicts.instruction_ids != prompt.instruction_ids:
        problem, field = "instructions differ from the prompt's in SRC", "instruction_id_list"
    elif verdicts.response != response.text:
        problem, field = "the labels were computed on another response", "response"
    if problem:
        raise InputError(
            f"{problem} (key {prompt.key})",
            path=verdicts.path,
            line=verdicts.line,
            field=field,
            hint="pass the eval_results files computed on this responses file and input_data",
        )


def _question(prompt: _Prompt, with_constraints: bool) -> Question:
    constraints: tuple[str, ...] = ()
    if with_constraints:
        constraints = tuple(
            describe_instruction(i, k)
            for i, k in zip(prompt.instruction_ids, prompt.kwargs, strict=True)
        )
    variant = PromptVariant(variant=VARIANT, prompt=prompt.text, constraints=constraints)
    return Question(question_id=question_id(prompt.key), variants=(variant,))


def describe_instruction(instruction_id: str, kwargs: dict[str, Any]) -> str:
    """``length_constraints:number_words (relation=at least, num_words=300)``."""
    if not kwargs:
        return instruction_id
    arguments = ", ".join(f"{name}={value}" for name, value in kwargs.items())
    return f"{instruction_id} ({arguments})"


def _output(label: IFEvalLabel, response: _Response) -> ManifestEntry:
    return ManifestEntry(
        question_id=label.question_id,
        prompt_variant=label.prompt_variant,
        target_model=label.target_model,
        output_id=label.output_id,
        text=response.text,
    )


def _report(
    sources: IFEvalSources,
    prompts: list[_Prompt],
    responses: dict[str, _Response],
    labels: list[IFEvalLabel],
    skipped: dict[str, int],
) -> ImportReport:
    instructions = [item for label in labels for item in label.instructions]
    followed_all = sum(1 for label in labels if all(i.followed_strict for i in label.instructions))
    return ImportReport(
        dataset=DATASET,
        source=str(sources.prompts),
        rows=len(prompts),
        units={"prompts": len(prompts), "responses": len(responses)},
        kept=len(labels),
        skipped=skipped,
        labels={
            "all instructions followed (strict)": followed_all,
            "some instruction not followed (strict)": len(labels) - followed_all,
            "instructions": len(instructions),
            "instructions followed (strict)": sum(1 for i in instructions if i.followed_strict),
            "format instructions": sum(1 for item in instructions if item.format),
        },
        error_types={},
        label_convention=LABEL_CONVENTION,
    )
