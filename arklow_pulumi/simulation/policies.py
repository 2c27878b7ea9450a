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
- ``single-tick``: the declared pools under the unsmoothed rule (``decide(single_tick=True)``):
  every target goes each tick to ``arklow allocate``'s single-tick decision, within its bounds.
- ``static-peak``: the declared pools with every target frozen (min = max = replicas) at the
  single-tick sizing of its pool's peak demand over the replay (:mod:`.peaks`).
- ``standalone-sized``: ``standalone``, with each member's share of a target allowed up to the
  single-tick sizing of the member's own peak demand (at least its min), whatever the declared max.
- ``cloud-autoscaler``: the declared pools and Arklow's allocation, each target scaled by the
  model of its own cloud's autoscaler (:mod:`arklow_pulumi.core.autoscalers`) on its pool's
  demand, at a target utilization of 1 / (1 + headroom) unless one is given.

The last two read the trace (one pre-pass, :func:`.peaks.peak_demands`): a builder gets the
topology and a function giving any topology's peak pool demands.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from arklow_pulumi.core.autoscalers import DEFAULT_AUTOSCALERS, CloudAutoscalers
from arklow_pulumi.core.limits import MAX_COUNT
from arklow_pulumi.core.policy import DEFAULT_POLICY, clamp, needed_units
from arklow_pulumi.core.scaling import desired_replicas
from arklow_pulumi.core.topology import (
    FrozenMap,
    GroupRef,
    Pool,
    ScaleTarget,
    Topology,
    standalone_pool_name,
)

# How capacity is shared among lanes and how targets are decided under a policy.
FAIR = "fair"  # fair allocation, the pool's scale policy
PROPORTIONAL = "proportional"  # free-for-all's shares (:mod:`.sharing`), the scale policy
SINGLE_TICK = "single-tick"  # fair allocation, the unsmoothed single-tick rule
CLOUD = "cloud-autoscaler"  # fair allocation, each target scaled by its cloud's autoscaler

# A topology's peak demand per pool (Σ e × cost at the replay's ticks), by pool name.
PeakDemands = Callable[[Topology], Mapping[str, float]]


def arklow(topo: Topology, peaks: PeakDemands | None = None) -> Topology:
    return topo


def static(topo: Topology, peaks: PeakDemands | None = None) -> Topology:
    pools = {
        name: replace(pool, scale_targets=tuple(_frozen(t, t.replicas) for t in pool.scale_targets))
        for name, pool in topo.pools.items()
    }
    return Topology(topo.destinations, FrozenMap(pools), topo.memberships)


def _frozen(target: ScaleTarget, count: int) -> ScaleTarget:
    replicas = clamp(count, target.min_replicas, target.max_replicas)
    return replace(target, min_replicas=replicas, max_replicas=replicas, replicas=replicas)


def standalone(topo: Topology, peaks: PeakDemands | None = None) -> Topology:
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
    return Topology(topo.destinations, FrozenMap(pools), FrozenMap(memberships))


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


def free_for_all(topo: Topology, peaks: PeakDemands | None = None) -> Topology:
    by_resource: dict[str, list[Pool]] = {}
    for pool in topo.pools.values():
        by_resource.setdefault(pool.resource, []).append(pool)
    pools = {resource: _merge(resource, merged) for resource, merged in by_resource.items()}
    memberships = {(d, r): r for (d, r) in topo.memberships}
    return Topology(topo.destinations, FrozenMap(pools), FrozenMap(memberships))


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


def cloud_autoscaler(topo: Topology, peaks: PeakDemands | None = None) -> Topology:
    """The declared pools, each keeping its recommendations as long as the autoscalers'
    models read them (:data:`~arklow_pulumi.core.autoscalers.DEFAULT_AUTOSCALERS`)."""
    keep = DEFAULT_AUTOSCALERS.window_s
    pools = {
        name: replace(pool, scale_policy=replace(pool.scale_policy, scale_down_window_s=keep))
        for name, pool in topo.pools.items()
    }
    return Topology(topo.destinations, FrozenMap(pools), topo.memberships)


def with_utilization(topo: Topology, utilization: float) -> Topology:
    """Every pool sized for ``utilization`` (its headroom ``1 / utilization - 1``): the
    ``cloud-autoscaler`` policy's target utilization set by the user."""
    models = CloudAutoscalers(utilization=utilization)
    pools = {
        name: replace(pool, headroom=models.headroom(pool.headroom))
        for name, pool in topo.pools.items()
    }
    return Topology(topo.destinations, FrozenMap(pools), topo.memberships)


def static_peak(topo: Topology, peaks: PeakDemands | None = None) -> Topology:
    """Each target frozen at its share of the single-tick sizing of its pool's peak demand
    (within its declared [min, max]; a pool without demand gives every target its min)."""
    assert peaks is not None
    peak = peaks(topo)
    pools = {}
    for name, pool in topo.pools.items():
        counts = _sizing(pool, peak.get(name, 0.0), pool.scale_targets)
        targets = tuple(_frozen(t, c) for t, c in zip(pool.scale_targets, counts, strict=True))
        pools[name] = replace(pool, scale_targets=targets)
    return Topology(topo.destinations, FrozenMap(pools), topo.memberships)


def standalone_sized(topo: Topology, peaks: PeakDemands | None = None) -> Topology:
    """``standalone``, each member's pool with targets allowed up to the single-tick sizing of
    the member's own peak demand (at least the share's min; the declared max does not bind). A
    declared pool without members keeps its targets, as under ``standalone``."""
    assert peaks is not None
    alone = standalone(topo)
    peak = peaks(alone)
    pools = {}
    for name, pool in alone.pools.items():
        if pool.scale_targets and alone.members(name):
            pool = replace(pool, scale_targets=_sized(pool, peak.get(name, 0.0)))
        pools[name] = pool
    return Topology(alone.destinations, FrozenMap(pools), alone.memberships)


def _sized(pool: Pool, demand: float) -> tuple[ScaleTarget, ...]:
    """The pool's targets with max = their count in the single-tick sizing of ``demand`` when
    no max binds (at least min). The sizing splits a pool's need in proportion to each target's
    max × units per replica, so every max is scaled by one factor large enough for the need
    (the proportions stay those declared); no count passes :data:`MAX_COUNT`."""
    targets = pool.scale_targets
    supply = sum(t.max_replicas * t.units_per_replica for t in targets)
    highest = max(t.max_replicas for t in targets)
    needed = needed_units(demand, pool.headroom, pool.capacity)
    factor = 1
    if supply > 0 and highest > 0:
        factor = max(1, min(math.ceil(needed / supply) + 1, MAX_COUNT // highest))
    roomy = [replace(t, max_replicas=t.max_replicas * factor) for t in targets]
    counts = _sizing(pool, demand, roomy)
    out = []
    for t, count in zip(targets, counts, strict=True):
        high = max(t.min_replicas, count)
        replicas = clamp(t.replicas, t.min_replicas, high)
        out.append(replace(t, max_replicas=high, replicas=replicas))
    return tuple(out)


def _sizing(
    pool: Pool, demand: float, targets: tuple[ScaleTarget, ...] | list[ScaleTarget]
) -> tuple[int, ...]:
    if not targets:
        return ()
    return desired_replicas(demand, pool.headroom, targets, pool.capacity)


@dataclass(frozen=True, slots=True)
class Policy:
    """How a policy's topology is built, and its rule (see the constants above)."""

    build: Callable[[Topology, PeakDemands | None], Topology]
    rule: str = FAIR


REGISTRY: dict[str, Policy] = {
    "arklow": Policy(arklow),
    "standalone": Policy(standalone),
    "free-for-all": Policy(free_for_all, PROPORTIONAL),
    "static": Policy(static),
    "single-tick": Policy(arklow, SINGLE_TICK),
    "static-peak": Policy(static_peak),
    "standalone-sized": Policy(standalone_sized),
    "cloud-autoscaler": Policy(cloud_autoscaler, CLOUD),
}
POLICIES: tuple[str, ...] = ("arklow", "standalone", "free-for-all", "static")  # the default
ALL_POLICIES: tuple[str, ...] = tuple(REGISTRY)


def build(
    name: str,
    topo: Topology,
    peaks: PeakDemands | None = None,
    utilization: float | None = None,
) -> tuple[Topology, str]:
    """The policy's topology and rule (``peaks`` is needed by the policies that read the trace;
    ``utilization``, when given, is the ``cloud-autoscaler`` policy's target utilization)."""
    policy = REGISTRY[name]
    built = policy.build(topo, peaks)
    if policy.rule == CLOUD and utilization is not None:
        built = with_utilization(built, utilization)
    return built, policy.rule
