"""Bearer tokens for the controller's HTTP API: the tokens file, its scopes, and the check.

The tokens file holds only SHA-256 digests (``tokens: [{name, scope, sha256}]``). A presented bearer
token is hashed and compared with ``hmac.compare_digest`` against *every* entry, so neither the
comparison nor the loop leaks, through timing, how much of a digest matched or which entry did.
Nothing here ever renders a token: errors name the entry (its index and ``name``) and the field.

Scopes:

- ``admin``: everything.
- ``read``: every ``GET`` (admission, lanes, pools, leader, metrics); no demand reports.
- ``destination:<name>``: reports demand for, and reads, that destination's lanes only
  (``GET /v1/admission`` holds just those); ``GET /v1/leader`` too. Pools and metrics need
  ``admin`` or ``read``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from arklow_pulumi.core.errors import InvalidInput, Problem
from arklow_pulumi.core.limits import name_problem
from arklow_pulumi.reading.files import read_document

_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
_FIELDS = ("name", "scope", "sha256")


@dataclass(frozen=True, slots=True)
class Scope:
    """``kind`` is ``admin``, ``read`` or ``destination`` (then ``destination`` names it)."""

    kind: str
    destination: str | None = None

    @classmethod
    def parse(cls, text: str) -> Scope | None:
        if text in ("admin", "read"):
            return cls(text)
        prefix, sep, name = text.partition(":")
        # the destination name rule of the topology (a name it accepts has a token scope)
        if prefix == "destination" and sep and name_problem(name) is None and "/" not in name:
            return cls("destination", name)
        return None

    def __str__(self) -> str:
        return f"destination:{self.destination}" if self.destination else self.kind

    @property
    def reads_everything(self) -> bool:
        return self.kind in ("admin", "read")

    def may_read_lane(self, lane: str) -> bool:
        return self.reads_everything or lane.partition("/")[0] == self.destination

    def may_report_lane(self, lane: str) -> bool:
        if self.kind == "admin":
            return True
        return self.kind == "destination" and lane.partition("/")[0] == self.destination


ADMIN = Scope("admin")


@dataclass(frozen=True, slots=True)
class Token:
    """One entry of the tokens file: never the token itself, only its digest."""

    name: str
    scope: Scope
    digest: bytes

    def __repr__(self) -> str:  # the digest is not secret, but it has no business in logs
        return f"Token(name={self.name!r}, scope='{self.scope}')"


class TokenSet:
    """The loaded tokens file; :meth:`authenticate` maps an ``Authorization`` header to a token."""

    def __init__(self, tokens: Iterable[Token]) -> None:
        self.tokens: tuple[Token, ...] = tuple(tokens)

    def __len__(self) -> int:
        return len(self.tokens)

    def __repr__(self) -> str:
        return f"TokenSet({len(self.tokens)} tokens)"

    @classmethod
    def load(cls, path: Path) -> TokenSet:
        """Read and validate a tokens file; problems raise :class:`InvalidInput` (one line)."""
        try:
            doc = read_document(path, "tokens")
        except InvalidInput as exc:
            raise InvalidInput(_unkeyed(problem) for problem in exc.problems) from None
        return cls.from_document(doc, f"tokens file {str(path)!r}")

    @classmethod
    def from_document(cls, doc: object, where: str) -> TokenSet:
        if not isinstance(doc, dict) or set(doc) != {"tokens"}:
            raise InvalidInput.one(
                where, "tokens", "the file must be a mapping with one key, tokens"
            )
        entries = doc["tokens"]
        if not isinstance(entries, list) or not entries:
            raise InvalidInput.one(
                where, "tokens", "must be a non-empty list of {name, scope, sha256}"
            )
        tokens = [_parse_entry(entry, f"{where}: tokens[{i}]") for i, entry in enumerate(entries)]
        _refuse_duplicates(tokens, where)
        return cls(tokens)

    def authenticate(self, authorization: str | None) -> Token | None:
        """The token entry matching a ``Bearer`` header, or None (missing, malformed or unknown)."""
        presented = bearer_token(authorization)
        if presented is None:
            return None
        digest = hashlib.sha256(presented.encode("utf-8")).digest()
        found: Token | None = None
        for token in self.tokens:  # no early exit: every entry is compared
            if hmac.compare_digest(digest, token.digest):
                found = token
        return found


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.strip().partition(" ")
    value = value.strip()
    if scheme.lower() != "bearer" or not value or " " in value:
        return None
    return value


def _parse_entry(entry: object, where: str) -> Token:
    if not isinstance(entry, dict):
        raise InvalidInput.one(where, "(entry)", "must be a mapping with name, scope and sha256")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput.one(where, "name", "must be a non-empty string")
    where = f"{where} (name {name!r})"
    unknown = sum(1 for key in entry if key not in _FIELDS)
    if unknown:  # never named: a token pasted as a key would be echoed
        raise InvalidInput.one(
            where,
            "(entry)",
            f"{unknown} unknown field(s) besides name, scope and sha256 (keys not shown)",
        )
    scope_text = entry.get("scope")
    scope = Scope.parse(scope_text) if isinstance(scope_text, str) else None
    if scope is None:
        raise InvalidInput.one(where, "scope", "must be admin, read or destination:<name>")
    digest = entry.get("sha256")
    if not isinstance(digest, str) or not _HEX64.match(digest):
        raise InvalidInput.one(
            where, "sha256", "must be the 64-hex-digit SHA-256 digest of the token"
        )
    return Token(name, scope, bytes.fromhex(digest))


_DUPLICATE_KEY = re.compile(
    r"duplicate key .*?(?P<where>( \(first at line \d+\))?( at line \d+, column \d+)?)"
)


def _unkeyed(problem: Problem) -> Problem:
    """The problem without the key a duplicate-key message names: it could be a token."""
    found = _DUPLICATE_KEY.fullmatch(problem.message)
    if found is None:
        return problem
    message = f"a key given twice (not shown: it could be a token){found['where']}"
    return Problem(problem.obj, problem.field, message)


def _refuse_duplicates(tokens: Sequence[Token], where: str) -> None:
    names: dict[str, int] = {}
    digests: dict[bytes, int] = {}
    for i, token in enumerate(tokens):
        if token.name in names:
            raise InvalidInput.one(
                f"{where}: tokens[{i}] (name {token.name!r})",
                "name",
                f"duplicate of tokens[{names[token.name]}]",
            )
        if token.digest in digests:
            raise InvalidInput.one(
                f"{where}: tokens[{i}] (name {token.name!r})",
                "sha256",
                f"same digest as tokens[{digests[token.digest]}]",
            )
        names[token.name] = i
        digests[token.digest] = i


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (for the no-tokens listen rule)."""
    if host == "localhost":
        return True
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
