"""A real uvicorn server on loopback, run in a thread of the test process (start, stop, restart
on the same port), for tests and benchmarks of the controller's HTTP API."""

from __future__ import annotations

import asyncio
import contextlib
import logging
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


class _Server(uvicorn.Server):
    """uvicorn's server, stopped at once rather than within a few tenths of a second: its main loop
    waits on an event :meth:`wake` sets (uvicorn's own looks at ``should_exit`` every 0.1 s), and
    its shutdown closes the listener and every connection as uvicorn's does, without the 0.1 s it
    then gives them (``stop()`` forces the exit: nothing is waited for after that pause either)."""

    _wake: asyncio.Event | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    async def main_loop(self) -> None:
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 0.1)

    def wake(self) -> None:
        if self._loop is not None and self._wake is not None:
            with contextlib.suppress(RuntimeError):  # its loop has closed: it has exited
                self._loop.call_soon_threadsafe(self._wake.set)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        logging.getLogger("uvicorn.error").info("Shutting down")
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        for server in self.servers:
            await server.wait_closed()


class UvicornThread:
    """``start()`` serves ``app`` on 127.0.0.1 (a free port, kept across restarts); ``stop()``
    closes the listener and every open connection."""

    def __init__(self, app: Any, *, access_log: bool = True, log_config: Any = None) -> None:
        self.app = app
        self.access_log = access_log
        self.log_config = log_config
        self.port = 0
        self._server: _Server | None = None
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
        server = _Server(config)
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
        server.wake()
        thread.join(timeout=10)
        self._server = self._thread = None

    def __enter__(self) -> UvicornThread:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
