"""The fencing token a resize carries: the controller lease's epoch (and the tick) it acts under.

The controller sets it around each resize (:func:`acting_under`, a context variable, so it holds in
the worker thread that makes the call and nowhere else); the bindings read it:

- **GCP**: the mutation's ``requestId`` is :func:`request_id` (a UUID 5 of epoch, tick, group and
  count), so a retry of the same change is deduplicated by the API, two epochs never share an id,
  and a request log shows which epoch sent each resize (recompute the id);
- **AWS**: ``SetDesiredCapacity`` is idempotent by value; each request's ``User-Agent`` ends with
  ``arklow-epoch/N`` so the request log shows the epoch.

Outside the controller (``arklow supply``) nothing is set and the bindings behave as before.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

NAMESPACE = uuid.UUID("6f1d3a52-4a8e-5d0c-9a51-0a1f7e2c9b10")
USER_AGENT_TAG = "arklow-epoch"


@dataclass(frozen=True, slots=True)
class Token:
    epoch: int
    tick: int


_TOKEN: ContextVar[Token | None] = ContextVar("arklow_fencing_token", default=None)


def current() -> Token | None:
    return _TOKEN.get()


@contextmanager
def acting_under(epoch: int, tick: int) -> Iterator[None]:
    reset = _TOKEN.set(Token(epoch, tick))
    try:
        yield
    finally:
        _TOKEN.reset(reset)


def request_id(token: Token, group: str, desired: int) -> str:
    """The GCP ``requestId`` of one change: the same within a tick (retries), new across ticks."""
    return str(uuid.uuid5(NAMESPACE, f"{token.epoch}/{token.tick}/{group}/{desired}"))


def user_agent_tag(token: Token) -> str:
    return f"{USER_AGENT_TAG}/{token.epoch}"
