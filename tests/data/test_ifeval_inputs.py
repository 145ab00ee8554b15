"""`import ifeval` refuses what would make its output unusable or disagree with
`assay instructions check`: a key given to two prompts, instruction arguments the checker
refuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.data.importers.ifeval import IFEvalSources, import_ifeval
from assay.errors import InputError
from assay.instructions import check_kwargs

IDS = ["length_constraints:number_words"]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _sources(tmp_path: Path, prompts: list[dict[str, Any]]) -> IFEvalSources:
    responses = [{"prompt": p["prompt"], "response": "word " * 10} for p in prompts]
    labels = [
        {**r, "instruction_id_list": p["instruction_id_list"], "follow_instruction_list": [True]}
        for p, r in zip(prompts, responses, strict=True)
    ]
    return IFEvalSources(
        prompts=_write(tmp_path / "input_data.jsonl", prompts),
        responses=_write(tmp_path / "input_response_data_m.jsonl", responses),
        labels=_write(tmp_path / "eval_results_strict.jsonl", labels),
        check_kwargs=check_kwargs,
    )


def _prompt(key: int, text: str, **kwargs: Any) -> dict[str, Any]:
    arguments = {"relation": "at least", "num_words": 5, **kwargs}
    return {"key": key, "prompt": text, "instruction_id_list": IDS, "kwargs": [arguments]}


def test_a_key_given_twice_names_both_lines(tmp_path: Path) -> None:
    sources = _sources(tmp_path, [_prompt(1005, "a"), _prompt(7, "b"), _prompt(1005, "c")])
    with pytest.raises(InputError) as error:
        import_ifeval(sources)
    assert error.value.line == 3 and error.value.field == "key"
    assert "line 1" in str(error.value)


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"num_words": "300"}, "kwargs[0].num_words"),
        ({"num_words": True}, "kwargs[0].num_words"),
        ({"num_words": 300.0}, "kwargs[0].num_words"),
        ({"num_words": -5}, "kwargs[0].num_words"),
        ({"relation": "about"}, "kwargs[0].relation"),
        ({"bogus": 1}, "kwargs[0].bogus"),
    ],
)
def test_arguments_instructions_check_refuses_are_refused(
    tmp_path: Path, arguments: dict[str, Any], field: str
) -> None:
    sources = _sources(tmp_path, [_prompt(1, "a"), _prompt(2, "b", **arguments)])
    with pytest.raises(InputError) as error:
        import_ifeval(sources)
    assert error.value.path == str(sources.prompts)
    assert error.value.line == 2 and error.value.field == field


def test_good_arguments_import(tmp_path: Path) -> None:
    result = import_ifeval(_sources(tmp_path, [_prompt(1, "a"), _prompt(2, "b", num_words=9)]))
    assert [q.question_id for q in result.questions] == ["ifeval-1", "ifeval-2"]


@pytest.mark.parametrize(
    ("followed", "got"),
    [([1], "got 1 values (int)"), ([True, False], "got 2 values (bool)"), ([], "got 0 values")],
)
def test_verdicts_of_another_shape_say_what_they_hold(
    tmp_path: Path, followed: list[Any], got: str
) -> None:
    sources = _sources(tmp_path, [_prompt(1, "a")])
    labels = json.loads(sources.labels.read_text(encoding="utf-8"))
    _write(sources.labels, [{**labels, "follow_instruction_list": followed}])
    with pytest.raises(InputError) as error:
        import_ifeval(sources)
    assert error.value.line == 1 and error.value.field == "follow_instruction_list"
    assert error.value.reason.startswith(
        "expected one true or false per instruction of instruction_id_list (1), " + got
    )
