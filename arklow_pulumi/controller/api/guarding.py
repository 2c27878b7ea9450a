"""What a web page may not do to the controller: the request checks made before any handler.

A browser lets any page send a "simple" cross-origin POST (``Content-Type: text/plain``) to
``127.0.0.1`` and, after DNS rebinding, read the answers under a name of the attacker's. In the
default no-token mode (loopback only) nothing else stands between such a page and the groups the
controller resizes, so every request passes three checks first, and a refused one reaches no
handler (nothing of it is stored):

- ``Host`` must name the listen address or a configured ``--allowed-host`` (else **421**), read
  strictly (:func:`host_of`: ``localhost:evil`` is no host); on a loopback listen address
  ``localhost``, ``127.0.0.1`` and ``::1`` are always allowed. A server listening beyond loopback
  (which needs ``--tokens``) checks ``Host`` only when hosts are configured: there the bearer
  token, which no page holds, is the guard.
- an ``Origin`` header must be the server's own origin (the request's ``Host``), and there may
  be one only, else **403**;
- a ``POST`` to a route that takes a body must carry ``Content-Type: application/json``
  (parameters allowed), once, else **415**: the one body type a page cannot send cross-origin
  without a preflight the server never grants. A ``POST`` elsewhere goes on to the router, which
  answers it 405 (or 404) without calling a handler, as it answers any method a route does not
  take.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Collection
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from arklow_pulumi.controller.api.auth import is_loopback
from arklow_pulumi.controller.api.bodies import echo, error_body

__all__ = ["RequestGuard", "allowed_hosts"]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARDS = frozenset({"", "0.0.0.0", "::"})


def allowed_hosts(listen_host: str, extra: Collection[str] = ()) -> frozenset[str] | None:
    """The host names a server listening on ``listen_host`` answers to; ``None`` for "any"
    (a non-loopback listen address without configured hosts: tokens guard that server)."""
    configured = {_bare(host) for host in extra if host}
    if is_loopback(listen_host):
        return frozenset(LOOPBACK_NAMES | {_bare(listen_host)} | configured)
    if not configured:
        return None
    if listen_host not in WILDCARDS:
        configured.add(_bare(listen_host))
    return frozenset(configured)


def _bare(host: str) -> str:
    """A host name without brackets, lower case (``[::1]`` → ``::1``)."""
    return host.strip().strip("[]").lower().rstrip(".")


_AUTHORITY = re.compile(r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[^\[\]:]*))(?::(?P<port>[0-9]*))?")


def host_of(authority: str) -> str | None:
    """The host part of a ``Host`` header value (``name``, ``name:port``, ``[v6]``,
    ``[v6]:port``), or ``None`` when it is none of these: a port must be digits, a bracket must
    hold an IPv6 address and close, and nothing may follow (``localhost:evil``, ``[::1]evil.com``
    and ``[::1`` are no host at all). A bare IPv6 address (``::1``, not a valid ``Host`` but seen
    in the wild) is read as the address."""
    value = authority.strip()
    found = _AUTHORITY.fullmatch(value)
    if found is None:
        return _bare_v6(value)
    if found["v6"] is not None:
        return _bare_v6(found["v6"])
    return _bare(found["name"])


def _bare_v6(text: str) -> str | None:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    return str(address) if address.version == 6 else None


def is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json"


class HttpMiddleware:
    """ASGI middleware over ``app`` that sees HTTP requests only (:meth:`http`); the server's
    other messages (lifespan) pass through untouched."""

    app: ASGIApp

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.http(scope, receive, send)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        raise NotImplementedError


class RequestGuard(HttpMiddleware):
    """ASGI middleware: the Host, Origin and Content-Type checks above."""

    def __init__(
        self, app: ASGIApp, hosts: frozenset[str] | None, posts: Collection[str] | None = None
    ) -> None:
        """``posts``: the paths whose routes take a ``POST`` body (``None``: every path)."""
        self.app = app
        self.hosts = hosts
        self.posts = posts

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = self.refusal(scope)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, message = refusal
        body = error_body(message)
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        headers: dict[str, list[str]] = {}
        for key, value in scope["headers"]:
            headers.setdefault(key.decode("latin-1"), []).append(value.decode("latin-1"))
        host = (headers.get("host") or [""])[0]  # h11 refuses a request without or with two
        if self.hosts is not None and host_of(host) not in self.hosts:
            return 421, f"host {echo(host)} is not served here (see --allowed-host)"
        origins = headers.get("origin", [])
        if len(origins) > 1:
            return 403, "a request may carry one Origin header, not several"
        if origins and not self.same_origin(origins[0], host):
            return 403, f"origin {echo(origins[0])} may not call this API (cross-origin request)"
        if scope["method"] == "POST" and (self.posts is None or scope["path"] in self.posts):
            types = headers.get("content-type", [])
            if len(types) > 1:
                return 415, "a POST body must carry one Content-Type header, not several"
            if not types or not is_json(types[0]):
                return 415, "a POST body must be sent with Content-Type: application/json"
        return None

    @staticmethod
    def same_origin(origin: str, host: str) -> bool:
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return False  # "null" (a sandboxed page, a file) and the like
        return parts.netloc.lower() == host.strip().lower()  # Host itself was checked above
