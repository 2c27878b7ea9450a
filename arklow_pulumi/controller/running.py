"""The controller process: three named tasks composed in one place, for either store.

- **the lease keeper** (an :class:`~.ports.Elector`): on SQLite the lock file beside the database,
  taken before anything else (a second controller refuses to start with one line), leading at
  epoch 1 for the life of the process (:mod:`.leadership.leasing`); on PostgreSQL a replica in the
  lease election (:mod:`.leadership.electing`, docs/controller-ha.md);
- **the loop** (:class:`.leadership.looping.Loop`), in a worker thread (store and cloud clients are
  blocking): the elector's ``started`` starts the one tick loop under the lease, ``stopped``
  cancels it; a process standing by serves the last published tick and stores demand reports;
- **the HTTP API** (:func:`.api.app.build_app`) on uvicorn, on a socket bound here first, so a port
  in use is one clear line and ``--listen 127.0.0.1:0`` works (the chosen address is printed);
  its connections are held to the deadlines and the cap of :mod:`.api.connections`.

SIGTERM and SIGINT stop them gracefully: the loop after the tick in progress, the server, then
the lease keeper gives the lease up (and the lock file); uvicorn's own signal capture is switched
off. If a task ends on its own (the API cannot serve, SQLite's lease was taken), the others are
stopped and the process exits non-zero.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn

from arklow_pulumi import settings
from arklow_pulumi.controller.api.auth import TokenSet, is_loopback
from arklow_pulumi.controller.api.connections import (
    ConnectionLimits,
    fit_descriptor_limit,
    hold_logs_to_account,
    server_config,
)
from arklow_pulumi.controller.api.metrics import Metrics
from arklow_pulumi.controller.leadership.electing import LeaseElector, LeaseTiming
from arklow_pulumi.controller.leadership.leasing import holder_id, take_leadership
from arklow_pulumi.controller.leadership.looping import Loop
from arklow_pulumi.controller.ports import Elector
from arklow_pulumi.controller.tick.ticking import Controller, TickSettings
from arklow_pulumi.core.errors import ArklowError, InvalidInput
from arklow_pulumi.store.engine import Store, open_store
from arklow_pulumi.supply.routing import router_from_env

log = logging.getLogger("arklow.controller")


@dataclass(frozen=True, slots=True)
class RunOptions:
    store_url: str
    host: str = "127.0.0.1"
    port: int = 8470
    interval_s: float = 10.0
    tokens_file: Path | None = None
    dry_run: bool = False
    timing: LeaseTiming = field(default_factory=LeaseTiming)
    allowed_hosts: tuple[str, ...] = ()  # Host names answered beside the listen address
    limits: ConnectionLimits = field(default_factory=ConnectionLimits)  # the API's connections


CLOCK_OFFSET_ENV = settings.CLOCK_OFFSET_ENV.name  # test-only: this replica's clock, shifted


class OffsetClock:
    """The system clock with its wall time shifted (the clock-jump fault test); monotonic time
    and the lease (judged by the database clock) are unaffected."""

    def __init__(self, offset_s: float) -> None:
        self.offset_s = offset_s

    def time(self) -> float:
        return time.time() + self.offset_s

    def monotonic(self) -> float:
        return time.monotonic()


def parse_listen(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6)."""
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise InvalidInput.one("option --listen", "listen", f"expected HOST:PORT, got {value!r}")
    return host.strip("[]"), int(port)


def check_listen(host: str, tokens: TokenSet | None) -> None:
    if tokens is None and not is_loopback(host):
        raise InvalidInput.one(
            "option --listen",
            "listen",
            f"{host} is not a loopback address: without --tokens the controller listens on "
            "loopback only",
        )


def run(options: RunOptions) -> int:
    _configure_logging()
    options.timing.check()
    options.limits.check()
    if shortfall := fit_descriptor_limit(options.limits):
        _say(shortfall, err=True)
    tokens = TokenSet.load(options.tokens_file) if options.tokens_file else None
    check_listen(options.host, tokens)
    store = open_store(options.store_url, directories=False)  # a missing directory is named
    metrics = Metrics(interval_s=options.interval_s)
    elector = _elector(store, options.timing, metrics)  # SQLite: a second process stops here
    try:
        listener = _bind(options.host, options.port)
        return _serve(options, store, elector, metrics, tokens, listener)
    finally:
        elector.release()


def _elector(store: Store, timing: LeaseTiming, metrics: Metrics) -> Elector:
    """SQLite: the lock file, leading at epoch 1 (or :class:`AlreadyRunning`); PostgreSQL: a
    replica in the lease election."""
    if store.dialect == "sqlite":
        return take_leadership(store, observer=metrics)
    return LeaseElector(store, holder_id(), timing, observer=metrics)


def _serve(
    options: RunOptions,
    store: Store,
    elector: Elector,
    metrics: Metrics,
    tokens: TokenSet | None,
    listener: socket.socket,
) -> int:
    from arklow_pulumi.controller.api.app import build_app
    from arklow_pulumi.controller.api.guarding import allowed_hosts

    settings = TickSettings(
        interval_s=options.interval_s, dry_run=options.dry_run, settle_heap=True
    )
    offset = float(os.environ.get(CLOCK_OFFSET_ENV) or 0.0)
    controller = Controller(
        store,
        router_from_env(),
        None,
        settings=settings,
        clock=OffsetClock(offset) if offset else None,
        observer=metrics,
        say=_say,
        elector=elector,
    )
    controller.restore()  # the last published tick is served from the first request on
    metrics.serving(controller.latest)
    loop = Loop(controller, elector.lost)
    hosts = allowed_hosts(options.host, options.allowed_hosts)
    app = build_app(controller, tokens, metrics, hosts=hosts)
    host, port = listener.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    lease = elector.leading()
    who = f"epoch {lease.epoch}" if lease is not None else f"replica {elector.holder}"
    _say(
        f"arklow controller: store {store.display_url}, {who}, "
        f"listening on http://{shown}:{port}" + (" (dry run: no resize)" if options.dry_run else "")
    )
    return asyncio.run(_tasks(app, listener, elector, loop, options.limits))


async def _tasks(
    app: Any, listener: socket.socket, elector: Elector, loop: Loop, limits: ConnectionLimits
) -> int:
    """The API server, the lease keeper and the loop, each a named task. A signal stops the
    loop (after the tick in progress) and the server; the lease keeper then gives the lease up.
    A task that ends on its own (the API cannot serve, SQLite's lease was taken) stops the
    others, and the process exits 1."""
    server = _Server(server_config(app, limits))
    hold_logs_to_account(asyncio.get_running_loop(), log)
    lease_stop = threading.Event()
    signalled = threading.Event()

    def shutdown() -> None:
        loop.stop()
        server.should_exit = True

    def on_signal() -> None:
        signalled.set()
        shutdown()

    events = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        events.add_signal_handler(sig, on_signal)
    tasks = {
        asyncio.create_task(server.serve(sockets=[listener]), name="api"),
        asyncio.create_task(
            asyncio.to_thread(elector.run, lease_stop, loop.callbacks), name="lease"
        ),
        asyncio.create_task(asyncio.to_thread(loop.run), name="loop"),
    }
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    graceful = signalled.is_set()
    shutdown()
    keeper = next(task for task in tasks if task.get_name() == "lease")
    await asyncio.gather(*(pending - {keeper}), return_exceptions=True)
    lease_stop.set()  # the loop has stopped: give the lease up
    await asyncio.gather(keeper, return_exceptions=True)
    for task in done:
        error = task.exception()
        if error is not None and not graceful:
            _say(f"error: {task.get_name()}: {_one_line(error)}", err=True)
            return 1
    return 0 if graceful else 1


class _Server(uvicorn.Server):
    """uvicorn without its own signal handling: the process installs one handler for both tasks."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted connections only when the
    # socket says it is TCP (proto 0 does not); without it every answer written in two parts
    # waits ~40 ms for a delayed ACK (see bench/RESULTS-ingest.md).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InvalidInput.one(
            "option --listen", "listen", f"cannot listen on {host}:{port}: {exc.strerror}"
        ) from None
    sock.listen(128)
    sock.set_inheritable(False)
    return sock


def _configure_logging() -> None:
    """The controller's own log (scale actions, overruns, failures) on stderr, one line each;
    libraries stay at warnings."""
    if log.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False


def _one_line(error: BaseException) -> str:
    if isinstance(error, ArklowError):
        return str(error).splitlines()[0]
    return f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"


def _say(line: str, err: bool = False) -> None:
    stream = sys.stderr if err else sys.stdout
    print(line, file=stream, flush=True)
