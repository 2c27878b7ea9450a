"""Exact at the edges: duplicate ``Origin`` and ``Content-Type`` headers are refused (real HTTP on
loopback), a ``Host`` that is no host is not loopback, a tokens file never echoes a key, the
connection options are range-checked (exit 2, one line), and the log limiter lets one line a
second through with the count of those held back (a fake clock)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arklow_pulumi.controller.api.app import build_app
from arklow_pulumi.controller.api.auth import TokenSet
from arklow_pulumi.controller.api.connections import (
    ConnectionLimits,
    OnceASecond,
    OnceASecondFilter,
    rate_limited_exception_handler,
)
from arklow_pulumi.controller.api.guarding import allowed_hosts
from arklow_pulumi.controller.api.metrics import Metrics
from arklow_pulumi.core.errors import InvalidInput
from tests import arklow_cli, loopback
from tests.memory_controller import MemoryPort
from tests.uvicorn_server import UvicornThread

BODY = b'{"reports": [{"lane": "ads/serve", "demand": 5}]}'
JSON = ("Content-Type", "application/json")


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, MemoryPort]]:
    port = MemoryPort(["ads/serve"])
    app = build_app(port, None, Metrics(), hosts=allowed_hosts("127.0.0.1"))
    with UvicornThread(app, access_log=False) as server:
        yield server.url, port


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ([JSON, ("Origin", "http://evil.example"), ("Origin", "{url}")], 403),
        ([JSON, ("Origin", "{url}"), ("Origin", "{url}")], 403),
        ([JSON, ("Origin", "{url}"), ("Origin", "http://evil.example")], 403),
        ([("Content-Type", "text/plain"), JSON], 415),
        ([JSON, ("Content-Type", "text/plain")], 415),
        ([JSON, JSON], 415),
        ([JSON, ("Host", "localhost:evil")], 421),
        ([JSON, ("Host", "[::1]evil.com")], 421),
        ([JSON, ("Host", "[::1")], 421),
        ([JSON, ("Host", "127.0.0.1:80:80")], 421),
    ],
)
def test_ambiguous_headers_are_refused(
    served: tuple[str, MemoryPort], headers: list[tuple[str, str]], status: int
) -> None:
    url, port = served
    sent = [(name, value.format(url=url)) for name, value in headers]
    answer = loopback.post(url + "/v1/demand", content=BODY, headers=sent, timeout=30)
    assert answer.status_code == status, answer.text
    assert "error" in answer.json()
    assert port.sink.batches == 0


def test_one_origin_and_one_content_type_are_accepted(served: tuple[str, MemoryPort]) -> None:
    url, port = served
    headers = [JSON, ("Origin", url), ("Host", "[::1]:8470")]
    answer = loopback.post(url + "/v1/demand", content=BODY, headers=headers, timeout=30)
    assert answer.status_code == 403  # the Origin is not the Host's: that check still holds
    answer = loopback.post(url + "/v1/demand", content=BODY, headers=[JSON, ("Origin", url)])
    assert answer.status_code == 200, answer.text
    assert port.sink.reports == {"ads/serve": 5.0}


TOKEN = "s3cr3t-0123456789abcdef"  # as a careless operator might paste it, as a key
DIGEST = "0" * 64


@pytest.mark.parametrize(
    "text",
    [
        f"tokens:\n  - {{name: a, scope: admin, sha256: {DIGEST}, {TOKEN}: 1}}",
        f"tokens:\n  - {{name: a, scope: admin, {TOKEN}: {DIGEST}}}",
        f"tokens:\n  - {{{TOKEN}: {{name: a, scope: admin, sha256: {DIGEST}}}}}",
        f"tokens:\n  - {{name: a, scope: admin, sha256: {DIGEST}}}\n{TOKEN}: 1",
        f"{TOKEN}:\n  - {{name: a, scope: admin, sha256: {DIGEST}}}",
        f"tokens:\n  - {{name: a, scope: admin, sha256: {DIGEST}, {TOKEN}: 1, {TOKEN}: 2}}",
        f'{{"tokens": [{{"name": "a", "{TOKEN}": 1, "{TOKEN}": 2}}]}}',
    ],
)
def test_a_tokens_file_never_echoes_a_key(tmp_path: Path, text: str) -> None:
    path = tmp_path / "tokens.yaml"
    path.write_text(text)
    with pytest.raises(InvalidInput) as raised:
        TokenSet.load(path)
    assert TOKEN not in str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--header-timeout", "0"),
        ("--header-timeout", "-1"),
        ("--header-timeout", "nan"),
        ("--header-timeout", "inf"),
        ("--header-timeout", "3601"),
        ("--header-timeout", "soon"),
        ("--body-timeout", "0.05"),
        ("--body-timeout", "1e9"),
        ("--max-connections", "0"),
        ("--max-connections", "100001"),
        ("--max-connections", "1.5"),
    ],
)
def test_bad_connection_options_exit_2(
    tmp_path: Path,
    option: str,
    value: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each through ``arklow``'s entry point in this process; the first also as a real process
    (the console script's exit code and stderr)."""
    store = f"sqlite:///{tmp_path / 'arklow.db'}"
    args = ["controller", "run", "--store", store, option, value]
    if (option, value) == ("--header-timeout", "0"):
        result = arklow_cli.run(args, cwd=tmp_path)
    else:
        monkeypatch.chdir(tmp_path)
        result = arklow_cli.in_process(monkeypatch, capsys)(args)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 or "Usage:" in result.stderr, result.stderr
    assert option in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "arklow.db").exists()  # refused before anything was opened


def test_connection_limits_ranges() -> None:
    assert ConnectionLimits().check() == ConnectionLimits(10.0, 30.0, 512)
    assert ConnectionLimits(0.1, 3600, 1).check().max_connections == 1
    with pytest.raises(InvalidInput, match="option --max-connections"):
        ConnectionLimits(max_connections=0).check()


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_once_a_second_counts_what_it_holds_back() -> None:
    clock = Clock()
    limiter = OnceASecond(clock)
    assert limiter.admit("emfile") == 0
    assert [limiter.admit("emfile") for _ in range(5)] == [None] * 5
    assert limiter.admit("other") == 0  # each kind on its own
    clock.now += 0.99
    assert limiter.admit("emfile") is None
    clock.now += 0.01
    assert limiter.admit("emfile") == 6
    clock.now += 5
    assert limiter.admit("emfile") == 0


def test_the_loop_handler_writes_one_line_a_second(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    log = logging.getLogger("arklow.controller.test-connections")
    handle = rate_limited_exception_handler(log, OnceASecond(clock))
    context = {
        "message": "socket.accept() out of system resource",
        "exception": OSError(24, "Too many open files"),
    }
    with caplog.at_level(logging.ERROR, logger=log.name):
        for _ in range(1000):
            handle(None, context)  # type: ignore[arg-type]
        clock.now += 1
        handle(None, context)  # type: ignore[arg-type]
    lines = [record.getMessage() for record in caplog.records]
    assert lines == [
        "api server: socket.accept() out of system resource: Too many open files",
        "api server: socket.accept() out of system resource: Too many open files "
        "(999 more since the last such line)",
    ]
    assert all(record.exc_info is None for record in caplog.records)


def test_the_uvicorn_filter_holds_back_repeats() -> None:
    clock = Clock()
    limiter = OnceASecondFilter(OnceASecond(clock))

    def record(message: str, level: int = logging.WARNING) -> logging.LogRecord:
        return logging.LogRecord("uvicorn.error", level, __file__, 1, message, None, None)

    assert limiter.filter(record("Invalid HTTP request received."))
    assert not limiter.filter(record("Invalid HTTP request received."))
    assert limiter.filter(record("debugging", logging.DEBUG))  # below warnings: untouched
    clock.now += 1
    again = record("Invalid HTTP request received.")
    assert limiter.filter(again)
    assert again.getMessage() == "Invalid HTTP request received. (1 more since the last such line)"


class BrokenPort(MemoryPort):
    def leader(self) -> Any:
        raise RuntimeError("secret internals: /var/lib/arklow/db.sqlite")


def test_a_bug_is_a_json_500_without_internals() -> None:
    app = build_app(BrokenPort(["ads/serve"]), None, Metrics(), hosts=allowed_hosts("127.0.0.1"))
    with UvicornThread(app, access_log=False) as server:
        answer = loopback.get(server.url + "/v1/leader", timeout=30)
    assert answer.status_code == 500
    assert answer.json() == {"error": "internal error: the controller could not answer"}
