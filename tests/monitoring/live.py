"""A live controller to scrape: a real ``arklow controller run`` subprocess on a SQLite store that
holds a two-pool topology, acting on the project's Compute API test server (an autoscaled MIG and
a plain one), driven over HTTP until every metric family it exports has samples: pools, lanes,
targets, scale actions, a supply error, demand reports, HTTP requests, leadership, build info.

Used by the monitoring tests (tests/monitoring/) and by ``bench/bench_prometheus.py``.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx

from arklow_pulumi.devservers.compute import ComputeServer
from arklow_pulumi.reading.parsing import parse_topology
from arklow_pulumi.reading.spec import build_topology
from arklow_pulumi.store.engine import close_stores, open_store, writing
from arklow_pulumi.store.snapshots import load_all, write_changes
from tests.e2e.pulumi_cli import ARKLOW

PROJECT, ZONE = "arklow-monitoring", "us-central1-a"
INTERVAL_S = 0.5
TOPOLOGY: dict[str, Any] = {
    "destinations": [
        {
            "name": "search",
            "resources": ["gpu"],
            "lanes": [
                {"name": "interactive", "limit": 16, "weight": 3},
                {"name": "batch", "limit": 64},
            ],
        },
        {"name": "ingest", "resources": ["cpu"], "lanes": [{"name": "default", "limit": 40}]},
    ],
    "pools": [
        {
            "name": "shared-gpu",
            "resource": "gpu",
            "members": ["search"],
            "scale_targets": [
                {
                    "kind": "gcp_mig",
                    "name": "gpu-workers",
                    "project": PROJECT,
                    "zone": ZONE,
                    "min_replicas": 1,
                    "max_replicas": 3,
                    "units_per_replica": 8,
                }
            ],
        },
        {
            "name": "cpu-workers",
            "resource": "cpu",
            "members": ["ingest"],
            "scale_targets": [
                {
                    "kind": "gcp_mig",
                    "name": "cpu-workers",
                    "project": PROJECT,
                    "zone": ZONE,
                    "min_replicas": 1,
                    "max_replicas": 4,
                    "units_per_replica": 4,
                }
            ],
        },
    ],
}
# Demand the three lanes keep reporting: both pools want more than their targets' max.
DEMAND = {"search/interactive": 16.0, "search/batch": 40.0, "ingest/default": 30.0}
# Families that have samples only once something happened; the scrape waits for each.
EVENTS = (
    "arklow_scale_actions_total",
    "arklow_supply_api_errors_total",
    "arklow_demand_reports_total",
    "arklow_http_requests_total",
    "arklow_target_desired_replicas",
)
T = TypeVar("T")


def eventually(probe: Callable[[], T | None], what: str, deadline_s: float = 120.0) -> T:
    end = time.monotonic() + deadline_s
    while True:
        answer = probe()
        if answer:
            return answer
        if time.monotonic() > end:
            raise TimeoutError(f"gave up waiting for {what} (last answer {answer!r})")
        time.sleep(0.2)


@dataclass
class LiveController:
    url: str
    compute: ComputeServer
    process: subprocess.Popen[bytes]
    err: Path

    def scrape(self) -> str:
        answer = httpx.get(f"{self.url}/metrics", timeout=30)
        answer.raise_for_status()
        return answer.text

    def report(self) -> None:
        reports = [{"lane": lane, "demand": value} for lane, value in DEMAND.items()]
        httpx.post(f"{self.url}/v1/demand", json={"reports": reports}, timeout=30)


def _write_topology(store_url: str) -> None:
    store = open_store(store_url)
    try:
        with writing(store) as conn:
            write_changes(conn, load_all(conn), build_topology(parse_topology(TOPOLOGY)))
    finally:
        close_stores()


@contextmanager
def live_controller(work: Path) -> Iterator[LiveController]:
    """The controller running, every family of its scrape populated; stopped on exit."""
    compute = ComputeServer(port=0, op_delay=0.02, settle_delay=0.2).start()
    process = None
    try:
        compute.add_group(
            {
                "project": PROJECT,
                "zone": ZONE,
                "name": "gpu-workers",
                "targetSize": 1,
                "autoscaler": {"min": 1, "max": 3},
            }
        )
        compute.add_group(
            {"project": PROJECT, "zone": ZONE, "name": "cpu-workers", "targetSize": 1}
        )
        # The first resize of the plain MIG is refused once: a supply error to count.
        compute.set_faults(
            {"scripted": [{"method": "POST", "path": "resize", "code": 400, "count": 1}]}
        )
        work.mkdir(parents=True, exist_ok=True)
        store_url = f"sqlite:///{work / 'arklow.db'}"
        _write_topology(store_url)
        out, err = work / "out.txt", work / "err.txt"
        env = {**os.environ, "ARKLOW_GCP_COMPUTE_ENDPOINT": compute.url}
        argv = [str(ARKLOW), "controller", "run", "--store", store_url]
        argv += ["--listen", "127.0.0.1:0", "--interval", str(INTERVAL_S)]
        with out.open("w") as out_file, err.open("w") as err_file:
            process = subprocess.Popen(argv, cwd=work, env=env, stdout=out_file, stderr=err_file)

        def listening() -> str | None:
            if process.poll() is not None:
                raise RuntimeError(f"controller exited {process.returncode}: {err.read_text()}")
            for line in out.read_text().splitlines():
                if "listening on " in line:
                    return line.split("listening on ")[1].split()[0]
            return None

        live = LiveController(
            eventually(listening, "the controller to listen"), compute, process, err
        )

        def populated() -> bool:
            live.report()  # lanes keep reporting, as the lane client does
            text = live.scrape()
            return all(f"\n{name}{{" in text for name in EVENTS)

        eventually(populated, "every metric family to have samples")
        yield live
    finally:
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        compute.stop()
