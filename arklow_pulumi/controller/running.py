"""The controller process: a few named tasks composed in one place.

- **leadership** first (:mod:`.leasing`): on SQLite, an exclusive lock beside the database and
  the lease at epoch 1; a second controller refuses to start with one line. On PostgreSQL every
  process is a replica: an :class:`~.electing.Elector` thread takes or renews the lease, the tick
  loop (:func:`.replicas.run_replica_loop`) leads or stands by, and a standby serves the last
  published tick and stores demand reports (docs/controller-ha.md);
- **tick loop** (:func:`.ticking.run_loop`) in a worker thread: store and cloud clients are
  blocking; the loop stops between ticks, never in the middle of one;
- **HTTP API** (H5's :func:`.api.build_app`) on uvicorn, on a socket bound here first, so a port
  in use is one clear line and ``--listen 127.0.0.1:0`` works (the chosen address is printed);
- **signals**: SIGTERM and SIGINT stop both tasks gracefully (the tick in progress finishes, the
  lease is released, the lock file unlocked); uvicorn's own signal capture is switched off.

If either task ends (the API cannot serve, the lease was lost), the other is stopped and the
process exits non-zero.
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
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn

from arklow_pulumi import settings
from arklow_pulumi.controller.auth import TokenSet, is_loopback
from arklow_pulumi.controller.electing import Elector, LeaseTiming
from arklow_pulumi.controller.leasing import LEASE_TTL_S, holder_id, take_leadership
from arklow_pulumi.controller.ticking import Controller, TickSettings, run_loop
from arklow_pulumi.core.errors import ArklowError, InvalidInput
from arklow_pulumi.store.engine import Store, open_store
from arklow_pulumi.supply.routing import SupplyRouter

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


def supply_router() -> SupplyRouter:
    """Every target kind's binding behind one router, endpoints from the environment."""
    from arklow_pulumi.supply.routing import router_from_env

    return router_from_env()


def run(options: RunOptions) -> int:
    _configure_logging()
    options.timing.check()
    tokens = TokenSet.load(options.tokens_file) if options.tokens_file else None
    check_listen(options.host, tokens)
    store = open_store(options.store_url)
    if store.dialect == "postgresql":
        return _serve_replica(options, store, tokens, _bind(options.host, options.port))
    leadership = take_leadership(store, max(LEASE_TTL_S, 3 * options.interval_s))
    try:
        listener = _bind(options.host, options.port)
        return _serve(options, store, leadership.lease, tokens, listener)
    finally:
        leadership.release()


def _serve(
    options: RunOptions,
    store: Store,
    lease: Any,
    tokens: TokenSet | None,
    listener: socket.socket,
) -> int:
    from arklow_pulumi.controller.api import build_app
    from arklow_pulumi.controller.metrics import Metrics

    metrics = Metrics()
    settings = TickSettings(
        interval_s=options.interval_s, dry_run=options.dry_run, settle_heap=True
    )
    controller = Controller(
        store, supply_router(), lease, settings=settings, observer=metrics, say=_say
    )
    controller.restore()
    metrics.leadership(True, lease.epoch, 0.0)
    app = build_app(controller, tokens, metrics)
    host, port = listener.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    _say(
        f"arklow controller: store {store.display_url}, epoch {lease.epoch}, "
        f"listening on http://{shown}:{port}" + (" (dry run: no resize)" if options.dry_run else "")
    )
    return asyncio.run(_tasks(lambda wait: run_loop(controller, wait), app, listener))


def _serve_replica(
    options: RunOptions, store: Store, tokens: TokenSet | None, listener: socket.socket
) -> int:
    from arklow_pulumi.controller.api import build_app
    from arklow_pulumi.controller.metrics import Metrics
    from arklow_pulumi.controller.replicas import run_replica_loop

    metrics = Metrics()
    settings = TickSettings(
        interval_s=options.interval_s, dry_run=options.dry_run, settle_heap=True
    )
    offset = float(os.environ.get(CLOCK_OFFSET_ENV) or 0.0)
    controller = Controller(
        store,
        supply_router(),
        None,
        settings=settings,
        clock=OffsetClock(offset) if offset else None,
        observer=metrics,
        say=_say,
    )
    elector = Elector(
        store,
        holder_id(),
        options.timing,
        on_started=lambda lease: None,  # the tick loop reloads the state, then leads
        on_stopped=controller.step_down,
        observer=metrics,
    )
    controller.elector = elector
    metrics.leadership(False, 0, None)
    app = build_app(controller, tokens, metrics)
    host, port = listener.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    _say(
        f"arklow controller: store {store.display_url}, replica {elector.holder}, "
        f"listening on http://{shown}:{port}" + (" (dry run: no resize)" if options.dry_run else "")
    )
    return asyncio.run(
        _tasks(lambda wait: run_replica_loop(controller, elector, wait), app, listener, elector)
    )


async def _tasks(
    loop_fn: Callable[[Callable[[float], bool]], None],
    app: Any,
    listener: socket.socket,
    elector: Elector | None = None,
) -> int:
    stop = threading.Event()
    server = _Server(uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False))
    loop = asyncio.get_running_loop()

    def shutdown() -> None:
        stop.set()
        server.should_exit = True

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, shutdown)
    ticking = asyncio.create_task(asyncio.to_thread(loop_fn, stop.wait), name="tick")
    serving = asyncio.create_task(server.serve(sockets=[listener]), name="api")
    tasks = {ticking, serving}
    if elector is not None:
        tasks.add(asyncio.create_task(asyncio.to_thread(elector.run, stop), name="lease"))
    done, _pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    graceful = stop.is_set()
    shutdown()
    await asyncio.gather(*tasks, return_exceptions=True)
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
