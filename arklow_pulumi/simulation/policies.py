"""The topology each simulated policy stands for, built from the declared one.

- ``arklow``: the topology as declared.
- ``standalone``: every destination in its own pool per resource (``<destination>/<resource>``).
  A declared pool with members is split among them: each member's pool gets an even share of its
  static capacity, its headroom and scale policy, and a share of each target with
  min = ⌈min / members⌉, max = ⌈max / members⌉ and starting replicas ⌈replicas / members⌉ (named
  ``<target>@<destination>``). A pool without members keeps its targets as declared.
- ``free-for-all``: one pool per resource (named after it) holding all of that resource's static
  capacity and all its targets; its headroom is the largest of the merged pools', its scale policy
  theirs when they agree (else the default). Allocation there is :mod:`.sharing`'s, not fairness.
- ``static``: the declared pools with every target frozen at its starting replicas
  (min = max = replicas), so the decision can never move it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from arklow_pulumi.core.policy import DEFAULT_POLICY
from arklow_pulumi.core.topology import (
    GroupRef,
    Pool,
    ScaleTarget,
    Topology,
    frozen_map,
    standalone_pool_name,
)

POLICIES: tuple[str, ...] = ("arklow", "standalone", "free-for-all", "static")
FAIR = "fair"
PROPORTIONAL = "proportional"


def arklow(topo: Topology) -> Topology:
    return topo


def static(topo: Topology) -> Topology:
    pools = {
        name: replace(pool, scale_targets=tuple(_frozen(t) for t in pool.scale_targets))
        for name, pool in topo.pools.items()
    }
    return Topology(topo.destinations, frozen_map(pools), topo.memberships)


def _frozen(target: ScaleTarget) -> ScaleTarget:
    replicas = max(target.min_replicas, min(target.max_replicas, target.replicas))
    return replace(target, min_replicas=replicas, max_replicas=replicas, replicas=replicas)


def standalone(topo: Topology) -> Topology:
    pools: dict[str, Pool] = {}
    memberships: dict[tuple[str, str], str] = {}
    for name, pool in topo.pools.items():
        members = topo.members(name)
        if not members:
            pools[name] = pool
        for member in members:
            own = standalone_pool_name(member, pool.resource)
            pools[own] = _share(pool, own, member, len(members))
            memberships[(member, pool.resource)] = own
    return Topology(topo.destinations, frozen_map(pools), frozen_map(memberships))


def _share(pool: Pool, name: str, member: str, n: int) -> Pool:
    if n == 1 and pool.name == name:
        return pool
    targets = tuple(_split_target(t, member, n) for t in pool.scale_targets)
    return replace(pool, name=name, capacity=pool.capacity / n, scale_targets=targets, owner=member)


def _split_target(target: ScaleTarget, member: str, n: int) -> ScaleTarget:
    if n == 1:
        return target
    name = f"{target.name}@{member}"
    return replace(
        target,
        name=name,
        group=GroupRef(kind=target.kind, name=name),
        min_replicas=math.ceil(target.min_replicas / n),
        max_replicas=math.ceil(target.max_replicas / n),
        replicas=math.ceil(target.replicas / n),
    )


def free_for_all(topo: Topology) -> Topology:
    by_resource: dict[str, list[Pool]] = {}
    for pool in topo.pools.values():
        by_resource.setdefault(pool.resource, []).append(pool)
    pools = {resource: _merge(resource, merged) for resource, merged in by_resource.items()}
    memberships = {(d, r): r for (d, r) in topo.memberships}
    return Topology(topo.destinations, frozen_map(pools), frozen_map(memberships))


def _merge(resource: str, pools: list[Pool]) -> Pool:
    policies = {p.scale_policy for p in pools if p.scale_targets}
    return Pool(
        name=resource,
        resource=resource,
        capacity=sum(p.capacity for p in pools),
        headroom=max(p.headroom for p in pools),
        scale_targets=tuple(t for p in pools for t in p.scale_targets),
        scale_policy=policies.pop() if len(policies) == 1 else DEFAULT_POLICY,
    )


BUILDERS: dict[str, Callable[[Topology], Topology]] = {
    "arklow": arklow,
    "standalone": standalone,
    "free-for-all": free_for_all,
    "static": static,
}


def rule_of(policy: str) -> str:
    """How capacity is shared among lanes under the policy."""
    return PROPORTIONAL if policy == "free-for-all" else FAIR
