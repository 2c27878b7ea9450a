"""The controller process end to end: a topology put in the store by a real ``pulumi up``, a real
``arklow controller run`` subprocess, a moto server (Auto Scaling) and the project's Compute API
test server (a zonal MIG). Demand posted over HTTP resizes both groups within their bounds; a
second controller on the same SQLite file refuses to start; after ``kill -9`` a restarted
controller continues from the store and converges again.

Waits poll the observable state with a generous deadline; nothing asserts on timing.
"""

from __future__ import annotations

import json
import os
import signal
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import aws_moto, loopback
from tests.builders import search_and_ingest, target
from tests.controller_process import ControllerProcess, eventually
from tests.e2e.pulumi_cli import MISSING_ENGINE, Stack, engine_available, write_project

pytestmark = pytest.mark.e2e

PROJECT, ZONE = "arklow-test", "us-central1-a"
ASG_MAX, MIG_MAX = 6, 5
TOPOLOGY = search_and_ingest(
    target("gpu-workers", 1, ASG_MAX, 8, region=aws_moto.REGION),
    target("cpu-workers", 1, MIG_MAX, 4, kind="gcp_mig", project=PROJECT, zone=ZONE),
    ingest_limit=100,
)


@dataclass
class Clouds:
    moto_url: str
    compute: Any
    asg: Any  # raw boto3 client, to arrange and read state

    def asg_desired(self) -> int:
        group = self.asg.describe_auto_scaling_groups(AutoScalingGroupNames=["gpu-workers"])
        return int(group["AutoScalingGroups"][0]["DesiredCapacity"])

    def set_asg_desired(self, count: int) -> None:
        self.asg.set_desired_capacity(AutoScalingGroupName="gpu-workers", DesiredCapacity=count)

    def mig_size(self) -> int:
        path = f"/compute/v1/projects/{PROJECT}/zones/{ZONE}/instanceGroupManagers/cpu-workers"
        with urllib.request.urlopen(self.compute.url + path) as answer:
            return int(json.loads(answer.read())["targetSize"])


@pytest.fixture(scope="module")
def clouds() -> Iterator[Clouds]:
    from arklow_pulumi.devservers.compute import ComputeServer

    server, url = aws_moto.start_server()
    compute = ComputeServer(port=0, op_delay=0.02, settle_delay=0.2).start()
    try:
        client = aws_moto.autoscaling_client(url)
        aws_moto.make_asg(client, "gpu-workers", 0, 20, 1)
        compute.add_group(
            {"project": PROJECT, "zone": ZONE, "name": "cpu-workers", "targetSize": 1}
        )
        yield Clouds(url, compute, client)
    finally:
        compute.stop()
        server.stop()


@pytest.fixture(scope="module")
def stack(clouds: Clouds, tmp_path_factory: pytest.TempPathFactory) -> Stack:
    if not engine_available():
        if os.environ.get("ARKLOW_SKIP_E2E") == "1":
            pytest.skip("ARKLOW_SKIP_E2E=1: " + MISSING_ENGINE)
        pytest.fail(MISSING_ENGINE, pytrace=False)
    work = tmp_path_factory.mktemp("controller-e2e")
    env = {**aws_moto.aws_env(clouds.moto_url), "ARKLOW_GCP_COMPUTE_ENDPOINT": clouds.compute.url}
    made = Stack(write_project(work / "project"), work, env=env)
    made.env.pop("AWS_PROFILE", None)
    made.set_topology(TOPOLOGY)
    made.init()
    made.up()
    return made


def controller(stack: Stack, work: Path, *extra: str) -> ControllerProcess:
    """``arklow controller run`` on the stack's store, in its project with its environment."""
    return ControllerProcess(work, stack.store_url, *extra, env=stack.env, cwd=stack.project)


def report(api: httpx.Client, demand: Mapping[str, float]) -> httpx.Response:
    reports = [{"lane": lane, "demand": value} for lane, value in demand.items()]
    answer = api.post("/v1/demand", json={"reports": reports})
    answer.raise_for_status()
    return answer


@pytest.fixture
def controller_dir(tmp_path: Path) -> Callable[[str], Path]:
    def make(name: str) -> Path:
        path = tmp_path / name
        path.mkdir()
        return path

    return make


def test_demand_in_admission_out_groups_resized_within_bounds(
    stack: Stack, clouds: Clouds, controller_dir: Callable[[str], Path]
) -> None:
    first = controller(stack, controller_dir("first"))
    try:
        api = loopback.client(base_url=first.url(), timeout=30)
        assert api.get("/healthz").status_code == 200
        assert api.get("/v1/leader").json() == {
            "leader": True,
            "holder": api.get("/v1/leader").json()["holder"],
            "epoch": 1,
        }
        # Admission is served once the first tick is published (SDK imports make it the slowest).
        eventually(lambda: api.get("/v1/admission").status_code == 200, "the first tick")
        demand = {"search/batch": 60, "ingest/default": 30}
        posted = report(api, demand)
        assert posted.status_code == 200 and posted.json() == {"accepted": 2}

        seen_asg: list[int] = []

        def asg_at_max() -> bool:
            report(api, demand)  # lanes keep reporting, as the lane client does
            seen_asg.append(clouds.asg_desired())
            return seen_asg[-1] == ASG_MAX

        eventually(asg_at_max, "the ASG to reach its max")  # 66 units / 8 → 9, bounded by 6
        eventually(
            lambda: report(api, demand) and clouds.mig_size() == MIG_MAX, "the MIG at its max"
        )
        assert max(seen_asg) <= ASG_MAX

        def admitted() -> dict[str, Any] | None:
            report(api, demand)
            doc = api.get("/v1/admission").json()
            batch = doc["lanes"]["search/batch"]
            return doc if batch["demand"] == 60 and batch["allocation"] > 8 else None

        admission = eventually(admitted, "admission to follow the new capacity")
        assert admission["stale"] is False
        pools = api.get("/v1/pools").json()["pools"]
        target = pools["shared-gpu"]["targets"]["gpu-workers"]
        assert (target["min"], target["max"]) == (1, ASG_MAX) and target["desired"] == ASG_MAX

        # A second controller on the same SQLite file refuses to start, with one line.
        second = stack.arklow(
            "controller", "run", "--store", stack.store_url, "--listen", "127.0.0.1:0"
        )
        assert second.returncode == 2
        assert second.stdout == ""
        assert second.stderr.count("\n") == 1 and "already running" in second.stderr

        # kill -9: no graceful release of anything.
        last_tick = api.get("/v1/admission").json()["tick"]
        first.stop(signal.SIGKILL)
    finally:
        if first.process.poll() is None:
            first.process.kill()
            first.process.wait(timeout=60)

    clouds.set_asg_desired(3)  # drift while no controller runs
    again = controller(stack, controller_dir("again"))
    try:
        api = loopback.client(base_url=again.url(), timeout=30)
        # It serves the last published tick from the store at once, and numbers on from it.
        assert api.get("/v1/admission").json()["tick"] >= last_tick
        eventually(
            lambda: report(api, {"search/batch": 60}) and clouds.asg_desired() == ASG_MAX,
            "the restarted controller to converge",
        )
        assert api.get("/v1/admission").json()["tick"] > last_tick
        assert again.stop() == 0  # SIGTERM: graceful
    finally:
        if again.process.poll() is None:
            again.process.kill()
            again.process.wait(timeout=60)
    assert "Traceback" not in again.err.read_text()


def test_plan_prints_the_decision_and_changes_nothing(stack: Stack, clouds: Clouds) -> None:
    from arklow_pulumi.store.engine import close_stores, open_store
    from arklow_pulumi.store.runtime import load_snapshot, read_lease

    clouds.set_asg_desired(9)  # above the target's max: the decision brings it back within bounds
    store = open_store(stack.store_url, read_only=True)
    before = (load_snapshot(store, 0), read_lease(store))
    result = stack.arklow(
        "controller", "plan", "--store", stack.store_url, "--format", "json", timeout=300
    )
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    change = next(c for c in plan["changes"] if c["target"] == "gpu-workers")
    assert change["previous"] == 9 and 1 <= change["desired"] <= ASG_MAX
    target = plan["pools"]["shared-gpu"]["targets"]["gpu-workers"]
    assert target["desired"] == change["desired"]
    assert set(plan["lanes"]) == {"search/interactive", "search/batch", "ingest/default"}
    assert clouds.asg_desired() == 9  # no write call to the cloud
    after = (load_snapshot(store, 0), read_lease(store))
    assert after[0] == before[0]  # nor to the store
    assert (after[1].holder, after[1].epoch) == (before[1].holder, before[1].epoch)
    close_stores()


def test_without_tokens_only_loopback_is_served(stack: Stack) -> None:
    result = stack.arklow("controller", "run", "--store", stack.store_url, "--listen", "0.0.0.0:0")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "loopback" in result.stderr


def test_a_web_page_can_neither_drive_nor_read_the_controller(
    stack: Stack, clouds: Clouds, controller_dir: Callable[[str], Path]
) -> None:
    """The default no-token mode: a cross-origin "simple" POST (text/plain) and a rebound Host
    name are refused before any handler, so the demand they carry is never stored; a name given
    with --allowed-host is answered."""
    running = controller(stack, controller_dir("guarded"), "--allowed-host", "arklow.lan")
    try:
        url = running.url()
        api = loopback.client(base_url=url, timeout=30)
        eventually(lambda: api.get("/v1/admission").status_code == 200, "the first tick")
        report(api, {"search/batch": 1})
        body = b'{"reports": [{"lane": "search/batch", "demand": 60}]}'
        evil = {"Content-Type": "text/plain", "Origin": "http://evil.example"}
        assert api.post("/v1/demand", content=body, headers=evil).status_code == 403
        plain = {"Content-Type": "text/plain"}
        assert api.post("/v1/demand", content=body, headers=plain).status_code == 415
        rebound = {"Host": "rebind.evil.example", "Content-Type": "application/json"}
        assert api.post("/v1/demand", content=body, headers=rebound).status_code == 421
        assert api.get("/v1/admission", headers={"Host": "rebind.evil.example"}).status_code == 421
        allowed = api.get("/v1/admission", headers={"Host": "arklow.lan:8470"})
        assert allowed.status_code == 200
        tick = allowed.json()["tick"]
        doc = eventually(
            lambda: (d := api.get("/v1/admission").json())["tick"] >= tick + 2 and d,
            "two more ticks",
        )
        assert doc["lanes"]["search/batch"]["demand"] == 1  # the refused 60 never arrived
    finally:
        if running.process.poll() is None:
            running.stop()
