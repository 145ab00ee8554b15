"""A server that misbehaves, seen through real `assay judge run` processes (issue 14 #5, #10):
a 200 reply whose content is a number is a retried call failure (exit 1 with the retry
command), not "error: invalid setting" (exit 2); a key the server echoes never reaches the
archive, the run log or the terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.fault_server import (
    ECHO_KEY_ERROR,
    ECHO_KEY_REPLY,
    NEGATIVE_USAGE,
    NUMBER_CONTENT,
    OK,
    SURROGATE,
    fault_server,
)
from tests.test_failed_calls import ROOT, assay, judge_outputs  # noqa: F401 (a fixture)

QUESTIONS = ROOT / "examples" / "judge" / "questions.jsonl"
SECRET = "sk-test-ECHOED-0123456789abcdef"


def _judge(tmp_path: Path, outputs: Path, base_url: str, *extra: str) -> list[str | Path]:
    return [
        *("judge", "run", "--questions", QUESTIONS, "--outputs", outputs),
        *("--judge", "openai/judge", "--out", tmp_path / "judge", "--base-url", base_url),
        *("--max-attempts", "2", "--no-cache"),
        *extra,
    ]


def _archive_text(run_dir: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in run_dir.rglob("*") if p.is_file())


def test_a_number_as_content_is_a_retried_call_failure(
    tmp_path: Path,
    judge_outputs: Path,  # noqa: F811
) -> None:
    with fault_server([NUMBER_CONTENT]) as server:
        result = assay(tmp_path, *_judge(tmp_path, judge_outputs, server.base_url))
        assert result.returncode == 1, result.stderr
        assert "invalid setting" not in result.stderr
        pairs = len(server.requests) // 2  # each call tried twice
        assert f"{pairs} judge call(s) failed" in result.stderr
        archived = _archive_text(tmp_path / "judge")
        assert "JUDGE_CALL_FAILED" in archived
        assert "not a string but int" in archived

        server.switch_to([OK])
        again = assay(tmp_path, *_judge(tmp_path, judge_outputs, server.base_url))
        assert again.returncode == 0, again.stderr


@pytest.mark.parametrize("echo", [ECHO_KEY_ERROR, ECHO_KEY_REPLY])
def test_an_echoed_key_is_never_archived_logged_or_printed(
    tmp_path: Path,
    judge_outputs: Path,  # noqa: F811
    echo: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ASSAY_TEST_KEY", SECRET)
    with fault_server([echo]) as server:
        result = assay(
            tmp_path,
            *_judge(tmp_path, judge_outputs, server.base_url, "--api-key-env", "ASSAY_TEST_KEY"),
        )
        sent = [body for _, body in server.requests]
    assert sent  # the server was asked, with the key in its Authorization header
    archived = _archive_text(tmp_path / "judge")
    assert SECRET not in archived + result.stdout + result.stderr
    assert "[REDACTED]" in archived
    run = json.loads((tmp_path / "judge" / "run.json").read_text(encoding="utf-8"))
    assert SECRET not in json.dumps(run)


def test_an_unset_api_key_variable_is_refused_not_replaced_by_openai_api_key(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--api-key-env MY_KEY with MY_KEY unset sent $OPENAI_API_KEY to the --base-url server."""
    from assay.cli import main

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("ASSAY_UNSET_KEY", raising=False)
    with fault_server([OK]) as server:
        args = ["ping", "openai/x", "--base-url", server.base_url, "--no-cache"]
        code = main([*args, "--api-key-env", "ASSAY_UNSET_KEY"])
        assert server.requests == []  # nothing was sent, so no key either
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: --api-key-env ASSAY_UNSET_KEY: no such environment variable")
    assert SECRET not in err


def test_a_reply_holding_a_lone_surrogate_stops_no_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """UTF-8 cannot encode a lone surrogate. It was an internal error in generate (the output
    file), ping (the print) and bench (the revision prompt's cache key), and the cached reply
    made every rerun fail again."""
    from assay.cli import main

    cache = ["--cache-path", str(tmp_path / "cache.sqlite")]
    outputs = tmp_path / "outputs"
    with fault_server([SURROGATE] * 100) as server:
        model = ["--base-url", server.base_url, *cache]
        generate = ["generate", "--questions", str(QUESTIONS), "--model", "openai/x"]
        assert main([*generate, "--out", str(outputs), *model]) == 0
        sent = len(server.requests)
        assert main([*generate, "--out", str(outputs), *model]) == 0
        assert len(server.requests) == sent  # the rerun is answered by nothing: all finished
        assert main(["ping", "openai/x", *model]) == 0
        bench = ["bench", "run", "--data", str(ROOT / "examples" / "grounded_qa.jsonl")]
        bench += ["--pattern", "entailment", "--generator", "openai/x", "--verifier", "lexical"]
        assert main([*bench, "--out_dir", str(tmp_path / "b"), "--max_examples", "2", *model]) == 0
    out, err = capsys.readouterr()
    text = (outputs / "openai--x" / "Q1__explicit.txt").read_text(encoding="utf-8")
    assert text.startswith("- odd \ufffd text")
    assert "the reply held a lone surrogate, written as U+FFFD" in err
    assert "- odd \\ud800 text" in out  # ping prints the escape
    assert "internal error" not in err


def test_negative_token_counts_are_a_retried_call_failure_not_a_bad_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A server that reports -5 prompt tokens sent a reply of the wrong shape. It stopped
    generate with "invalid setting: completion_tokens ..." (again on every rerun, from the
    cache) and gave bench a negative cost."""
    from assay.cli import main

    outputs = tmp_path / "outputs"
    with fault_server([NEGATIVE_USAGE] * 8 + [OK] * 100) as server:
        args = ["generate", "--questions", str(QUESTIONS), "--model", "openai/x", "--out"]
        args += [str(outputs), "--base-url", server.base_url, "--max-attempts", "1"]
        args += ["--cache-path", str(tmp_path / "cache.sqlite")]
        assert main(args) == 1  # failed calls, listed; nothing scored or cached
        failures = (outputs / "generation_failures.jsonl").read_text(encoding="utf-8")
        assert "reply has a field assay cannot take: prompt_tokens" in failures
        assert main(args) == 0  # the rerun retries them, and the server now answers well
    manifest = (outputs / "manifest.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(manifest) == 8 and "invalid setting" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://127.0.0.1:99999/v1", "Port out of range"),
        ("http://127.0.0.1:abc/v1", "Port could not be cast"),
        ("http://[::1", "Invalid IPv6 URL"),
    ],
)
def test_a_bad_base_url_is_one_error_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str, problem: str
) -> None:
    """These were internal errors from inside the HTTP client (after generate made its
    output directory)."""
    from assay.cli import main

    out = tmp_path / "outputs"
    args = ["generate", "--questions", str(QUESTIONS), "--model", "openai/x", "--out", str(out)]
    assert main([*args, "--base-url", url]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --base-url {url}: not a server URL (") and problem in err
    assert not out.exists()
