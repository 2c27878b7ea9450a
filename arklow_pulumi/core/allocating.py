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

A topology is compiled once into index arrays (:class:`CompiledTopology`, cached per topology),
so a controller tick only pays for the three fillings.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal
from weakref import WeakKeyDictionary

from arklow_pulumi.core.errors import InvalidInput, Problem
from arklow_pulumi.core.filling import Filling, kernel, pack, progressive_fill
from arklow_pulumi.core.limits import MAX_UNITS
from arklow_pulumi.core.scaling import ScalePlan, desired_for_pools, scale_plan
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
    desired_replicas: tuple[int, ...]

    @property
    def desired_total(self) -> int:
        return sum(self.desired_replicas)


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
        native = kernel()
        held = native.held(self._caps, self._allocation) if native is not None else None
        if held is None:  # the kernel's column when every item is a plain float, else this
            pairs = zip(self._caps, self._allocation, strict=True)
            held = [h if (h := cap - a) > 0 else 0.0 for cap, a in pairs]
        return self._keys, self._demand, self._allocation, held, self._admission

    def allocations(self, keys: Sequence[str]) -> list[float]:
        """The allocation of each of ``keys``, in order, without making :class:`LaneResult` s."""
        index, allocation = self._index, self._allocation
        return [allocation[index[key]] for key in keys]


@dataclass(frozen=True, slots=True)
class Allocation:
    lanes: Mapping[str, LaneResult]
    pools: Mapping[str, PoolResult]


@dataclass(frozen=True, slots=True)
class CompiledTopology:
    """Index arrays of a topology: lanes and pools by position, incidences both ways."""

    lane_keys: tuple[str, ...]
    lane_index: Mapping[str, int]
    pool_names: tuple[str, ...]
    weights: tuple[float, ...]
    limits: tuple[float, ...]
    lane_pools: tuple[tuple[tuple[int, float], ...], ...]
    pool_lanes: tuple[tuple[tuple[int, float], ...], ...]
    pools: tuple[Pool, ...] = ()  # by position, as pool_names
    packed: bytes | None = None  # weights and incidences for the compiled filling kernel
    supplies: tuple[float, ...] = ()  # each pool's supply (Pool.supply, a sum made once)
    scale_plans: tuple[ScalePlan, ...] = ()  # each pool's scale targets, as scaling reads them


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
    native = kernel()
    lanes = (
        native.compile_lanes(
            tuple(topo.destinations.values()), topo.memberships, pool_index, len(pool_names)
        )
        if native is not None
        else _compile_lanes(topo, pool_index, len(pool_names))
    )
    lane_keys, lane_index, weights, limits, lane_pools, pool_lanes = lanes
    pools = tuple(topo.pools.values())
    return CompiledTopology(
        lane_keys=lane_keys,
        lane_index=lane_index,
        pool_names=pool_names,
        weights=weights,
        limits=limits,
        lane_pools=lane_pools,
        pool_lanes=pool_lanes,
        pools=pools,
        packed=pack(weights, lane_pools, pool_lanes, len(pool_names)),
        supplies=tuple(pool.supply for pool in pools),
        scale_plans=tuple(scale_plan(p.headroom, p.scale_targets, p.capacity) for p in pools),
    )


CompiledLanes = tuple[
    tuple[str, ...],
    dict[str, int],
    tuple[float, ...],
    tuple[float, ...],
    tuple[tuple[tuple[int, float], ...], ...],
    tuple[tuple[tuple[int, float], ...], ...],
]


def _compile_lanes(topo: Topology, pool_index: Mapping[str, int], pools: int) -> CompiledLanes:
    """Every lane in order (destinations in order, then their lanes): ``(lane_keys, lane_index,
    weights, limits, lane_pools, pool_lanes)``. The reference for the kernel's
    ``compile_lanes``, which makes the same values (a tenth of the time for 100,000 lanes)."""
    memberships = topo.memberships
    lane_keys: list[str] = []
    weights: list[float] = []
    limits: list[float] = []
    lane_pools: list[tuple[tuple[int, float], ...]] = []
    pool_lanes: list[list[tuple[int, float]]] = [[] for _ in range(pools)]
    add_key, add_weight, add_limit = lane_keys.append, weights.append, limits.append
    add_incidences = lane_pools.append
    for dest in topo.destinations.values():
        prefix = f"{dest.name}/"  # lane_key(destination, lane), made once per destination
        dest_pools = [(pool_index[memberships[(dest.name, r)]], r) for r in dest.resources]
        uniform = tuple([(p, 1.0) for p, _r in dest_pools])  # a lane without costs
        for lane in dest.lanes:
            i = len(lane_keys)
            add_key(prefix + lane.name)
            add_weight(lane.weight)
            add_limit(lane.limit)
            cost = lane.cost
            incidences = tuple([(p, cost.get(r, 1.0)) for p, r in dest_pools]) if cost else uniform
            add_incidences(incidences)
            for p, c in incidences:
                pool_lanes[p].append((i, c))
    return (
        tuple(lane_keys),
        {key: i for i, key in enumerate(lane_keys)},
        tuple(weights),
        tuple(limits),
        tuple(lane_pools),
        tuple(tuple(lanes) for lanes in pool_lanes),
    )


def check_demand(topo: Topology, demand: Mapping[str, float]) -> None:
    """Refuse demand for an unknown lane, and demand outside [0, 1e12] (NaN included)."""
    _check_demand(compile_topology(topo), demand)


def _check_demand(c: CompiledTopology, demand: Mapping[str, float]) -> None:
    known = c.lane_index
    native = kernel()
    if native is not None and native.demand_ok(demand, known, MAX_UNITS):
        return
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
    not listed has none. ``capacity`` overrides pool capacities (default: each pool's supply).
    ``admission=False`` skips the two admission fillings (for callers that read only allocation,
    held and the pools, such as the simulator): every other figure is the same, and each lane's
    ``admission`` is then its allocation.
    """
    c = compile_topology(topo)
    demands, caps = _checked_caps(c, demand)
    if capacity is None:
        supply = list(c.supplies)
    else:
        get = capacity.get
        supply = [get(name, s) for name, s in zip(c.pool_names, c.supplies, strict=True)]
    first = progressive_fill(caps, c.weights, c.lane_pools, c.pool_lanes, supply, c.packed)
    alloc = first.allocation
    pool_results = _pool_results(c, caps, supply)
    if not admission:
        lanes = LaneResults(c.lane_keys, c.lane_index, demands, caps, alloc, alloc)
        return Allocation(lanes=lanes, pools=pool_results)
    residual = _unused(supply, first)
    admitted = _admission(c, demands, alloc, residual)
    lanes = LaneResults(c.lane_keys, c.lane_index, demands, caps, alloc, admitted)
    return Allocation(lanes=lanes, pools=pool_results)


def _admission(
    c: CompiledTopology, demands: list[float], alloc: list[float], residual: list[float]
) -> list[float]:
    """Admission: active lanes (demand > 0) first, up to their limits; idle lanes get only what
    no active lane can use. A lane that draws on a pool with nothing left gets nothing, so it
    is left out of the filling (its room is 0), and a filling with no lane to fill is skipped.

    Each per-lane column is made by the compiled kernel when its items are plain floats (the
    same operations on the same doubles), else by the comprehension beside it."""
    native = kernel()
    limits = c.limits
    room = native.active_room(demands, limits, alloc) if native else None
    if room is None:
        room = [
            limit - a if d > 0 and limit > a else 0.0
            for d, limit, a in zip(demands, limits, alloc, strict=True)
        ]
    admitted = alloc
    if _fillable(room, c, residual):
        active = progressive_fill(room, c.weights, c.lane_pools, c.pool_lanes, residual, c.packed)
        residual = _unused(residual, active)
        admitted = _added(admitted, active.allocation)
    room = native.idle_room(demands, limits) if native else None
    if room is None:
        room = [limit if d <= 0 else 0.0 for d, limit in zip(demands, limits, strict=True)]
    if _fillable(room, c, residual):
        idle = progressive_fill(room, c.weights, c.lane_pools, c.pool_lanes, residual, c.packed)
        admitted = _added(admitted, idle.allocation)
    clamped = native.clamp(admitted, limits) if native else None
    if clamped is None:
        clamped = [a if a < limit else limit for a, limit in zip(admitted, limits, strict=True)]
    return clamped


def _added(admitted: list[float], more: list[float]) -> list[float]:
    native = kernel()
    summed = native.add(admitted, more) if native else None
    if summed is None:
        summed = [a + x for a, x in zip(admitted, more, strict=True)]
    return summed


def _checked_caps(
    c: CompiledTopology, demand: Mapping[str, float]
) -> tuple[list[float], list[float]]:
    """:func:`_check_demand` then :func:`_lane_caps`; in the kernel's common case (a dict, every
    lane known, every value in range) both in one pass, one lookup per lane (lanes are unique
    keys, so as many lanes found as the dict holds means every demand key is a lane)."""
    native = kernel()
    if native is not None and len(c.lane_index) == len(c.lane_keys):
        columns = native.checked_caps(demand, c.lane_keys, c.limits, MAX_UNITS)
        if columns is not None:
            return columns[0], columns[1]
    _check_demand(c, demand)
    return _lane_caps(c, demand)


def _lane_caps(c: CompiledTopology, demand: Mapping[str, float]) -> tuple[list[float], list[float]]:
    """Each lane's demand (0 when not listed) and cap, ``min(demand, limit)``."""
    native = kernel()
    columns = native.lane_caps(demand, c.lane_keys, c.limits) if native is not None else None
    if columns is not None:
        demands: list[float] = columns[0]
        return demands, columns[1]
    get = demand.get
    demands = [get(k, 0.0) for k in c.lane_keys]
    caps = [d if d < limit else limit for d, limit in zip(demands, c.limits, strict=True)]
    return demands, caps


def _fillable(room: list[float], c: CompiledTopology, residual: list[float]) -> bool:
    """Set to 0 the room of each lane that draws on a pool with no capacity left (the filling
    would freeze it at 0 at once); whether any lane still has room."""
    native = kernel()
    if native is not None and c.packed is not None:
        fillable: bool | None = native.fillable(room, residual, c.packed)
        if fillable is not None:
            return fillable
    lane_pools = c.lane_pools
    any_room = False
    for i, r in enumerate(room):
        if r > 0:
            for p, _c in lane_pools[i]:
                if residual[p] <= 0:
                    room[i] = 0.0
                    break
            else:
                any_room = True
    return any_room


def _unused(capacity: list[float], filling: Filling) -> list[float]:
    """Capacity a filling left unused; none in a pool it saturated."""
    return [
        0.0 if full else max(cap - used, 0.0)
        for cap, used, full in zip(capacity, filling.used, filling.saturated, strict=True)
    ]


def _pool_results(
    c: CompiledTopology, caps: list[float], supply: list[float]
) -> dict[str, PoolResult]:
    """Each pool's state (:func:`pool_pressure`, spelt out here) and single-tick decision
    (:func:`~arklow_pulumi.core.scaling.desired_for_pools`)."""
    demand = _pool_demand(c, caps)
    desired = desired_for_pools(demand, c.scale_plans)
    results = {}
    state: PoolState
    for name, pool, pool_demand, capacity, replicas in zip(
        c.pool_names, c.pools, demand, supply, desired, strict=True
    ):
        if pool_demand <= 0:
            pressure, state = 0.0, "idle"
        elif capacity <= 0:
            pressure, state = None, "constrained"
        else:
            pressure = pool_demand / capacity
            state = "steady" if pressure <= 1 else "constrained"
        results[name] = PoolResult(pool.resource, capacity, pool_demand, pressure, state, replicas)
    return results


def _pool_demand(c: CompiledTopology, caps: list[float]) -> list[float]:
    """Each pool's demand, ``Σ e × cost`` over its lanes, added up in lane order."""
    native = kernel()
    if native is not None and c.packed is not None:
        summed: list[float] | None = native.pool_demand(caps, c.packed)
        if summed is not None:
            return summed
    demand = [0.0] * len(c.pool_names)
    for i, incidences in enumerate(c.lane_pools):
        e = caps[i]
        if e:
            for p, cost in incidences:
                demand[p] += e * cost
    return demand


def pool_pressure(demand: float, capacity: float) -> tuple[float | None, PoolState]:
    if demand <= 0:
        return 0.0, "idle"
    if capacity <= 0:
        return None, "constrained"
    pressure = demand / capacity
    return pressure, "steady" if pressure <= 1 else "constrained"
