"""A token's line in a tokens file, as docs/api.md tells an operator to make it: the hex sha256 of
the token (the controller compares the digest of each presented token, never the token)."""

from __future__ import annotations

import hashlib


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()
