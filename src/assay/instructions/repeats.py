"""Repeats as draws: ``assay import`` names the k-th run of a cell under promptfoo's
``--repeat N`` or lm-eval's ``repeats: N`` as the variant ``<variant> (repeat k)`` (the first
run keeps the variant's own name). For ``robustness --repeats-as-draws`` they are draws
``1..N`` of ``<variant>``: the question set loses the repeat variants, and each output goes to
the draw its repeat names, under its variant's name.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from ..data.importers._common import REPEAT_VARIANT, split_repeat
from ..data.questions import Question, QuestionSet, TargetOutput
from ..errors import InputError


def questions_without_repeats(questions: QuestionSet, path: Path) -> QuestionSet:
    """The set with each question's repeat variants left out, refused where a repeat has no
    variant of its name or asks another prompt (it would not be a draw of the same cell)."""
    kept = []
    for question in questions.questions:
        prompts = {
            v.variant: v.prompt
            for v in question.variants
            if REPEAT_VARIANT.match(v.variant) is None
        }
        for variant in question.variants:
            base, repeat = split_repeat(variant.variant)
            if repeat > 1 and prompts.get(base) != variant.prompt:
                problem = "no variant of that name" if base not in prompts else "another prompt"
                raise InputError(
                    f"question {question.question_id!r}: variant {variant.variant!r} is a repeat "
                    f"of {base!r}, which has {problem}",
                    path=path,
                    hint="--repeats-as-draws reads the repeats `assay import` names (promptfoo "
                    "--repeat, lm-eval repeats); leave it out for variants of your own",
                )
        kept.append(_without_repeats(question))
    return QuestionSet(source=questions.source, questions=tuple(kept))


def _without_repeats(question: Question) -> Question:
    variants = tuple(v for v in question.variants if REPEAT_VARIANT.match(v.variant) is None)
    return question.model_copy(update={"variants": variants})


def outputs_by_repeat(outputs: Iterable[TargetOutput]) -> list[list[TargetOutput]]:
    """The outputs by draw (repeat 1 first), each under its variant's own name; a repeat with
    no output at all leaves an empty draw."""
    draws: dict[int, list[TargetOutput]] = defaultdict(list)
    for output in outputs:
        base, repeat = split_repeat(output.prompt_variant)
        draws[repeat].append(output.model_copy(update={"prompt_variant": base}))
    return [draws.get(repeat, []) for repeat in range(1, max(draws, default=0) + 1)]
