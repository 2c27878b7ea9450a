"""Every example under examples/ is run: each topology through ``arklow validate`` and
``arklow allocate`` (the outcome its comments describe), each Python program under Pulumi mocks
(it must declare exactly the topology of the YAML beside it). Each program under the real engine
on the local clouds: test_programs_on_local_clouds.py."""

from __future__ import annotations

import asyncio
import json
import math
import runpy
from typing import Any

import pulumi
import pytest
import yaml

from tests.arklow_cli import Result, run
from tests.e2e.pulumi_cli import (
    REPO,
)
from tests.program.mocks import mocked

EXAMPLES = REPO / "examples"
TOPOLOGIES = ["gpu_pool_asg", "mig_autoscaler", "provider_quota"]
PROGRAMS = ["gpu_pool_asg", "mig_autoscaler"]
EPS = 1e-6


def arklow(*args: str) -> Result:
    return run(list(args))


def allocate(example: str) -> dict[str, Any]:
    directory = EXAMPLES / example
    result = arklow(
        "allocate",
        "--topology",
        str(directory / "topology.yaml"),
        "--demand",
        str(directory / "demand.yaml"),
        "--format",
        "json",
    )
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


def topology_of(example: str) -> dict[str, Any]:
    return dict(yaml.safe_load((EXAMPLES / example / "topology.yaml").read_text()))


def lane_costs(topology: dict[str, Any]) -> dict[str, dict[str, float]]:
    costs = {}
    for d in topology["destinations"]:
        for lane in d["lanes"]:
            cost = lane.get("cost") or {}
            costs[f"{d['name']}/{lane['name']}"] = {r: cost.get(r, 1.0) for r in d["resources"]}
    return costs


@pytest.mark.parametrize("example", TOPOLOGIES)
def test_example_topology_validates_and_allocates_within_capacity(example: str) -> None:
    directory = EXAMPLES / example
    checked = arklow(
        "validate",
        "--topology",
        str(directory / "topology.yaml"),
        "--demand",
        str(directory / "demand.yaml"),
    )
    assert checked.returncode == 0, checked.stderr
    out = allocate(example)
    topology = topology_of(example)
    costs = lane_costs(topology)
    for pool_name, pool in out["pools"].items():
        members = next(
            (p["members"] for p in topology["pools"] if p["name"] == pool_name),
            [pool_name.split("/")[0]],
        )
        used = sum(
            lane["admission"] * costs[key][pool["resource"]]
            for key, lane in out["lanes"].items()
            if key.split("/")[0] in members
        )
        assert used <= pool["capacity"] + EPS, pool_name
    for spec in topology["pools"]:
        for target in spec.get("scale_targets") or []:
            desired = out["pools"][spec["name"]]["desired_replicas"]
            assert target["min_replicas"] <= desired <= target["max_replicas"]


def test_gpu_pool_asg_holds_only_the_noisy_neighbour() -> None:
    out = allocate("gpu_pool_asg")
    held = {key: lane["held"] for key, lane in out["lanes"].items()}
    assert held.pop("embeddings/bulk") > 0
    assert all(h == 0 for h in held.values()), held
    pool = out["pools"]["shared-gpu"]
    assert pool["state"] == "constrained"
    # ceil(Σ min(demand, limit) × cost × (1 + headroom) / units_per_replica) = ceil(80 × 1.2 / 8)
    assert pool["demand"] == 6 + 4 + 3 * 2 + 64
    assert pool["desired_replicas"] == math.ceil(pool["demand"] * 1.2 / 8)


def test_mig_autoscaler_scales_for_the_backfill_and_serves_the_rest() -> None:
    out = allocate("mig_autoscaler")
    assert out["lanes"]["ingest/stream"]["held"] == 0
    assert out["lanes"]["transcode/vod"]["held"] == 0
    assert out["lanes"]["ingest/backfill"]["held"] > 0
    pool = out["pools"]["cpu-europe"]
    assert pool["desired_replicas"] == math.ceil(pool["demand"] * 1.15 / 16)


def test_provider_quota_is_shared_by_weight_and_never_scaled() -> None:
    out = allocate("provider_quota")
    quota = out["pools"]["llm-quota"]
    assert quota["desired_replicas"] == 0
    assert quota["capacity"] == 600
    lanes = out["lanes"]
    used = lanes["chat/live"]["allocation"] + 2 * lanes["summarize/documents"]["allocation"]
    used += lanes["evals/nightly"]["allocation"]
    assert used == pytest.approx(600)  # saturated: nothing of the quota is left unused
    assert lanes["summarize/documents"]["held"] == 0  # under its fair share
    # chat (weight 4) and evals (weight 1) are both above the fair level: 4:1
    assert lanes["chat/live"]["allocation"] == pytest.approx(
        4 * lanes["evals/nightly"]["allocation"]
    )


# -- the Python programs --------------------------------------------------------------------


def _resources_in(namespace: dict[str, Any]) -> list[pulumi.Resource]:
    """The Pulumi resources a program's module holds, also inside its lists and dicts."""
    found: list[pulumi.Resource] = []
    for value in namespace.values():
        if isinstance(value, dict):
            items = list(value.values())
        else:
            items = list(value) if isinstance(value, list | tuple) else [value]
        found += [item for item in items if isinstance(item, pulumi.Resource)]
    return found


def declared_by_program(example: str) -> dict[str, Any]:
    """The topology the example's __main__.py declares under mocks, in the YAML's shape."""
    with mocked() as mocks:
        namespace = runpy.run_path(str(EXAMPLES / example / "__main__.py"))
        loop = asyncio.get_event_loop()
        for membership in namespace["memberships"]:
            loop.run_until_complete(membership.pool.future())
        # every resource the program made registered with the mocks (a resource the program
        # does not wait on, such as its scale target, registers in a task of its own)
        urns = [r.urn.future() for r in _resources_in(namespace)]
        loop.run_until_complete(asyncio.gather(*urns))
    members: dict[str, list[str]] = {}
    for m in mocks.of_type("PoolMembership").values():
        members.setdefault(m["pool"], []).append(m["destination"])
    targets: dict[str, list[dict[str, Any]]] = {}
    for name, t in mocks.of_type("ScaleTarget").items():
        target = {"target": name, "group": t["group"]}
        target.update({k: t[k] for k in ("min_replicas", "max_replicas", "units_per_replica")})
        targets.setdefault(t["pool"], []).append(target)
    return {
        "destinations": {
            name: {
                "resources": sorted(d["resources"]),
                "standalone_capacity": d.get("standalone_capacity") or {},
                "lanes": {
                    lane["name"]: (lane["limit"], lane["weight"], lane.get("cost") or {})
                    for lane in d["lanes"]
                },
            }
            for name, d in mocks.of_type("Destination").items()
        },
        "pools": {
            name: {
                "resource": p["resource"],
                "capacity": p["capacity"],
                "headroom": p["headroom"],
                "members": sorted(members.get(name, [])),
                "scale_targets": sorted(targets.get(name, []), key=lambda t: t["target"]),
            }
            for name, p in mocks.of_type("Pool").items()
        },
    }


def declared_by_yaml(example: str) -> dict[str, Any]:
    topology = topology_of(example)
    targets_keys = ("min_replicas", "max_replicas", "units_per_replica")
    return {
        "destinations": {
            d["name"]: {
                "resources": sorted(d["resources"]),
                "standalone_capacity": d.get("standalone_capacity") or {},
                "lanes": {
                    lane["name"]: (lane["limit"], lane.get("weight", 1), lane.get("cost") or {})
                    for lane in d["lanes"]
                },
            }
            for d in topology["destinations"]
        },
        "pools": {
            p["name"]: {
                "resource": p["resource"],
                "capacity": p.get("capacity", 0),
                "headroom": p.get("headroom", 0.1),
                "members": sorted(p["members"]),
                "scale_targets": sorted(
                    (
                        {
                            "target": t["name"],
                            "group": {
                                "kind": t["kind"],
                                "name": t.get("group", t["name"]),
                                **{k: t[k] for k in ("project", "zone", "region") if k in t},
                            },
                            **{k: t[k] for k in targets_keys},
                        }
                        for t in p.get("scale_targets") or []
                    ),
                    key=lambda t: t["target"],
                ),
            }
            for p in topology["pools"]
        },
    }


@pytest.mark.parametrize("example", PROGRAMS)
def test_program_declares_the_topology_of_its_yaml(example: str) -> None:
    assert declared_by_program(example) == declared_by_yaml(example)


# -- the traces, through arklow simulate ---------------------------------------------------------

# example -> (the noisy lane, the quiet lanes)
TRACES = {
    "gpu_pool_asg": (
        "embeddings/bulk",
        ["search/interactive", "search/batch", "summarize/default"],
    ),
    "mig_autoscaler": ("ingest/backfill", ["ingest/stream", "transcode/vod"]),
    "provider_quota": ("evals/nightly", ["chat/live", "summarize/documents"]),
}


@pytest.mark.parametrize("example", sorted(TRACES))
def test_trace_under_simulate_keeps_quiet_lanes_whole(example: str) -> None:
    directory = EXAMPLES / example
    result = arklow(
        "simulate",
        "--topology",
        str(directory / "topology.yaml"),
        "--trace",
        str(directory / "trace.csv"),
        "--tick",
        "300",
        "--format",
        "json",
    )
    assert result.returncode == 0, result.stderr
    policies = json.loads(result.stdout)["policies"]
    for name, policy in policies.items():
        for lane, figures in policy["lanes"].items():
            assert figures["served"] + figures["held"] == pytest.approx(figures["demand"]), (
                name,
                lane,
            )
    noisy, quiet = TRACES[example]
    arklow_lanes = policies["arklow"]["lanes"]
    assert arklow_lanes[noisy]["held"] > 0
    for lane in quiet:  # fair sharing: the noisy lane's excess is what waits
        assert arklow_lanes[lane]["held"] <= 0.001 * arklow_lanes[lane]["demand"], lane
    # without fairness, the quiet lanes pay for the noisy one
    unfair = policies["free-for-all"]["lanes"]
    assert sum(unfair[lane]["held"] for lane in quiet) > 0
    if example == "provider_quota":  # static capacity: nothing to scale under any policy
        assert all(p["replica_hours"] == 0 for p in policies.values())
