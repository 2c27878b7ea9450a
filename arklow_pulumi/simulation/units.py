"""Independent parts of a topology: the unit the simulator steps and caches.

Lanes and pools that share no destination never affect each other's allocation (progressive
filling freezes each connected part on its own) nor scaling (a pool's decision reads only its own
lanes and targets). So a topology is split into connected components, each simulated on its own,
and a tick re-runs ``decide`` only on a component whose inputs changed. Components are compared
by value (:attr:`Unit.signature`: the rule, and the frozen destinations, pools and memberships
themselves, every field of each): a component found identical in two topologies (two policies,
or both sides of a what-if) is simulated once.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass

from arklow_pulumi.core.allocating import compile_topology
from arklow_pulumi.core.topology import (
    Destination,
    Lane,
    Pool,
    ScaleTarget,
    Topology,
    frozen_map,
)
from arklow_pulumi.simulation.policies import CLOUD, FAIR, PROPORTIONAL, SINGLE_TICK

LanePools = tuple[tuple[tuple[int, float], ...], ...]


@dataclass(frozen=True, eq=False)
class Unit:
    """One connected component. ``scaling`` is what ``decide`` runs on: the component itself
    under the fair and single-tick rules; under the proportional rule one lane per pool carrying
    the pool's demand (``decide`` then only scales: its fair allocation is not the policy's).
    Without scale targets the single-tick rule is the fair one (nothing to decide), so such a
    component is the same unit under both."""

    topology: Topology
    rule: str
    signature: Hashable
    lane_keys: tuple[str, ...]
    limits: tuple[float, ...]
    lane_pools: LanePools
    pool_names: tuple[str, ...]
    targets: tuple[tuple[str, ScaleTarget], ...]
    scaling: Topology

    @property
    def cost_sums(self) -> tuple[float, ...]:
        """Per lane, Σ cost over its pools: units of capacity one unit of its work uses."""
        return tuple(sum(c for _p, c in pools) for pools in self.lane_pools)


def split(topo: Topology, rule: str = FAIR) -> list[Unit]:
    """The topology's connected components, in the order of their first pool or destination."""
    parent: dict[str, str] = {name: name for name in topo.pools}

    def root(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for dest in topo.destinations.values():
        pools = [topo.memberships[(dest.name, r)] for r in dest.resources]
        for other in pools[1:]:
            parent[root(other)] = root(pools[0])
    groups: dict[str, tuple[list[Destination], list[Pool]]] = {}
    for pool in topo.pools.values():
        groups.setdefault(root(pool.name), ([], []))[1].append(pool)
    for dest in topo.destinations.values():
        key = root(topo.memberships[(dest.name, dest.resources[0])]) if dest.resources else ""
        groups.setdefault(key or f"\0{dest.name}", ([], []))[0].append(dest)
    return [_unit(topo, dests, pools, rule) for dests, pools in groups.values()]


def _unit(topo: Topology, dests: list[Destination], pools: list[Pool], rule: str) -> Unit:
    memberships = {(d.name, r): topo.memberships[(d.name, r)] for d in dests for r in d.resources}
    part = Topology(
        destinations=frozen_map((d.name, d) for d in dests),
        pools=frozen_map((p.name, p) for p in pools),
        memberships=frozen_map(memberships),
    )
    compiled = compile_topology(part)
    targets = tuple((p.name, t) for p in pools for t in p.scale_targets)
    if rule in (SINGLE_TICK, CLOUD) and not targets:
        rule = FAIR
    return Unit(
        topology=part,
        rule=rule,
        signature=(
            rule,
            tuple(dests),
            tuple(pools),
            tuple(sorted(memberships.items())),
        ),
        lane_keys=compiled.lane_keys,
        limits=compiled.limits,
        lane_pools=compiled.lane_pools,
        pool_names=compiled.pool_names,
        targets=targets,
        scaling=_scaling_topology(part) if rule == PROPORTIONAL else part,
    )


def demand_lane(pool: str) -> str:
    """The key of the one lane that carries a pool's whole demand in a scaling topology."""
    return f"{pool}\0/demand"


def _scaling_topology(part: Topology) -> Topology:
    """A pool without members keeps none, so ``decide`` settles its targets as it would."""
    pools = [p for p in part.pools.values() if part.members(p.name)]
    dests = {
        f"{p.name}\0": Destination(
            name=f"{p.name}\0",
            resources=(p.resource,),
            lanes=(Lane(destination=f"{p.name}\0", name="demand", limit=math.inf),),
        )
        for p in pools
    }
    return Topology(
        destinations=frozen_map(dests),
        pools=part.pools,
        memberships=frozen_map(((f"{p.name}\0", p.resource), p.name) for p in pools),
    )
