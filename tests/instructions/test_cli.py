"""``assay instructions check | agreement | list`` through their argparse registration."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from assay.cli import _instructions, main
from assay.errors import InputError


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="assay")
    _instructions.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return int(args.handler(args))


def write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def small_data(tmp_path: Path) -> Path:
    write_jsonl(
        tmp_path / "input_data.jsonl",
        [
            {
                "key": 1,
                "prompt": "Say hi without commas.",
                "instruction_id_list": ["punctuation:no_comma"],
                "kwargs": [{}],
            },
            {
                "key": 2,
                "prompt": "End with Bye.",
                "instruction_id_list": ["startend:end_checker"],
                "kwargs": [{"end_phrase": "Bye."}],
            },
        ],
    )
    return write_jsonl(
        tmp_path / "responses.jsonl",
        [
            {"prompt": "Say hi without commas.", "response": "Hi, you."},
            {"prompt": "End with Bye.", "response": "Ok. Bye."},
            {"prompt": "Not in the inputs.", "response": "x"},
        ],
    )


def test_check_writes_one_verdict_line_per_response(
    small_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out" / "verdicts.jsonl"
    assert run(["instructions", "check", "--data", str(small_data), "--out", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["follow_all_instructions"] for r in records] == [False, True]
    assert records[0]["results"][0]["reason"] == "1 commas"
    printed = capsys.readouterr().out
    assert "prompt-level 50.0%" in printed
    assert "skipped 1 response(s) whose prompt is not in" in printed and "(line(s) 3)" in printed


def test_check_reports_a_bad_kwarg_with_file_line_and_field(small_data: Path) -> None:
    inputs = small_data.parent / "input_data.jsonl"
    lines = inputs.read_text().splitlines()
    lines[1] = lines[1].replace('"end_phrase": "Bye."', '"end_phrase": 3')
    inputs.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as caught:
        run(["instructions", "check", "--data", str(small_data)])
    assert caught.value.line == 2 and caught.value.field == "kwargs[0].end_phrase"
    assert str(inputs) in str(caught.value)


def test_a_bad_instruction_no_response_asks_for_is_still_bad_input(
    small_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The whole inputs file is checked, as a bad record stops `bench run` whichever records it
    runs: a bad kwarg on a line whose prompt has no response was accepted in silence."""
    inputs = small_data.parent / "input_data.jsonl"
    inputs.write_text(inputs.read_text().replace('"end_phrase": "Bye."', '"end_phrase": 3'))
    only_first = write_jsonl(
        small_data.parent / "first.jsonl",
        [{"prompt": "Say hi without commas.", "response": "Hi you."}],
    )
    out = small_data.parent / "verdicts.jsonl"
    argv = ["instructions", "check", "--data", str(only_first), "--inputs", str(inputs)]
    assert main([*argv, "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: {inputs}:2 field 'kwargs[0].end_phrase': startend:end_checker: expected a "
        "string, got 3\n"
    )
    assert not out.exists()


def test_an_unknown_instruction_id_points_to_the_listing_command(
    small_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hint named `assay instructions agreement` (it needs IFEval's data and prints a
    table), and the located error of `instructions check` dropped it."""
    inputs = small_data.parent / "input_data.jsonl"
    inputs.write_text(inputs.read_text().replace("punctuation:no_comma", "nope:x"))
    assert main(["instructions", "check", "--data", str(small_data)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {inputs}:1 field 'instruction_id_list[0]': nope:x: unknown")
    assert err.rstrip().endswith("hint: `assay instructions list` lists the ids assay checks")


def test_check_reports_malformed_json_with_its_line(small_data: Path) -> None:
    with small_data.open("a") as handle:
        handle.write("{not json\n")
    with pytest.raises(InputError, match=r"responses.jsonl:4"):
        run(["instructions", "check", "--data", str(small_data)])


def test_check_needs_the_inputs_file(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "r.jsonl", [{"prompt": "p", "response": "r"}])
    with pytest.raises(InputError, match="inputs file not found"):
        run(["instructions", "check", "--data", str(data)])


def test_agreement_on_ifeval_writes_the_table(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "table.md"
    argv = ["instructions", "agreement", "--data-dir", str(shared_data / "ifeval")]
    flagged = tmp_path / "disagreements.jsonl"
    assert run([*argv, "--mode", "loose", "--out", str(out), "--disagreements", str(flagged)]) == 0
    records = [json.loads(line) for line in flagged.read_text().splitlines()]
    kinds = {(r["kind"], r["instruction_id"]) for r in records}
    assert ("disagreement", "change_case:english_capital") in kinds
    assert ("excluded", "keywords:letter_frequency") in kinds
    table = out.read_text()
    assert "loose agreement" in table and "strict agreement" not in table
    assert table in capsys.readouterr().out


def test_list_marks_coverage(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["instructions", "list"]) == 0
    out = capsys.readouterr().out
    assert "change_case:english_capital" in out and "not covered" in out


def test_registered_in_the_assay_command_with_one_line_errors(
    small_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = small_data.parent / "input_data.jsonl"
    inputs.write_text('{"prompt": "p", "instruction_id_list": ["x"], "kwargs": {}}\n')
    assert main(["instructions", "check", "--data", str(small_data)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "input_data.jsonl:1 field 'kwargs'" in err
    assert "expected a list, got dict" in err  # the JSON's words, as the importers say them
    inputs.write_text('{"prompt": null, "instruction_id_list": [], "kwargs": []}\n')
    assert main(["instructions", "check", "--data", str(small_data)]) == 2
    assert "field 'prompt': expected a string, got null" in capsys.readouterr().err
    assert main(["instructions"]) == 2
    assert "agreement" in capsys.readouterr().out


def test_a_prompt_listed_twice_with_other_instructions_is_an_error(small_data: Path) -> None:
    inputs = small_data.parent / "input_data.jsonl"
    duplicate = {"prompt": "End with Bye.", "instruction_id_list": [], "kwargs": []}
    inputs.write_text(inputs.read_text() + json.dumps(duplicate) + "\n")
    with pytest.raises(InputError, match="same prompt as line 2") as caught:
        run(["instructions", "check", "--data", str(small_data)])
    assert caught.value.line == 3 and caught.value.field == "prompt"


def test_a_key_given_to_two_prompts_names_both_lines(small_data: Path) -> None:
    inputs = small_data.parent / "input_data.jsonl"
    other = {"key": 1, "prompt": "Another.", "instruction_id_list": [], "kwargs": []}
    inputs.write_text(inputs.read_text() + json.dumps(other) + "\n")
    with pytest.raises(InputError, match="key 1 is also the key of line 1") as caught:
        run(["instructions", "check", "--data", str(small_data)])
    assert caught.value.line == 3 and caught.value.field == "key"


def test_a_response_given_twice_names_both_lines(small_data: Path) -> None:
    again = {"prompt": "Say hi without commas.", "response": "Hi, you."}
    small_data.write_text(small_data.read_text() + json.dumps(again) + "\n")
    out = small_data.parent / "checked.jsonl"
    with pytest.raises(InputError, match="same prompt and response as line 1") as caught:
        run(["instructions", "check", "--data", str(small_data), "--out", str(out)])
    assert caught.value.line == 4 and caught.value.field == "response"
    assert not out.exists()


def test_distinct_responses_to_one_prompt_are_each_checked(small_data: Path) -> None:
    other = {"prompt": "Say hi without commas.", "response": "Hi you."}
    small_data.write_text(small_data.read_text() + json.dumps(other) + "\n")
    out = small_data.parent / "checked.jsonl"
    assert run(["instructions", "check", "--data", str(small_data), "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 3
