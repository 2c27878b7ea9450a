"""Fault-test harness for controller replicas on PostgreSQL (tests/controller/test_ha_*.py).

Real pieces only: the session's PostgreSQL cluster (one fresh database per test), the project's
Compute API test server (one zonal MIG, its request log kept whole), ``arklow controller run``
subprocesses, and :class:`StoreProxy`, a TCP proxy in front of PostgreSQL that a test cuts (every
connection closed, new ones refused) and mends, to take the store away from some replicas only.

A resize in the Compute log names its epoch through its ``requestId`` (a UUID 5 of epoch, tick,
group and count, :mod:`arklow_pulumi.supply.fencing`): :meth:`Cluster.resizes` recomputes it.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
from sqlalchemy import make_url

from arklow_pulumi.devservers.compute import ComputeServer
from arklow_pulumi.store.engine import close_stores, open_store
from arklow_pulumi.supply.fencing import NAMESPACE
from tests import controller_process
from tests.controller_process import store_topology

PROJECT, ZONE, MIG = "arklow-ha", "us-central1-a", "ha-workers"
MIG_MIN, MIG_MAX = 1, 6
GROUP = f"gcp_mig:{PROJECT}/{ZONE}/{MIG}"
# Short settings keep the suite quick; the defaults (15/10/2 s, 10 s ticks) go to the soak.
TIMING = ["--lease-seconds", "2", "--renew-deadline", "1.5", "--retry-period", "0.3"]
INTERVAL = "0.3"
TOPOLOGY = {
    "destinations": [
        {"name": "ingest", "resources": ["cpu"], "lanes": [{"name": "default", "limit": 100}]}
    ],
    "pools": [
        {
            "name": "cpu-workers",
            "resource": "cpu",
            "members": ["ingest"],
            "scale_policy": {"scale_down_window_s": 0, "max_step_down": 10, "max_step_up": 10},
            "scale_targets": [
                {
                    "kind": "gcp_mig",
                    "name": MIG,
                    "project": PROJECT,
                    "zone": ZONE,
                    "min_replicas": MIG_MIN,
                    "max_replicas": MIG_MAX,
                    "units_per_replica": 4,
                }
            ],
        }
    ],
}
T = TypeVar("T")


def eventually(probe: Callable[[], T | None], what: str, deadline_s: float = 60.0) -> T:
    """:func:`tests.controller_process.eventually`, asked every 0.1 s: leadership moves fast here."""
    return controller_process.eventually(probe, what, deadline_s, every=0.1)


class StoreProxy:
    """TCP proxy to PostgreSQL: :meth:`cut` drops every connection and refuses new ones."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open = True
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.open:
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket) -> None:
        with contextlib.suppress(OSError, ValueError):
            while True:
                ready, _, _ = select.select([a, b], [], [], 1.0)
                for sock in ready:
                    data = sock.recv(65536)
                    if not data:
                        raise OSError("closed")
                    (b if sock is a else a).sendall(data)
        for sock in (a, b):
            with contextlib.suppress(OSError):
                sock.close()

    def cut(self) -> None:
        self.open = False
        with self._lock:
            conns, self._conns = self._conns, []
        for sock in conns:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
                sock.close()

    def mend(self) -> None:
        self.open = True

    def close(self) -> None:
        self._stop = True
        self.cut()
        self.listener.close()


@dataclass
class Replica:
    name: str
    process: subprocess.Popen[str]
    url: str
    log_path: Path

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=2) as answer:
            return json.loads(answer.read())

    def leader(self) -> dict[str, Any] | None:
        if not self.url:
            return None
        try:
            answer: dict[str, Any] = self.get("/v1/leader")
            return answer
        except OSError:
            return None

    def alive(self) -> bool:
        return self.process.poll() is None

    def log(self) -> str:
        return self.log_path.read_text() if self.log_path.exists() else ""


@dataclass
class Cluster:
    store_url: str
    compute: ComputeServer
    work: Path
    replicas: list[Replica] = field(default_factory=list)
    proxies: list[StoreProxy] = field(default_factory=list)
    timing: tuple[str, ...] = tuple(TIMING)
    interval: str = INTERVAL
    demand: float | None = None  # reported every 0.1 s while set (reports expire after 3 ticks)
    reported: int = 0  # acknowledged reports
    _stop: threading.Event = field(default_factory=threading.Event)

    def keep_reporting(self) -> None:
        def loop() -> None:
            while not self._stop.wait(0.1):
                if self.demand is not None:
                    self.report(self.demand)

        threading.Thread(target=loop, daemon=True).start()

    def proxied_url(self) -> tuple[str, StoreProxy]:
        url = make_url(self.store_url)
        proxy = StoreProxy((url.host or "127.0.0.1", url.port or 5432))
        self.proxies.append(proxy)
        return url.set(port=proxy.port).render_as_string(hide_password=False), proxy

    def start(
        self,
        name: str,
        *,
        store_url: str | None = None,
        env: dict[str, str] | None = None,
        wait: bool = True,
    ) -> Replica:
        """Start a replica; ``wait`` for its listening line (else it is read in the background)."""
        log_path = self.work / f"{name}.log"
        out = log_path.open("w")
        command = [
            str(Path(sys.executable).with_name("arklow")),
            "controller",
            "run",
            "--store",
            store_url or self.store_url,
            "--listen",
            "127.0.0.1:0",
            "--interval",
            self.interval,
            *self.timing,
        ]
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=out,
            text=True,
            env={
                **os.environ,
                "ARKLOW_GCP_COMPUTE_ENDPOINT": self.compute.url,
                "GOOGLE_CLOUD_PROJECT": PROJECT,
                **(env or {}),
            },
        )
        replica = Replica(name, process, "", log_path)
        listening = threading.Event()

        def read_first_line() -> None:
            assert process.stdout is not None
            first = process.stdout.readline()
            if "listening on " in first:
                replica.url = first.rsplit("listening on ", 1)[1].split()[0]
            listening.set()

        threading.Thread(target=read_first_line, daemon=True).start()
        self.replicas.append(replica)
        if wait:
            listening.wait(60)
            if not replica.url:
                pytest.fail(f"replica {name} did not start: {log_path.read_text()}")
        return replica

    def leaders(self) -> list[tuple[Replica, int]]:
        found = []
        for replica in self.replicas:
            if replica.alive():
                view = replica.leader()
                if view and view["leader"]:
                    found.append((replica, int(view["epoch"])))
        return found

    def report(self, demand: float) -> None:
        """Demand to any live replica (followers store it for the leader)."""
        body = json.dumps({"reports": [{"lane": "ingest/default", "demand": demand}]}).encode()
        for replica in self.replicas:
            if not replica.alive() or not replica.url:
                continue
            request = urllib.request.Request(
                replica.url + "/v1/demand", body, {"Content-Type": "application/json"}
            )
            with contextlib.suppress(OSError):
                urllib.request.urlopen(request, timeout=2).close()
                self.reported += 1
                return

    def resizes(self) -> list[tuple[int, int]]:
        """(epoch, size) of every resize request the Compute server received, in arrival order;
        epoch -1 for one whose requestId no epoch explains (untagged)."""
        import uuid

        from arklow_pulumi.store.runtime import load_published, read_lease

        store = open_store(self.store_url)
        epochs, published = read_lease(store).epoch, load_published(store)
        close_stores()
        ticks = 1 + (published.tick if published else 0)
        with self.compute.lock:
            entries = [e for e in self.compute.log if e["route"].endswith(".resize")]
        known = {
            str(uuid.uuid5(NAMESPACE, f"{epoch}/{tick}/{GROUP}/{size}")): epoch
            for epoch in range(1, epochs + 1)
            for tick in range(ticks + 1)
            for size in {int(e["query"]["size"]) for e in entries}
        }
        return [
            (known.get(e["query"].get("requestId", ""), -1), int(e["query"]["size"]))
            for e in entries
        ]

    def resizes_log(self) -> list[dict[str, Any]]:
        with self.compute.lock:
            return [e for e in self.compute.log if e["route"].endswith(".resize")]

    def mig_size(self) -> int:
        """The MIG's target size (asked again while the injected faults answer 429/503)."""
        path = f"/compute/v1/projects/{PROJECT}/zones/{ZONE}/instanceGroupManagers/{MIG}"
        for _ in range(50):
            try:
                with urllib.request.urlopen(self.compute.url + path, timeout=5) as answer:
                    return int(json.loads(answer.read())["targetSize"])
            except urllib.error.HTTPError:
                time.sleep(0.05)
        pytest.fail("the Compute server kept failing the size read")

    def print_logs(self, lines: int = 60) -> None:
        """The last lines of every replica's log, and the resizes the cloud received."""
        for replica in self.replicas:
            tail = replica.log().splitlines()[-lines:]
            print(f"--- replica {replica.name} (exit {replica.process.poll()}):", *tail, sep="\n")
        print("--- resizes (size, requestId):")
        for entry in self.resizes_log():
            print(entry["query"].get("size"), entry["query"].get("requestId"))

    def stop_all(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        for replica in self.replicas:
            if replica.alive():
                replica.process.terminate()
        for replica in self.replicas:
            try:
                replica.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                replica.process.kill()
                replica.process.wait()
            if replica.process.stdout is not None:
                replica.process.stdout.close()
        for proxy in self.proxies:
            proxy.close()


@contextlib.contextmanager
def ha_cluster(store_url: str, work: Path) -> Iterator[Cluster]:
    """A fresh database holding the topology, a Compute server with the MIG at size 1."""
    store_topology(store_url, TOPOLOGY)
    compute = ComputeServer(port=0, op_delay=0.01, settle_delay=0.1).start()
    compute.log = deque(maxlen=1_000_000)  # keep every request: the checks read them all
    compute.add_group({"project": PROJECT, "zone": ZONE, "name": MIG, "targetSize": 1})
    cluster = Cluster(store_url, compute, work)
    cluster.keep_reporting()
    try:
        yield cluster
    except BaseException:
        cluster.stop_all()
        with contextlib.suppress(Exception):
            cluster.print_logs()  # shown with the failure: what each replica saw
        raise
    finally:
        cluster.stop_all()
        compute.stop()
