"""The API's connections held to account: a header deadline, a body deadline, a cap on open
connections, and errors of the accept loop logged at most once a second.

uvicorn bounds none of these on its own: ``timeout_keep_alive`` covers only the idle time between
requests (and is reset by every byte), and the app, with its bearer tokens, sees a request only once
its headers are complete. So the server's protocol is uvicorn's h11 protocol with two timers:

- **header timeout**: from the connection's first moment (or from the first byte of a following
  request on a kept-alive connection) to the end of the request's headers;
- **body timeout**: from the end of the headers to the end of the body, the whole body (a client
  sending one byte a second does not stretch it).

A request that misses its deadline is answered **408** (when no answer has started) and its
connection closed; nothing of it reaches the store. A connection accepted while
``max_connections`` are open is answered **503** with ``Retry-After: 1`` at once and closed,
without being read: a slot is freed only by a connection that ends, and the deadlines make every
one end. A refused connection lingers half a second (so the answer is not lost to a reset), 64 at
most at once; beyond that one is closed as soon as the answer is written. At start the soft
descriptor limit is raised, up to the hard one, to hold the cap, those 64 and a reserve.

Every answer written here is an error body of :func:`.bodies.error_body`, the one encoder of them.
"""

from __future__ import annotations

import asyncio
import http
import logging
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from arklow_pulumi.controller.api.bodies import error_body
from arklow_pulumi.core.errors import InvalidInput

__all__ = [
    "ConnectionLimits",
    "OnceASecond",
    "OnceASecondFilter",
    "bounded_protocol",
    "fit_descriptor_limit",
    "hold_logs_to_account",
    "rate_limited_exception_handler",
    "server_config",
]

HEADER_TIMEOUT_RANGE = (0.1, 3600.0)
BODY_TIMEOUT_RANGE = (0.1, 3600.0)
MAX_CONNECTIONS_RANGE = (1, 100_000)
# After the 503 the write side is shut and the connection read (and dropped) for this long before
# it is closed: closing a socket with unread request bytes sends a reset, which can destroy the
# answer before the client reads it (Go's net/http waits 500 ms likewise).
LINGER_S = 0.5
MAX_LINGERING = 64  # refused connections lingering at once; past that one is closed at once
DESCRIPTOR_RESERVE = 64  # descriptors beside the connections: the store, the clouds, the logs


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """The deadlines (seconds) and the connection cap of the API server (docs/api.md)."""

    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    max_connections: int = 512

    def check(self) -> ConnectionLimits:
        """This, or :class:`InvalidInput` naming the option out of its range."""
        for option, value, (low, high) in (
            ("--header-timeout", self.header_timeout_s, HEADER_TIMEOUT_RANGE),
            ("--body-timeout", self.body_timeout_s, BODY_TIMEOUT_RANGE),
            ("--max-connections", self.max_connections, MAX_CONNECTIONS_RANGE),
        ):
            if not low <= value <= high:
                raise InvalidInput.one(
                    f"option {option}", option[2:], f"must be in [{low:g}, {high:g}], got {value:g}"
                )
        return self


def fit_descriptor_limit(limits: ConnectionLimits) -> str | None:
    """Make room for ``max_connections`` under this process's descriptor limit: the soft limit
    (``ulimit -n``) is raised as far as needed, up to the hard one (as Go programs do at start);
    a warning when that is not enough, else None. Past the limit, accepting fails until a
    connection ends."""
    needed = limits.max_connections + MAX_LINGERING + DESCRIPTOR_RESERVE
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or needed <= soft:
        return None
    raised = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if raised > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
    if raised >= needed:
        return None
    return (
        f"warning: --max-connections {limits.max_connections} does not fit under the descriptor "
        f"limit of {raised} (ulimit -n), less {MAX_LINGERING + DESCRIPTOR_RESERVE} kept for "
        "refusals, the store and the clouds: beyond it new connections wait until one ends"
    )


def raw_answer(status: int, message: str, headers: tuple[tuple[str, str], ...] = ()) -> bytes:
    """A whole HTTP/1.1 error answer with ``Connection: close``, written without h11 (the request
    it answers may be incomplete or absent)."""
    body = error_body(message)
    lines = [
        f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}",
        "content-type: application/json",
        f"content-length: {len(body)}",
        "connection: close",
        *(f"{name}: {value}" for name, value in headers),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + body


class _BoundedH11(H11Protocol):
    """uvicorn's h11 protocol with the header and body deadlines and the connection cap."""

    limits: ConnectionLimits = ConnectionLimits()
    lingering: ClassVar[set[asyncio.Transport]] = set()  # each bound class has its own

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._phase: str | None = None  # "headers", "body" or None (no request being read)
        self._refused = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if len(self.connections) >= self.limits.max_connections:
            self._refuse(transport)
            return
        super().connection_made(transport)
        self._arm("headers", self.limits.header_timeout_s)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._refused:
            self.lingering.discard(self.transport)
            return
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return  # read and dropped until the linger ends
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow()

    def send_400_response(self, msg: str) -> None:
        self._disarm()
        self.transport.write(raw_answer(400, "the request is not valid HTTP/1.1"))
        self.transport.close()

    # -- the deadlines --------------------------------------------------------------------------

    def _follow(self) -> None:
        """Arm, move or drop the deadline after h11 has read what arrived: headers pending (a
        request begun, or the connection's first), the body pending, or nothing to read."""
        if self.transport is None or self.transport.is_closing():
            self._disarm()
            return
        state = self.conn.their_state
        if state is h11.IDLE:
            started = bool(self.conn.trailing_data[0]) or self.timeout_keep_alive_task is None
            if started and self._phase != "headers":
                self._arm("headers", self.limits.header_timeout_s)
            elif not started:
                self._disarm()  # idle between requests: uvicorn's keep-alive timeout covers it
        elif state is h11.SEND_BODY:
            if self._phase != "body":
                self._arm("body", self.limits.body_timeout_s)
        else:
            self._disarm()

    def _arm(self, phase: str, seconds: float) -> None:
        self._disarm()
        self._phase = phase
        self._deadline = self.loop.call_later(seconds, self._expired, phase)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = None
        self._phase = None

    def _expired(self, phase: str) -> None:
        self._deadline = None
        self._phase = None
        if self.transport.is_closing():
            return
        cycle = self.cycle if self.conn.their_state is not h11.IDLE else None
        if cycle is None or not cycle.response_started:
            limit = (
                self.limits.header_timeout_s if phase == "headers" else self.limits.body_timeout_s
            )
            what = "headers" if phase == "headers" else "body"
            self.transport.write(
                raw_answer(408, f"the request's {what} did not arrive within {limit:g} s")
            )
        if cycle is not None:  # the app's receive() answers http.disconnect; its answer is dropped
            cycle.disconnected = True
            cycle.message_event.set()
        self.transport.close()

    # -- over the cap ---------------------------------------------------------------------------

    def _refuse(self, transport: asyncio.Transport) -> None:
        self._refused = True
        self.transport = transport
        transport.write(
            raw_answer(
                503,
                f"the server holds its limit of {self.limits.max_connections} open connections; "
                "try again",
                (("retry-after", "1"),),
            )
        )
        if len(self.lingering) >= MAX_LINGERING or not transport.can_write_eof():
            transport.close()  # a flood of refused connections holds no descriptors
            return
        transport.write_eof()
        self.lingering.add(transport)
        self._deadline = self.loop.call_later(LINGER_S, transport.close)


def bounded_protocol(limits: ConnectionLimits) -> type[asyncio.Protocol]:
    """The protocol class to give ``uvicorn.Config(http=...)``, bound to ``limits``."""
    return type(
        "BoundedH11Protocol", (_BoundedH11,), {"limits": limits.check(), "lingering": set()}
    )


class OnceASecond:
    """Lets a kind of event through at most once per ``period`` seconds and counts the others;
    :meth:`admit` returns how many were held back since the last one let through, or ``None``
    to hold this one back. ``clock`` is injected (monotonic seconds)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, period: float = 1.0) -> None:
        self.clock = clock
        self.period = period
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def admit(self, kind: str) -> int | None:
        now = self.clock()
        last = self._last.get(kind)
        if last is not None and now - last < self.period:
            self._held[kind] = self._held.get(kind, 0) + 1
            return None
        self._last[kind] = now
        return self._held.pop(kind, 0)


def rate_limited_exception_handler(
    log: logging.Logger, limiter: OnceASecond
) -> Callable[[asyncio.AbstractEventLoop, dict[str, Any]], None]:
    """An event-loop exception handler (``loop.set_exception_handler``) writing one line per
    kind of error a second at most, with the count of those held back, and no traceback: the
    accept loop out of descriptors (``EMFILE``) otherwise logs a traceback on every attempt."""

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message") or "event loop error")
        error = context.get("exception")
        kind = message if error is None else f"{message}: {_describe(error)}"
        held = limiter.admit(kind)
        if held is None:
            return
        more = f" ({held} more since the last such line)" if held else ""
        log.error("api server: %s%s", kind, more)

    return handle


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return type(error).__name__


class OnceASecondFilter(logging.Filter):
    """A logging filter letting each warning or error (by logger and message template) through
    once a second at most, the count held back since added to the line let through."""

    def __init__(self, limiter: OnceASecond) -> None:
        super().__init__()
        self.limiter = limiter

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        held = self.limiter.admit(f"{record.name}: {record.msg}")
        if held is None:
            return False
        if held:
            record.msg = f"{record.msg} ({held} more since the last such line)"
        return True


def server_config(app: Any, limits: ConnectionLimits) -> uvicorn.Config:
    """uvicorn's settings for the API: the bounded protocol, no access log, no lifespan."""
    return uvicorn.Config(
        app,
        log_level="warning",
        lifespan="off",
        access_log=False,
        http=bounded_protocol(limits),
    )


# uvicorn's own (a failed request, malformed HTTP) and the handlers' (a store that fails every
# demand batch): lines a flood of requests would otherwise repeat once per request.
LIMITED_LOGGERS = ("uvicorn.error", "arklow_pulumi.controller.api")


def hold_logs_to_account(loop: asyncio.AbstractEventLoop, log: logging.Logger) -> None:
    """Errors of the event loop (the accept loop out of descriptors) and the warnings and errors
    of :data:`LIMITED_LOGGERS` at most once a second each, with a count: a flood of connections
    or requests cannot flood the log."""
    limiter = OnceASecond()
    loop.set_exception_handler(rate_limited_exception_handler(log, limiter))
    for name in LIMITED_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, OnceASecondFilter) for f in logger.filters):
            logger.addFilter(OnceASecondFilter(limiter))
