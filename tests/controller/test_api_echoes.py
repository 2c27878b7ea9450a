"""Every answer encodable: each class of odd string (lone surrogates, NUL, control characters,
direction marks, line separators, 10,000 characters) posted to every route and header the API
echoes, over real HTTP on loopback, through the server's own protocol (the connection layer's
answers included). No answer is a 500, every body is strict UTF-8 JSON of one bounded line."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import uvicorn

from arklow_pulumi.controller.api.app import build_app
from arklow_pulumi.controller.api.auth import TokenSet
from arklow_pulumi.controller.api.bodies import MESSAGE_LENGTH, echo, encodable, error_body
from arklow_pulumi.controller.api.connections import ConnectionLimits, server_config
from arklow_pulumi.controller.api.guarding import allowed_hosts
from arklow_pulumi.controller.api.metrics import Metrics
from tests import loopback
from tests.memory_controller import MemoryPort
from tests.tokens import token_digest

ODD = {
    "lone high surrogate": "\ud800",
    "lone low surrogate": "x\udfffy",
    "reversed pair": "\udc00\ud800",
    "NUL": "a\x00b",
    "escape sequence": "\x1b[31mred",
    "newline": "a\nb",
    "DEL and C1": "\x7f\x85\x9b",
    "right-to-left override": "\u202eevil",
    "right-to-left mark": "\u200f\u200e",
    "line separator": "a\u2028b\u2029",
    "byte order mark": "\ufeff",
    "noncharacter": "\uffff\U0010ffff",
    "astral": "\U0001f600",
    "quote and backslash": "\"'\\",
    "10,000 characters": "a" * 10_000,
}
LANES = ["search/interactive", "ads/serve"]
ADMIN, SEARCH = "admin-token", "search-token"


class Served:
    """The API app behind :func:`server_config` (the process's own protocol), in a thread."""

    def __init__(self, app: Any) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(server_config(app, ConnectionLimits()))
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def __enter__(self) -> Served:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    tokens = TokenSet.from_document(
        {
            "tokens": [
                {"name": "ops", "scope": "admin", "sha256": token_digest(ADMIN)},
                {"name": "search", "scope": "destination:search", "sha256": token_digest(SEARCH)},
            ]
        },
        "tokens",
    )
    port = MemoryPort(LANES)
    port.publish({lane: 1.0 for lane in LANES})
    app = build_app(port, tokens, Metrics(), hosts=allowed_hosts("127.0.0.1"))
    with Served(app) as served:
        yield served.url


def check(status: int, body: bytes) -> dict[str, Any]:
    """A refusal, not a failure: a 4xx whose body is strict UTF-8 JSON, one bounded line."""
    assert 400 <= status < 500, (status, body[:300])
    doc = json.loads(body.decode("utf-8"))  # strict: a surrogate would not decode
    assert isinstance(doc, dict) and isinstance(doc["error"], str)
    assert "\n" not in doc["error"] and len(doc["error"]) <= MESSAGE_LENGTH
    for value in doc.values():
        if isinstance(value, str):
            value.encode("utf-8")  # no lone surrogate survived decoding either
    assert b"Traceback" not in body and b"<class" not in body
    return doc


def post(url: str, document: object, token: str = ADMIN) -> httpx.Response:
    body = json.dumps(document).encode("ascii")  # "\ud800" travels as the JSON escape
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    return loopback.post(url + "/v1/demand", content=body, headers=headers, timeout=30)


@pytest.mark.parametrize("odd", list(ODD.values()), ids=list(ODD))
def test_demand_refusals_echo_any_lane(url: str, odd: str) -> None:
    lane = "search/" + odd.replace("/", "")
    cases = [
        ({"reports": [{"lane": lane, "demand": 1}]}, ADMIN),  # not in the topology
        ({"reports": [{"lane": "ads/" + odd.replace("/", ""), "demand": 1}]}, SEARCH),  # scope
        ({"reports": [{"lane": lane, "demand": "x"}]}, ADMIN),  # demand not a number
        ({"reports": [{"lane": lane, "demand": -1}]}, ADMIN),  # out of range
        ({"reports": [{"lane": lane, "demand": 1, odd: 1}]}, ADMIN),  # unknown field
        ({"reports": [{"lane": odd, "demand": 1}]}, ADMIN),  # not a lane key
        ({"reports": [], odd: 1}, ADMIN),  # unknown top-level field
        ({odd: odd}, ADMIN),
    ]
    for document, token in cases:
        answer = post(url, document, token)
        doc = check(answer.status_code, answer.content)
        if "lane" in doc:
            assert doc["lane"] == encodable(doc["lane"])


@pytest.mark.parametrize("odd", list(ODD.values()), ids=list(ODD))
def test_lane_paths_echo_any_name(url: str, odd: str) -> None:
    path = "/v1/lanes/search/" + quote(odd.encode("utf-8", "surrogatepass"), safe="")
    for token in (ADMIN, SEARCH):
        answer = loopback.get(url + path, headers={"Authorization": f"Bearer {token}"}, timeout=30)
        check(answer.status_code, answer.content)
    answer = loopback.get(
        url + "/v1/lanes/ads/" + quote(odd.encode("utf-8", "surrogatepass"), safe=""),
        headers={"Authorization": f"Bearer {SEARCH}"},
        timeout=30,
    )
    check(answer.status_code, answer.content)


@pytest.mark.parametrize("odd", list(ODD.values()), ids=list(ODD))
@pytest.mark.parametrize("header", [b"Host", b"Origin", b"Content-Type", b"Authorization"])
def test_headers_echo_any_value(url: str, odd: str, header: bytes) -> None:
    """Raw bytes on a socket (no client library cleans them): what HTTP cannot carry in a header
    is refused 400 by the connection layer, the rest by the request checks or the token check."""
    value = odd.encode("utf-8", "surrogatepass")
    host, port = url.removeprefix("http://").split(":")
    lines = [b"POST /v1/demand HTTP/1.1", b"Content-Length: 2"]
    if header != b"Host":
        lines.append(b"Host: 127.0.0.1")
    if header != b"Content-Type":
        lines.append(b"Content-Type: application/json")
    lines.append(header + b": " + value)
    request = b"\r\n".join(lines) + b"\r\n\r\n{}"
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(request)
        answer = _answer(sock)
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    check(status, body)


def _answer(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data or len(data.partition(b"\r\n\r\n")[2]) < _length(data):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def _length(data: bytes) -> int:
    for line in data.partition(b"\r\n\r\n")[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


@pytest.mark.parametrize("odd", list(ODD.values()), ids=list(ODD))
def test_error_body_encodes_any_text(odd: str) -> None:
    body = error_body(f"lane {echo(odd)} is refused", item=0, lane=odd)
    doc = json.loads(body.decode("utf-8"))
    assert doc["lane"] == encodable(odd) and "\ud800" not in doc["lane"]
    assert "\n" not in doc["error"] and len(doc["error"]) < 200


def test_echo_bounds_and_escapes() -> None:
    assert echo("a" * 10_000).endswith("... (10000 characters)")
    assert len(echo("a" * 10_000)) < 140
    assert echo("\u202e\x00") == "'\\u202e\\x00'"
    assert encodable("a\ud800b") == "a\ufffdb"
