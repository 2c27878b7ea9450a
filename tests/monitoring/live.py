"""A live controller to scrape: a real ``arklow controller run`` subprocess on a SQLite store that
holds a two-pool topology, acting on the project's Compute API test server (an autoscaled MIG and
a plain one), driven over HTTP until every metric family it exports has samples: pools, lanes,
targets, scale actions, a supply error, demand reports, HTTP requests, leadership, build info.

Used by the monitoring tests (tests/monitoring/) and by ``bench/bench_prometheus.py``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arklow_pulumi.devservers.compute import ComputeServer
from tests import loopback
from tests.builders import search_and_ingest, target
from tests.controller_process import ControllerProcess, eventually, store_topology

PROJECT, ZONE = "arklow-monitoring", "us-central1-a"
INTERVAL_S = 0.5
TOPOLOGY: dict[str, Any] = search_and_ingest(
    target("gpu-workers", 1, 3, 8, kind="gcp_mig", project=PROJECT, zone=ZONE),
    target("cpu-workers", 1, 4, 4, kind="gcp_mig", project=PROJECT, zone=ZONE),
    ingest_limit=40,
)
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


@dataclass
class LiveController:
    url: str
    compute: ComputeServer
    process: subprocess.Popen[bytes]
    err: Path

    def scrape(self) -> str:
        answer = loopback.get(f"{self.url}/metrics", timeout=30)
        answer.raise_for_status()
        return answer.text

    def report(self) -> None:
        reports = [{"lane": lane, "demand": value} for lane, value in DEMAND.items()]
        loopback.post(f"{self.url}/v1/demand", json={"reports": reports}, timeout=30)


@contextmanager
def live_controller(work: Path) -> Iterator[LiveController]:
    """The controller running, every family of its scrape populated; stopped on exit."""
    compute = ComputeServer(port=0, op_delay=0.02, settle_delay=0.2).start()
    running = None
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
        store_url = store_topology(f"sqlite:///{work / 'arklow.db'}", TOPOLOGY)
        env = {**os.environ, "ARKLOW_GCP_COMPUTE_ENDPOINT": compute.url}
        running = ControllerProcess(work, store_url, interval=INTERVAL_S, env=env)
        live = LiveController(running.url(), compute, running.process, running.err)

        def populated() -> bool:
            live.report()  # lanes keep reporting, as the lane client does
            text = live.scrape()
            return all(f"\n{name}{{" in text for name in EVENTS)

        eventually(populated, "every metric family to have samples")
        yield live
    finally:
        if running is not None:
            running.end()
        compute.stop()
