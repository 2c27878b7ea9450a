"""The lane client against the real ``arklow controller run`` process, killed (SIGKILL) and
restarted on the same port: the client keeps the last admission through the grace period, then
falls back to its floor, and follows the controller again once it is back.

The topology (one destination in its standalone pool, static capacity, no scale target, so no
cloud is needed) is written with the store service, as ``pulumi up`` would. Waits poll observable
state; the grace period runs on a fake clock; nothing asserts on timing.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from arklow_pulumi.client import Client
from arklow_pulumi.core.topology import Destination, Lane
from arklow_pulumi.store import open_store
from arklow_pulumi.store import service as svc
from tests.client.conftest import FakeClock, eventually, hold_slots

ARKLOW = Path(sys.executable).parent / "arklow"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ControllerProcess:
    def __init__(self, store_url: str, port: int, work: Path) -> None:
        self.argv = [str(ARKLOW), "controller", "run", "--store", store_url]
        self.argv += ["--listen", f"127.0.0.1:{port}", "--interval", "0.5"]
        self.work = work
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        out = self.work / f"out{self.starts}.txt"
        err = self.work / f"err{self.starts}.txt"
        with out.open("w") as o, err.open("w") as e:
            self.process = subprocess.Popen(self.argv, cwd=self.work, stdout=o, stderr=e)

        def listening() -> bool:
            assert self.process is not None
            if self.process.poll() is not None:
                pytest.fail(f"controller exited {self.process.returncode}: {err.read_text()}")
            return "listening on" in out.read_text()

        eventually(listening, "the controller to listen", timeout=120)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=60)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def controller(tmp_path: Path) -> Iterator[tuple[ControllerProcess, str]]:
    url = f"sqlite:///{tmp_path / 'arklow.db'}"
    store = open_store(url)
    lanes = (Lane("search", "batch", limit=8), Lane("search", "interactive", limit=4))
    svc.create_destination(store, Destination("search", ("gpu",), lanes, {"gpu": 6.0}))
    port = free_port()
    process = ControllerProcess(url, port, tmp_path)
    process.start()
    try:
        yield process, f"http://127.0.0.1:{port}"
    finally:
        process.stop()


def test_killed_and_restarted_controller(controller: tuple[ControllerProcess, str]) -> None:
    process, url = controller
    clock = FakeClock()
    with Client(url, interval=0.1, grace_s=60, clock=clock) as client:
        lane = client.lane("search/batch", limit=8, floor=1)
        lane.report(10)
        # search/batch alone on 6 units of static capacity: admission 6, under the limit of 8
        eventually(lambda: lane.mode == "controller" and lane.admission == 6.0, "admission 6")

        release = threading.Event()
        peak = [0.0]
        threads = hold_slots(lane, 9, release, peak)
        eventually(lambda: lane.in_use == 6, "six slots held")

        process.kill()
        eventually(lambda: client.reachable is False, "the client to notice the controller gone")
        assert (lane.mode, lane.admission) == ("grace", 6.0)
        clock.advance(61)
        eventually(lambda: lane.mode == "floor", "the floor after the grace period")
        assert lane.admission == 1.0
        release.set()  # the six finish; the three waiting get at most the floor, one at a time
        eventually(lambda: lane.in_use <= 1 and lane._gate.waiting <= 2, "back under the floor")

        process.start()
        eventually(lambda: lane.mode == "controller" and lane.admission == 6.0, "admission again")
        for t in threads:
            t.join(timeout=60)
        assert peak[0] == 6
        assert lane.refused is None
