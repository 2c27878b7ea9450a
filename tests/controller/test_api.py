"""The controller's HTTP API over real HTTP on loopback (uvicorn in a thread), against an in-memory
ControllerPort: auth and scopes, bad payloads, size limits, ETag/304, concurrency, secrets."""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
import uvicorn.config

from arklow_pulumi.controller.api.app import build_app, etag_matches
from arklow_pulumi.controller.api.auth import TokenSet
from arklow_pulumi.controller.api.metrics import Metrics
from tests import loopback
from tests.memory_controller import MemoryPort
from tests.tokens import token_digest
from tests.uvicorn_server import UvicornThread

LANES = ["search/interactive", "search/batch", "ads/serve", "ads/train"]


@dataclass
class Served:
    url: str
    port: MemoryPort
    metrics: Metrics
    tokens: dict[str, str]  # scope label -> bearer token
    clock: list[datetime]

    def client(self, who: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[who]}"} if who else {}
        headers["Content-Type"] = "application/json"  # what every POST must carry (415 else)
        return loopback.client(base_url=self.url, headers=headers, timeout=10)


def write_tokens(path: Path) -> dict[str, str]:
    tokens = {who: secrets.token_urlsafe(24) for who in ("admin", "read", "search")}
    scopes = {"admin": "admin", "read": "read", "search": "destination:search"}
    doc = {
        "tokens": [
            {"name": f"{who}-token", "scope": scopes[who], "sha256": token_digest(tokens[who])}
            for who in tokens
        ]
    }
    path.write_text(json.dumps(doc))  # JSON is YAML
    return tokens


def serve(tmp_path: Path, with_tokens: bool, log_config: object = None) -> Iterator[Served]:
    port = MemoryPort(LANES, interval_s=10.0)
    tokens = write_tokens(tmp_path / "tokens.yaml") if with_tokens else {}
    token_set = TokenSet.load(tmp_path / "tokens.yaml") if with_tokens else None
    metrics = Metrics()
    clock = [datetime.now(UTC)]
    app = build_app(port, token_set, metrics, clock=lambda: clock[0])
    with UvicornThread(app, log_config=log_config) as server:
        yield Served(server.url, port, metrics, tokens, clock)


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Served]:
    yield from serve(tmp_path, with_tokens=True)


@pytest.fixture
def open_api(tmp_path: Path) -> Iterator[Served]:
    yield from serve(tmp_path, with_tokens=False)


def batch(*pairs: tuple[object, object]) -> dict[str, object]:
    return {"reports": [{"lane": lane, "demand": demand} for lane, demand in pairs]}


# -- auth ---------------------------------------------------------------------------------------

GUARDED = [
    ("GET", "/v1/admission"),
    ("GET", "/v1/lanes/search/batch"),
    ("GET", "/v1/pools"),
    ("GET", "/v1/leader"),
    ("GET", "/metrics"),
    ("POST", "/v1/demand"),
]


@pytest.mark.parametrize(("method", "path"), GUARDED)
@pytest.mark.parametrize(
    "authorization", [None, "Bearer not-a-token", "Basic YWRtaW46YWRtaW4=", "Bearer", "Bearer a b"]
)
def test_missing_or_unknown_token_is_401(
    api: Served, method: str, path: str, authorization: str | None
) -> None:
    api.port.publish(dict.fromkeys(LANES, 1.0))
    headers = {"Authorization": authorization} if authorization else {}
    with api.client() as http:
        answer = http.request(method, path, headers=headers, json=batch(("search/batch", 1)))
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"].startswith("Bearer")
    assert answer.json() == {"error": "a valid bearer token is required"}
    assert api.port.sink.reports == {}


def test_health_readiness_and_openapi_need_no_token(api: Served) -> None:
    with api.client() as http:
        assert http.get("/healthz").json() == {"status": "ok"}
        assert http.get("/readyz").json() == {"ready": True}
        api.port.is_ready = False
        assert http.get("/readyz").status_code == 503
        doc = http.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.")
    assert {"/v1/demand", "/v1/admission", "/v1/pools", "/v1/leader", "/metrics"} <= set(
        doc["paths"]
    )


@pytest.mark.parametrize(
    ("who", "method", "path", "expected"),
    [
        ("admin", "GET", "/v1/pools", 200),
        ("admin", "GET", "/metrics", 200),
        ("admin", "POST", "/v1/demand", 200),
        ("read", "GET", "/v1/admission", 200),
        ("read", "GET", "/v1/lanes/ads/serve", 200),
        ("read", "GET", "/v1/pools", 200),
        ("read", "GET", "/v1/leader", 200),
        ("read", "GET", "/metrics", 200),
        ("read", "POST", "/v1/demand", 403),
        ("search", "GET", "/v1/admission", 200),
        ("search", "GET", "/v1/lanes/search/batch", 200),
        ("search", "GET", "/v1/lanes/ads/serve", 403),
        ("search", "GET", "/v1/lanes/ads/nonexistent", 403),
        ("search", "GET", "/v1/leader", 200),
        ("search", "GET", "/v1/pools", 403),
        ("search", "GET", "/metrics", 403),
        ("search", "POST", "/v1/demand", 200),
    ],
)
def test_scopes(api: Served, who: str, method: str, path: str, expected: int) -> None:
    api.port.publish(dict.fromkeys(LANES, 1.0))
    with api.client(who) as http:
        answer = http.request(method, path, json=batch(("search/batch", 3)))
    assert answer.status_code == expected, answer.text
    if expected == 403:
        assert "error" in answer.json()


def test_destination_token_reads_only_its_lanes(api: Served) -> None:
    api.port.publish(dict.fromkeys(LANES, 2.0))
    with api.client("search") as http:
        mine = http.get("/v1/admission").json()
    with api.client("read") as http:
        everything = http.get("/v1/admission").json()
    assert set(mine["lanes"]) == {"search/interactive", "search/batch"}
    assert set(everything["lanes"]) == set(LANES)


def test_out_of_scope_lane_refuses_the_whole_batch_naming_it(api: Served) -> None:
    with api.client("search") as http:
        answer = http.post(
            "/v1/demand", json=batch(("search/batch", 3), ("ads/serve", 1), ("search/x", 2))
        )
    assert answer.status_code == 403
    body = answer.json()
    assert body["item"] == 1 and body["lane"] == "ads/serve"
    assert "reports[1]" in body["error"] and "ads/serve" in body["error"]
    assert api.port.sink.reports == {} and api.port.sink.batches == 0


def test_out_of_scope_unknown_lane_is_403_not_422(api: Served) -> None:
    """A destination token learns nothing about other destinations' lanes."""
    with api.client("search") as http:
        answer = http.post("/v1/demand", json=batch(("other/nothing", 1)))
    assert answer.status_code == 403


def test_without_tokens_everything_is_open(open_api: Served) -> None:
    open_api.port.publish(dict.fromkeys(LANES, 1.0))
    with open_api.client() as http:
        assert http.post("/v1/demand", json=batch(("ads/serve", 2))).json() == {"accepted": 1}
        assert http.get("/metrics").status_code == 200
        assert http.get("/v1/pools").status_code == 200
    assert open_api.port.sink.reports == {"ads/serve": 2.0}


# -- demand payloads ----------------------------------------------------------------------------


def test_a_good_batch_is_stored_last_value_winning(api: Served) -> None:
    with api.client("admin") as http:
        answer = http.post(
            "/v1/demand",
            json=batch(("search/batch", 3), ("ads/serve", 0), ("search/batch", 7.5)),
        )
    assert answer.status_code == 200
    assert answer.json() == {"accepted": 2}
    assert api.port.sink.reports == {"search/batch": 7.5, "ads/serve": 0.0}


@pytest.mark.parametrize(
    ("body", "status", "names"),
    [
        (b'{"reports": [', 400, "not JSON"),
        (b"\xff\xfe", 400, "not JSON"),
        (b"", 400, "not JSON"),
        (b"[]", 422, "reports"),
        (b'{"reports": {}}', 422, "reports"),
        (b'{"reports": [], "extra": 1}', 422, "extra"),
        (b'{"reports": [{"lane": "search/batch", "demand": 1}, 5]}', 422, "reports[1]"),
        (b'{"reports": [{"lane": "search/batch", "demand": 1}, {"demand": 1}]}', 422, "reports[1]"),
        (b'{"reports": [{"lane": "nolane", "demand": 1}]}', 422, "reports[0]"),
        (b'{"reports": [{"lane": "a/b/c", "demand": 1}]}', 422, "reports[0]"),
        (b'{"reports": [{"lane": "search/batch", "demand": "3"}]}', 422, "search/batch"),
        (b'{"reports": [{"lane": "search/batch", "demand": true}]}', 422, "search/batch"),
        (b'{"reports": [{"lane": "search/batch", "demand": null}]}', 422, "search/batch"),
        (b'{"reports": [{"lane": "search/batch", "demand": 1, "x": 2}]}', 422, "'x'"),
        (b'{"reports": [{"lane": "search/batch", "demand": 1, "demand": 9}]}', 422, "'demand'"),
        (
            b'{"reports": [{"lane": "ads/serve", "demand": 1}, {"lane": "ads/gone", "demand": 1}]}',
            422,
            "ads/gone",
        ),
        (
            b'{"reports": [{"lane": "ads/serve", "demand": 1}, {"lane": "ads/train", "demand": -1}]}',
            422,
            "reports[1]",
        ),
        (b'{"reports": [{"lane": "ads/serve", "demand": NaN}]}', 422, "finite"),
        (b'{"reports": [{"lane": "ads/serve", "demand": Infinity}]}', 422, "finite"),
        (b'{"reports": [{"lane": "ads/serve", "demand": -Infinity}]}', 422, "finite"),
        (b'{"reports": [{"lane": "ads/serve", "demand": 1e400}]}', 422, "finite"),
        (b'{"reports": [{"lane": "ads/serve", "demand": 1' + b"0" * 400 + b"}]}", 422, "finite"),
    ],
)
def test_bad_batches_are_refused_whole(api: Served, body: bytes, status: int, names: str) -> None:
    with api.client("admin") as http:
        answer = http.post("/v1/demand", content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == status, answer.text
    assert names in answer.json()["error"]
    assert "\n" not in answer.json()["error"]
    assert api.port.sink.reports == {} and api.port.sink.batches == 0


def test_an_empty_batch_is_accepted(api: Served) -> None:
    with api.client("admin") as http:
        assert http.post("/v1/demand", json={"reports": []}).json() == {"accepted": 0}


def test_store_failure_is_503_without_details(api: Served) -> None:
    api.port.sink.fail = True
    with api.client("admin") as http:
        answer = http.post("/v1/demand", json=batch(("ads/serve", 1)))
    assert answer.status_code == 503
    assert "hunter2" not in answer.text and "postgresql" not in answer.text


# -- size limits --------------------------------------------------------------------------------


def test_too_many_reports_is_413(api: Served) -> None:
    reports = [{"lane": "ads/serve", "demand": i} for i in range(10_001)]
    with api.client("admin") as http:
        answer = http.post("/v1/demand", json={"reports": reports})
    assert answer.status_code == 413
    assert "10001" in answer.json()["error"]
    assert api.port.sink.batches == 0


def test_the_limit_itself_is_accepted(api: Served) -> None:
    reports = [{"lane": "ads/serve", "demand": i} for i in range(10_000)]
    with api.client("admin") as http:
        answer = http.post("/v1/demand", json={"reports": reports})
    assert answer.json() == {"accepted": 1}
    assert api.port.sink.reports == {"ads/serve": 9999.0}


def test_body_over_one_mebibyte_is_413(api: Served) -> None:
    body = b'{"reports": [], "pad": "' + b"x" * (1024 * 1024) + b'"}'
    with api.client("admin") as http:
        answer = http.post("/v1/demand", content=body)
    assert answer.status_code == 413


def test_chunked_body_over_the_limit_is_413(api: Served) -> None:
    """No Content-Length: the limit holds while streaming."""

    def chunks() -> Iterator[bytes]:
        yield b'{"reports": ['
        for _ in range(20_000):
            yield b'{"lane": "ads/serve", "demand": 1},'
        yield b'{"lane": "ads/serve", "demand": 1}]}'

    with api.client("admin") as http:
        answer = http.post("/v1/demand", content=chunks())
    assert answer.status_code == 413
    assert api.port.sink.batches == 0


# -- admission, ETag, staleness -----------------------------------------------------------------


def test_before_the_first_tick_admission_is_503_with_retry_after(api: Served) -> None:
    with api.client("admin") as http:
        for path in ("/v1/admission", "/v1/lanes/ads/serve", "/v1/pools"):
            answer = http.get(path)
            assert answer.status_code == 503
            assert answer.headers["retry-after"] == "10"
            assert "first tick" in answer.json()["error"]


def test_admission_document(api: Served) -> None:
    with api.client("admin") as http:
        http.post("/v1/demand", json=batch(("ads/serve", 12)))
        at = datetime(2026, 11, 30, 4, 0, tzinfo=UTC)
        api.clock[0] = at + timedelta(seconds=5)
        api.port.publish({"ads/serve": 4.0, "ads/train": 0.5}, tick=7, time=at)
        doc = http.get("/v1/admission").json()
        lane = http.get("/v1/lanes/ads/serve").json()
        unknown = http.get("/v1/lanes/ads/nope")
    assert doc["tick"] == 7 and doc["stale"] is False
    assert datetime.fromisoformat(doc["time"]) == at
    assert doc["lanes"]["ads/serve"] == {
        "demand": 12.0,
        "allocation": 4.0,
        "held": 0.0,
        "admission": 4.0,
        "stale": False,
    }
    assert lane["lane"] == "ads/serve" and lane["admission"] == 4.0 and lane["tick"] == 7
    assert unknown.status_code == 404


def test_etag_and_304(api: Served) -> None:
    api.port.publish(dict.fromkeys(LANES, 1.0))
    with api.client("admin") as http:
        first = http.get("/v1/admission")
        etag = first.headers["etag"]
        again = http.get("/v1/admission", headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b""
        assert again.headers["etag"] == etag
        listed = http.get("/v1/admission", headers={"If-None-Match": f'"x", W/{etag}'})
        assert listed.status_code == 304
        api.port.publish(dict.fromkeys(LANES, 2.0))
        changed = http.get("/v1/admission", headers={"If-None-Match": etag})
        assert changed.status_code == 200 and changed.headers["etag"] != etag
        lane = http.get("/v1/lanes/ads/serve")
        assert (
            http.get(
                "/v1/lanes/ads/serve", headers={"If-None-Match": lane.headers["etag"]}
            ).status_code
            == 304
        )
    with api.client("search") as http:
        scoped = http.get("/v1/admission", headers={"If-None-Match": changed.headers["etag"]})
    assert scoped.status_code == 200 and scoped.headers["etag"] != changed.headers["etag"]


def test_same_tick_number_with_other_content_is_not_a_304(api: Served) -> None:
    """A restarted controller counts ticks from 1 again: the ETag is the body's digest."""
    api.port.publish(dict.fromkeys(LANES, 1.0), tick=1)
    with api.client("admin") as http:
        etag = http.get("/v1/admission").headers["etag"]
        api.port.publish(dict.fromkeys(LANES, 3.0), tick=1)
        assert http.get("/v1/admission", headers={"If-None-Match": etag}).status_code == 200


def test_stale_after_two_intervals(api: Served) -> None:
    at = datetime(2026, 11, 30, 4, 0, tzinfo=UTC)
    api.port.publish(dict.fromkeys(LANES, 1.0), time=at)
    with api.client("admin") as http:
        api.clock[0] = at + timedelta(seconds=20)
        fresh = http.get("/v1/admission")
        api.clock[0] = at + timedelta(seconds=20.5)
        stale = http.get("/v1/admission", headers={"If-None-Match": fresh.headers["etag"]})
        lane = http.get("/v1/lanes/ads/serve").json()
    assert fresh.json()["stale"] is False
    assert stale.status_code == 200 and stale.json()["stale"] is True
    assert lane["stale"] is True


def test_etag_matching() -> None:
    assert etag_matches('"a"', '"a"')
    assert etag_matches('W/"a"', '"a"')
    assert etag_matches('"b", "a"', '"a"')
    assert etag_matches("*", '"a"')
    assert not etag_matches('"b"', '"a"')
    assert not etag_matches(None, '"a"')


def test_pools_and_leader(api: Served) -> None:
    api.port.publish(dict.fromkeys(LANES, 1.0), tick=3)
    with api.client("read") as http:
        pools = http.get("/v1/pools").json()
        leader = http.get("/v1/leader").json()
    assert pools == {
        "tick": 3,
        "pools": {
            "gpu-shared": {
                "resource": "gpu",
                "capacity": 16.0,
                "demand": 20.0,
                "pressure": 1.25,
                "state": "constrained",
                "desired_replicas": 5,
                "targets": {
                    "asg:us-east-1/gpu": {
                        "desired": 5,
                        "in_service": 4,
                        "pending": 1,
                        "min": 1,
                        "max": 8,
                    }
                },
            }
        },
    }
    assert leader == {"leader": True, "holder": "replica-a", "epoch": 1}


# -- concurrency --------------------------------------------------------------------------------


def test_concurrent_posts_are_all_or_nothing(tmp_path: Path) -> None:
    lanes = [f"d{d}/l{i}" for d in range(8) for i in range(50)]
    port = MemoryPort(lanes)
    with UvicornThread(build_app(port, None, Metrics()), access_log=False) as server:
        errors: list[str] = []

        def poster(d: int) -> None:
            with loopback.client(base_url=server.url, timeout=30) as http:
                for round_ in range(20):
                    good = [{"lane": f"d{d}/l{i}", "demand": round_} for i in range(50)]
                    bad = [*good[:25], {"lane": f"d{d}/l0", "demand": -1}]
                    if http.post("/v1/demand", json={"reports": good}).status_code != 200:
                        errors.append(f"good batch {d}/{round_}")
                    if http.post("/v1/demand", json={"reports": bad}).status_code != 422:
                        errors.append(f"bad batch {d}/{round_}")

        threads = [threading.Thread(target=poster, args=(d,)) for d in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
    assert port.sink.batches == 8 * 20
    assert port.sink.reports == dict.fromkeys(lanes, 19.0)


# -- metrics and secrets ------------------------------------------------------------------------


def test_demand_results_and_requests_are_counted(api: Served) -> None:
    with api.client("admin") as http:
        http.post("/v1/demand", json=batch(("ads/serve", 1), ("ads/train", 2)))
        http.post("/v1/demand", json=batch(("ads/serve", 1), ("ads/nope", 2)))
        text = http.get("/metrics").text
    assert 'arklow_demand_reports_total{result="accepted"} 2.0' in text
    assert 'arklow_demand_reports_total{result="invalid"} 2.0' in text
    assert 'arklow_http_requests_total{code="200",method="POST",route="/v1/demand"} 1.0' in text
    assert 'arklow_http_requests_total{code="422",method="POST",route="/v1/demand"} 1.0' in text


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def test_tokens_never_appear_in_logs_answers_or_metrics(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    collect = _Collect()
    loggers = [logging.getLogger(n) for n in ("", "uvicorn", "uvicorn.error", "uvicorn.access")]
    served = serve(tmp_path, with_tokens=True, log_config=uvicorn.config.LOGGING_CONFIG)
    api = next(served)
    for logger in loggers:
        logger.addHandler(collect)
    seen: list[str] = []
    try:
        api.port.publish(dict.fromkeys(LANES, 1.0))
        wrong = secrets.token_urlsafe(24)
        for who in ("admin", "read", "search"):
            with api.client(who) as http:
                for method, path in GUARDED:
                    answer = http.request(method, path, json=batch(("ads/serve", 1)))
                    seen.append(answer.text + str(answer.headers))
                seen.append(http.post("/v1/demand", json=batch(("x/y", -1))).text)
        with loopback.client(
            base_url=api.url, headers={"Authorization": f"Bearer {wrong}"}
        ) as http:
            seen.append(http.get("/v1/admission").text)
            seen.append(http.post("/v1/demand", json=batch(("ads/serve", 1))).text)
        with api.client("admin") as http:
            seen.append(http.get("/metrics").text)
    finally:
        for logger in loggers:
            logger.removeHandler(collect)
        next(served, None)
    out, err = capfd.readouterr()
    logs = "\n".join(collect.lines) + out + err
    assert '"POST /v1/demand HTTP/1.1" 403' in logs  # the access log was captured
    everything = logs + "\n".join(seen)
    for secret in [*api.tokens.values(), wrong]:
        assert secret not in everything
        assert token_digest(secret) not in everything
    assert "authorization" not in logs.lower()


def test_unknown_paths_and_methods_answer_json(open_api: Served) -> None:
    with open_api.client() as http:
        missing = http.get("/v1/nothing")
        wrong = http.delete("/v1/admission")
    assert missing.status_code == 404 and "error" in missing.json()
    assert wrong.status_code == 405 and "error" in wrong.json()
    assert "GET" in wrong.headers["allow"]
