"""A web page cannot drive or read the controller in its default no-token mode (real HTTP on
loopback): a cross-origin or non-JSON POST, a rebound Host name and invented methods are refused
before any handler, nothing of them is stored, and they add no metric series."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from arklow_pulumi.controller.api.app import build_app
from arklow_pulumi.controller.api.guarding import allowed_hosts, host_of
from arklow_pulumi.controller.api.metrics import Metrics
from tests import loopback
from tests.memory_controller import MemoryPort
from tests.uvicorn_server import UvicornThread

LANES = ["search/interactive", "ads/serve"]
BODY = b'{"reports": [{"lane": "ads/serve", "demand": 5}]}'


@pytest.fixture
def served() -> Iterator[tuple[str, MemoryPort, Metrics]]:
    port = MemoryPort(LANES, interval_s=10.0)
    metrics = Metrics()
    app = build_app(port, None, metrics, hosts=allowed_hosts("127.0.0.1", ["arklow.internal"]))
    with UvicornThread(app, access_log=False) as server:
        yield server.url, port, metrics


def post(url: str, **headers: str) -> httpx.Response:
    return loopback.post(url + "/v1/demand", content=BODY, headers=headers, timeout=10)


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Content-Type": "text/plain", "Origin": "http://evil.example"}, 403),
        ({"Content-Type": "text/plain"}, 415),
        ({}, 415),
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415),
        ({"Content-Type": "application/json", "Origin": "http://evil.example"}, 403),
        ({"Content-Type": "application/json", "Origin": "null"}, 403),
        ({"Content-Type": "application/json", "Host": "rebind.evil.example"}, 421),
        ({"Content-Type": "application/json", "Host": "rebind.evil.example:8470"}, 421),
    ],
)
def test_a_refused_request_stores_nothing(
    served: tuple[str, MemoryPort, Metrics], headers: dict[str, str], status: int
) -> None:
    url, port, _ = served
    answer = post(url, **headers)
    assert answer.status_code == status, answer.text
    assert "error" in answer.json()
    assert port.sink.reports == {}
    assert port.sink.batches == 0


def test_a_rebound_host_cannot_read_admission(served: tuple[str, MemoryPort, Metrics]) -> None:
    url, port, _ = served
    port.publish({"ads/serve": 3.0})
    answer = loopback.get(url + "/v1/admission", headers={"Host": "rebind.evil.example"})
    assert answer.status_code == 421
    assert "ads/serve" not in answer.text


@pytest.mark.parametrize(
    "headers",
    [
        {"Content-Type": "application/json"},
        {"Content-Type": "application/json; charset=utf-8"},
        {"Content-Type": "Application/JSON", "Host": "localhost"},
        {"Content-Type": "application/json", "Host": "arklow.internal:1234"},
    ],
)
def test_same_origin_json_is_accepted(
    served: tuple[str, MemoryPort, Metrics], headers: dict[str, str]
) -> None:
    url, port, _ = served
    answer = post(url, **headers)
    assert answer.status_code == 200, answer.text
    assert port.sink.reports == {"ads/serve": 5.0}


def test_the_servers_own_origin_is_accepted(served: tuple[str, MemoryPort, Metrics]) -> None:
    url, port, _ = served
    answer = post(url, **{"Content-Type": "application/json", "Origin": url})
    assert port.sink.reports == {"ads/serve": 5.0}
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("path", ["/v1/admission", "/v1/leader", "/healthz", "/openapi.json"])
def test_a_post_to_a_route_without_one_is_405_whatever_its_body(
    served: tuple[str, MemoryPort, Metrics], path: str
) -> None:
    """The Content-Type check is for the routes that take a body: a POST elsewhere is refused by
    the router, as every method a route does not take (no handler runs either way)."""
    url, port, _ = served
    for headers in ({}, {"Content-Type": "text/plain"}, {"Content-Type": "application/json"}):
        answer = loopback.post(url + path, content=BODY, headers=headers, timeout=10)
        assert answer.status_code == 405, answer.text
        assert "GET" in answer.headers["allow"] and "error" in answer.json()
    assert port.sink.batches == 0


def test_invented_methods_add_no_series(served: tuple[str, MemoryPort, Metrics]) -> None:
    url, _, metrics = served
    with loopback.client(base_url=url, timeout=10) as http:
        for i in range(300):
            http.request(f"X{i}", "/v1/admission")
            http.request(f"Y{i}", f"/nowhere/{i}")
    text = metrics.render().decode()
    series = [line for line in text.splitlines() if line.startswith("arklow_http_requests_total")]
    assert len(series) <= 4, series
    assert 'method="other"' in text
    assert "X1" not in text and "nowhere" not in text


@pytest.mark.parametrize(
    ("authority", "host"),
    [
        ("127.0.0.1:8470", "127.0.0.1"),
        ("[::1]:8470", "::1"),
        ("LocalHost.", "localhost"),
        ("example.com", "example.com"),
        ("::1", "::1"),
        ("[::ffff:127.0.0.1]", "::ffff:7f00:1"),
        ("localhost:", "localhost"),
        ("localhost:evil", None),  # a port is digits
        ("localhost:80:80", None),
        ("[::1]evil.com", None),  # nothing after the bracket but a port
        ("[::1]:80x", None),
        ("[::1", None),  # a bracket must close
        ("::1]", None),
        ("[localhost]", None),  # a bracket holds an IPv6 address
        ("[127.0.0.1]", None),
        ("", ""),
    ],
)
def test_host_of(authority: str, host: str | None) -> None:
    assert host_of(authority) == host


def test_allowed_hosts() -> None:
    assert allowed_hosts("127.0.0.1") == {"localhost", "127.0.0.1", "::1"}
    assert allowed_hosts("0.0.0.0") is None  # tokens guard a non-loopback server
    assert allowed_hosts("0.0.0.0", ["arklow.example"]) == {"arklow.example"}
    assert allowed_hosts("10.0.0.5", ["a.example"]) == {"10.0.0.5", "a.example"}
