"""Fixtures for the lane client: a real uvicorn server of ``build_app`` over an in-memory port,
a fake monotonic clock for the grace period, and a wait-until helper (no timing assertions)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from arklow_pulumi.controller.api.app import build_app
from arklow_pulumi.controller.api.metrics import Metrics
from tests import controller_process
from tests.memory_controller import MemoryPort
from tests.uvicorn_server import UvicornThread

LANES = ["search/interactive", "search/batch", "ads/serve"]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Controller:
    """The API on loopback; ``stop()`` kills it, ``start()`` brings it back on the same port."""

    port: MemoryPort
    server: UvicornThread

    @property
    def url(self) -> str:
        return self.server.url

    def stop(self) -> None:
        self.server.stop()

    def start(self) -> None:
        self.server.start()


@pytest.fixture
def controller() -> Iterator[Controller]:
    port = MemoryPort(LANES, interval_s=10.0)
    server = UvicornThread(build_app(port, None, Metrics()), access_log=False)
    server.start()
    try:
        yield Controller(port, server)
    finally:
        server.stop()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def hold_slots(
    lane: object, n: int, release: threading.Event, peak: list[float]
) -> list[threading.Thread]:
    """``n`` started threads, each holding one of ``lane``'s slots until ``release`` is set;
    ``peak[0]`` is the most slots held at once."""
    lock = threading.Lock()
    current = [0]

    def work() -> None:
        with lane.slot():  # type: ignore[attr-defined]
            with lock:
                current[0] += 1
                peak[0] = max(peak[0], current[0])
            release.wait()
            with lock:
                current[0] -= 1

    threads = [threading.Thread(target=work) for _ in range(n)]
    for t in threads:
        t.start()
    return threads


def eventually(condition: Callable[[], object], what: str, timeout: float = 20.0) -> None:
    """Wait until ``condition()`` holds (a correctness wait, not a timing assertion): the shared
    :func:`tests.controller_process.eventually`, asked every 0.01 s (the lane client is quick)."""
    controller_process.eventually(condition, what, timeout, every=0.01)
