"""The OpenAPI document at ``/openapi.json`` is the server's own: a valid OpenAPI 3.1 document
(openapi-spec-validator) whose request schema accepts exactly the bodies the intake accepts,
whose answer schemas hold the answers the handlers give, and which lists every status and header
the routes and the request checks answer with. A live controller under schemathesis:
``test_openapi_schemathesis.py``."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openapi_spec_validator import validate
from schemathesis.generation import GenerationMode

from arklow_pulumi.controller.api.app import build_app
from arklow_pulumi.controller.api.auth import ADMIN, TokenSet
from arklow_pulumi.controller.api.guarding import allowed_hosts
from arklow_pulumi.controller.api.intake import BatchRefused, decode_batch, validate_batch
from arklow_pulumi.controller.api.metrics import Metrics
from arklow_pulumi.controller.api.openapi import Served, openapi_document
from arklow_pulumi.controller.ports import PoolView, TargetView
from arklow_pulumi.core.limits import MAX_NAME_LENGTH, MAX_UNITS, units_problem
from tests import loopback
from tests.controller.test_api import write_tokens
from tests.hypothesis_profiles import examples
from tests.memory_controller import MemoryPort, sample_pool
from tests.uvicorn_server import UvicornThread

SETTINGS = [
    Served(1 << 20, 10_000, tokens=tokens, hosts_checked=hosts)
    for tokens in (True, False)
    for hosts in (True, False)
]
DOC = openapi_document(Served(1 << 20, 10_000, tokens=True, hosts_checked=True))
OPERATIONS = [
    ("post", "/v1/demand"),
    ("get", "/v1/admission"),
    ("get", "/v1/lanes/{destination}/{lane}"),
    ("get", "/v1/pools"),
    ("get", "/v1/leader"),
    ("get", "/metrics"),
    ("get", "/healthz"),
    ("get", "/readyz"),
    ("get", "/openapi.json"),
]


def validator(schema: dict[str, Any], doc: dict[str, Any] = DOC) -> jsonschema.Validator:
    """A JSON Schema validator of ``schema``, its ``#/components/...`` references resolved."""
    return jsonschema.Draft202012Validator({**schema, "components": doc["components"]})


def body_schema(doc: dict[str, Any] = DOC) -> dict[str, Any]:
    post = doc["paths"]["/v1/demand"]["post"]
    schema: dict[str, Any] = post["requestBody"]["content"]["application/json"]["schema"]
    return schema


@pytest.mark.parametrize(
    "served", SETTINGS, ids=lambda s: f"tokens={s.tokens},host={s.hosts_checked}"
)
def test_every_setting_gives_a_valid_openapi_document(served: Served) -> None:
    doc = openapi_document(served)
    validate(doc)  # raises on any fault
    assert {(m, p) for p, item in doc["paths"].items() for m in item} == set(OPERATIONS)


def test_the_request_schema_is_closed_and_ranged_as_the_intake() -> None:
    batch = body_schema()
    report = DOC["components"]["schemas"]["DemandReport"]
    assert batch["additionalProperties"] is False and report["additionalProperties"] is False
    assert batch["properties"]["reports"]["maxItems"] == 10_000
    assert set(report["required"]) == {"lane", "demand"}
    demand = report["properties"]["demand"]
    assert (demand["minimum"], demand["maximum"]) == (0, MAX_UNITS)  # core/limits.py's range
    lane = report["properties"]["lane"]["pattern"]
    assert lane == f"^[^/]{{1,{MAX_NAME_LENGTH}}}/[^/]{{1,{MAX_NAME_LENGTH}}}$"


def intake_accepts(body: object) -> bool:
    """Whether the intake takes ``body`` when every lane it names is in the topology."""
    try:
        items = decode_batch(json.dumps(body).encode())
        known = {i["lane"] for i in items if isinstance(i, dict) and isinstance(i.get("lane"), str)}
        validate_batch(items, ADMIN, known, None)
    except BatchRefused:
        return False
    return True


def check_agreement(body: object) -> None:
    valid = validator(body_schema()).is_valid(body)
    assert intake_accepts(body) == valid, json.dumps(body)[:300]


_SCHEMA = schemathesis.openapi.from_dict(DOC)["/v1/demand"]["POST"]


@settings(max_examples=examples(300), deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.one_of(
        _SCHEMA.as_strategy(generation_mode=GenerationMode.POSITIVE),
        _SCHEMA.as_strategy(generation_mode=GenerationMode.NEGATIVE),
    )
)
def test_the_schema_and_the_intake_agree_on_bodies_schemathesis_draws(case: Any) -> None:
    if isinstance(case.body, (bytes, str)) or case.body is None:
        return  # not a JSON document: the intake's 400, which no schema describes
    check_agreement(case.body)


NAMES = st.text(st.sampled_from(["a", "é", "\n", " ", "\x00", "/"]), max_size=4)
LANES = st.one_of(
    NAMES,
    st.builds("{}/{}".format, NAMES, NAMES),
    st.sampled_from([f"{'a' * 255}/b", f"{'a' * 256}/b", f"a/{'b' * 256}", None, 5]),
)
NUMBERS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.sampled_from([0, -0.0, MAX_UNITS, math.nextafter(MAX_UNITS, math.inf), 10**400, True]),
)


@settings(max_examples=examples(500), deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"lane": LANES, "demand": NUMBERS},
            optional={"extra": st.just(1)},
        ),
        max_size=3,
    )
)
def test_the_schema_and_the_intake_agree_on_edges(reports: list[dict[str, object]]) -> None:
    check_agreement({"reports": reports})


@pytest.mark.parametrize("value", [-1.0, 0.0, 5.0, MAX_UNITS, 1e13, math.inf, math.nan])
def test_the_demand_range_is_the_units_rule(value: float) -> None:
    from arklow_pulumi.controller.api.bodies import DEMAND

    assert DEMAND.range_problem(value) == units_problem(value)


def statuses(doc: dict[str, Any], method: str, path: str) -> set[int]:
    return {int(s) for s in doc["paths"][path][method]["responses"]}


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("post", "/v1/demand", {200, 400, 401, 403, 413, 415, 421, 422, 503}),
        ("get", "/v1/admission", {200, 304, 401, 403, 421, 503}),
        ("get", "/v1/lanes/{destination}/{lane}", {200, 304, 401, 403, 404, 421, 503}),
        ("get", "/v1/pools", {200, 304, 401, 403, 421, 503}),
        ("get", "/v1/leader", {200, 401, 403, 421}),
        ("get", "/metrics", {200, 401, 403, 421}),
        ("get", "/healthz", {200, 403, 421}),
        ("get", "/readyz", {200, 403, 421, 503}),
        ("get", "/openapi.json", {200, 403, 421}),
    ],
)
def test_every_status_a_route_answers_is_declared(
    method: str, path: str, expected: set[int]
) -> None:
    assert statuses(DOC, method, path) == expected
    bare = openapi_document(Served(1 << 20, 10_000, tokens=False, hosts_checked=False))
    assert statuses(bare, method, path) == expected - {401, 421}  # 403 stays: the Origin check


def header_names(method: str, path: str, status: int) -> set[str]:
    return set(DOC["paths"][path][method]["responses"][str(status)].get("headers", {}))


def test_the_headers_the_server_uses_are_declared() -> None:
    for path in ("/v1/admission", "/v1/lanes/{destination}/{lane}", "/v1/pools"):
        assert {"ETag", "Cache-Control"} <= header_names("get", path, 200)
        assert {"ETag", "Cache-Control"} <= header_names("get", path, 304)
        assert header_names("get", path, 503) == {"Retry-After"}
        parameters = DOC["paths"][path]["get"]["parameters"]
        assert {"name": "If-None-Match", "in": "header"}.items() <= parameters[-1].items()
    for method, path in OPERATIONS:
        if 401 in statuses(DOC, method, path):
            assert header_names(method, path, 401) == {"WWW-Authenticate"}
    public = {p for m, p in OPERATIONS if DOC["paths"][p][m].get("security") == []}
    assert public == {"/healthz", "/readyz", "/openapi.json"}


# -- answers over real HTTP ------------------------------------------------------------------------


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, MemoryPort, dict[str, str]]]:
    port = MemoryPort(["search/batch", "search/interactive", "ads/serve"], interval_s=10.0)
    tokens = write_tokens(tmp_path / "tokens.yaml")
    hosts = allowed_hosts("127.0.0.1")
    app = build_app(port, TokenSet.load(tmp_path / "tokens.yaml"), Metrics(), hosts=hosts)
    with UvicornThread(app, access_log=False) as server:
        yield server.url, port, tokens


def test_the_served_document_is_this_process_s_own(
    served: tuple[str, MemoryPort, dict[str, str]],
) -> None:
    url, _, _ = served
    assert loopback.get(url + "/openapi.json").json() == DOC


def check_answer(answer: httpx.Response, method: str, path: str) -> None:
    declared = DOC["paths"][path][method]["responses"]
    assert str(answer.status_code) in declared, answer.text
    response = declared[str(answer.status_code)]
    for name in response.get("headers", {}):
        assert name in answer.headers, (path, answer.status_code, name)
    content = response.get("content", {})
    if not content:
        assert answer.content == b""
        return
    (media_type,) = content
    assert answer.headers["content-type"].partition(";")[0] == media_type
    if media_type == "application/json":
        validator(content[media_type]["schema"]).validate(answer.json())


def test_every_answer_holds_to_its_schema(
    served: tuple[str, MemoryPort, dict[str, str]],
) -> None:
    url, port, tokens = served
    admin = loopback.client(base_url=url, headers={"Authorization": f"Bearer {tokens['admin']}"})
    search = loopback.client(base_url=url, headers={"Authorization": f"Bearer {tokens['search']}"})
    anyone = loopback.client(base_url=url)
    views = [("get", "/v1/admission"), ("get", "/v1/pools")]
    lane = ("get", "/v1/lanes/{destination}/{lane}")
    for method, path in views:
        check_answer(admin.get(path), method, path)  # 503 before the first tick, Retry-After
    empty_pool = PoolView("cpu", 0.0, 3.0, None, "constrained", 0, {})
    targeted = sample_pool()
    scaled = PoolView("tpu", 8.0, 0.0, 0.0, "idle", 1, {"mig": TargetView(1, 1, 0, 1, 4)})
    port.publish(
        {"search/batch": 2.0, "ads/serve": 1.0},
        pools={"gpu-shared": targeted, "cpu": empty_pool, "tpu": scaled},
    )
    for client in (admin, search):
        for method, path in views:
            answer = client.get(path)
            check_answer(answer, method, path)
            again = client.get(path, headers={"If-None-Match": answer.headers.get("etag", "")})
            check_answer(again, method, path)
        for concrete in ("/v1/lanes/search/batch", "/v1/lanes/ads/serve", "/v1/lanes/no/such"):
            check_answer(client.get(concrete), *lane)
    check_answer(anyone.get("/v1/admission"), "get", "/v1/admission")  # 401
    body = {"reports": [{"lane": "search/batch", "demand": 3}]}
    for client in (admin, search, anyone):
        check_answer(client.post("/v1/demand", json=body), "post", "/v1/demand")
    refused = [
        {"reports": [{"lane": "search/batch", "demand": -1}]},
        {"reports": [{"lane": "search/nothing", "demand": 1}]},
        {"reports": [{"lane": "ads/serve", "demand": 1}]},  # outside the search token's scope
        {"reports": [], "more": 1},
    ]
    for doc in refused:
        check_answer(search.post("/v1/demand", json=doc), "post", "/v1/demand")
    check_answer(admin.post("/v1/demand", content=b"{", headers=JSON), "post", "/v1/demand")
    check_answer(admin.post("/v1/demand", content=b"{}"), "post", "/v1/demand")  # 415
    for path in ("/v1/leader", "/metrics", "/healthz", "/readyz", "/openapi.json"):
        check_answer(admin.get(path), "get", path)
    check_answer(search.get("/metrics"), "get", "/metrics")  # 403
    port.is_ready = False
    check_answer(anyone.get("/readyz"), "get", "/readyz")
    for path in ("/healthz", "/v1/admission"):  # the request checks: 421, and 403 on an Origin
        check_answer(admin.get(path, headers={"Host": "rebound.example"}), "get", path)
        check_answer(admin.get(path, headers={"Origin": "http://evil.example"}), "get", path)


JSON = {"Content-Type": "application/json"}
