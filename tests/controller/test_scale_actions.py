"""``arklow_scale_actions_total`` from real ticks against the project's Compute API test server:
the direction of a write is the value written against the value it replaces at that place (an
autoscaled MIG's autoscaler minimum), never the group's size; series are ``{pool, target}``."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from arklow_pulumi.controller.api.metrics import Metrics
from arklow_pulumi.devservers.compute import ComputeServer
from arklow_pulumi.store.engine import Store
from arklow_pulumi.store.runtime import Lease
from arklow_pulumi.supply.gcp import GcpMigSupply
from arklow_pulumi.supply.retrying import RetryPolicy
from arklow_pulumi.supply.routing import SupplyRouter
from tests.builders import dest, lane, pool, target, topo
from tests.controller.conftest import FakeClock, make_controller, put_topology

P, Z = "demo-project", "us-central1-a"


@pytest.fixture
def compute(compute_server: ComputeServer) -> ComputeServer:
    compute_server.reset()
    return compute_server


def pinned_at_four(name: str) -> dict[str, Any]:
    """A MIG target whose bounds are [4, 4]: every tick decides 4, whatever the demand."""
    return {**target(name, 4, 4, 8, 4, kind="gcp_mig"), "project": P, "zone": Z}


def samples(metrics: Metrics, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {
        tuple(sorted(s.labels.items())): s.value
        for family in text_string_to_metric_families(metrics.render().decode())
        for s in family.samples
        if s.name == name
    }


def autoscaler_patches(server: ComputeServer) -> list[Any]:
    return [
        e["body"]["autoscalingPolicy"]
        for e in server.call_report()["log"]
        if e["route"] == "PATCH autoscalers.patch"
    ]


# (group size, autoscaler window before) -> direction of the write setting its minimum to 4
CASES = [
    pytest.param(4, (3, 8), "up", id="min-3-to-4-group-at-4"),
    pytest.param(6, (2, 8), "up", id="min-2-to-4-group-at-6"),
    pytest.param(6, (5, 8), "down", id="min-5-to-4-group-at-6"),
    pytest.param(2, None, "up", id="resize-2-to-4-no-autoscaler"),
    pytest.param(6, None, "down", id="resize-6-to-4-no-autoscaler"),
]


@pytest.mark.parametrize(("size", "window", "direction"), CASES)
def test_direction_compares_the_value_written_with_the_one_it_replaces(
    compute: ComputeServer,
    store: Store,
    lease: Lease,
    clock: FakeClock,
    size: int,
    window: tuple[int, int] | None,
    direction: str,
) -> None:
    put_topology(
        store,
        topo(
            [dest("search", ["gpu"], lane("batch", 64))],
            [pool("shared-gpu", "gpu", ["search"], scale_targets=[pinned_at_four("workers")])],
        ),
    )
    scaler = None if window is None else {"min": window[0], "max": window[1]}
    compute.add_group(
        {"project": P, "zone": Z, "name": "workers", "targetSize": size, "autoscaler": scaler}
    )
    supply = GcpMigSupply(compute.url, RetryPolicy(deadline=5.0, base=0.01, cap=0.05))
    controller = make_controller(store, SupplyRouter({"gcp_mig": supply}), lease, clock)
    metrics = Metrics()
    controller.observer = metrics
    outcome = controller.tick()
    assert [c.target.name for c in outcome.changes] == ["workers"]
    if window is None:
        assert compute.call_report()["resizes"][0]["size"] == 4
    else:
        assert [p["minNumReplicas"] for p in autoscaler_patches(compute)] == [4]
    counted = samples(metrics, "arklow_scale_actions_total")
    labels = (("direction", direction), ("pool", "shared-gpu"), ("target", "workers"))
    assert counted == {labels: 1.0}
    # the same {pool, target} as the target's gauges: the two join one to one
    gauges = samples(metrics, "arklow_target_max_replicas")
    assert list(gauges) == [(("pool", "shared-gpu"), ("target", "workers"))]
