"""Reading IFEval's files: prompts with instructions, responses, and its evaluation labels.

Every problem is one :class:`InputError` naming the file, the line and the field.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictInt

from ..data.jsonl import iter_json_objects
from ..errors import InputError, kind_name, shown, type_name

INPUTS_FILE = "input_data.jsonl"
RESPONSES_FILE = "input_response_data_gpt4_20231107_145030.jsonl"
LABEL_FILES = {"strict": "eval_results_strict.jsonl", "loose": "eval_results_loose.jsonl"}


class PromptInstructions(BaseModel):
    """One IFEval prompt and the verifiable instructions it contains."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: StrictInt | None
    prompt: str
    instruction_id_list: list[str]
    kwargs: list[dict[str, Any]]


class PromptResponse(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    line: int
    prompt: str
    response: str


class LabelledResponse(BaseModel):
    """IFEval's own verdicts on one response."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt: str
    response: str
    instruction_id_list: list[str]
    follow_instruction_list: list[bool]


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise InputError("file not found", path=path)
    yield from iter_json_objects(path)


def _field(record: dict[str, Any], name: str, kind: type, where: tuple[Path, int]) -> Any:
    if name not in record:
        raise InputError("missing field", path=where[0], line=where[1], field=name)
    value = record[name]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise InputError(
            f"expected {kind_name(kind)}, got {type_name(value)}",
            path=where[0],
            line=where[1],
            field=name,
        )
    return value


def _typed_list(
    record: dict[str, Any], name: str, kind: type, where: tuple[Path, int]
) -> list[Any]:
    values: list[Any] = _field(record, name, list, where)
    for index, value in enumerate(values):
        if not isinstance(value, kind):
            raise InputError(
                f"expected {kind_name(kind)}, got {type_name(value)}",
                path=where[0],
                line=where[1],
                field=f"{name}[{index}]",
            )
    return values


def read_inputs(path: Path) -> dict[str, tuple[int, PromptInstructions]]:
    """Prompts with their instructions, by prompt text (with the line each came from)."""
    prompts: dict[str, tuple[int, PromptInstructions]] = {}
    key_lines: dict[int, int] = {}
    for number, record in _records(path):
        where = (path, number)
        ids = _typed_list(record, "instruction_id_list", str, where)
        kwargs = _typed_list(record, "kwargs", dict, where)
        if len(ids) != len(kwargs):
            raise InputError(
                f"{len(kwargs)} kwargs entries for {len(ids)} instructions",
                path=path,
                line=number,
                field="kwargs",
            )
        key = record.get("key")
        if key is not None and (not isinstance(key, int) or isinstance(key, bool)):
            raise InputError(
                f"expected a JSON integer key, got {shown(key)}",
                path=path,
                line=number,
                field="key",
            )
        if key is not None and key in key_lines:
            raise InputError(
                f"key {key} is also the key of line {key_lines[key]}: give each prompt once",
                path=path,
                line=number,
                field="key",
            )
        if key is not None:
            key_lines[key] = number
        item = PromptInstructions(
            key=key,
            prompt=_field(record, "prompt", str, where),
            instruction_id_list=ids,
            kwargs=kwargs,
        )
        earlier = prompts.get(item.prompt)
        if earlier is not None and earlier[1] != item:
            raise InputError(
                f"the same prompt as line {earlier[0]} with other instructions",
                path=path,
                line=number,
                field="prompt",
            )
        prompts.setdefault(item.prompt, (number, item))
    return prompts


def read_responses(path: Path) -> list[PromptResponse]:
    """Responses in file order. Several responses to one prompt are each checked; the same
    response to the same prompt on two lines is refused naming both (it would count twice)."""
    responses = []
    first_line: dict[tuple[str, str], int] = {}
    for number, record in _records(path):
        item = PromptResponse(
            line=number,
            prompt=_field(record, "prompt", str, (path, number)),
            response=_field(record, "response", str, (path, number)),
        )
        earlier = first_line.setdefault((item.prompt, item.response), number)
        if earlier != number:
            raise InputError(
                f"the same prompt and response as line {earlier}: give each response once",
                path=path,
                line=number,
                field="response",
            )
        responses.append(item)
    return responses


def read_labels(path: Path) -> list[LabelledResponse]:
    labels = []
    for number, record in _records(path):
        where = (path, number)
        ids = _typed_list(record, "instruction_id_list", str, where)
        follows = _typed_list(record, "follow_instruction_list", bool, where)
        if len(ids) != len(follows):
            raise InputError(
                f"{len(follows)} labels for {len(ids)} instructions",
                path=path,
                line=number,
                field="follow_instruction_list",
            )
        labels.append(
            LabelledResponse(
                prompt=_field(record, "prompt", str, where),
                response=_field(record, "response", str, where),
                instruction_id_list=ids,
                follow_instruction_list=follows,
            )
        )
    return labels
