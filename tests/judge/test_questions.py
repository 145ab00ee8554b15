"""Question sets and outputs: formats, located errors, coverage of the cross product."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from assay.data.questions import (
    QuestionIndex,
    QuestionSet,
    TargetOutput,
    iter_outputs,
    load_outputs,
    load_question_index,
    load_questions,
)
from assay.errors import InputError
from assay.judge.evalset import build_eval_set

from .helpers import write_manifest, write_questions


def test_jsonl_question_set_with_mapping_and_list_variants(tmp_path: Path) -> None:
    questions = load_questions(write_questions(tmp_path / "q.jsonl"))
    assert [q.question_id for q in questions.questions] == ["Q1", "Q2"]
    assert questions.cells() == [("Q1", "A"), ("Q1", "B"), ("Q2", "A"), ("Q2", "B")]
    first = questions.questions[0].variants[0]
    assert first.required_structure == "three Markdown bullet points"
    assert first.constraints == ("no code",)


def test_yaml_question_set(tmp_path: Path) -> None:
    path = tmp_path / "q.yaml"
    path.write_text(
        "questions:\n"
        "  - question_id: Q1\n"
        "    variants:\n"
        "      short: {prompt: Summarise X.}\n"
        "      long:\n"
        "        prompt: Summarise X in two paragraphs.\n"
        "        constraints: [two paragraphs]\n",
        encoding="utf-8",
    )
    questions = load_questions(path)
    assert questions.cells() == [("Q1", "short"), ("Q1", "long")]


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ('{"question_id": "Q3"}', "variants", "Field required"),
        ('{"question_id": "Q3", "variants": [{"variant": "A"}]}', "variants[0].prompt", "required"),
        ('{"question_id": " Q3", "variants": {"A": "x"}}', "question_id", "pattern"),
        ('{"question_id": "Q3", "variants": {"A": "x"}, "extra": 1}', "extra", "Extra inputs"),
        ('{"question_id": "Q1", "variants": {"A": "x"}}', "question_id", "appears twice"),
        (
            '{"question_id": "Q3", "variants": [{"variant": "A", "prompt": "x"}, '
            '{"variant": "A", "prompt": "y"}]}',
            "variants",
            "repeat",
        ),
    ],
)
def test_jsonl_errors_name_file_line_and_field(
    tmp_path: Path, line: str, field: str, message: str
) -> None:
    path = write_questions(tmp_path / "q.jsonl")
    path.write_text(path.read_text() + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_questions(path)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(path), 4, field)
    assert message in str(error) and f"{path}:4" in str(error)


def test_jsonl_syntax_error_is_located(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"question_id": "Q1", "variants": {"A": "x"}}\n{broken\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"q\.jsonl:2: invalid JSON"):
        load_questions(path)


def test_yaml_errors_point_at_the_field_line(tmp_path: Path) -> None:
    path = tmp_path / "q.yaml"
    path.write_text(
        "- question_id: Q1\n"
        "  variants:\n"
        "    - variant: A\n"
        "      prompt: fine\n"
        "    - variant: B\n"
        "      promt: typo\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        load_questions(path)
    assert caught.value.line == 5 and caught.value.field == "variants[1].prompt"


def test_manifest_outputs_with_paths_and_text(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("file text", encoding="utf-8")
    manifest = tmp_path / "m.jsonl"
    lines = [
        {"question_id": "Q1", "prompt_variant": "A", "target_model": "m", "path": "a.txt"},
        {
            "question_id": "Q1",
            "prompt_variant": "B",
            "target_model": "m",
            "output_id": "x",
            "text": "inline",
        },
    ]
    manifest.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    outputs = load_outputs(manifest)
    assert [(o.output_id, o.text) for o in outputs] == [("a.txt", "file text"), ("x", "inline")]
    assert outputs[1].source == f"{manifest}:2"


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"question_id": "Q1", "prompt_variant": "A", "target_model": "m", "text": "t"}, None),
        (
            {"question_id": "Q1", "prompt_variant": "A", "target_model": "m", "path": "nope.txt"},
            "path",
        ),
        (
            {"question_id": "Q1", "target_model": "m", "output_id": "o", "text": "t"},
            "prompt_variant",
        ),
    ],
)
def test_manifest_errors(tmp_path: Path, entry: dict[str, str], field: str | None) -> None:
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("\n" + json.dumps(entry) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_outputs(manifest)
    assert caught.value.line == 2 and caught.value.field == field


def test_directory_per_target_model(tmp_path: Path) -> None:
    model_dir = tmp_path / "outs" / "llamacpp--smollm2"
    model_dir.mkdir(parents=True)
    (model_dir / "target_model.txt").write_text("llamacpp/smollm2\n")
    (model_dir / "Q1__A.md").write_text("# A")
    (model_dir / "my__q__B.txt").write_text("b")
    (model_dir / "notes.log").write_text("ignored: not an output's suffix")
    (model_dir / ".Q2__A.txt.123.tmp").write_text("ignored: an interrupted write")
    outputs = load_outputs(tmp_path / "outs")
    assert sorted((o.question_id, o.prompt_variant, o.target_model) for o in outputs) == [
        ("Q1", "A", "llamacpp/smollm2"),
        ("my__q", "B", "llamacpp/smollm2"),
    ]


@pytest.mark.parametrize("name", ["notes.txt", "Q1_A.md", "__A.txt", "Q1__.json"])
def test_a_file_with_an_output_suffix_but_no_output_name_is_refused(
    tmp_path: Path, name: str
) -> None:
    """It would otherwise be left out unseen (and "__A.txt" was an internal error)."""
    model_dir = tmp_path / "outs" / "m"
    model_dir.mkdir(parents=True)
    (model_dir / "Q1__A.txt").write_text("fine")
    (model_dir / name).write_text("x")
    with pytest.raises(InputError) as caught:
        load_outputs(tmp_path / "outs")
    assert caught.value.path == str(model_dir / name)
    assert "not an output name" in str(caught.value)


def test_a_target_model_name_that_is_not_an_id_is_refused(tmp_path: Path) -> None:
    model_dir = tmp_path / "outs" / "m"
    model_dir.mkdir(parents=True)
    (model_dir / "Q1__A.txt").write_text("fine")
    (model_dir / "target_model.txt").write_text("x" * 201)
    with pytest.raises(InputError) as caught:
        load_outputs(tmp_path / "outs")
    assert caught.value.path == str(model_dir / "target_model.txt")


def test_coverage_reports_missing_duplicated_unexpected(tmp_path: Path) -> None:
    questions = load_questions(write_questions(tmp_path / "q.jsonl"))
    manifest = write_manifest(tmp_path / "m.jsonl", ["t1", "t2"], skip=1)  # t1 Q1 A missing
    extra = [
        {
            "question_id": "Q2",
            "prompt_variant": "B",
            "target_model": "t2",
            "output_id": "dup",
            "text": "again",
        },
        {
            "question_id": "Q9",
            "prompt_variant": "A",
            "target_model": "t2",
            "output_id": "u",
            "text": "?",
        },
    ]
    with manifest.open("a") as handle:
        handle.writelines(json.dumps(x) + "\n" for x in extra)
    eval_set = build_eval_set(questions, load_outputs(manifest))
    coverage = eval_set.coverage
    assert (coverage.expected, coverage.aligned) == (8, 6)
    kinds = {(i.kind, i.question_id, i.prompt_variant, i.target_model) for i in coverage.issues}
    assert kinds == {
        ("missing", "Q1", "A", "t1"),
        ("duplicated", "Q2", "B", "t2"),
        ("unexpected", "Q9", "A", "t2"),
    }
    assert not coverage.complete
    assert "missing 1, duplicated 1, unexpected 1" in coverage.describe()
    assert all(s.key[:3] != ("Q2", "B", "t2") for s in eval_set.samples)


def _manifest_lines(path: Path, lines: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _output(question: str, variant: str, target: str, output_id: str) -> dict[str, object]:
    return {
        "question_id": question,
        "prompt_variant": variant,
        "target_model": target,
        "output_id": output_id,
        "text": "text",
    }


def test_an_output_id_given_to_two_cells_is_refused(tmp_path: Path) -> None:
    """Two outputs of one target under one output_id would share a blind alias and make a
    label naming the output_id ambiguous; other targets may reuse it, and one cell listed
    twice stays a duplicated cell of the coverage report."""
    questions = load_questions(write_questions(tmp_path / "q.jsonl"))
    shared = _manifest_lines(
        tmp_path / "shared.jsonl",
        [
            _output("Q1", "A", "t1", "x"),
            _output("Q1", "B", "t1", "y"),
            _output("Q2", "A", "t1", "x"),
        ],
    )
    with pytest.raises(InputError) as caught:
        build_eval_set(questions, load_outputs(shared))
    assert caught.value.path == f"{shared}:3" and caught.value.field == "output_id"
    assert f"also given to question 'Q1' variant 'A' ({shared}:1)" in str(caught.value)

    other_targets = _manifest_lines(
        tmp_path / "targets.jsonl", [_output("Q1", "A", "t1", "x"), _output("Q2", "A", "t2", "x")]
    )
    assert build_eval_set(questions, load_outputs(other_targets)).coverage.aligned == 2
    twice = _manifest_lines(
        tmp_path / "twice.jsonl", [_output("Q1", "A", "t1", "x"), _output("Q1", "A", "t1", "x")]
    )
    coverage = build_eval_set(questions, load_outputs(twice)).coverage
    assert [issue.kind for issue in coverage.issues].count("duplicated") == 1


def test_a_negative_token_count_in_a_manifest_is_refused(tmp_path: Path) -> None:
    line = {**_output("Q1", "A", "t1", "x"), "completion_tokens": -5}
    manifest = _manifest_lines(tmp_path / "m.jsonl", [line])
    with pytest.raises(InputError) as caught:
        load_outputs(manifest)
    assert (caught.value.line, caught.value.field) == (1, "completion_tokens")


def _counted_reads(manifest: Path, reads: list[str]) -> Callable[[], Iterator[TargetOutput]]:
    """A source that reads ``manifest`` afresh on each call and notes each call in ``reads``."""

    def source() -> Iterator[TargetOutput]:
        reads.append("pass")
        return iter_outputs(manifest)

    return source


def test_coverage_from_a_source_read_afresh(tmp_path: Path) -> None:
    """A source read on demand gives the report a list gives; the second pass that names the
    outputs of a duplicated cell happens only when a cell is duplicated, and a target not
    among the expected ones is unexpected."""
    questions = load_questions(write_questions(tmp_path / "q.jsonl"))
    manifest = write_manifest(tmp_path / "m.jsonl", ["t1", "t2", "t3"], skip=1)
    with manifest.open("a") as handle:
        handle.write(
            json.dumps(
                {"question_id": "Q2", "prompt_variant": "A", "target_model": "t2",
                 "output_id": "again", "text": "x"}
            ) + "\n"
        )  # fmt: skip
    reads: list[str] = []
    eval_set = build_eval_set(
        questions, _counted_reads(manifest, reads), target_models=["t1", "t2"], held_up_to=0
    )
    assert len(reads) == 2  # the coverage pass, then one to name the duplicated cell's outputs
    coverage = eval_set.coverage
    assert (coverage.expected, coverage.aligned, coverage.target_models) == (8, 6, ("t1", "t2"))
    issues = [(i.kind, i.question_id, i.prompt_variant, i.target_model) for i in coverage.issues]
    assert issues[:2] == [("missing", "Q1", "A", "t1"), ("duplicated", "Q2", "A", "t2")]
    assert sorted(issues[2:]) == [("unexpected", q, v, "t3") for q in ("Q1", "Q2") for v in "AB"]
    assert coverage.issues[1].sources == (f"{manifest}:6", f"{manifest}:12")
    assert eval_set.aligned_by_target == {"t1": 3, "t2": 3}
    keys = [s.key[:3] for s in eval_set]
    assert len(keys) == 6 and ("Q2", "A", "t2") not in keys
    assert all(key[2] in ("t1", "t2") for key in keys)
    assert len(reads) == 3  # iterating reads again; nothing was held

    complete = write_manifest(tmp_path / "c.jsonl", ["t1"])
    reads.clear()
    whole = build_eval_set(questions, _counted_reads(complete, reads), held_up_to=0)
    assert whole.coverage.complete and len(reads) == 1
    assert len(list(whole)) == 4 and len(reads) == 2


def test_a_small_output_source_is_read_once(tmp_path: Path) -> None:
    """Up to the limit the coverage pass keeps the outputs and later passes reuse them; one
    output more and every pass reads the source again."""
    questions = load_questions(write_questions(tmp_path / "q.jsonl"))
    manifest = write_manifest(tmp_path / "m.jsonl", ["t1"])
    for limit, expected_reads in ((4, 1), (3, 3)):
        reads: list[str] = []
        eval_set = build_eval_set(questions, _counted_reads(manifest, reads), held_up_to=limit)
        first, second = list(eval_set), list(eval_set)
        assert first == second and len(first) == 4 and len(reads) == expected_reads


def test_question_index_reads_questions_by_offset(tmp_path: Path) -> None:
    """A JSONL set checked whole but held as offsets gives the samples the held set gives."""
    path = write_questions(tmp_path / "q.jsonl")
    held, index = load_questions(path), load_question_index(path, held_up_to=1)
    assert isinstance(index, QuestionIndex) and index.question_count == 2
    assert list(index.cells()) == held.cells()
    assert index.variant("Q2", "B") == held.variant("Q2", "B")
    assert index.variant("Q2", "Z") is None and index.variant("Q9", "A") is None
    assert index.has_variant("Q1", "A") and not index.has_variant("Q1", "Z")
    manifest = write_manifest(tmp_path / "m.jsonl", ["t1"])
    from_index = build_eval_set(index, load_outputs(manifest))
    assert from_index.samples == build_eval_set(held, load_outputs(manifest)).samples
    yaml_path = tmp_path / "q.yaml"
    yaml_path.write_text("- question_id: Q1\n  variants: {A: Ask.}\n")
    assert isinstance(load_question_index(yaml_path), QuestionSet)  # small: held whole


def test_a_small_jsonl_question_set_is_held_parsed(tmp_path: Path) -> None:
    """Up to the limit the set is held as load_questions holds it (no second parse per
    sample); one question more and it is held as offsets."""
    path = write_questions(tmp_path / "q.jsonl")
    assert load_question_index(path, held_up_to=2) == load_questions(path)
    assert isinstance(load_question_index(path, held_up_to=1), QuestionIndex)


def test_question_index_names_the_bad_line(tmp_path: Path) -> None:
    path = write_questions(tmp_path / "q.jsonl")
    lines = path.read_text().splitlines()
    path.write_text(
        "\n".join([lines[0], "", json.dumps({"question_id": "Q1", "variants": {"A": "x"}})])
    )
    with pytest.raises(InputError) as caught:
        load_question_index(path)
    assert (caught.value.line, caught.value.field) == (3, "question_id")
    path.write_text("\n".join([lines[0], '{"question_id": "Q3", "variants": []}']))
    with pytest.raises(InputError) as caught:
        load_question_index(path)
    assert (caught.value.line, caught.value.field) == (2, "variants")


def test_question_index_refuses_a_file_changed_under_it(tmp_path: Path) -> None:
    path = write_questions(tmp_path / "q.jsonl")
    index = load_question_index(path, held_up_to=0)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(reversed(lines)) + "\n")
    with pytest.raises(InputError, match="changed"):
        index.variant("Q1", "A")


def test_coverage_line_counts_one_target_model_in_the_singular(tmp_path: Path) -> None:
    questions = load_questions(write_questions(tmp_path / "q.jsonl"))
    manifest = write_manifest(tmp_path / "m.jsonl", ["t1"])
    line = build_eval_set(questions, load_outputs(manifest)).coverage.describe()
    assert ", 1 target model -> 4 expected" in line
