"""A real ``arklow controller run`` on loopback holds its connections to account: clients trickling
their headers or their bodies are answered 408 and closed after the (injected, short) deadlines, a
normal client is answered meanwhile, a connection beyond ``--max-connections`` is answered 503 at
once, and under a low descriptor limit the log stays bounded while the server recovers.

Nothing asserts on elapsed time: each wait polls an outcome ("closed by the server", "answered
200") under a generous deadline.
"""

from __future__ import annotations

import re
import resource
import select
import socket
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests import loopback
from tests.arklow_cli import ARKLOW
from tests.controller.test_openapi_schemathesis import fill_store
from tests.controller_process import ControllerProcess, eventually

HEADERS = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Trickle: "
BODY = (
    b"POST /v1/demand HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: 100000\r\n\r\n{"
)


class Stalled:
    """``n`` connections that send ``head`` and then one more byte at each :meth:`step`, never
    finishing their request; what the server sends each of them is kept."""

    def __init__(self, address: tuple[str, int], head: bytes, n: int) -> None:
        self.open: list[socket.socket] = []
        self.answers: list[bytes] = []
        self.closed = 0
        for _ in range(n):
            sock = socket.create_connection(address, timeout=30)
            sock.sendall(head)
            self.open.append(sock)
        self._received = {sock: b"" for sock in self.open}

    def step(self) -> bool:
        """Read what arrived, trickle one byte into each connection still open; True when the
        server has closed them all."""
        if self.open:
            readable, _, _ = select.select(self.open, [], [], 0)
            for sock in readable:
                self._read(sock)
        for sock in list(self.open):
            try:
                sock.send(b" ")
            except OSError:
                self._closed(sock)
        return not self.open

    def _read(self, sock: socket.socket) -> None:
        try:
            data = sock.recv(65536)
        except OSError:  # reset by the server
            data = b""
        if data:
            self._received[sock] += data
        else:
            self._closed(sock)

    def _closed(self, sock: socket.socket) -> None:
        self.open.remove(sock)
        self.answers.append(self._received.pop(sock))
        self.closed += 1
        sock.close()

    def close(self) -> None:
        for sock in self.open:
            sock.close()
        self.open.clear()


def address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.hostname and parts.port
    return parts.hostname, parts.port


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return fill_store(tmp_path / "arklow.db")


@pytest.fixture
def controller(tmp_path: Path, store_url: str) -> Iterator[ControllerProcess]:
    running = ControllerProcess(tmp_path, store_url, "--header-timeout", "1", "--body-timeout", "1")
    try:
        yield running
    finally:
        running.end()


def test_stalled_headers_and_bodies_are_closed_and_a_normal_client_is_answered(
    controller: ControllerProcess,
) -> None:
    url = controller.url()
    headers = Stalled(address(url), HEADERS, 300)
    bodies = Stalled(address(url), BODY, 100)
    try:
        assert loopback.get(url + "/healthz", timeout=60).status_code == 200
        eventually(lambda: all([headers.step(), bodies.step()]), "the stalled to close")
    finally:
        headers.close()
        bodies.close()
    assert headers.closed == 300 and bodies.closed == 100
    answered = [answer for answer in headers.answers + bodies.answers if answer]
    assert answered, "no stalled connection read its answer before the close"
    for answer in answered:
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
        assert b'{"error":"the request' in answer
    assert b"healthz" not in controller.err.read_bytes()  # one request, no access log
    assert controller.process.poll() is None  # still serving
    assert loopback.get(url + "/healthz", timeout=60).status_code == 200


def test_the_header_deadline_holds_for_every_request_of_a_kept_alive_connection(
    controller: ControllerProcess,
) -> None:
    """A connection that was answered once and then trickles its next request's headers is
    answered 408 and closed too: the deadline is armed again at that request's first byte."""
    url = controller.url()
    with socket.create_connection(address(url), timeout=30) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = b""
        while b'{"status":"ok"}' not in first:
            chunk = sock.recv(65536)
            assert chunk, first
            first += chunk
        assert first.startswith(b"HTTP/1.1 200 ")
        sock.sendall(HEADERS)

        def trickled_until_closed() -> bytes | None:
            try:
                sock.sendall(b"a")
            except OSError:
                return b"closed before the answer was read"
            readable, _, _ = select.select([sock], [], [], 0)
            return _read_all(sock) if readable else None

        second = eventually(trickled_until_closed, "the second request to be refused")
    assert second.startswith(b"HTTP/1.1 408 ") or second.startswith(b"closed"), second


def test_a_connection_beyond_the_cap_is_answered_503(tmp_path: Path, store_url: str) -> None:
    running = ControllerProcess(
        tmp_path, store_url, "--max-connections", "20", "--header-timeout", "600"
    )
    try:
        url = running.url()
        stalled = Stalled(address(url), HEADERS, 20)

        def refused() -> bytes | None:
            with socket.create_connection(address(url), timeout=30) as sock:
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                answer = _read_all(sock)
            return answer if answer.startswith(b"HTTP/1.1 503 ") else None

        answer = eventually(refused, "a connection beyond the cap to be answered 503")
        assert b"retry-after: 1" in answer.lower()
        assert b"limit of 20 open connections" in answer
        flood = [socket.create_connection(address(url), timeout=60) for _ in range(300)]
        try:  # beyond 64 lingering refusals, a refused connection is closed at once
            for sock in flood:
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            ends = [_ending(sock) for sock in flood]
        finally:
            for sock in flood:
                sock.close()
        assert set(ends) <= {"503", "reset"} and "503" in ends, ends
        stalled.close()  # the client side closes: the slots are freed
        eventually(
            lambda: loopback.get(url + "/healthz", timeout=60).status_code == 200,
            "a normal request to be answered once the stalled connections are gone",
        )
    finally:
        running.end()


def _ending(sock: socket.socket) -> str:
    """How the server ended a connection it refused: its 503 read, or a reset."""
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            return "still open"
        except OSError:
            return "503" if data.startswith(b"HTTP/1.1 503 ") else "reset"
        if not chunk:
            return "503" if data.startswith(b"HTTP/1.1 503 ") else f"closed after {data[:40]!r}"
        data += chunk


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except OSError:
            return data
        if not chunk:
            return data
        data += chunk


def _descriptor_limit(soft: int, hard: int) -> Callable[[], None]:
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.parametrize(("soft", "hard", "short"), [(128, 128, True), (256, 4096, False)])
def test_under_a_low_descriptor_limit_the_log_stays_bounded(
    tmp_path: Path, store_url: str, soft: int, hard: int, short: bool
) -> None:
    """300 stalled connections against a process allowed 128 descriptors: accepting fails (Too
    many open files) until the deadline closes them; the log has a few lines, no traceback, and
    a normal client is answered once descriptors are free. With a soft limit of 256 under a
    hard one of 4096 the controller raises its own limit for the cap: nothing fails."""
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    argv = [ARKLOW, "controller", "run", "--store", store_url, "--listen", "127.0.0.1:0"]
    argv += ["--header-timeout", "1"]
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen(
            argv,
            cwd=tmp_path,
            stdout=stdout,
            stderr=stderr,
            preexec_fn=_descriptor_limit(soft, hard),
        )
    try:

        def listening() -> str | None:
            assert process.poll() is None, err.read_text()
            lines = [line for line in out.read_text().splitlines() if "listening on " in line]
            return lines[0].split("listening on ")[1].split()[0] if lines else None

        url = eventually(listening, "the controller to listen")
        stalled = Stalled(address(url), HEADERS, 300)
        try:
            eventually(stalled.step, "the stalled connections to close")
        finally:
            stalled.close()
        eventually(
            lambda: _answered(url + "/healthz"),
            "a normal request to be answered once the stalled connections are gone",
        )
    finally:
        process.terminate()
        process.wait(timeout=60)
    log = err.read_text()
    if not short:  # nothing but the readiness lines (one at start, one at each change)
        others = [ln for ln in log.splitlines() if not re.search(r" (not )?ready: ", ln)]
        assert others == []
        return
    assert "Too many open files" in log
    assert "warning: --max-connections 512 does not fit under the descriptor limit of 128" in log
    assert "Traceback" not in log
    assert len(log) < 20_000, log[:2000]
    accept_lines = [line for line in log.splitlines() if "Too many open files" in line]
    assert all(line.count("\n") == 0 and len(line) < 300 for line in accept_lines)


def _answered(url: str) -> bool:
    try:
        return loopback.get(url, timeout=30).status_code == 200
    except httpx.HTTPError:
        return False
