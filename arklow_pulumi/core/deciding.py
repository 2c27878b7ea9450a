"""One controller tick's decision, pure: allocation and admission for every lane, and the replica
count each scale target should run, keyed by target identity.

Inputs are a point-in-time snapshot: the topology, each lane's demand, what each target's group
was observed to run (in service and pending), and the recent single-tick recommendations of each
target. Nothing here reads a clock, a store or a cloud.

- **Capacity** for allocation is each pool's static capacity plus its targets' *in-service*
  replicas × units per replica. Pending replicas are not capacity (AWS counts warming instances as
  pending, not in service).
- **Servable demand** (the coupled-pool step): a pool's demand counting only the work its lanes
  can be served at the capacity every pool can reach (static + each target at max,
  :func:`~arklow_pulumi.core.allocating.servable_demands`); the pool's demand itself unless some
  pool's demand exceeds what it can reach.
- **Single tick**: the pool's decision from :func:`arklow_pulumi.core.scaling.desired_for_pools`
  for its servable demand, clamped to each target's [min, max]: the ``recommended`` count, which
  the caller keeps in the history.
- **Scale policy** (:mod:`arklow_pulumi.core.policy`, the pool's ``scale_policy``): when the
  pool's own capacity holds work (servable demand above its in-service capacity) its targets go
  to the recommendation in one step and none scales down; otherwise tolerance on the pool's
  needed units against what its targets supply (in-service + pending), immediate but bounded
  scale-up, windowed and bounded scale-down, and no move that turns the target's last move
  (``moves``) around within the window unless it takes held work up. Pending replicas are
  current supply, so they are never requested twice. Each target's decision carries its last
  move once applied (``move``): the caller keeps it for the next tick.
- ``single_tick=True`` is the unsmoothed rule (the simulator's ``single-tick`` policy): every
  target goes to ``arklow allocate``'s single-tick decision of the pool's own demand, clamped to
  its bounds; no servable demand, no scale policy.
- A pool without members settles its targets to their minimum at once (T5): there is no demand
  to wait for.
- ``desired`` is always within the target's [min, max].
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from weakref import WeakKeyDictionary

from arklow_pulumi.core.allocating import (
    Allocation,
    PoolResult,
    allocate,
    compile_topology,
    servable_demands,
)
from arklow_pulumi.core.policy import (
    Move,
    ScalePolicy,
    clamp,
    move_after,
    next_replicas,
    within_tolerance,
)
from arklow_pulumi.core.topology import Pool, ScaleTarget, Topology


@dataclass(frozen=True, slots=True, order=True)
class TargetId:
    pool: str
    name: str  # scale target name (unique in the store)

    def __str__(self) -> str:
        return f"{self.pool}/{self.name}"


@dataclass(frozen=True, slots=True)
class Observed:
    """What a target's group runs: ``in_service`` counts as capacity for allocation and as supply
    for scaling; ``pending`` (launched, not in service) is supply for scaling only."""

    in_service: int
    pending: int = 0

    @property
    def current(self) -> int:
        return self.in_service + self.pending


@dataclass(frozen=True, slots=True)
class Recommendation:
    """One single-tick recommendation kept in a target's history."""

    at: float
    replicas: int


@dataclass(frozen=True, slots=True)
class TargetDecision:
    target: TargetId
    recommended: int  # this tick's single-tick decision (after clamp), goes into the history
    desired: int  # after the scale policy; always within [min, max]
    current: int  # in_service + pending as observed
    move: Move | None = None  # the target's last move once ``desired`` is applied


@dataclass(frozen=True, slots=True)
class Decision:
    allocation: Allocation  # capacity = static + in-service supply
    targets: Mapping[TargetId, TargetDecision]


_NO_HISTORY: Sequence[Recommendation] = ()
_NO_MOVES: Mapping[TargetId, Move] = MappingProxyType({})


def observed_of(pool: Pool, target: ScaleTarget, observed: Mapping[TargetId, Observed]) -> Observed:
    """The target's observation, or the topology's ``replicas`` in service and none pending."""
    seen = observed.get(TargetId(pool.name, target.name))
    return seen if seen is not None else Observed(in_service=target.replicas, pending=0)


@dataclass(frozen=True, slots=True)
class _Entry:
    """A pool's target as a decision reads it."""

    tid: TargetId
    replicas: int  # the topology's count: in service when nothing was observed
    low: int
    high: int
    units_per_replica: float


@dataclass(frozen=True, slots=True)
class _PoolTargets:
    """A pool with targets, as every decision on its topology reads it: its targets' ids and
    bounds taken once, whether it has members (a pool without settles its targets), and the
    figures its scale policy needs."""

    name: str
    index: int  # the pool's position in the topology
    capacity: float  # static
    grow: float  # 1 + headroom
    policy: ScalePolicy
    settle: bool
    targets: tuple[_Entry, ...]


_POOL_TARGETS: WeakKeyDictionary[Topology, tuple[_PoolTargets, ...]] = WeakKeyDictionary()
_TARGETS: WeakKeyDictionary[Topology, Mapping[TargetId, ScaleTarget]] = WeakKeyDictionary()


def scale_targets(topo: Topology) -> Mapping[TargetId, ScaleTarget]:
    """Every scale target by id, in pool order; made once per topology value (read-only). A
    decision on the topology is keyed by these same ids, so a caller's lookups in it find the
    very object (no new id to hash each time, no comparison of equal ones)."""
    targets = _TARGETS.get(topo)
    if targets is None:
        targets = _TARGETS[topo] = MappingProxyType(
            {
                TargetId(pool.name, t.name): t
                for pool in topo.pools.values()
                for t in pool.scale_targets
            }
        )
    return targets


def _pools_with_targets(topo: Topology) -> tuple[_PoolTargets, ...]:
    """The topology's pools with targets, in pool order; built once per topology value."""
    pools = _POOL_TARGETS.get(topo)
    if pools is None:
        ids = {(tid.pool, tid.name): tid for tid in scale_targets(topo)}
        pools = _POOL_TARGETS[topo] = tuple(
            _PoolTargets(
                name=pool.name,
                index=index,
                capacity=pool.capacity,
                grow=1.0 + pool.headroom,
                policy=pool.scale_policy,
                settle=not topo.members(pool.name),
                targets=tuple(
                    _Entry(
                        ids[(pool.name, t.name)],
                        t.replicas,
                        t.min_replicas,
                        t.max_replicas,
                        t.units_per_replica,
                    )
                    for t in pool.scale_targets
                ),
            )
            for index, pool in enumerate(topo.pools.values())
            if pool.scale_targets
        )
    return pools


# Per pool with targets: each target's observation, in the pool's target order.
_Seen = list[tuple[_PoolTargets, list[Observed]]]


def _seen(topo: Topology, observed: Mapping[TargetId, Observed]) -> tuple[_Seen, dict[str, float]]:
    """Each pool's observations, and its capacity: static plus in-service replicas × units per
    replica."""
    get = observed.get
    seen: _Seen = []
    capacity = {}
    for plan in _pools_with_targets(topo):
        found = []
        units = []
        for entry in plan.targets:
            o = get(entry.tid)
            if o is None:
                o = Observed(entry.replicas, 0)
            found.append(o)
            units.append(o.in_service * entry.units_per_replica)
        seen.append((plan, found))
        capacity[plan.name] = plan.capacity + sum(units)
    return seen, capacity


def decide(
    topo: Topology,
    demand: Mapping[str, float],
    observed: Mapping[TargetId, Observed],
    history: Mapping[TargetId, Sequence[Recommendation]],
    now: float,
    *,
    admission: bool = True,
    single_tick: bool = False,
    moves: Mapping[TargetId, Move] = _NO_MOVES,
) -> Decision:
    """Allocation for every lane and the replica count for every scale target (see module doc).

    ``moves`` holds each target's last move (what the previous decisions' ``move`` said); a
    target without one has not moved. ``admission=False`` skips admission (see
    :func:`~arklow_pulumi.core.allocating.allocate`); the allocation, pools and target decisions
    are the same. ``single_tick=True`` applies the unsmoothed single-tick rule instead of the
    scale policy.
    """
    seen, capacity = _seen(topo, observed)
    allocation = allocate(topo, demand, capacity, admission=admission)
    targets: dict[TargetId, TargetDecision] = {}
    pools = allocation.pools
    if single_tick:
        for plan, found in seen:
            _single_tick_pool(plan, pools[plan.name], found, moves, now, targets)
        return Decision(allocation=allocation, targets=targets)
    servable = servable_demands(topo, allocation)
    sizing = None
    if servable is not None:
        sizing = servable, compile_topology(topo).sizings.desired(servable)
    for plan, found in seen:
        result = pools[plan.name]
        if sizing is None:
            need, recs = result.demand, result.desired_by_target
        else:
            need, recs = sizing[0][plan.index], sizing[1][plan.index]
        _decide_pool(plan, result.capacity, need, recs, found, history, moves, now, targets)
    return Decision(allocation=allocation, targets=targets)


def _single_tick_pool(
    plan: _PoolTargets,
    result: PoolResult,
    seen: list[Observed],
    moves: Mapping[TargetId, Move],
    now: float,
    out: dict[TargetId, TargetDecision],
) -> None:
    """The unsmoothed rule: every target at the pool's single-tick decision, within its bounds."""
    for entry, o, rec in zip(plan.targets, seen, result.desired_by_target, strict=True):
        tid = entry.tid
        rec = clamp(rec, entry.low, entry.high)
        current = o.in_service + o.pending
        move = move_after(moves.get(tid), current, rec, now)
        out[tid] = TargetDecision(tid, rec, rec, current, move)


def _decide_pool(
    plan: _PoolTargets,
    capacity: float,
    demand: float,
    recs: Sequence[int],
    seen: list[Observed],
    history: Mapping[TargetId, Sequence[Recommendation]],
    moves: Mapping[TargetId, Move],
    now: float,
    out: dict[TargetId, TargetDecision],
    /,
) -> None:
    """The decisions of a pool's targets from its servable ``demand``, its in-service
    ``capacity`` and its single-tick recommendations ``recs``: settle to min without members;
    held work (``demand`` above ``capacity``) goes up in one step; else hold within the
    tolerance; else :func:`next_replicas`."""
    policy = plan.policy
    settle = plan.settle
    currents = [o.in_service + o.pending for o in seen]
    hold = held = False
    if not settle:
        held = demand > capacity + 1e-9 * max(1.0, capacity)
        if not held:
            # The pool's targets supply (in service + pending) what it needs, within the tolerance.
            needed = demand * plan.grow - plan.capacity
            pairs = zip(currents, plan.targets, strict=True)
            supplied = sum([c * entry.units_per_replica for c, entry in pairs])
            hold = within_tolerance(max(0.0, needed), supplied, policy.tolerance)
    horizon = now - policy.scale_down_window_s
    for entry, current, rec in zip(plan.targets, currents, recs, strict=True):
        tid, lo, hi = entry.tid, entry.low, entry.high
        rec = clamp(rec, lo, hi)
        last = moves.get(tid)
        if settle:
            desired = lo
        elif hold:
            desired = clamp(current, lo, hi)
        else:
            # the window is read only to scale down
            window = (
                (r.replicas for r in history.get(tid, _NO_HISTORY) if r.at >= horizon)
                if rec < current and not held
                else ()
            )
            desired = next_replicas(
                policy,
                current=current,
                recommended=rec,
                window=window,
                low=lo,
                high=hi,
                held=held,
                last=last,
                now=now,
            )
        move = move_after(last, current, desired, now)
        out[tid] = TargetDecision(tid, rec, desired, current, move)
