"""promptfoo results files as judge data: the outputs a model already wrote under promptfoo
(``promptfoo eval -o results.json``), judged with assay's strict protocol.

promptfoo's matrix is prompts x providers x test cases; assay's is prompt variants x target
models x questions. Each row of ``results.results`` (one test case under one prompt and one
provider) gives:

- its question: ``test-N`` for the N-th test case of the suite (a test whose var holds a list
  is one test case per value, as promptfoo expands it); the question's meta keeps the test's
  ``description``, ``vars`` and ``metadata``;
- its prompt variant: the prompt's label (promptfoo's label, or the template itself when no
  label was given), or ``prompt-<id>`` where the label cannot be an id (over 200 characters,
  several lines); its prompt text is the prompt promptfoo rendered for the test case;
- its output, ``target_model`` = the provider's label, or its id where it has no label; the
  output's meta keeps promptfoo's own verdict and each assertion's result.

``promptfoo eval --repeat N`` runs each test case N times with new table rows; the k-th run of
a test case (same description and vars) under one prompt and provider becomes the variant
``<prompt> (repeat k)``, as inspect_ai's epochs become variants.

Refused, naming the file and the row and field (one error, nothing written): a file that is not
a promptfoo results file; two prompts of one label, or two providers of one name, in a file
(their outputs would share a cell); a question given other vars, or a prompt rendered otherwise,
by another file. Skipped and reported: a row whose provider call failed, and a row without a
text output; their cells stay in the question set, so ``judge run`` names them missing rather
than judging an empty text.

Read with the standard library: promptfoo need not be installed to import its results.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ...errors import InputError, kind_name, shown, type_name
from ..jsonl import check_input_file
from ..questions import ID_PATTERN, ManifestEntry, PromptVariant, Question
from ._common import ImportReport, log_import_report, repeat_variant, stable_key

DATASET = "promptfoo"
LABEL_CONVENTION = (
    "none: the judge scores the outputs; promptfoo's own verdict and assertion results are "
    "kept in each output's meta.promptfoo for comparison"
)
SKIP_ERROR = "row with an error"
SKIP_NO_TEXT = "row without a text output"
SKIP_REASONS = (SKIP_ERROR, SKIP_NO_TEXT)
PROVIDER_ERROR = 2  # promptfoo's ResultFailureReason.ERROR (1 is a failed assertion)
WRITE_IT = "write it with promptfoo eval -o FILE.json"


class PromptfooImport(BaseModel):
    """The question set and outputs manifest of an import of promptfoo results files."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    questions: tuple[Question, ...]
    outputs: tuple[ManifestEntry, ...]
    report: ImportReport


def import_promptfoo_results(paths: Sequence[Path]) -> PromptfooImport:
    """Read every results file in ``paths`` into one question set and manifest."""
    builder = _JudgeSetBuilder()
    for path in paths:
        document = _read_results(path)
        builder.add_file(path, document, _rows(document, path))
    return builder.result(paths)


def _read_results(path: Path) -> Mapping[str, Any]:
    check_input_file(path, hint=f"RESULTS is promptfoo's results file ({WRITE_IT})")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(
            f"not a promptfoo results file (not JSON: {error}); {WRITE_IT}", path=path
        ) from None
    if not isinstance(document, Mapping):
        raise InputError(
            f"not a promptfoo results file (a JSON {type(document).__name__}, not an object "
            f"with 'results'); {WRITE_IT}",
            path=path,
        )
    return document


def _rows(document: Mapping[str, Any], path: Path) -> list[Mapping[str, Any]]:
    results = document.get("results")
    rows = results.get("results") if isinstance(results, Mapping) else None
    if not isinstance(rows, list):
        raise InputError(
            "not a promptfoo results file (no 'results.results' list of rows; a .csv, .html "
            f"or .yaml export holds no rows to import); {WRITE_IT}",
            path=path,
        )
    for index, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise InputError(
                f"results.results[{index}]: expected a row object, got {type(row).__name__}",
                path=path,
            )
    return rows


@dataclass(frozen=True)
class _Row:
    """The fields of one row assay reads, checked."""

    index: int
    test_idx: int
    column: int  # promptfoo's promptIdx: the column (provider x prompt) of the results table
    description: str | None
    vars: dict[str, Any]
    test_metadata: dict[str, Any]
    prompt_id: str
    prompt_label: str
    prompt_text: str
    target: str

    @property
    def test_key(self) -> str:
        """What makes two rows one test case: its description and vars."""
        return json.dumps([self.description, self.vars], sort_keys=True, ensure_ascii=False)

    def named(self, path: Path) -> str:
        return f"row {self.index} ({self.target}, {path.name})"


def _read_row(row: Mapping[str, Any], index: int, path: Path) -> _Row:
    where = f"results.results[{index}]"
    test_case = _field(row, "testCase", Mapping, where, path)
    prompt = _field(row, "prompt", Mapping, where, path)
    provider = _field(row, "provider", Mapping, where, path)
    test_idx = _field(row, "testIdx", int, where, path)
    description = test_case.get("description")
    _check_response(row, where, path)
    return _Row(
        index=index,
        test_idx=test_idx,
        column=_column(row, index),
        description=description if isinstance(description, str) else None,
        vars=dict(_field(row, "vars", Mapping, where, path)),
        test_metadata=dict(test_case.get("metadata") or {}),
        prompt_id=_field(row, "promptId", str, where, path),
        prompt_label=_field(prompt, "label", str, f"{where}.prompt", path),
        prompt_text=_field(prompt, "raw", str, f"{where}.prompt", path),
        target=_target(provider, f"{where}.provider", path),
    )


def _check_response(row: Mapping[str, Any], where: str, path: Path) -> None:
    """promptfoo writes a row's ``response`` as an object (or leaves it out when the call
    failed); anything else is another file, which a skip would hide."""
    response = row.get("response")
    if response is not None and not isinstance(response, Mapping):
        raise InputError(
            f"{where}.response: expected an object (its text under 'output'), got "
            f"{type_name(response)}: not a promptfoo results row",
            path=path,
            hint=WRITE_IT,
        )


def _column(row: Mapping[str, Any], index: int) -> int:
    column = row.get("promptIdx")
    return column if isinstance(column, int) else index


def _field(parent: Mapping[str, Any], name: str, kind: type, where: str, path: Path) -> Any:
    value = parent.get(name)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        got = "missing" if value is None else f"got {type_name(value)}"
        raise InputError(
            f"{where}.{name}: expected {kind_name(kind)}, {got}: not a promptfoo results row",
            path=path,
        )
    return value


def _target(provider: Mapping[str, Any], where: str, path: Path) -> str:
    """The provider's label, else its id (promptfoo's own name of the provider)."""
    label = provider.get("label")
    name = label if isinstance(label, str) and label else _field(provider, "id", str, where, path)
    if not _is_id(name):
        raise InputError(
            f"{where}: provider {shown(name)} cannot name a target model (at most 200 "
            "characters, one line, no surrounding spaces)",
            path=path,
            hint="give the provider a short label in the promptfoo config",
        )
    return str(name)


def _is_id(text: str) -> bool:
    return re.fullmatch(ID_PATTERN, text) is not None


def _variant_name(row: _Row) -> str:
    """The prompt's label; ``prompt-<id>`` where the label (the template itself, for a prompt
    without one) cannot be an id."""
    return row.prompt_label if _is_id(row.prompt_label) else f"prompt-{row.prompt_id[:12]}"


def _question_ids(rows: Sequence[_Row]) -> dict[str, str]:
    """Each test case's question id, ``test-N``: the N-th test case of the suite, in the order
    of promptfoo's results table (a list var expands into one test case per value), whatever
    order the file lists the rows in; repeats (``--repeat``) are the same test case."""
    ids: dict[str, str] = {}
    for row in sorted(rows, key=lambda r: r.test_idx):
        ids.setdefault(row.test_key, f"test-{len(ids) + 1}")
    return ids


def _variants(rows: Sequence[_Row], question_ids: Mapping[str, str], path: Path) -> list[str]:
    """Each row's variant: its prompt's name, with `` (repeat k)`` for the k-th run of its test
    case under that prompt and provider (``--repeat``). Two prompts of one name, or two
    providers of one name, in one file are refused: their outputs would share a cell."""
    prompts: dict[str, _Row] = {}
    runs: dict[tuple[str, str, str], dict[int, _Row]] = {}
    for row in rows:
        name = _variant_name(row)
        earlier = prompts.setdefault(name, row)
        if earlier.prompt_id != row.prompt_id:
            raise InputError(
                f"results.results[{row.index}].prompt.label: two prompts are named {name!r} "
                f"(rows {earlier.index} and {row.index}): their outputs would be one prompt "
                "variant",
                path=path,
                hint="give each prompt its own label in the promptfoo config",
            )
        cell = (question_ids[row.test_key], name, row.target)
        same = runs.setdefault(cell, {}).setdefault(row.test_idx, row)
        if same is not row:
            raise InputError(
                f"results.results[{row.index}].provider: two providers are named "
                f"{row.target!r} (rows {same.index} and {row.index} answer {cell[0]} under "
                f"{name!r}): their outputs would be one target model",
                path=path,
                hint="give each provider its own label in the promptfoo config",
            )
    named = [_variant_name(row) for row in rows]
    for row in rows:
        cell = (question_ids[row.test_key], named[row.index], row.target)
        repeat = sorted(runs[cell]).index(row.test_idx) + 1
        named[row.index] = repeat_variant(named[row.index], repeat)
    return named


@dataclass
class _QuestionDraft:
    test_key: str
    meta: dict[str, Any]
    path: Path  # the first file that gave this test case
    variants: dict[str, str] = field(default_factory=dict)  # variant -> rendered prompt


@dataclass
class _JudgeSetBuilder:
    questions: dict[str, _QuestionDraft] = field(default_factory=dict)
    outputs: list[ManifestEntry] = field(default_factory=list)
    output_files: dict[tuple[str, str, str], Path] = field(default_factory=dict)
    skipped: dict[str, list[str]] = field(default_factory=dict)
    rows: int = 0
    models: set[str] = field(default_factory=set)

    def add_file(
        self, path: Path, document: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]
    ) -> None:
        read = [_read_row(row, number, path) for number, row in enumerate(rows)]
        question_ids = _question_ids(read)
        variants = _variants(read, question_ids, path)
        # promptfoo writes rows as its calls finish; the table's order (test case, then column)
        # makes the manifest the same for every run of the suite
        for row in sorted(read, key=lambda r: (r.test_idx, r.column, r.index)):
            raw = rows[row.index]
            self.rows += 1
            self._add_row(path, document, row, raw, question_ids[row.test_key], variants[row.index])

    def _add_row(
        self,
        path: Path,
        document: Mapping[str, Any],
        row: _Row,
        raw: Mapping[str, Any],
        question_id: str,
        variant: str,
    ) -> None:
        self.models.add(row.target)
        draft = self._question(question_id, row, path)
        self._render(draft, question_id, variant, row, path)
        named = f"{question_id} x {variant} x {row.named(path)}"
        if _failed_call(raw):
            self._skip(SKIP_ERROR, named)
            return
        text = _output_text(raw)
        if text is None or not text.strip():
            self._skip(SKIP_NO_TEXT, named)
            return
        self._claim_cell((question_id, variant, row.target), path)
        prompt = PromptVariant(variant=variant, prompt=row.prompt_text)
        self.outputs.append(_output(question_id, prompt, row, path, document, raw, text))

    def _question(self, question_id: str, row: _Row, path: Path) -> _QuestionDraft:
        draft = self.questions.get(question_id)
        if draft is None:
            meta = {"description": row.description, "vars": row.vars, "metadata": row.test_metadata}
            draft = self.questions[question_id] = _QuestionDraft(row.test_key, meta, path)
        elif draft.test_key != row.test_key:
            raise InputError(
                f"results.results[{row.index}].vars: {question_id} is another test case here "
                f"than in {draft.path} ({shown(row.test_key)} vs {shown(draft.test_key)}): the "
                "files are results of different test suites, whose rows would name two "
                "questions alike",
                path=path,
                hint="import the results of each test suite into a directory of its own",
            )
        return draft

    def _render(
        self, draft: _QuestionDraft, question_id: str, variant: str, row: _Row, path: Path
    ) -> None:
        earlier = draft.variants.setdefault(variant, row.prompt_text)
        if earlier != row.prompt_text:
            raise InputError(
                f"results.results[{row.index}].prompt.raw: prompt {variant!r} of {question_id} "
                f"reads {shown(row.prompt_text)} for {row.target}, {shown(earlier)} for an "
                "earlier provider or file: the judge takes one prompt per question and variant",
                path=path,
                hint="import the outputs of each prompt wording into a directory of its own",
            )

    def _claim_cell(self, cell: tuple[str, str, str], path: Path) -> None:
        earlier = self.output_files.get(cell)
        if earlier is not None:
            question_id, variant, target = cell
            where = "this file too (is the file named twice?)" if earlier == path else earlier
            raise InputError(
                f"{target}'s output for {question_id} under {variant!r} is also in {where}: the "
                "judge takes one output per question x variant x target model",
                path=path,
                hint="import each run of a provider over a test suite into a directory of its "
                "own, or label the providers apart",
            )
        self.output_files[cell] = path

    def _skip(self, reason: str, named: str) -> None:
        self.skipped.setdefault(reason, []).append(named)

    def result(self, paths: Sequence[Path]) -> PromptfooImport:
        questions = tuple(
            Question(
                question_id=question_id,
                variants=tuple(
                    PromptVariant(variant=variant, prompt=prompt)
                    for variant, prompt in draft.variants.items()
                ),
                meta=draft.meta,
            )
            for question_id, draft in sorted(self.questions.items(), key=_by_row)
        )
        report = log_import_report(
            dataset=DATASET,
            paths=paths,
            rows=self.rows,
            units={"rows": self.rows},
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
        return PromptfooImport(questions=questions, outputs=tuple(self.outputs), report=report)


def _by_row(item: tuple[str, _QuestionDraft]) -> int:
    return int(item[0].removeprefix("test-"))


def _failed_call(raw: Mapping[str, Any]) -> bool:
    """The provider call failed (promptfoo's ERROR result), as opposed to a failed assertion,
    which promptfoo also writes into the row's ``error``."""
    response = raw.get("response")
    response_error = isinstance(response, Mapping) and bool(response.get("error"))
    return raw.get("failureReason") == PROVIDER_ERROR or response_error


def _output_text(raw: Mapping[str, Any]) -> str | None:
    """The response's output when it is text; None for none, or for structured output (a
    tool call, a JSON object), which is not the text the judge reads."""
    response = raw.get("response")
    output = response.get("output") if isinstance(response, Mapping) else None
    return output if isinstance(output, str) else None


def _output(
    question_id: str,
    variant: PromptVariant,
    row: _Row,
    path: Path,
    document: Mapping[str, Any],
    raw: Mapping[str, Any],
    text: str,
) -> ManifestEntry:
    response = raw.get("response")
    response = response if isinstance(response, Mapping) else {}
    return ManifestEntry(
        question_id=question_id,
        prompt_variant=variant.variant,
        target_model=row.target,
        output_id=_output_id(question_id, variant.variant),
        text=text,
        finish_reason=_finish_reason(response),
        completion_tokens=_completion_tokens(response),
        prompt_hash=variant.prompt_hash,
        meta=_output_meta(path, document, row, raw),
    )


def _output_id(question_id: str, variant: str) -> str:
    """``<question id>:<variant>``: one per target model and cell, the same for every run of
    the test suite (promptfoo's eval id is in ``meta.eval_id``), so a judge prompt, which shows
    it as a blind alias, does not change from run to run; a hash stands for a long variant."""
    output_id = f"{question_id}:{variant}"
    return output_id if len(output_id) <= 200 else f"{question_id}:{stable_key(variant)}"


def _output_meta(
    path: Path, document: Mapping[str, Any], row: _Row, raw: Mapping[str, Any]
) -> dict[str, Any]:
    return {
        "file": path.name,
        "eval_id": document.get("evalId"),
        "row": row.index,
        "promptfoo": _promptfoo_verdict(raw),
    }


def _promptfoo_verdict(raw: Mapping[str, Any]) -> dict[str, Any]:
    """promptfoo's own verdict on the row and each assertion's result."""
    grading = raw.get("gradingResult")
    grading = grading if isinstance(grading, Mapping) else {}
    components = grading.get("componentResults")
    return {
        "pass": raw.get("success"),
        "score": raw.get("score"),
        "reason": grading.get("reason"),
        "named_scores": raw.get("namedScores") or {},
        "assertions": [
            _assertion_result(result)
            for result in (components if isinstance(components, list) else [])
            if isinstance(result, Mapping)
        ],
    }


def _assertion_result(result: Mapping[str, Any]) -> dict[str, Any]:
    assertion = result.get("assertion")
    kind = assertion.get("type") if isinstance(assertion, Mapping) else None
    return {
        "type": kind,
        "pass": result.get("pass"),
        "score": result.get("score"),
        "reason": result.get("reason"),
    }


def _finish_reason(response: Mapping[str, Any]) -> str | None:
    reason = response.get("finishReason")
    return reason if isinstance(reason, str) else None


def _completion_tokens(response: Mapping[str, Any]) -> int | None:
    """The completion's tokens as the provider counted them; None where it counted none (the
    echo provider reports 0 for any text)."""
    usage = response.get("tokenUsage")
    tokens = usage.get("completion") if isinstance(usage, Mapping) else None
    return (
        tokens if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0 else None
    )
