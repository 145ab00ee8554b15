"""The command line: exit codes and one-line errors without tracebacks."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.cli import build_parser, main


def test_models_lists_every_provider(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    for provider in ("openai/", "llamacpp/", "stub/"):
        assert provider in out


def test_ping_on_the_stub_prints_reply_tokens_and_latency(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["ping", "stub/demo", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "Stub reply" in out
    assert "completion tokens" in out and " ms" in out


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["ping", "nosuch/model"], "unknown provider 'nosuch'"),
        (["ping", "justaname"], "not of the form provider/model"),
        (["ping", "llamacpp/missing.gguf"], "model file not found: missing.gguf"),
        (["ping", "openai/x", "--base-url", "ftp://x"], "must start with http"),
    ],
)
def test_user_errors_are_one_line_and_exit_2(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert expected in err
    assert "Traceback" not in err


def test_a_cached_ping_says_its_time_is_the_first_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = ["--cache-path", str(tmp_path / "cache.sqlite")]
    assert main(["ping", "stub/demo", *cache]) == 0
    assert "from the response cache" not in capsys.readouterr().out
    assert main(["ping", "stub/demo", *cache]) == 0
    assert "tokens, from the response cache (the call took " in capsys.readouterr().out


@pytest.mark.parametrize("content", [b"random bytes, not a model", b""])
def test_a_file_that_is_not_a_gguf_model_is_one_line_and_exit_2(
    tmp_path: Path, content: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    """llama.cpp's own refusal was an internal error with a native traceback."""
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(content)
    assert main(["ping", f"llamacpp/{fake}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {fake}: not a GGUF model file") and "Traceback" not in err


def test_unreachable_server_names_the_problem(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.helpers.servers import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"
    assert main(["ping", "openai/x", "--base-url", url, "--max-attempts", "1", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "connection" in err and url in err


def test_debug_shows_the_traceback() -> None:
    process = subprocess.run(
        [sys.executable, "-m", "assay.cli", "--debug", "ping", "nosuch/model"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert process.returncode != 0
    assert "Traceback" in process.stderr


def test_bad_parameter_is_reported_without_traceback() -> None:
    process = subprocess.run(
        [sys.executable, "-m", "assay.cli", "ping", "stub/x", "--temperature", "9"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert process.returncode == 2
    assert "temperature" in process.stderr
    assert "Traceback" not in process.stderr


def test_each_module_registers_exactly_its_commands_with_their_help() -> None:
    import argparse
    import importlib

    from assay.cli import COMMANDS

    for module_name in dict.fromkeys(m for m, _ in COMMANDS.values()):
        parser = argparse.ArgumentParser()
        subparsers = parser.add_subparsers()
        importlib.import_module(f"assay.cli.{module_name}").register(subparsers)
        registered = {a.dest: a.help for a in subparsers._choices_actions}
        expected = {c: h for c, (m, h) in COMMANDS.items() if m == module_name}
        assert registered == expected, module_name


def test_help_loads_no_command_module_and_a_command_loads_only_its_own() -> None:
    probe = (
        "import sys, contextlib, io\n"
        "from assay.cli import main\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(sys.argv[1:])\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('assay.cli._', 'pydantic')))\n"
        "print(' '.join(m for m in loaded if m.count('.') <= 2))\n"
    )

    def loaded(*argv: str) -> set[str]:
        done = subprocess.run(
            [sys.executable, "-c", probe, *argv], capture_output=True, text=True, check=True
        )
        return set(done.stdout.split())

    assert loaded("--help") == set()  # no command module, no pydantic
    assert {m for m in loaded("report", "--help") if m.startswith("assay.cli.")} == {
        "assay.cli._report"
    }
    assert "assay.cli._bench" not in loaded("judge", "--help")


def _parsers(parser: argparse.ArgumentParser, name: str) -> Iterator[tuple[str, Any]]:
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {command}")


def test_no_help_text_prints_a_doubled_percent_sign() -> None:
    """argparse %-formats argument help (where ``%%`` is right) but not descriptions or
    epilogs (where it prints as ``%%``): every command's ``--help``, as printed."""
    parsers = dict(_parsers(build_parser(), "assay"))
    assert "assay judge agreement" in parsers and "assay bench run" in parsers
    for name, parser in parsers.items():
        assert "%%" not in parser.format_help(), name


def test_every_option_says_in_its_help_what_it_does() -> None:
    """``--help`` is where a flag the README names only in passing (``ping --prompt``,
    ``generate --max-tokens``) is looked up: no option is listed there without a word."""
    bare = [
        f"{name} {'/'.join(action.option_strings)}"
        for name, parser in _parsers(build_parser(), "assay")
        for action in parser._actions
        if action.option_strings and not action.help
    ]
    assert bare == []
