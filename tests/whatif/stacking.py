"""A throwaway project for ``arklow what-if --stack``: ``Pulumi.yaml``, ``stacks/Pulumi.<stack>.yaml``
and a SQLite store filled through the store's own rules (as ``pulumi up`` would), with demand
history written by controller ticks.

The topologies: quiet (lane q, limit 10) runs alone on 10 units of its own; noisy (lane n, limit
100) has pool busy, one target of 5 units per replica at 2 replicas (max 2). Demand q = 8 and
n = 100 for two hours. Moving quiet into busy shares 10 units between both: q is held 3 of 8.
"""

from __future__ import annotations

import copy
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from arklow_pulumi.reading.parsing import parse_topology
from arklow_pulumi.reading.spec import build_topology
from arklow_pulumi.store.engine import Store, open_store
from arklow_pulumi.store.runtime import TickRecord, acquire_lease, write_tick
from arklow_pulumi.store.service import attach_target, create_destination, create_pool, join

BEFORE: dict[str, Any] = {
    "destinations": [
        {
            "name": "quiet",
            "resources": ["cpu"],
            "standalone_capacity": {"cpu": 10},
            "lanes": [{"name": "q", "limit": 10}],
        },
        {"name": "noisy", "resources": ["cpu"], "lanes": [{"name": "n", "limit": 100}]},
    ],
    "pools": [
        {
            "name": "busy",
            "resource": "cpu",
            "members": ["noisy"],
            "scale_targets": [
                {
                    "kind": "aws_asg",
                    "name": "busy-asg",
                    "region": "us-east-1",
                    "min_replicas": 1,
                    "max_replicas": 2,
                    "units_per_replica": 5,
                    "replicas": 2,
                }
            ],
        }
    ],
}
# (seconds after the start, lane, demand): two hours of steady demand.
HISTORY = [(0.0, "quiet/q", 8.0), (0.0, "noisy/n", 100.0), (7200.0, "quiet/q", 8.0)]


def moved(max_replicas: int = 2, replicas: int | None = 2) -> dict[str, Any]:
    """BEFORE with quiet moved into busy (and busy's max set)."""
    doc = copy.deepcopy(BEFORE)
    doc["pools"][0]["members"] = ["noisy", "quiet"]
    target = doc["pools"][0]["scale_targets"][0]
    target["max_replicas"] = max_replicas
    if replicas is None:
        del target["replicas"]
    else:
        target["replicas"] = replicas
    return doc


def write_project(directory: Path, stack: str, topology: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "Pulumi.yaml").write_text(
        "name: arklow\nruntime: python\nstackConfigDir: stacks\n"
    )
    write_stack(directory, stack, topology)
    return directory


def write_stack(directory: Path, stack: str, topology: dict[str, Any]) -> None:
    (directory / "stacks").mkdir(exist_ok=True)
    (directory / "stacks" / f"Pulumi.{stack}.yaml").write_text(
        yaml.safe_dump({"config": {"arklow:topology": topology}}, sort_keys=False)
    )


def fill_store(url: str, document: dict[str, Any]) -> Store:
    """Declare ``document`` in the store object by object through the store's rules."""
    store = open_store(url)
    topo = build_topology(parse_topology(document))
    for dest in topo.destinations.values():
        create_destination(store, dest)
    for pool in topo.pools.values():
        if pool.owner is not None:
            continue  # a destination's standalone pool: made with the destination
        create_pool(store, replace(pool, scale_targets=()))
        for target in pool.scale_targets:
            attach_target(store, pool.name, target)
    for (dest_name, _resource), pool_name in topo.memberships.items():
        if topo.pools[pool_name].owner is None:
            join(store, dest_name, pool_name)
    return store


def fill_history(store: Store, rows: list[tuple[float, str, float]], ago: float = 3 * 3600) -> None:
    """Controller ticks that record ``rows`` as demand history, starting ``ago`` seconds back."""
    lease = acquire_lease(store, "test-controller", 60.0, force=True)
    assert lease is not None
    start = time.time() - ago
    by_time: dict[float, list[tuple[str, float]]] = {}
    for at, lane, demand in rows:
        by_time.setdefault(at, []).append((lane, demand))
    for tick, (offset, reports) in enumerate(sorted(by_time.items()), start=1):
        record = TickRecord(tick=tick, at=start + offset, published={}, demand=reports)
        write_tick(store, lease, record)
