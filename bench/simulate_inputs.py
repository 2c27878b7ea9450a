"""Inputs for the simulation benchmark: a clustered topology (1,000 lanes, 100 pools) and a
7-day demand trace, one row per lane every 5 minutes, written as CSV.

Ten resources with ten pools each; 250 destinations of four lanes draw from one resource (one in
ten also from a second), so pools are shared by two or three destinations and a few destinations
bridge two pools. Half the pools scale an Auto Scaling group of 8 units per node; the others have
static capacity. Demand is diurnal with noise; one lane in ten is noisy (bursts far above its
pool's size for a few hours a day).
"""

from __future__ import annotations

import csv
import math
import random
from pathlib import Path
from typing import Any

RESOURCES = 10
POOLS_PER_RESOURCE = 10
DESTINATIONS = 250
LANES_PER_DESTINATION = 4


def topology_document(seed: int = 11) -> dict[str, Any]:
    rng = random.Random(seed)
    resources = [f"r{k}" for k in range(RESOURCES)]
    members: dict[str, list[str]] = {
        f"{r}-p{j}": [] for r in resources for j in range(POOLS_PER_RESOURCE)
    }
    destinations = []
    for d in range(DESTINATIONS):
        name = f"d{d}"
        primary = resources[d % RESOURCES]
        used = [primary]
        members[f"{primary}-p{(d // RESOURCES) % POOLS_PER_RESOURCE}"].append(name)
        if d % 10 == 7:
            second = resources[(d + 3) % RESOURCES]
            used.append(second)
            members[f"{second}-p{rng.randrange(POOLS_PER_RESOURCE)}"].append(name)
        lanes = [
            {"name": f"l{k}", "limit": float(rng.choice([8, 16, 32, 64])), "weight": 1.0}
            for k in range(LANES_PER_DESTINATION)
        ]
        destinations.append({"name": name, "resources": used, "lanes": lanes})
    pools = []
    for p, (name, pool_members) in enumerate(members.items()):
        doc: dict[str, Any] = {
            "name": name,
            "resource": name.split("-")[0],
            "members": pool_members,
        }
        if p % 2 == 0:
            doc["scale_targets"] = [
                {
                    "kind": "aws_asg",
                    "name": f"{name}-asg",
                    "region": "us-east-1",
                    "min_replicas": 1,
                    "max_replicas": 30,
                    "units_per_replica": 8.0,
                    "replicas": 4,
                }
            ]
        else:
            doc["capacity"] = float(40 * max(1, len(pool_members)))
        pools.append(doc)
    return {"destinations": destinations, "pools": pools}


def write_trace(
    path: Path,
    topology: dict[str, Any],
    days: int = 7,
    seed: int = 12,
    every_s: int = 300,
    staggered: bool = False,
) -> int:
    """Write the trace, one row per lane every ``every_s`` seconds, all lanes at once (a metrics
    roll-up) or ``staggered`` over the period (a lane per minute slot); returns its row count."""
    rng = random.Random(seed)
    lanes = [f"{d['name']}/{lane['name']}" for d in topology["destinations"] for lane in d["lanes"]]
    profile = {
        lane: (rng.uniform(1, 10), rng.uniform(0, 24), i % 10 == 3) for i, lane in enumerate(lanes)
    }
    rows = 0
    with path.open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle, lineterminator="\n")
        out.writerow(["time", "lane", "demand"])
        end = days * 86400
        slots = every_s // 60
        for t in range(0, end + 1, 60):
            slot = (t // 60) % slots
            if not staggered and slot:
                continue
            for i in range(slot if staggered else 0, len(lanes), slots if staggered else 1):
                lane = lanes[i]
                scale, peak, noisy = profile[lane]
                hours = t / 3600
                level = scale * (1.2 + math.cos((hours % 24 - peak) / 24 * 2 * math.pi))
                if noisy and (hours % 24 - peak) % 24 < 3:
                    level = 120.0
                out.writerow([t, lane, round(level * rng.uniform(0.85, 1.15))])
                rows += 1
    return rows
