"""Keeping passwords out of every message: one function for URLs, one for free text.

:func:`redact_url` shows a store URL with its password as ``***`` in every form a user writes one:
``scheme://user:password@host/db``, a raw ``@``, ``/`` or ``?`` inside the password (the userinfo
runs to the last ``@`` before the host, as libpq and :mod:`urllib.parse` read it), percent-encoding,
``?password=...`` (and any query key naming a password, secret or token), and strings that are not
URLs at all. When the form is ambiguous it hides more, never less.

:func:`scrub` cleans free text that may echo a URL or part of one: a database driver's error
message, an exception's text. URLs in it are redacted, libpq ``password=...`` pairs masked, and
every password this process has seen in a store URL (:func:`remember_url`, called wherever a store
URL enters the program) is replaced by ``***``. A secret shorter than four characters is replaced
only where it stands alone (not inside a longer word), so the rest of a message stays readable.

Logs: a handler given :class:`ScrubbingFilter` writes every record (and its traceback) scrubbed.

Standard library only: the Pulumi program and the CLI's fast paths import it without SQLAlchemy.
"""

from __future__ import annotations

import logging
import re
import threading
from urllib.parse import unquote

__all__ = ["HIDDEN", "ScrubbingFilter", "redact_url", "remember_url", "scrub", "url_secrets"]

HIDDEN = "***"
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")
_SECRET_KEY = r"[^=&;#?\s]*(?:pass|pwd|secret|token)[^=&;#?\s]*"
_QUERY_SECRET = re.compile(rf"(?i)(?P<key>(?:^|[?&;]){_SECRET_KEY}=)(?P<value>[^&;#]*)")
_CONNINFO_SECRET = re.compile(
    r"(?i)(?P<key>\b\w*(?:pass|pwd|secret|token)\w*\s*=\s*)(?P<value>'(?:[^'\\]|\\.)*'|[^\s,;&]*[^\s,;&:.)])"
)
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>]*[^\s'\"<>:,.;)]")
_SHORT = 4

_SECRETS: set[str] = set()
_SECRETS_LOCK = threading.Lock()


def redact_url(url: str) -> str:
    """``url`` with every password in it shown as ``***``."""
    scheme = _SCHEME.match(url)
    if scheme is None:
        if "@" in url or _QUERY_SECRET.search(url) or _CONNINFO_SECRET.search(url):
            return "<store URL hidden: not a URL>"
        return url
    rest = url[scheme.end() :]
    span = _password_span(rest)
    tail_from = span[1] if span else _netloc_end(rest)
    tail = _QUERY_SECRET.sub(lambda m: m["key"] + HIDDEN, rest[tail_from:])
    if span is None:
        return url[: scheme.end()] + rest[:tail_from] + tail
    return url[: scheme.end()] + rest[: span[0]] + HIDDEN + tail


def url_secrets(url: str) -> set[str]:
    """Every string in ``url`` that may be a password, as written and percent-decoded."""
    found: set[str] = set()
    scheme = _SCHEME.match(url)
    rest = url[scheme.end() :] if scheme else url
    span = _password_span(rest)
    if span is not None:
        found.add(rest[span[0] : span[1]])
        first_at = rest.find("@", span[0])
        if 0 <= first_at < span[1]:  # how a parser reading up to the first "@" sees it
            found.add(rest[span[0] : first_at])
    found.update(m["value"] for m in _QUERY_SECRET.finditer(rest))
    found.update(m["value"].strip("'") for m in _CONNINFO_SECRET.finditer(rest))
    found |= {unquote(s) for s in found} | {unquote(s.replace("+", " ")) for s in found}
    return {s for s in found if s and s != HIDDEN}


def remember_url(url: str) -> None:
    """Note the passwords in ``url`` so that :func:`scrub` removes them from any message."""
    secrets = url_secrets(url)
    if secrets:
        with _SECRETS_LOCK:
            _SECRETS.update(secrets)


def scrub(text: str) -> str:
    """``text`` without a password: URLs redacted, ``password=`` pairs and known secrets masked."""
    text = _URL_IN_TEXT.sub(lambda m: redact_url(m[0]), text)
    text = _CONNINFO_SECRET.sub(lambda m: m["key"] + HIDDEN, text)
    with _SECRETS_LOCK:
        secrets = sorted(_SECRETS, key=len, reverse=True)
    for secret in secrets:
        if secret not in text:
            continue
        if len(secret) >= _SHORT:
            text = text.replace(secret, HIDDEN)
        else:
            text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])", HIDDEN, text)
    return text


class ScrubbingFilter(logging.Filter):
    """A handler filter that scrubs each record's message and exception text before it is
    written (add it to the handler, so records of every logger going there are covered)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = scrub(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        return True


def _netloc_end(rest: str) -> int:
    for index, char in enumerate(rest):
        if char in "/?#":
            return index
    return len(rest)


def _password_span(rest: str) -> tuple[int, int] | None:
    """Where the password is in ``rest`` (the URL after ``scheme://``), if it has one.

    The netloc ends at the first ``/``, ``?`` or ``#``; its userinfo at its last ``@``. A netloc
    with no ``@`` but a non-numeric "port" and an ``@`` further on is a password holding a raw
    ``/``, ``?`` or ``#``: the password then runs to the last ``@`` of the URL.
    """
    end = _netloc_end(rest)
    netloc = rest[:end]
    at = netloc.rfind("@")
    if at >= 0:
        colon = netloc.find(":", 0, at)
        return (colon + 1, at) if colon >= 0 else None
    colon = netloc.find(":")
    last_at = rest.rfind("@")
    if colon >= 0 and last_at > end and not netloc[colon + 1 :].isdigit():
        return colon + 1, last_at
    return None
