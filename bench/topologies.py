"""Random topologies for benchmarks: ``lanes`` lanes over ``pools`` pools, each lane in 1–3 pools."""

from __future__ import annotations

import random
from typing import Any

from arklow_pulumi.core.topology import Topology
from arklow_pulumi.reading.parsing import parse_topology
from arklow_pulumi.reading.spec import build_topology

RESOURCES = 10


def document(lanes: int, pools: int, seed: int = 7) -> tuple[dict[str, Any], dict[str, float]]:
    rng = random.Random(seed)
    resources = [f"r{k}" for k in range(RESOURCES)]
    by_resource: dict[str, list[int]] = {r: [] for r in resources}
    for p in range(pools):
        by_resource[resources[p % RESOURCES]].append(p)
    members: list[list[str]] = [[] for _ in range(pools)]
    destinations: list[dict[str, Any]] = []
    demand: dict[str, float] = {}
    made = 0
    d = 0
    while made < lanes:
        name = f"d{d}"
        used = rng.sample(resources, rng.randint(1, 3))
        for r in used:
            members[rng.choice(by_resource[r])].append(name)
        lane_docs = []
        for k in range(min(rng.randint(1, 4), lanes - made)):
            lane_docs.append(
                {
                    "name": f"l{k}",
                    "limit": float(rng.randint(0, 50)),
                    "weight": rng.choice([0.5, 1.0, 2.0, 4.0]),
                    "cost": {r: rng.choice([0.5, 1.0, 2.0]) for r in used},
                }
            )
            demand[f"{name}/l{k}"] = float(rng.randint(0, 60))
        made += len(lane_docs)
        destinations.append({"name": name, "resources": used, "lanes": lane_docs})
        d += 1
    pool_docs = [
        {
            "name": f"p{p}",
            "resource": resources[p % RESOURCES],
            "capacity": float(rng.randint(0, 40 * max(1, len(members[p])))),
            "members": members[p],
            "scale_targets": [
                {
                    "kind": "aws_asg",
                    "name": f"asg{p}",
                    "min_replicas": 1,
                    "max_replicas": 20,
                    "units_per_replica": 8.0,
                    "replicas": rng.randint(1, 20),
                }
            ]
            if p % 3 == 0
            else [],
        }
        for p in range(pools)
    ]
    return {"destinations": destinations, "pools": pool_docs}, demand


def topology(lanes: int, pools: int, seed: int = 7) -> tuple[Topology, dict[str, float]]:
    doc, demand = document(lanes, pools, seed)
    return build_topology(parse_topology(doc)), demand


def one_destination(lanes: int, seed: int = 7) -> tuple[dict[str, Any], dict[str, float]]:
    """One destination with ``lanes`` lanes over three resources, each in one shared pool."""
    rng = random.Random(seed)
    resources = ["gpu", "cpu", "llm-quota"]
    lane_docs = [
        {
            "name": f"l{k}",
            "limit": float(rng.randint(0, 50)),
            "weight": rng.choice([0.5, 1.0, 2.0, 4.0]),
            "cost": {r: rng.choice([0.5, 1.0, 2.0]) for r in resources},
        }
        for k in range(lanes)
    ]
    demand = {f"big/l{k}": float(rng.randint(0, 60)) for k in range(lanes)}
    pools = [
        {"name": f"{r}-pool", "resource": r, "capacity": 10.0 * lanes, "members": ["big"]}
        for r in resources
    ]
    doc = {"destinations": [{"name": "big", "resources": resources, "lanes": lane_docs}]}
    return {**doc, "pools": pools}, demand
