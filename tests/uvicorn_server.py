"""A real uvicorn server on loopback, run in a thread of the test process (start, stop, restart
on the same port), for tests and benchmarks of the controller's HTTP API."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn


def _bind(port: int) -> socket.socket:
    # proto IPPROTO_TCP, or asyncio leaves Nagle on (40 ms delayed-ACK stalls per answer)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.set_inheritable(True)
    return sock


class UvicornThread:
    """``start()`` serves ``app`` on 127.0.0.1 (a free port, kept across restarts); ``stop()``
    closes the listener and every open connection."""

    def __init__(self, app: Any, *, access_log: bool = True, log_config: Any = None) -> None:
        self.app = app
        self.access_log = access_log
        self.log_config = log_config
        self.port = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> str:
        sock = _bind(self.port)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            lifespan="off",
            access_log=self.access_log,
            log_config=self.log_config,
            log_level="info",
            timeout_graceful_shutdown=1,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        self._server, self._thread = server, thread
        return self.url

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        server.should_exit = True
        server.force_exit = True
        thread.join(timeout=10)
        self._server = self._thread = None

    def __enter__(self) -> UvicornThread:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
