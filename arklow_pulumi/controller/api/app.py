"""The controller's HTTP API (docs/api.md), a Starlette app served by uvicorn.

The app holds no state of its own beyond a cache of rendered answers: it reads the last tick from
:meth:`ControllerPort.latest` and hands demand batches to the port's :class:`DemandSink`, one
write at a time with concurrent batches grouped (:mod:`.committing`). Work that may touch the
store (a demand batch, ``/metrics``) runs in the thread pool, never on the event loop.

Choices the contract leaves open (also in ``docs/api.md``):

- Errors are ``{"error": "<one line>"}``; a refused demand batch adds ``item`` (its index) and
  ``lane`` when known. 401 carries ``WWW-Authenticate: Bearer``.
- Before the first tick, ``/v1/admission``, ``/v1/lanes/...`` and ``/v1/pools`` answer 503 with
  ``Retry-After`` (the interval): there is nothing to admit by yet, and clients keep what they had.
- ``/v1/admission`` and ``/v1/lanes/...`` carry a strong ETag: a digest of the exact body, so a
  restarted controller reusing tick numbers never produces a false 304.
- Batches: at most 1 MiB of body and 10,000 reports (413 above either).
- A ``destination:<name>`` token reads ``/v1/leader`` too; ``/v1/pools`` and ``/metrics`` need
  ``admin`` or ``read``. ``/openapi.json``, ``/healthz`` and ``/readyz`` need no token.
- Every JSON answer is built by a record of :mod:`.bodies`, and ``/openapi.json`` is generated
  once, when the app is built, from the same records and this app's settings (:mod:`.openapi`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arklow_pulumi.controller.api import auth
from arklow_pulumi.controller.api.bodies import (
    ACCEPTED,
    ADMISSION,
    HEALTH,
    LANE_ANSWER,
    LEADER,
    POOLS,
    READINESS,
    echo,
    error_body,
)
from arklow_pulumi.controller.api.committing import GroupCommitter
from arklow_pulumi.controller.api.guarding import HttpMiddleware, RequestGuard
from arklow_pulumi.controller.api.intake import (
    MAX_BODY_BYTES,
    MAX_REPORTS,
    BatchRefused,
    decode_batch,
    validate_batch,
)
from arklow_pulumi.controller.api.metrics import CONTENT_TYPE, Metrics
from arklow_pulumi.controller.api.openapi import Served, openapi_document
from arklow_pulumi.controller.ports import ControllerPort, Published
from arklow_pulumi.controller.tick.documents import lane_view_document, pool_view_document

log = logging.getLogger("arklow_pulumi.controller.api")  # the name the log limits know


class Refusal(Exception):
    """An error answer: status, one-line message, extra fields and headers."""

    def __init__(
        self,
        status: int,
        message: str,
        headers: dict[str, str] | None = None,
        **fields: object,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}
        self.fields = {k: v for k, v in fields.items() if v is not None}


@dataclass(frozen=True, slots=True)
class Caller:
    scope: auth.Scope
    name: str | None  # the token entry's name; None without a tokens file


@dataclass(frozen=True, slots=True)
class Rendered:
    body: bytes
    etag: str


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _json(doc: Any) -> bytes:
    return json.dumps(doc, separators=(",", ":"), allow_nan=False).encode("utf-8")


def _etag(body: bytes) -> str:
    return '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    for candidate in if_none_match.split(","):
        candidate = candidate.strip()
        if candidate == "*" or candidate.removeprefix("W/") == etag:
            return True
    return False


class Api:
    """The request handlers, closed over the port, the tokens and the metrics."""

    def __init__(
        self,
        port: ControllerPort,
        tokens: auth.TokenSet | None,
        metrics: Metrics,
        clock: Callable[[], datetime],
        max_body_bytes: int,
        max_reports: int,
        openapi: dict[str, Any],
    ) -> None:
        self.port = port
        self.tokens = tokens
        self.metrics = metrics
        self.clock = clock
        self.max_body_bytes = max_body_bytes
        self.max_reports = max_reports
        self.committer = GroupCommitter(port.demand_sink)
        self.openapi_body = _json(openapi)
        # (the tick the bodies were rendered from, its bodies): replaced whole, read once per
        # request, so a request never mixes one tick's check with another tick's bodies.
        self._cache: tuple[Published | None, dict[tuple[str, str | None, bool], Rendered]] = (
            None,
            {},
        )

    # -- auth -----------------------------------------------------------------------------------

    def caller(self, request: Request) -> Caller:
        if self.tokens is None:
            return Caller(auth.ADMIN, None)
        token = self.tokens.authenticate(request.headers.get("authorization"))
        if token is None:
            raise Refusal(
                401,
                "a valid bearer token is required",
                {"WWW-Authenticate": 'Bearer realm="arklow"'},
            )
        return Caller(token.scope, token.name)

    def reader_of_everything(self, request: Request, what: str) -> Caller:
        caller = self.caller(request)
        if not caller.scope.reads_everything:
            raise Refusal(403, f"token {_name(caller)} ({caller.scope}) may not read {what}")
        return caller

    # -- published ticks ------------------------------------------------------------------------

    def published(self) -> Published:
        published = self.port.latest()
        if published is None:
            interval = self.port.interval_s
            raise Refusal(
                503,
                "no tick published yet: admission is served after the controller's first tick "
                f"(interval {interval:g} s)",
                {"Retry-After": str(max(1, math.ceil(interval)))},
            )
        return published

    def is_stale(self, published: Published) -> bool:
        return (self.clock() - published.time).total_seconds() > 2 * self.port.interval_s

    async def rendered(
        self,
        kind: str,
        scope_key: str | None,
        stale: bool,
        published: Published,
        build: Callable[[], dict[str, Any]],
    ) -> Rendered:
        """The body for this tick and view: cached, or built in the thread pool (a large
        topology takes milliseconds to render) and cached."""
        tick, bodies = self._cache
        if tick is not published:
            bodies = {}
            self._cache = (published, bodies)
        key = (kind, scope_key, stale)
        found = bodies.get(key)
        if found is None:
            body = await run_in_threadpool(lambda: _json(build()))
            found = bodies[key] = Rendered(body, _etag(body))
        return found

    def conditional(self, request: Request, rendered: Rendered) -> Response:
        headers = {"ETag": rendered.etag, "Cache-Control": "no-cache"}
        if etag_matches(request.headers.get("if-none-match"), rendered.etag):
            return Response(status_code=304, headers=headers)
        return Response(rendered.body, media_type="application/json", headers=headers)

    # -- handlers -------------------------------------------------------------------------------

    async def admission(self, request: Request) -> Response:
        caller = self.caller(request)
        published = self.published()
        stale = self.is_stale(published)
        scope_key = None if caller.scope.reads_everything else caller.scope.destination

        def build() -> dict[str, Any]:
            lanes = published.lanes
            return ADMISSION.document(
                tick=published.tick,
                time=published.time.isoformat(),
                stale=stale,
                lanes={
                    key: lane_view_document(lane)
                    for key, lane in lanes.items()
                    if scope_key is None or caller.scope.may_read_lane(key)
                },
            )

        rendered = await self.rendered("admission", scope_key, stale, published, build)
        return self.conditional(request, rendered)

    async def lane(self, request: Request) -> Response:
        caller = self.caller(request)
        key = f"{request.path_params['destination']}/{request.path_params['lane']}"
        if not caller.scope.may_read_lane(key):
            raise Refusal(403, f"lane {echo(key)} is outside the scope of token {_name(caller)}")
        published = self.published()
        lane = published.lanes.get(key)
        if lane is None:
            raise Refusal(404, f"lane {echo(key)} is not in the published tick {published.tick}")
        view = lane_view_document(lane)
        view["stale"] = self.is_stale(published) or lane.stale  # one flag: the tick or the lane
        doc = LANE_ANSWER.document(
            lane=key, tick=published.tick, time=published.time.isoformat(), **view
        )
        body = _json(doc)
        return self.conditional(request, Rendered(body, _etag(body)))

    async def pools(self, request: Request) -> Response:
        self.reader_of_everything(request, "pools")
        published = self.published()

        def build() -> dict[str, Any]:
            pools = {name: pool_view_document(pool) for name, pool in published.pools.items()}
            return POOLS.document(tick=published.tick, pools=pools)

        rendered = await self.rendered("pools", None, False, published, build)
        return self.conditional(request, rendered)

    async def leader(self, request: Request) -> Response:
        self.caller(request)
        view = await run_in_threadpool(self.port.leader)
        return JSONResponse(
            LEADER.document(leader=view.leader, holder=view.holder, epoch=view.epoch)
        )

    async def demand(self, request: Request) -> Response:
        caller = self.caller(request)
        if caller.scope.kind == "read":
            raise Refusal(403, f"token {_name(caller)} (read) may not report demand")
        body = await self.read_body(request)
        try:
            accepted = await run_in_threadpool(self.take_demand, caller, body)
        except BatchRefused as refused:
            result = {403: "forbidden", 422: "invalid", 413: "too_large"}.get(refused.status)
            if result and refused.reports:
                self.metrics.demand_reports(result, refused.reports)
            raise Refusal(
                refused.status, refused.message, item=refused.item, lane=refused.lane
            ) from None
        self.metrics.demand_reports("accepted", accepted)
        return JSONResponse(ACCEPTED.document(accepted=accepted))

    def take_demand(self, caller: Caller, body: bytes) -> int:
        items = decode_batch(body, self.max_reports)
        sink = self.port.demand_sink()
        reports = validate_batch(items, caller.scope, sink.known_lanes(), caller.name)
        try:
            return self.committer.write(reports)
        except Exception as exc:
            log.error("demand batch not stored: %s", type(exc).__name__)
            raise Refusal(503, "demand not stored: the controller's store is unavailable") from None

    async def read_body(self, request: Request) -> bytes:
        limit = self.max_body_bytes
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise Refusal(413, f"body of {int(declared)} bytes is over the limit of {limit}")
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise Refusal(413, f"body is over the limit of {limit} bytes")
                chunks.append(chunk)
        except ClientDisconnect:  # the client went away: nobody reads the answer, nothing stored
            log.debug("client disconnected after %d bytes of a request body", size)
            raise Refusal(400, "the client disconnected before the body was complete") from None
        return b"".join(chunks)

    async def metrics_text(self, request: Request) -> Response:
        self.reader_of_everything(request, "metrics")
        body = await run_in_threadpool(self.metrics.render)
        return Response(body, media_type=CONTENT_TYPE)

    async def healthz(self, request: Request) -> Response:
        return JSONResponse(HEALTH.document(status="ok"))

    async def readyz(self, request: Request) -> Response:
        ready = await run_in_threadpool(self.port.ready)
        return JSONResponse(READINESS.document(ready=ready), status_code=200 if ready else 503)

    async def openapi(self, request: Request) -> Response:
        return Response(self.openapi_body, media_type="application/json")


def _name(caller: Caller) -> str:
    return echo(caller.name or "")


def _error(status: int, body: bytes, headers: dict[str, str] | None = None) -> Response:
    return Response(body, status_code=status, headers=headers, media_type="application/json")


async def _refusal_answer(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Refusal)
    return _error(exc.status, error_body(exc.message, **exc.fields), exc.headers)


async def _http_answer(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return _error(exc.status_code, error_body(exc.detail), dict(exc.headers or {}))


async def _internal_answer(request: Request, exc: Exception) -> Response:
    """A bug's answer (uvicorn logs the exception, at most once a second: :mod:`.connections`)."""
    return _error(500, error_body("internal error: the controller could not answer"))


class RequestMetrics(HttpMiddleware):
    """ASGI middleware counting requests and timing them by route template (not by raw path)."""

    def __init__(self, app: ASGIApp, metrics: Metrics, routes: dict[object, str]) -> None:
        self.app = app
        self.metrics = metrics
        self.routes = routes

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        start = time.perf_counter()
        status = 500

        async def send_recording(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_recording)
        finally:
            route = self.routes.get(scope.get("endpoint"), "other")
            elapsed = time.perf_counter() - start
            self.metrics.http_request(route, scope["method"], status, elapsed)


def build_app(
    port: ControllerPort,
    tokens: auth.TokenSet | None,
    metrics: Metrics,
    *,
    clock: Callable[[], datetime] = _utcnow,
    max_body_bytes: int = MAX_BODY_BYTES,
    max_reports: int = MAX_REPORTS,
    hosts: frozenset[str] | None = None,
) -> Starlette:
    """The API app. ``tokens=None`` serves everyone as ``admin``: the caller must listen on
    loopback only (see :func:`.auth.is_loopback`). ``hosts`` are the
    ``Host`` names answered (:func:`~.guarding.allowed_hosts`; ``None``: any), and every request
    passes :class:`~.guarding.RequestGuard` first."""
    served = Served(
        max_body_bytes=max_body_bytes,
        max_reports=max_reports,
        tokens=tokens is not None,
        hosts_checked=hosts is not None,
        metrics_media_type=CONTENT_TYPE.partition(";")[0],
    )
    api = Api(port, tokens, metrics, clock, max_body_bytes, max_reports, openapi_document(served))
    routes = [
        Route("/v1/demand", api.demand, methods=["POST"]),
        Route("/v1/admission", api.admission, methods=["GET"]),
        Route("/v1/lanes/{destination}/{lane}", api.lane, methods=["GET"]),
        Route("/v1/pools", api.pools, methods=["GET"]),
        Route("/v1/leader", api.leader, methods=["GET"]),
        Route("/metrics", api.metrics_text, methods=["GET"]),
        Route("/healthz", api.healthz, methods=["GET"]),
        Route("/readyz", api.readyz, methods=["GET"]),
        Route("/openapi.json", api.openapi, methods=["GET"]),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={
            Refusal: _refusal_answer,
            HTTPException: _http_answer,
            Exception: _internal_answer,
        },
    )
    templates: dict[object, str] = {route.endpoint: route.path for route in routes}
    posts = frozenset(route.path for route in routes if "POST" in (route.methods or ()))
    app.add_middleware(RequestGuard, hosts=hosts, posts=posts)
    app.add_middleware(RequestMetrics, metrics=metrics, routes=templates)
    return app
