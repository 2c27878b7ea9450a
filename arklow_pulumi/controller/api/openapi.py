"""The OpenAPI 3.1 document the controller serves at ``/openapi.json``, generated at start-up from
what the server itself uses, so that it cannot drift from it (docs/api.md, "The OpenAPI
document"):

- every request and answer body is a shape of :mod:`.bodies`: the objects :mod:`.intake` checks
  demand batches with and the handlers build their answers with (closed objects, the lane key's
  pattern, the ranges of :mod:`arklow_pulumi.core.limits`);
- every route lists each status its handler and the request checks (:mod:`.guarding`) can answer,
  with the headers that come with it: ``ETag`` on 200 and 304, ``If-None-Match`` taken,
  ``Retry-After`` on the 503 before the first tick, ``WWW-Authenticate`` on 401;
- the document describes this process as configured (:class:`Served`): its body limits, whether a
  bearer token is needed (then 401, and 403 for a token outside its scope), whether ``Host`` is
  checked (421).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arklow_pulumi.controller.api import bodies
from arklow_pulumi.controller.api.shapes import JsonSchema, Shape, Text

__all__ = ["Served", "openapi_document"]


@dataclass(frozen=True, slots=True)
class Served:
    """What of the serving process the document states."""

    max_body_bytes: int
    max_reports: int
    tokens: bool  # a tokens file: every /v1 route and /metrics need a bearer token
    hosts_checked: bool  # Host is checked against a set of names (421 else)
    metrics_media_type: str = "text/plain"


_HEADERS: dict[str, JsonSchema] = {
    "ETag": {
        "description": "a strong tag, a digest of the exact body (each scope's view has its own)",
        "required": True,
        "schema": {"type": "string", "pattern": '^"[^"]+"$'},
    },
    "Cache-Control": {
        "description": "no-cache: ask again with If-None-Match",
        "required": True,
        "schema": {"type": "string", "enum": ["no-cache"]},
    },
    "Retry-After": {
        "description": "seconds until the first tick is due (the tick interval)",
        "required": True,
        "schema": {"type": "integer", "minimum": 1},
    },
    "WWW-Authenticate": {
        "description": 'Bearer realm="arklow"',
        "required": True,
        "schema": {"type": "string", "pattern": "^Bearer "},
    },
}


@dataclass(frozen=True, slots=True)
class _Answer:
    status: int
    meaning: str
    body: Shape | None = bodies.ERROR
    headers: tuple[str, ...] = ()
    media_type: str = "application/json"


def _headers(names: tuple[str, ...]) -> dict[str, Any]:
    return {name: {"$ref": f"#/components/headers/{name}"} for name in names}


def _responses(answers: list[_Answer]) -> dict[str, Any]:
    """One response per status: the meanings of the answers sharing it joined (they share the
    body and the headers: an error's ``{"error"}``)."""
    by_status: dict[int, list[_Answer]] = {}
    for answer in answers:
        by_status.setdefault(answer.status, []).append(answer)
    responses: dict[str, Any] = {}
    for status, same in sorted(by_status.items()):
        first = same[0]
        if any(
            (a.body, a.headers, a.media_type) != (first.body, first.headers, first.media_type)
            for a in same
        ):
            raise ValueError(f"answers {status} differ in body or headers")
        response: dict[str, Any] = {"description": "; ".join(a.meaning for a in same)}
        if first.headers:
            response["headers"] = _headers(first.headers)
        if first.body is not None:
            response["content"] = {first.media_type: {"schema": first.body.schema()}}
        responses[str(status)] = response
    return responses


def _operation(
    served: Served,
    summary: str,
    answers: list[_Answer],
    *,
    public: bool = False,
    scoped: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """An operation: its answers, those of the request checks, and with tokens a 401 (unless
    ``public``) and a 403 for a token outside its scope (``scoped``: what that scope lacks)."""
    every = [*answers, _Answer(403, "an Origin that is not the server's own (a cross-origin call)")]
    if served.hosts_checked:
        every.append(_Answer(421, "a Host the server does not answer to (see --allowed-host)"))
    operation: dict[str, Any] = {"summary": summary, **extra}
    if served.tokens and not public:
        every.append(_Answer(401, "no valid bearer token", headers=("WWW-Authenticate",)))
        if scoped:
            every.append(_Answer(403, f"a token whose scope does not cover {scoped}"))
    elif served.tokens:
        operation["security"] = []
    operation["responses"] = _responses(every)
    return operation


def _published(
    served: Served,
    summary: str,
    body: Shape,
    *,
    parameters: tuple[dict[str, Any], ...] = (),
    answers: tuple[_Answer, ...] = (),
    scoped: str | None = None,
) -> dict[str, Any]:
    """A view of the last published tick: 200 or 304 with its ETag, 503 before the first tick."""
    if_none_match = {
        "name": "If-None-Match",
        "in": "header",
        "required": False,
        "description": "ETags (a list, weak tags and * allowed): 304 when one is the view's",
        "schema": {"type": "string"},
    }
    return _operation(
        served,
        summary,
        [
            _Answer(200, "the view of the last published tick", body, ("ETag", "Cache-Control")),
            _Answer(304, "If-None-Match holds the view's ETag", None, ("ETag", "Cache-Control")),
            _Answer(503, "no tick published yet", headers=("Retry-After",)),
            *answers,
        ],
        scoped=scoped,
        parameters=[*parameters, if_none_match],
    )


def _demand(served: Served) -> dict[str, Any]:
    answers = [
        _Answer(200, "every report stored", bodies.ACCEPTED),
        _Answer(400, "not UTF-8 JSON, nested too deeply, a number of over 4,300 digits"),
        _Answer(400, "the client disconnected before the body was complete"),
        _Answer(413, f"a body over {served.max_body_bytes} bytes"),
        _Answer(413, f"over {served.max_reports} reports"),
        _Answer(415, "no Content-Type: application/json"),
        _Answer(422, "a bad report, an unknown lane, a key given twice (the message names it)"),
        _Answer(503, "not stored: the controller's store is unavailable"),
    ]
    if served.tokens:
        answers.append(_Answer(403, "a read token, or a report of a lane outside the scope"))
    schema = bodies.batch(served.max_reports)
    return _operation(
        served,
        f"Report lane demand: the whole batch or nothing (at most {served.max_body_bytes} bytes)",
        answers,
        requestBody={
            "required": True,
            "content": {"application/json": {"schema": schema.schema()}},
        },
    )


@dataclass(frozen=True, slots=True)
class _Schema:
    """A schema written out (this document's own, which no shape describes)."""

    literal: JsonSchema

    def schema(self) -> JsonSchema:
        return dict(self.literal)


_OBJECT = _Schema({"type": "object", "description": "an OpenAPI 3.1 document"})


def _paths(served: Served) -> dict[str, Any]:
    names = tuple(
        {"name": n, "in": "path", "required": True, "schema": bodies.SEGMENT.schema()}
        for n in ("destination", "lane")
    )
    plain = served.metrics_media_type
    return {
        "/v1/demand": {"post": _demand(served)},
        "/v1/admission": {
            "get": _published(
                served,
                "Admission of the last published tick (a destination token: its own lanes)",
                bodies.ADMISSION,
            )
        },
        "/v1/lanes/{destination}/{lane}": {
            "get": _published(
                served,
                "One lane of the last published tick",
                bodies.LANE_ANSWER,
                parameters=names,
                scoped="the lane",
                answers=(_Answer(404, "the lane is not in the published tick"),),
            )
        },
        "/v1/pools": {
            "get": _published(
                served, "Pools of the last published tick", bodies.POOLS, scoped="every lane"
            )
        },
        "/v1/leader": {
            "get": _operation(
                served,
                "Whether this replica leads, the lease's holder and its epoch",
                [_Answer(200, "leadership", bodies.LEADER)],
            )
        },
        "/metrics": {
            "get": _operation(
                served,
                "Prometheus text exposition (every name starts with arklow_)",
                [_Answer(200, "the metrics", Text(), media_type=plain)],
                scoped="every lane",
            )
        },
        "/healthz": {
            "get": _operation(served, "Alive", [_Answer(200, "alive", bodies.HEALTH)], public=True)
        },
        "/readyz": {
            "get": _operation(
                served,
                "Whether the store and the supply were read on the last tick",
                [
                    _Answer(200, "ready", bodies.READINESS),
                    _Answer(
                        503,
                        "not ready: before the first tick, after a failed one",
                        bodies.READINESS,
                    ),
                ],
                public=True,
            )
        },
        "/openapi.json": {
            "get": _operation(
                served, "This document", [_Answer(200, "the document", _OBJECT)], public=True
            )
        },
    }


def openapi_document(served: Served) -> dict[str, Any]:
    components: dict[str, Any] = {
        "schemas": {named.name: named.definition() for named in bodies.NAMED},
        "headers": _HEADERS,
    }
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "Arklow controller",
            "version": "1",
            "description": "Generated by the controller from the shapes it checks requests with"
            " and builds answers with (docs/api.md).",
        },
        "paths": _paths(served),
        "components": components,
    }
    if served.tokens:
        components["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        document["security"] = [{"bearer": []}]
    return document
