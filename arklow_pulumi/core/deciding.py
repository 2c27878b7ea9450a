"""One controller tick's decision, pure: allocation and admission for every lane, and the replica
count each scale target should run, keyed by target identity.

Inputs are a point-in-time snapshot: the topology, each lane's demand, what each target's group
was observed to run (in service and pending), and the recent single-tick recommendations of each
target. Nothing here reads a clock, a store or a cloud.

- **Capacity** for allocation is each pool's static capacity plus its targets' *in-service*
  replicas × units per replica (:func:`pool_capacity`, which the simulator's ``free-for-all``
  rule calls too). Pending replicas are not capacity (AWS counts warming instances as pending,
  not in service).
- **Servable demand** (the coupled-pool step): a pool's demand counting only the work its lanes
  can be served at the capacity every pool can reach (static + each target at max,
  :func:`~arklow_pulumi.core.allocating.servable_demands`); the pool's demand itself unless some
  pool's demand exceeds what it can reach.
- **Single tick**: the pool's single-tick decision (the kernel's sizing of its servable demand,
  :mod:`arklow_pulumi.core.scaling`), clamped to each target's [min, max]: the ``recommended``
  count, which the caller keeps in the history.
- **Scale policy**: the pool's figures and each target's recommendation, current count, window
  and last move go to the policy's one function
  (:func:`arklow_pulumi.core.policy.decide_pool`), which returns each target's count, the
  reason for it and its last move once applied (``move``: the caller keeps it for the next
  tick). Pending replicas are current supply, so they are never requested twice.
- ``single_tick=True`` is the unsmoothed rule (the simulator's ``single-tick`` policy): every
  target goes to ``arklow allocate``'s single-tick decision of the pool's own demand, clamped to
  its bounds; no servable demand, no scale policy.
- A pool without members settles its targets to their minimum at once (T5): there is no demand
  to wait for.
- ``desired`` is always within the target's [min, max].
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
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
from arklow_pulumi.core.autoscalers import CloudAutoscalers, cloud_step
from arklow_pulumi.core.limits import TargetKind
from arklow_pulumi.core.policy import (
    Move,
    PoolFigures,
    Reason,
    ScalePolicy,
    TargetFigures,
    clamp,
    decide_pool,
    history_horizon,
    plain_step,
    pool_mode,
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
    for scaling; ``pending`` (launched, not in service) is supply for scaling only. ``asked``:
    the count Arklow last set on a group that runs what its own autoscaler decides (a MIG
    autoscaler's minimum), which is what the scale policy moves; ``None`` for a plain group,
    where it is what the group runs."""

    in_service: int
    pending: int = 0
    asked: int | None = None

    @property
    def supply(self) -> int:
        """In service and pending: what the group supplies for scaling."""
        return self.in_service + self.pending

    @property
    def current(self) -> int:
        """The count the scale policy moves from."""
        return self.supply if self.asked is None else self.asked


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
    current: int  # the count moved from (:attr:`Observed.current`)
    move: Move | None = None  # the target's last move once ``desired`` is applied
    reason: Reason = "on-target"  # why ``desired`` is what it is (core.policy.REASONS)
    # under a cloud autoscaler's model: since when the recommendation stood above ``current``
    above: float | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    allocation: Allocation  # capacity = static + in-service supply
    targets: Mapping[TargetId, TargetDecision]


_NO_HISTORY: Sequence[Recommendation] = ()
_NO_MOVES: Mapping[TargetId, Move] = MappingProxyType({})
_NO_ONSETS: Mapping[TargetId, float] = MappingProxyType({})


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
    kind: TargetKind


@dataclass(frozen=True, slots=True)
class _PoolTargets:
    """A pool with targets, as every decision on its topology reads it: its targets' ids and
    bounds taken once, whether it has members (a pool without settles its targets), and the
    figures its scale policy needs."""

    name: str
    index: int  # the pool's position in the topology
    capacity: float  # static
    headroom: float
    policy: ScalePolicy
    settle: bool
    targets: tuple[_Entry, ...]
    units: tuple[float, ...]  # each target's units per replica, in order


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
                headroom=pool.headroom,
                policy=pool.scale_policy,
                settle=not topo.members(pool.name),
                targets=tuple(
                    _Entry(
                        ids[(pool.name, t.name)],
                        t.replicas,
                        t.min_replicas,
                        t.max_replicas,
                        t.units_per_replica,
                        t.kind,
                    )
                    for t in pool.scale_targets
                ),
                units=tuple(t.units_per_replica for t in pool.scale_targets),
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
        for entry in plan.targets:
            o = get(entry.tid)
            if o is None:
                o = Observed(entry.replicas, 0)
            found.append(o)
        seen.append((plan, found))
        in_service = [o.in_service for o in found]
        capacity[plan.name] = pool_capacity(plan.capacity, in_service, plan.units)
    return seen, capacity


def pool_capacity(static: float, in_service: Iterable[int], units: Iterable[float]) -> float:
    """A pool's capacity for allocation: its ``static`` capacity plus each target's in-service
    replicas × its units per replica (pending replicas are not capacity)."""
    return static + sum([count * u for count, u in zip(in_service, units, strict=True)])


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
    cloud: CloudAutoscalers | None = None,
    above: Mapping[TargetId, float] = _NO_ONSETS,
) -> Decision:
    """Allocation for every lane and the replica count for every scale target (see module doc).

    ``moves`` holds each target's last move (what the previous decisions' ``move`` said); a
    target without one has not moved. ``admission=False`` skips admission (see
    :func:`~arklow_pulumi.core.allocating.allocate`); the allocation, pools and target decisions
    are the same. ``single_tick=True`` applies the unsmoothed single-tick rule instead of the
    scale policy. ``cloud`` scales each target by the model of its own cloud's autoscaler
    instead (:mod:`arklow_pulumi.core.autoscalers`, the simulator's ``cloud-autoscaler``
    baseline), ``above`` holding what the previous decisions' ``above`` said.
    """
    seen, capacity = _seen(topo, observed)
    allocation = allocate(topo, demand, capacity, admission=admission)
    targets: dict[TargetId, TargetDecision] = {}
    pools = allocation.pools
    if single_tick:
        for plan, found in seen:
            _single_tick_pool(plan, pools[plan.name], found, moves, now, targets)
        return Decision(allocation=allocation, targets=targets)
    if cloud is not None:
        for plan, found in seen:
            _cloud_pool(plan, pools[plan.name], found, history, moves, above, now, cloud, targets)
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
    for tid, f in _own_figures(plan, result, seen, moves):
        step = plain_step(f, now)
        desired, move, reason = step.desired, step.move, step.reason
        out[tid] = TargetDecision(tid, f.recommended, desired, f.current, move, reason)


def _cloud_pool(
    plan: _PoolTargets,
    result: PoolResult,
    seen: list[Observed],
    history: Mapping[TargetId, Sequence[Recommendation]],
    moves: Mapping[TargetId, Move],
    above: Mapping[TargetId, float],
    now: float,
    models: CloudAutoscalers,
    out: dict[TargetId, TargetDecision],
) -> None:
    """Each target as its cloud's autoscaler scales it on the pool's own demand."""
    for (tid, f), entry in zip(_own_figures(plan, result, seen, moves), plan.targets, strict=True):
        past = [(r.at, r.replicas) for r in history.get(tid, _NO_HISTORY)]
        step, since = cloud_step(models, entry.kind, f, past, above.get(tid), now)
        out[tid] = TargetDecision(
            tid, f.recommended, step.desired, f.current, step.move, step.reason, since
        )


def _own_figures(
    plan: _PoolTargets, result: PoolResult, seen: list[Observed], moves: Mapping[TargetId, Move]
) -> Iterator[tuple[TargetId, TargetFigures]]:
    """Each target's figures for a rule on the pool's own single-tick decision (no window)."""
    for entry, o, rec in zip(plan.targets, seen, result.desired_by_target, strict=True):
        tid, lo, hi = entry.tid, entry.low, entry.high
        yield tid, TargetFigures(o.current, clamp(rec, lo, hi), lo, hi, (), moves.get(tid))


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
    ``capacity`` and its single-tick recommendations ``recs``, by the scale policy's one
    function (:func:`~arklow_pulumi.core.policy.decide_pool`)."""
    policy = plan.policy
    supplied = 0.0
    for entry, o in zip(plan.targets, seen, strict=True):
        supplied += (o.in_service + o.pending) * entry.units_per_replica
    pool = PoolFigures(demand, capacity, supplied, plan.capacity, plan.headroom, not plan.settle)
    mode = pool_mode(policy, pool)
    horizon = history_horizon(policy, now) if mode == "down" else 0.0
    figures = []
    for entry, o, rec in zip(plan.targets, seen, recs, strict=True):
        lo, hi = entry.low, entry.high
        rec = clamp(rec, lo, hi)
        current = o.current
        window: Iterable[int] = ()
        if mode == "down" and rec < current:  # the window is read only to scale down
            window = (r.replicas for r in history.get(entry.tid, _NO_HISTORY) if r.at >= horizon)
        figures.append(TargetFigures(current, rec, lo, hi, window, moves.get(entry.tid)))
    steps = decide_pool(policy, pool, figures, now, mode)
    for entry, f, step in zip(plan.targets, figures, steps, strict=True):
        out[entry.tid] = TargetDecision(
            entry.tid, f.recommended, step.desired, f.current, step.move, step.reason
        )
