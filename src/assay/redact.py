"""Secrets never leave the process: credentials stripped from URLs, keys masked in any text.

Two tools, used wherever a URL or a server's text is stored or printed:

- :func:`public_url` drops a URL's ``user:password@`` part and every query parameter that
  carries a credential (``key``, ``api_key``, ``token``, ...). run.json, summaries, cache keys
  and error messages hold only this form; the HTTP client alone gets the full URL.
- :class:`Redactor` masks known secret values (the API key, the credentials of the base URL)
  in text a server sent back: error bodies that echo the request, replies, logs.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable, Sequence

#: What a masked secret reads as.
REDACTED = "[REDACTED]"

#: Query parameters that carry credentials (compared lower-case, with '-' read as '_').
CREDENTIAL_PARAMS = frozenset(
    {
        "key",
        "api_key",
        "apikey",
        "access_key",
        "access_token",
        "auth",
        "authorization",
        "token",
        "secret",
        "client_secret",
        "password",
        "pass",
        "pwd",
        "sig",
        "signature",
        "x_api_key",
        "subscription_key",
    }
)

#: Secrets shorter than this are not masked: masking "ab" would corrupt every reply that
#: contains those letters, and such a value is no real credential.
MIN_SECRET_LENGTH = 6

_URL_IN_TEXT = re.compile(r"https?://[^\s'\"<>]+")


def _is_credential_param(name: str) -> bool:
    return name.lower().replace("-", "_") in CREDENTIAL_PARAMS


def public_url(url: str) -> str:
    """``url`` without ``user:password@`` and without credential query parameters.

    >>> public_url("https://me:pw@example.com/v1?api_key=sk-1&region=eu")
    'https://example.com/v1?region=eu'
    """
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return url
    if not parts.scheme or not parts.netloc:
        return url
    if not url_secrets(url) and "@" not in parts.netloc:
        return url  # nothing to strip: the very same string (cache keys depend on it)
    host = parts.netloc.rpartition("@")[2]
    query = [
        (name, value)
        for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        if not _is_credential_param(name)
    ]
    return urllib.parse.urlunsplit(
        (parts.scheme, host, parts.path, urllib.parse.urlencode(query), parts.fragment)
    )


def url_secrets(url: str) -> list[str]:
    """The credential values inside ``url`` (password, user name, credential parameters)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return []
    found: list[str] = []
    userinfo, at, _host = parts.netloc.rpartition("@")
    if at:
        user, _colon, password = userinfo.partition(":")
        found += [urllib.parse.unquote(user), urllib.parse.unquote(password), userinfo]
    found += [
        value
        for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        if _is_credential_param(name)
    ]
    return [value for value in found if value]


def public_urls_in(text: str) -> str:
    """``text`` with every URL in it reduced to its :func:`public_url`."""
    if "://" not in text:
        return text
    return _URL_IN_TEXT.sub(lambda match: public_url(match.group(0)), text)


def public_command(argv: Sequence[str]) -> list[str]:
    """A command line with every URL in it reduced to its :func:`public_url`."""
    return [public_urls_in(arg) for arg in argv]


class Redactor:
    """Masks a fixed set of secret values, also in their URL-encoded and JSON-escaped forms."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if secret is None or len(secret) < MIN_SECRET_LENGTH:
                continue
            forms |= {secret, urllib.parse.quote(secret, safe=""), secret.replace("/", "\\/")}
        # Longest first, so that a secret containing another is masked whole.
        ordered = sorted(forms, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def __call__(self, text: str) -> str:
        """``text`` with every secret masked (a model's reply: nothing else is changed)."""
        return text if self._pattern is None else self._pattern.sub(REDACTED, text)

    def message(self, text: str) -> str:
        """An error message: secrets masked and every URL reduced to its public form."""
        return public_urls_in(self(text))

    @property
    def active(self) -> bool:
        return self._pattern is not None
