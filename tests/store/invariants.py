"""Whole-topology invariants a store must hold after any sequence of changes."""

from __future__ import annotations

from arklow_pulumi.core.topology import Topology


def violations(topo: Topology) -> list[str]:
    found: list[str] = []
    for dest in topo.destinations.values():
        for resource in dest.resources:
            pool = topo.memberships.get((dest.name, resource))
            if pool is None:
                found.append(f"{dest.name} has no pool for {resource}")
            elif pool not in topo.pools:
                found.append(f"{dest.name} is in deleted pool {pool}")
            elif topo.pools[pool].resource != resource:
                found.append(f"{dest.name} is in {pool} of another resource for {resource}")
    for (dest_name, resource), pool in topo.memberships.items():
        dest = topo.destinations.get(dest_name)
        if dest is None or resource not in dest.resources:
            found.append(
                f"membership {dest_name}/{resource} -> {pool} without a drawing destination"
            )
    for pool in topo.pools.values():
        if pool.owner is not None and not pool.scale_targets and not topo.members(pool.name):
            found.append(f"standalone pool {pool.name} was left empty")
    return found
