"""IFEval prompts, each with variants under small changes, as a judge question set.

The set is what ``assay generate`` reads (every question x variant through each target model)
and what ``assay judge run`` can judge; each question's ``meta["ifeval"]`` keeps the prompt's
instructions, which ``assay instructions robustness`` checks every output against.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..data.importers.ifeval import VARIANT, describe_instruction, question_id
from ..data.jsonl import iter_lines
from ..data.questions import PromptVariant, Question
from ..errors import InputError, field_path
from .batch import refuse_bad_instructions
from .ifeval_data import PromptInstructions, read_inputs
from .registry import check_kwargs
from .variants import prompt_variants

META_KEY = "ifeval"
INSTRUCTIONS_FIELD = f"meta.{META_KEY}"  # where `vary` writes each question's instructions
NOT_APPLIED = "not_applied"


class IFEvalMeta(BaseModel):
    """``meta["ifeval"]`` of a varied question: the instructions every variant keeps."""

    # other keys are ignored: an IFEval document as lm-eval's samples keep it (``prompt``
    # beside these; ``variants`` in the tasks ``vary --lm-eval`` writes) reads as it is
    model_config = ConfigDict(extra="ignore", frozen=True)

    instruction_id_list: list[str]
    kwargs: list[dict[str, Any]]
    # where the prompt came from and the seed of its variants (`vary` writes them; a question
    # set of one's own may leave them out)
    key: int | None = None
    input_line: int | None = None
    seed: int | None = None


def vary_inputs(
    inputs_path: Path, kinds: Sequence[str], *, seed: int, constraints: bool = True
) -> list[Question]:
    """Every prompt of an IFEval ``input_data`` file, in file order, with a variant per kind
    that applies to it (the kinds that do not are listed in ``meta["not_applied"]``). With
    ``constraints``, each variant lists the instructions as the constraints a judge holds the
    output to (as ``import ifeval`` does); without, a judge sees only the prompt.

    Bad instructions are refused before anything is built, naming the line and field."""
    inputs = read_inputs(inputs_path)
    if not inputs:
        raise InputError("the inputs file holds no prompt", path=inputs_path)
    refuse_bad_instructions(inputs, inputs_path)
    return [
        _varied_question(item, line, kinds, seed, with_constraints=constraints)
        for line, item in sorted(inputs.values(), key=lambda found: found[0])
    ]


def _varied_question(
    item: PromptInstructions,
    line: int,
    kinds: Sequence[str],
    seed: int,
    *,
    with_constraints: bool,
) -> Question:
    identity = str(item.key) if item.key is not None else f"line-{line}"
    pairs = zip(item.instruction_id_list, item.kwargs, strict=True)
    constraints = tuple(describe_instruction(i, k) for i, k in pairs) if with_constraints else ()
    texts = prompt_variants(
        item.prompt, item.instruction_id_list, item.kwargs, kinds, seed=seed, key=identity
    )
    variants = [PromptVariant(variant=VARIANT, prompt=item.prompt, constraints=constraints)]
    variants += [
        PromptVariant(variant=kind, prompt=text, constraints=constraints)
        for kind, text in texts.items()
        if text is not None
    ]
    meta = IFEvalMeta(
        key=item.key,
        input_line=line,
        instruction_id_list=item.instruction_id_list,
        kwargs=item.kwargs,
        seed=seed,
    )
    return Question(
        question_id=question_id(item.key) if item.key is not None else f"ifeval-line-{line}",
        variants=tuple(variants),
        meta={
            META_KEY: meta.model_dump(mode="json"),
            NOT_APPLIED: [kind for kind, text in texts.items() if text is None],
        },
    )


def instructions_of(
    question: Question, questions_path: Path, field: str = INSTRUCTIONS_FIELD
) -> IFEvalMeta:
    """The instructions a question's outputs are checked against, read from ``field`` (a
    dotted path under the question's ``meta``), or an error naming the question's line and
    the field."""

    def refused(reason: str, where: str, hint: str | None = None) -> InputError:
        line = _line_of(questions_path, question.question_id)  # read only for an error
        return InputError(reason, path=questions_path, line=line, field=where, hint=hint)

    raw = meta_value(question.meta, field)
    if raw is None:
        raise refused(
            f"question {question.question_id!r} has no instructions to check",
            field,
            "give the question set `assay instructions vary` wrote, or name where the "
            "questions keep their instructions (--instructions-field)",
        )
    try:
        meta = IFEvalMeta.model_validate(raw)
        check_kwargs(meta.instruction_id_list, meta.kwargs, question.variants[0].prompt)
    except ValidationError as error:
        first = error.errors()[0]
        raise refused(first["msg"], f"{field}.{field_path(first['loc'])}") from None
    except InputError as error:
        raise refused(error.reason, f"{field}.{error.field}" if error.field else field) from None
    return meta


def meta_value(meta: dict[str, Any] | None, field: str) -> Any:
    """The value at ``field`` (``meta.a.b``) of a question's meta; None where it has none."""
    value: Any = meta
    for key in field.split(".")[1:]:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _line_of(path: Path, wanted: str) -> int | None:
    """The line of a JSONL question set that holds ``wanted`` (None for other formats)."""
    if path.suffix != ".jsonl":
        return None
    for number, raw in iter_lines(path):
        try:
            if json.loads(raw).get("question_id") == wanted:
                return number
        except (ValueError, AttributeError):
            continue
    return None
