"""The OpenAPI 3.1 description of the controller's HTTP API, written by hand from the contract."""

from __future__ import annotations

from typing import Any

_NUMBER = {"type": "number"}
_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {"type": "string"},
        "item": {"type": "integer", "description": "index of the refused report"},
        "lane": {"type": "string"},
    },
}
_LANE = {
    "type": "object",
    "required": ["demand", "allocation", "held", "admission"],
    "properties": {
        "demand": _NUMBER,
        "allocation": _NUMBER,
        "held": _NUMBER,
        "admission": _NUMBER,
        "stale": {"type": "boolean", "description": "no report fresher than the TTL"},
    },
}
_TARGET = {
    "type": "object",
    "properties": {
        k: {"type": "integer"} for k in ("desired", "in_service", "pending", "min", "max")
    },
}
_POOL = {
    "type": "object",
    "properties": {
        "resource": {"type": "string"},
        "capacity": _NUMBER,
        "demand": _NUMBER,
        "pressure": {"type": ["number", "null"]},
        "state": {"enum": ["idle", "steady", "constrained"]},
        "desired_replicas": {"type": "integer"},
        "targets": {
            "type": "object",
            "additionalProperties": {"$ref": "#/components/schemas/Target"},
        },
    },
}
_TICK = {"tick": {"type": "integer"}, "time": {"type": "string", "format": "date-time"}}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


def _answer(description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"description": description, **(_json(schema) if schema else {})}


def _errors(*codes: int) -> dict[str, Any]:
    ref = {"$ref": "#/components/schemas/Error"}
    meaning = {
        400: "malformed JSON",
        401: "missing or unknown bearer token",
        403: "outside the token's scope",
        404: "unknown lane",
        413: "batch over the size limit",
        422: "a bad report (the message names it); nothing stored",
        503: "no tick published yet, or the store is unavailable",
    }
    return {str(c): _answer(meaning[c], ref) for c in codes}


def _paths(max_body_bytes: int, max_reports: int) -> dict[str, Any]:
    admission = {
        "type": "object",
        "properties": {
            **_TICK,
            "stale": {"type": "boolean"},
            "lanes": {
                "type": "object",
                "additionalProperties": {"$ref": "#/components/schemas/Lane"},
            },
        },
    }
    batch = {
        "type": "object",
        "required": ["reports"],
        "properties": {
            "reports": {
                "type": "array",
                "maxItems": max_reports,
                "items": {
                    "type": "object",
                    "required": ["lane", "demand"],
                    "properties": {
                        "lane": {"type": "string"},
                        "demand": {"type": "number", "minimum": 0},
                    },
                },
            }
        },
    }
    etag = {"parameters": [{"name": "If-None-Match", "in": "header", "schema": {"type": "string"}}]}
    return {
        "/v1/demand": {
            "post": {
                "summary": "Report lane demand (whole batch or nothing;"
                f" at most {max_body_bytes} bytes)",
                "requestBody": {"required": True, **_json(batch)},
                "responses": {
                    "200": _answer(
                        "stored",
                        {"type": "object", "properties": {"accepted": {"type": "integer"}}},
                    ),
                    **_errors(400, 401, 403, 413, 422, 503),
                },
            }
        },
        "/v1/admission": {
            "get": {
                "summary": "Admission of the last published tick (ETag; 304 on If-None-Match)",
                **etag,
                "responses": {
                    "200": _answer("admission", admission),
                    "304": _answer("not modified"),
                    **_errors(401, 503),
                },
            }
        },
        "/v1/lanes/{destination}/{lane}": {
            "get": {
                "summary": "One lane of the admission",
                "parameters": [
                    {"name": n, "in": "path", "required": True, "schema": {"type": "string"}}
                    for n in ("destination", "lane")
                ],
                "responses": {
                    "200": _answer("the lane", {"$ref": "#/components/schemas/Lane"}),
                    "304": _answer("not modified"),
                    **_errors(401, 403, 404, 503),
                },
            }
        },
        "/v1/pools": {
            "get": {
                "summary": "Pools of the last published tick",
                "responses": {
                    "200": _answer(
                        "pools",
                        {
                            "type": "object",
                            "properties": {
                                "tick": {"type": "integer"},
                                "pools": {
                                    "type": "object",
                                    "additionalProperties": {"$ref": "#/components/schemas/Pool"},
                                },
                            },
                        },
                    ),
                    **_errors(401, 403, 503),
                },
            }
        },
        "/v1/leader": {
            "get": {
                "summary": "Whether this replica leads, the lease holder and its epoch",
                "responses": {
                    "200": _answer(
                        "leadership",
                        {
                            "type": "object",
                            "properties": {
                                "leader": {"type": "boolean"},
                                "holder": {"type": ["string", "null"]},
                                "epoch": {"type": "integer"},
                            },
                        },
                    ),
                    **_errors(401),
                },
            }
        },
        "/metrics": {
            "get": {
                "summary": "Prometheus text exposition (names start with arklow_)",
                "responses": {"200": _answer("metrics"), **_errors(401, 403)},
            }
        },
        "/healthz": {
            "get": {"summary": "Alive", "security": [], "responses": {"200": _answer("alive")}}
        },
        "/readyz": {
            "get": {
                "summary": "Store and supply read on the last tick",
                "security": [],
                "responses": {"200": _answer("ready"), "503": _answer("not ready")},
            }
        },
    }


def openapi_document(max_body_bytes: int, max_reports: int) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "Arklow controller", "version": "1"},
        "security": [{"bearer": []}],
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {"Error": _ERROR, "Lane": _LANE, "Pool": _POOL, "Target": _TARGET},
        },
        "paths": _paths(max_body_bytes, max_reports),
    }
