"""Rules of the judge protocol, seen through real `assay judge run` processes.

The judge is a loopback OpenAI-compatible server that gives one fixed reply, so the reply is
known to the byte: "exactly one JSON object, with no extra text" (a reply that would be valid,
wrapped in characters that are whitespace to Python but not to JSON, which a strict JSON parser
refuses; prose in front of a broken object), and evidence whose reason is the format example's
placeholder. Each is archived invalid with its flag and the check that fired. And the run log's
decoding parameters: the max_tokens the calls were sent with, not only the setting.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from assay.judge.archive import load_records
from tests.helpers.fault_server import OK, fault_server
from tests.helpers.reset_proxy import reset_proxy
from tests.test_failed_calls import ROOT, assay

from .helpers import META, OUTPUT_TEXT, dumps, valid_body, write_questions

JUDGE = "openai/judge"


def _sample(tmp_path: Path) -> tuple[Path, Path]:
    """One question x variant and one output: the sample META describes."""
    questions = write_questions(
        tmp_path / "q.jsonl",
        [{"question_id": "Q1", "variants": {"A": {"prompt": "Explain a hash map."}}}],
    )
    manifest = tmp_path / "outputs.jsonl"
    line = {key: META[key] for key in ("question_id", "prompt_variant", "target_model")}
    line.update(output_id=META["output_id"], text=OUTPUT_TEXT)
    manifest.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return questions, manifest


def _judge_with_reply(tmp_path: Path, reply: str, *options: str) -> dict[str, Any]:
    """Judge the sample with a server that answers ``reply``; the one archived record."""
    questions, manifest = _sample(tmp_path)
    out = tmp_path / "run"
    with fault_server([OK], reply_text=reply) as server:
        result = assay(
            tmp_path,
            *("judge", "run", "--questions", questions, "--outputs", manifest),
            *("--judge", JUDGE, "--out", out, "--base-url", server.base_url),
            *("--no-blind", "--constrained", "off", "--date", META["timestamp"]),
            *("--no-cache", "--max-attempts", "1", *options),
        )
    assert result.returncode == 0, result.stderr
    checked = assay(tmp_path, "judge", "validate", out)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    (shard,) = [path for path in out.rglob("*_evaluations/*/*/*/*") if path.is_file()]
    (record,) = load_records(out)  # the stored form put back
    dumped: dict[str, Any] = record.model_dump(mode="json")
    dumped["archive"] = shard.relative_to(out).parts[0]
    return dumped


def _valid_reply() -> str:
    body = valid_body()
    body["meta"]["judge_model"] = JUDGE
    return dumps(body)


def test_the_valid_reply_is_archived_valid(tmp_path: Path) -> None:
    """The control: without the wrapping, the same reply is a valid evaluation."""
    record = _judge_with_reply(tmp_path, "\n " + _valid_reply() + "\r\n")
    assert record["archive"] == "valid_evaluations"
    assert record["valid"] is True and record["flags"] == []


@pytest.mark.parametrize(
    ("before", "after"),
    [("\u00a0", ""), ("", "\u3000"), ("\x1e", ""), ("", "\x0c"), ("", "\u2028")],
    ids=["no-break space", "ideographic space", "record separator", "form feed", "line sep"],
)
def test_a_reply_wrapped_in_non_json_whitespace_is_a_protocol_violation(
    tmp_path: Path, before: str, after: str
) -> None:
    reply = before + _valid_reply() + after
    with pytest.raises(json.JSONDecodeError):
        json.loads(reply)  # what a strict consumer of the archive would meet
    record = _judge_with_reply(tmp_path, reply)
    assert record["archive"] == "invalid_evaluations"
    assert record["valid"] is False and record["flags"] == ["PROTOCOL_VIOLATION"]
    failed = [c["name"] for c in record["classification"]["checks"] if not c["passed"]]
    assert failed == ["no_text_outside_object"]
    assert record["classification"]["scores"] is None
    assert record["raw_reply"] == reply


def test_prose_before_a_broken_object_is_a_protocol_violation_too(tmp_path: Path) -> None:
    """The prose is extra text whether or not the object after it parses: it keeps the flag
    that prose before a whole object gets, beside UNPARSABLE_OUTPUT."""
    broken = _valid_reply()[:200]
    record = _judge_with_reply(tmp_path, "Here is my evaluation:\n" + broken)
    assert record["archive"] == "invalid_evaluations"
    assert record["flags"] == ["PROTOCOL_VIOLATION", "UNPARSABLE_OUTPUT"]
    details = {c["name"]: c["detail"] for c in record["classification"]["checks"]}
    assert details["no_text_outside_object"] == "extra text: 'Here is my evaluation:'"


def test_a_reply_the_per_file_archive_cannot_hold_keeps_its_flags(tmp_path: Path) -> None:
    """An infinity (1e999) does not read back from a JSON file, so the reply is stored escaped
    with the 'archivable' check; the flags and checks it got stay beside it."""
    body = json.loads(_valid_reply())
    body["meta"].pop("output_id")
    reply = "My scores: " + dumps(body).replace('"COMPLETENESS": 1', '"COMPLETENESS": 1e999')
    record = _judge_with_reply(tmp_path, reply, "--archive-layout", "files")
    assert record["archive"] == "invalid_evaluations"
    assert record["flags"] == ["PROTOCOL_VIOLATION", "UNPARSABLE_OUTPUT", "INCOMPLETE_COVERAGE"]
    failed = [c["name"] for c in record["classification"]["checks"] if not c["passed"]]
    assert failed[-1] == "archivable"
    assert {"no_text_outside_object", "scores_integers", "meta_identifiers"} <= set(failed)
    assert record["raw_reply"] == ascii(reply)


def test_a_broken_object_alone_is_only_unparsable(tmp_path: Path) -> None:
    """No text around it: a reply cut short by the token budget breaks no other rule."""
    record = _judge_with_reply(tmp_path, _valid_reply()[:200])
    assert record["flags"] == ["UNPARSABLE_OUTPUT"]


def test_a_reason_copied_from_the_format_example_is_no_reason(tmp_path: Path) -> None:
    """SmolLM2 under exact decoding copied "<why they support this score>" into every evidence
    item; the quotes were spans of the output, so the reply was archived valid."""
    body = json.loads(_valid_reply())
    body["evidence"][2]["reason"] = "<why they support this score>"
    record = _judge_with_reply(tmp_path, dumps(body))
    assert record["archive"] == "invalid_evaluations"
    assert record["flags"] == ["PROTOCOL_VIOLATION"]
    details = {c["name"]: c["detail"] for c in record["classification"]["checks"]}
    expected = "the format example's placeholder as the reason for ['SEMANTIC_FIDELITY']"
    assert details["evidence_reasons_given"] == expected
    assert record["classification"].get("scores") is None


def test_the_run_log_records_the_max_tokens_the_calls_were_sent_with(tmp_path: Path) -> None:
    """Exact decoding raises --judge-max-tokens to the longest reply each sample's schema
    admits; run.json and the session's end line in run_log.jsonl say what was sent."""
    questions, manifest = _sample(tmp_path)
    out = tmp_path / "run"
    result = assay(
        tmp_path,
        *("judge", "run", "--questions", questions, "--outputs", manifest),
        *("--judge", "stub/judge", "--out", out, "--judge-max-tokens", "64"),
    )
    assert result.returncode == 0, result.stderr
    budgets = [record.reply_budget or 0 for record in load_records(out)]
    assert budgets and all(budget > 64 for budget in budgets)
    run_log = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run_log["decoding"]["max_tokens"] == 64  # the setting, as given
    sent = {"stub/judge": {"min": min(budgets), "max": max(budgets)}}
    assert run_log["decoding"]["max_tokens_sent"] == sent
    lines = (out / "run_log.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[-1])["decoding"]["max_tokens_sent"] == sent
    # the rest of what the spec's reproducibility metadata names
    assert run_log["models"]["stub/judge"]["reported"] == "stub/judge"
    assert {"temperature", "top_p", "seed"} <= set(run_log["decoding"])
    assert run_log["tool_access"] == "none" and run_log["sample_count"] == 1
    assert run_log["started_at"] <= run_log["ended_at"]


# SmolLM2's own answer to examples/judge/questions.jsonl Q2 "implicit", as `assay generate`
# wrote it against llama_cpp.server (--max-tokens 96).
# the format example's form of every value: "<why they support this score>"
PLACEHOLDER = re.compile(r"<[^<>]*>")
SMOLLM2_Q2_IMPLICIT = '{\n  "title": "France",\n  "description": {\n    "capital": "Paris"\n  }\n}'


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_smollm2_self_judging_under_exact_decoding_writes_no_placeholder_reason(
    llama_server: str, tmp_path: Path
) -> None:
    """Before the reason pattern excluded '<', SmolLM2 judging this output of its own filled
    every reason with the format example's "<why they support this score>", and the reply was
    archived valid. Whatever it writes now, a valid record has reasons of its own."""
    examples = ROOT / "examples" / "judge" / "questions.jsonl"
    lines = examples.read_text(encoding="utf-8").splitlines()
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(line + "\n" for line in lines if '"Q2"' in line))
    manifest = tmp_path / "outputs.jsonl"
    target = "openai/smollm2"
    line = {"question_id": "Q2", "prompt_variant": "implicit", "target_model": target}
    line.update(output_id="openai--smollm2/Q2__implicit.txt", text=SMOLLM2_Q2_IMPLICIT)
    manifest.write_text(json.dumps(line) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    with reset_proxy(llama_server) as base_url:  # the answer does not depend on earlier tests
        result = assay(
            tmp_path,
            *("judge", "run", "--questions", questions, "--outputs", manifest),
            *("--judge", target, "--mode", "self", "--out", out, "--base-url", base_url),
            *("--judge-max-tokens", "384", "--date", "2026-11-25", "--allow-incomplete"),
            *("--no-cache", "--concurrency", "1", "--timeout", "600"),
        )
    assert result.returncode == 0, result.stderr
    (record,) = load_records(out)
    assert record.decoding_mode == "exact", record.decoding_note
    reasons = [item.reason for item in record.classification.evidence]
    placeholders = [reason for reason in reasons if PLACEHOLDER.fullmatch(reason.strip())]
    assert not (record.valid and placeholders), reasons
    assert all(not reason.startswith("<") for reason in reasons)  # the schema admits none
    checked = assay(tmp_path, "judge", "validate", out)
    assert checked.returncode == 0, checked.stdout
