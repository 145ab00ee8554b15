"""Credentials are stripped from URLs and secrets masked in text (assay.redact)."""

from __future__ import annotations

import pytest

from assay.redact import REDACTED, Redactor, public_command, public_url, url_secrets


@pytest.mark.parametrize(
    ("url", "public"),
    [
        ("https://me:pw@example.com/v1", "https://example.com/v1"),
        ("https://token@example.com/v1", "https://example.com/v1"),
        ("https://example.com/v1?key=AIza-123456", "https://example.com/v1"),
        ("https://example.com/v1?api_key=s3cret99&region=eu", "https://example.com/v1?region=eu"),
        ("https://example.com/v1?API-KEY=s3cret99", "https://example.com/v1"),
        ("https://u:p@example.com:8443/v1?access_token=abcdef", "https://example.com:8443/v1"),
        # nothing to strip: the same string, byte for byte (cache keys depend on it)
        ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1/"),
        ("https://example.com/v1?region=eu%20west", "https://example.com/v1?region=eu%20west"),
        ("not a url", "not a url"),
    ],
)
def test_public_url_strips_credentials(url: str, public: str) -> None:
    assert public_url(url) == public


def test_url_secrets_lists_every_credential_value() -> None:
    secrets = url_secrets("https://alice:pa%40ss@example.com/v1?key=K-123456&x=1")
    assert "pa@ss" in secrets
    assert "alice" in secrets
    assert "K-123456" in secrets
    assert "1" not in secrets


def test_public_command_rewrites_urls_in_arguments() -> None:
    argv = ["assay", "bench", "run", "--base-url", "https://u:pw123456@h.example/v1?key=abcdefg"]
    assert public_command(argv)[-1] == "https://h.example/v1"
    assert public_command(["--base-url=http://u:pw@h/v1"]) == ["--base-url=http://h/v1"]


def test_redactor_masks_plain_encoded_and_json_escaped_forms() -> None:
    key = "sk-live/abc+def=123"
    redact = Redactor([key, None, "ab"])  # None and too-short values are ignored
    assert redact(f"bad key {key}!") == f"bad key {REDACTED}!"
    assert redact("bad key sk-live%2Fabc%2Bdef%3D123") == f"bad key {REDACTED}"
    assert redact('"sk-live\\/abc+def=123"') == f'"{REDACTED}"'
    assert redact("ab stays") == "ab stays"
    assert redact.message("see https://u:pw@h.example/v1") == "see https://h.example/v1"


def test_redactor_without_secrets_changes_nothing() -> None:
    redact = Redactor([None, ""])
    assert not redact.active
    assert redact("https://u:pw@h/v1?key=1") == "https://u:pw@h/v1?key=1"
