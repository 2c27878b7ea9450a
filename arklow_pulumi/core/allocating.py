"""Fair allocation and admission for every lane across every pool: the engine's contract.

Per tick, with ``e = min(demand, limit)`` for each lane:

1. **allocation**: weighted max-min fairness over all lanes and pools at once (progressive
   filling capped by ``e``). A lane's ``held = e - allocation`` is work held back by sharing.
2. **admission**: starting from the allocation, the capacity still unused in each pool is filled
   again by weight, capped by each lane's ``limit`` — first over the *active* lanes only
   (demand > 0), then, with whatever is still unused, over the idle lanes. A saturated pool adds
   nothing, so in a constrained pool admission equals allocation; in a steady pool active lanes
   get the headroom first, and an idle lane gets room to start only from capacity no active lane
   can use.
3. **pool state**: ``demand = Σ e × cost``, ``pressure = demand / capacity`` (0 without demand,
   ``None`` for positive demand on zero capacity); ``idle``, ``steady`` (pressure ≤ 1) or
   ``constrained``.
4. **scale decision**: see :mod:`arklow_pulumi.core.scaling`.

A topology is compiled once into index arrays (:class:`CompiledTopology`, cached per topology)
and the filling kernel's copies of them (:class:`~arklow_pulumi.core.filling.Network`, and the
pools' :class:`~arklow_pulumi.core.scaling.PoolSizings`), so a controller tick pays only for its
kernel calls, two to four: one for the three fillings and each pool's demand, one for the pools'
single-tick decisions, and, when some pool's demand is past what it can reach, one for the
servable demands and one more for their decisions (:mod:`arklow_pulumi.core.deciding`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Literal
from weakref import WeakKeyDictionary

from arklow_pulumi.core.errors import InvalidInput, Problem
from arklow_pulumi.core.filling import Network, network
from arklow_pulumi.core.limits import DEFAULT_COST, MAX_UNITS
from arklow_pulumi.core.scaling import PoolSizings, desired_for_pools, pool_sizings
from arklow_pulumi.core.topology import Pool, Topology

PoolState = Literal["idle", "steady", "constrained"]


@dataclass(frozen=True, slots=True)
class LaneResult:
    demand: float
    allocation: float
    held: float
    admission: float


@dataclass(frozen=True, slots=True)
class PoolResult:
    resource: str
    capacity: float
    demand: float
    pressure: float | None
    state: PoolState
    desired_by_target: tuple[int, ...]  # the single-tick decision of each target, in order

    @property
    def desired_total(self) -> int:
        return sum(self.desired_by_target)


class LaneResults(Mapping[str, LaneResult]):
    """Lane results kept as columns; a :class:`LaneResult` is made when one is looked up."""

    __slots__ = ("_admission", "_allocation", "_caps", "_demand", "_index", "_keys")

    def __init__(
        self,
        keys: tuple[str, ...],
        index: Mapping[str, int],
        demand: list[float],
        caps: list[float],
        allocation: list[float],
        admission: list[float],
    ) -> None:
        self._keys, self._index = keys, index
        self._demand, self._caps = demand, caps
        self._allocation, self._admission = allocation, admission

    def __getitem__(self, key: str) -> LaneResult:
        i = self._index[key]
        a = self._allocation[i]
        held = self._caps[i] - a
        return LaneResult(self._demand[i], a, held if held > 0 else 0.0, self._admission[i])

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def rows(self) -> Iterator[tuple[str, float, float, float, float]]:
        """``(key, demand, allocation, held, admission)`` of every lane, in order, without
        making :class:`LaneResult` s."""
        for key, d, cap, a, admitted in zip(
            self._keys, self._demand, self._caps, self._allocation, self._admission, strict=True
        ):
            held = cap - a
            yield key, d, a, held if held > 0 else 0.0, admitted

    def columns(
        self,
    ) -> tuple[tuple[str, ...], Sequence[float], Sequence[float], list[float], Sequence[float]]:
        """``(keys, demand, allocation, held, admission)``: every lane's figures as columns, in
        order, without a row per lane (``held`` is made here; the others are the columns the
        results keep: read them, never change them)."""
        pairs = zip(self._caps, self._allocation, strict=True)
        held = [h if (h := cap - a) > 0 else 0.0 for cap, a in pairs]
        return self._keys, self._demand, self._allocation, held, self._admission

    def caps(self) -> Sequence[float]:
        """Every lane's ``e = min(demand, limit)``, in order (the column the results keep: read
        it, never change it)."""
        return self._caps


@dataclass(frozen=True, slots=True)
class Allocation:
    lanes: Mapping[str, LaneResult]
    pools: Mapping[str, PoolResult]


@dataclass(frozen=True, slots=True)
class CompiledTopology:
    """Index arrays of a topology: lanes and pools by position, each lane's incidences."""

    lane_keys: tuple[str, ...]
    lane_index: Mapping[str, int]
    pool_names: tuple[str, ...]
    weights: tuple[float, ...]
    limits: tuple[float, ...]
    lane_pools: tuple[tuple[tuple[int, float], ...], ...]
    network: Network  # the filling kernel's copy of weights, limits and incidences
    pools: tuple[Pool, ...] = ()  # by position, as pool_names
    capacities: tuple[float, ...] = ()  # each pool's Pool.total_capacity, a sum made once
    reach: tuple[float, ...] = ()  # each pool's Pool.reachable_capacity
    sizings: PoolSizings = field(default_factory=lambda: pool_sizings(()))  # each pool's targets


_COMPILED: WeakKeyDictionary[Topology, CompiledTopology] = WeakKeyDictionary()


def compile_topology(topo: Topology) -> CompiledTopology:
    """The topology's index arrays, built once per topology value."""
    compiled = _COMPILED.get(topo)
    if compiled is None:
        compiled = _COMPILED[topo] = _compile(topo)
    return compiled


def _compile(topo: Topology) -> CompiledTopology:
    pool_names = tuple(topo.pools)
    pool_index = {name: p for p, name in enumerate(pool_names)}
    lanes = _compile_lanes(topo, pool_index)
    lane_keys, lane_index, weights, limits, lane_pools = lanes
    pools = tuple(topo.pools.values())
    return CompiledTopology(
        lane_keys=lane_keys,
        lane_index=lane_index,
        pool_names=pool_names,
        weights=weights,
        limits=limits,
        lane_pools=lane_pools,
        network=network(weights, limits, lane_pools, len(pool_names)),
        pools=pools,
        capacities=tuple(pool.total_capacity for pool in pools),
        reach=tuple(pool.reachable_capacity for pool in pools),
        sizings=pool_sizings((p.headroom, p.scale_targets, p.capacity) for p in pools),
    )


CompiledLanes = tuple[
    tuple[str, ...],
    dict[str, int],
    tuple[float, ...],
    tuple[float, ...],
    tuple[tuple[tuple[int, float], ...], ...],
]


def _compile_lanes(topo: Topology, pool_index: Mapping[str, int]) -> CompiledLanes:
    """Every lane in order (destinations in order, then their lanes): ``(lane_keys, lane_index,
    weights, limits, lane_pools)``."""
    memberships = topo.memberships
    lane_keys: list[str] = []
    weights: list[float] = []
    limits: list[float] = []
    lane_pools: list[tuple[tuple[int, float], ...]] = []
    add_key, add_weight, add_limit = lane_keys.append, weights.append, limits.append
    add_incidences = lane_pools.append
    for dest in topo.destinations.values():
        prefix = f"{dest.name}/"  # lane_key(destination, lane), made once per destination
        dest_pools = [(pool_index[memberships[(dest.name, r)]], r) for r in dest.resources]
        uniform = tuple([(p, DEFAULT_COST) for p, _r in dest_pools])  # a lane without costs
        for lane in dest.lanes:
            add_key(prefix + lane.name)
            add_weight(lane.weight)
            add_limit(lane.limit)
            cost = lane.cost
            incidences = (
                tuple([(p, cost.get(r, DEFAULT_COST)) for p, r in dest_pools]) if cost else uniform
            )
            add_incidences(incidences)
    return (
        tuple(lane_keys),
        {key: i for i, key in enumerate(lane_keys)},
        tuple(weights),
        tuple(limits),
        tuple(lane_pools),
    )


def check_demand(topo: Topology, demand: Mapping[str, float]) -> None:
    """Refuse demand for an unknown lane, and demand outside [0, 1e12] (NaN included)."""
    _check_demand(compile_topology(topo), demand)


def _check_demand(c: CompiledTopology, demand: Mapping[str, float]) -> None:
    known = c.lane_index
    unknown = demand.keys() - known.keys()
    bad = [k for k, v in demand.items() if not 0 <= v <= MAX_UNITS] if demand else []
    if not unknown and not bad:
        return
    problems = [
        Problem(f"demand lane {key!r:.300}", "lanes", "no such lane in the topology")
        for key in sorted(unknown)
    ]
    problems += [
        Problem(
            f"demand lane {key!r:.300}",
            "lanes",
            f"must be a finite number >= 0 and <= {MAX_UNITS:g} (got {demand[key]!r:.40})",
        )
        for key in bad
    ]
    raise InvalidInput(problems)


def allocate(
    topo: Topology,
    demand: Mapping[str, float],
    capacity: Mapping[str, float] | None = None,
    *,
    admission: bool = True,
) -> Allocation:
    """Allocation and admission for every lane, state and scale decision for every pool.

    ``demand`` maps lane keys (``<destination>/<lane>``) to in-flight plus queued units; a lane
    not listed has none. ``capacity`` overrides pool capacities (default: each pool's
    ``total_capacity``).
    ``admission=False`` skips the two admission fillings (for callers that read only allocation,
    held and the pools, such as the simulator): every other figure is the same, and each lane's
    ``admission`` is then its allocation.

    The three fillings and each pool's demand run in one kernel call
    (:meth:`~arklow_pulumi.core.filling.Network.allocate`), the pools' decisions in a second
    (:func:`~arklow_pulumi.core.scaling.desired_for_pools`). Admission fills the capacity the
    allocation left unused, active lanes (demand > 0) up to their limits first, then idle lanes
    from what is still unused, and is clamped to each lane's limit.
    """
    c = compile_topology(topo)
    if not demand.keys() <= c.lane_index.keys():
        _check_demand(c, demand)  # raises, naming each lane
    demands = list(map(demand.get, c.lane_keys, repeat(0.0, len(c.lane_keys))))
    if capacity is None:
        capacities = list(c.capacities)
    else:
        get = capacity.get
        capacities = [get(name, s) for name, s in zip(c.pool_names, c.capacities, strict=True)]
    try:  # the kernel refuses a demand that is not a number in [0, MAX_UNITS]
        done = c.network.allocate(demands, capacities, admission, MAX_UNITS)
    except (TypeError, ValueError):
        _check_demand(c, demand)  # raises, naming each demand, unless it was the capacity
        raise
    lanes = LaneResults(
        c.lane_keys, c.lane_index, demands, done.caps, done.allocation, done.admission
    )
    return Allocation(lanes=lanes, pools=_pool_results(c, done.pool_demand, capacities))


def _pool_results(
    c: CompiledTopology, demand: list[float], capacities: list[float]
) -> dict[str, PoolResult]:
    """Each pool's state (:func:`pool_pressure`) and single-tick decision
    (:func:`~arklow_pulumi.core.scaling.desired_for_pools`), from its demand ``Σ e × cost``."""
    desired = desired_for_pools(demand, c.sizings)
    results = {}
    for name, pool, pool_demand, capacity, replicas in zip(
        c.pool_names, c.pools, demand, capacities, desired, strict=True
    ):
        pressure, state = pool_pressure(pool_demand, capacity)
        results[name] = PoolResult(pool.resource, capacity, pool_demand, pressure, state, replicas)
    return results


def servable_demands(topo: Topology, allocation: Allocation) -> list[float] | None:
    """Each pool's demand counting only the work its lanes can be served at the capacity every
    pool can reach (static plus each target at ``max_replicas``): ``Σ cost × a`` over its lanes,
    where ``a`` is the fair allocation of ``e`` at those capacities. In the order of the
    topology's pools; ``None`` when no pool's demand exceeds its reach, so that every lane's
    ``e`` fits and the figures are the pools' demands as they are.

    This is the scale policy's coupled-pool step (docs/scale-policy.md): a lane that also draws
    from a pool that cannot grow enough counts, in its other pools, only for the work that pool
    lets through, so no pool buys replicas for work another pool will hold.
    """
    c = compile_topology(topo)
    pools = allocation.pools
    if all(pools[name].demand <= reach for name, reach in zip(c.pool_names, c.reach, strict=True)):
        return None
    lanes = allocation.lanes
    if not isinstance(lanes, LaneResults):
        raise TypeError("servable_demands reads an allocation made by allocate()")
    return c.network.fill(lanes.caps(), c.reach).used


def pool_pressure(demand: float, capacity: float) -> tuple[float | None, PoolState]:
    if demand <= 0:
        return 0.0, "idle"
    if capacity <= 0:
        return None, "constrained"
    pressure = demand / capacity
    return pressure, "steady" if pressure <= 1 else "constrained"


def lane_caps(demands: Iterable[float], limits: Iterable[float]) -> list[float]:
    """Each lane's ``e = min(demand, limit)``, as the kernel's allocation computes it (and as
    :meth:`LaneResults.caps` returns it), for the paths that run no filling: the simulator's
    ``free-for-all`` rule and its peak-demand pre-pass."""
    return [limit if limit < d else d for d, limit in zip(demands, limits, strict=True)]


def pool_sums(
    values: Sequence[float],
    lane_pools: Sequence[Sequence[tuple[int, float]]],
    pools: int,
    lanes: Iterable[int] | None = None,
) -> list[float]:
    """Each pool's ``Σ x × cost`` over its lanes' positive values ``x``, in lane order, as the
    kernel sums a pool's demand: with ``e`` per lane, the pools' demand; with allocations, the
    pool units they use. ``lanes``, when given, are the only lanes summed (in lane order: the
    sums of the pools they hold every lane of are then exact, the others' partial)."""
    out = [0.0] * pools
    if lanes is None:
        pairs: Iterable[tuple[float, Sequence[tuple[int, float]]]] = zip(
            values, lane_pools, strict=True
        )
    else:
        pairs = ((values[i], lane_pools[i]) for i in lanes)
    for x, incidences in pairs:
        if x > 0:
            for p, cost in incidences:
                out[p] += x * cost
    return out
