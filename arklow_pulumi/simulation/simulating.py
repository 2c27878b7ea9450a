"""The clock loop: a trace replayed tick by tick against simulated supply, decided by ``decide``.

Each tick at ``t = k × tick``: the trace's rows up to ``t`` set each lane's demand; each
simulated group brings launches whose delay has passed into service; ``decide`` (the
controller's) gives the allocation (capacity = static + in-service supply) and each target's
desired count under its pool's scale policy; the tick's figures are counted; the recommendation
joins the target's history and the group is resized to the desired count (launches become
pending, see :mod:`.supplying`).

Figures per tick, counted in ticks and turned into hours at the end: each lane's
``e = min(demand, limit)`` and allocation (served; held = e − allocation), each pool's capacity
and in-service replicas, and a scale action whenever a target's desired count differs from the
previous tick's (the first tick compares with the starting replicas).

The work is split by :mod:`.units`. A unit's decision depends only on its lanes' demand, its
groups' observations and its targets' histories (pruned exactly as ``decide`` filters them, so
the history's values are all that matters). When those are the same as on the previous tick,
the decision is the same: it is reused and the tick's figures repeat (counted as a run length).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from arklow_pulumi.core.deciding import Decision, Observed, Recommendation, TargetId, decide
from arklow_pulumi.core.topology import Topology
from arklow_pulumi.simulation.policies import FAIR
from arklow_pulumi.simulation.sharing import proportional_shares
from arklow_pulumi.simulation.supplying import SimulatedGroup
from arklow_pulumi.simulation.tracing import Trace, changes
from arklow_pulumi.simulation.units import Unit, demand_lane, split


@dataclass(frozen=True, slots=True)
class LaneFigures:
    """Unit-hours over the trace: ``demand`` = Σ min(demand, limit), ``served + held = demand``."""

    demand: float
    served: float
    held: float


@dataclass(frozen=True, slots=True)
class PoolFigures:
    capacity_hours: float
    replica_hours: float
    peak_replicas: int


@dataclass(frozen=True, slots=True)
class Series:
    """Totals per tick (units, and in-service replicas), for charts."""

    times: list[float]
    demand: list[float]
    served: list[float]
    capacity: list[float]
    replicas: list[float]


@dataclass(frozen=True, slots=True)
class RunResult:
    lanes: dict[str, LaneFigures]
    pools: dict[str, PoolFigures]
    served_ratio: float
    utilization: float
    replica_hours: float
    scale_actions: int
    series: Series


class _UnitRun:
    """One unit's state on the clock, its last decision and its figures so far (in ticks)."""

    def __init__(self, unit: Unit, tick: float, launch_delay: float) -> None:
        self.unit = unit
        self.tick = tick
        self.delay = launch_delay
        self.groups = [SimulatedGroup(t) for _pool, t in unit.targets]
        self.ids = [TargetId(pool, t.name) for pool, t in unit.targets]
        self.windows = [
            unit.topology.pools[pool].scale_policy.scale_down_window_s for pool, _t in unit.targets
        ]
        self.pool_of_target = [unit.pool_names.index(pool) for pool, _t in unit.targets]
        self.histories: list[deque[Recommendation]] = [deque() for _ in unit.targets]
        self.demand: dict[str, float] = {}
        self.version = 0
        self.key: Hashable = None
        n, m = len(unit.lane_keys), len(unit.pool_names)
        self.e = [0.0] * n
        self.alloc = [0.0] * n
        self.capacity = [0.0] * m
        self.in_service = [0] * m
        self.recommended = [g.in_service for g in self.groups]
        self.desired = [g.in_service for g in self.groups]
        self.since = 0
        self.sum_e = [0.0] * n
        self.sum_alloc = [0.0] * n
        self.sum_capacity = [0.0] * m
        self.sum_replicas = [0.0] * m
        self.peak = [0] * m
        self.actions = 0
        self.totals = (0.0, 0.0, 0.0, 0.0)  # this tick's Σ e, Σ allocation, Σ capacity, replicas

    def step(self, k: int, now: float) -> tuple[float, float, float, float] | None:
        """Advance one tick; the change in this unit's per-tick totals, or None if unchanged."""
        if not self.groups:
            if self.key == self.version:
                return None
            self._flush(k)
            self.key = self.version
            self._decide(now, [])
            return self._delta()
        observed = [g.observe(now) for g in self.groups]
        key = (
            self.version,
            tuple(observed),
            tuple(tuple(r.replicas for r in h) for h in self.histories),
        )
        delta = None
        if key != self.key:
            self._flush(k)
            self.key = key
            self._decide(now, observed)
            delta = self._delta()
        for j, group in enumerate(self.groups):
            history = self.histories[j]
            history.append(Recommendation(at=now, replicas=self.recommended[j]))
            # keep what the next tick's decide looks at (it reads r.at >= now - window)
            horizon = (k + 1) * self.tick - self.windows[j]
            while history and history[0].at < horizon:
                history.popleft()
            if self.desired[j] != group.current:
                group.resize(self.desired[j], now, self.delay)
        return delta

    def _decide(self, now: float, observed: Sequence[Observed]) -> None:
        unit = self.unit
        demand = self.demand
        self.e = [
            min(demand.get(key, 0.0), limit)
            for key, limit in zip(unit.lane_keys, unit.limits, strict=True)
        ]
        seen = dict(zip(self.ids, observed, strict=True))
        history = dict(zip(self.ids, self.histories, strict=True))
        in_service = [0] * len(unit.pool_names)
        for j, obs in enumerate(observed):
            in_service[self.pool_of_target[j]] += obs.in_service
        self.in_service = in_service
        if unit.rule == FAIR:
            decision = decide(unit.topology, demand, seen, history, now)
            lanes = decision.allocation.lanes
            self.alloc = [lanes[key].allocation for key in unit.lane_keys]
            pools = decision.allocation.pools
            self.capacity = [pools[name].capacity for name in unit.pool_names]
        else:
            decision = self._share(seen, history, now, in_service)
        for j, tid in enumerate(self.ids):
            target = decision.targets[tid]
            if target.desired != self.desired[j]:
                self.actions += 1
            self.desired[j] = target.desired
            self.recommended[j] = target.recommended
        for p, count in enumerate(in_service):
            if count > self.peak[p]:
                self.peak[p] = count

    def _share(
        self,
        seen: Mapping[TargetId, Observed],
        history: Mapping[TargetId, Sequence[Recommendation]],
        now: float,
        in_service: Sequence[int],
    ) -> Decision:
        unit = self.unit
        pools = unit.topology.pools
        capacity = [pools[name].capacity for name in unit.pool_names]
        for j, (_pool, target) in enumerate(unit.targets):
            capacity[self.pool_of_target[j]] += self.groups[j].in_service * target.units_per_replica
        self.capacity = capacity
        self.alloc = proportional_shares(self.e, unit.lane_pools, capacity)
        pool_demand = [0.0] * len(unit.pool_names)
        for e, incidences in zip(self.e, unit.lane_pools, strict=True):
            for p, cost in incidences:
                pool_demand[p] += e * cost
        scaling = unit.scaling
        demand = {
            demand_lane(name): pool_demand[p]
            for p, name in enumerate(unit.pool_names)
            if demand_lane(name) in scaling.lanes_by_key
        }
        return decide(scaling, demand, seen, history, now)

    def _delta(self) -> tuple[float, float, float, float]:
        new = (sum(self.e), sum(self.alloc), sum(self.capacity), float(sum(self.in_service)))
        old, self.totals = self.totals, new
        return (new[0] - old[0], new[1] - old[1], new[2] - old[2], new[3] - old[3])

    def _flush(self, k: int) -> None:
        n = k - self.since
        self.since = k
        if n <= 0:
            return
        for i, (e, a) in enumerate(zip(self.e, self.alloc, strict=True)):
            if e:
                self.sum_e[i] += e * n
                self.sum_alloc[i] += a * n
        for p, (c, r) in enumerate(zip(self.capacity, self.in_service, strict=True)):
            self.sum_capacity[p] += c * n
            self.sum_replicas[p] += r * n


def run(
    scenarios: Mapping[str, tuple[Topology, str]],
    trace: Trace,
    tick: float,
    launch_delay: float,
) -> dict[str, RunResult]:
    """Simulate each named scenario (a topology and its sharing rule) over the trace, at once.

    Units found identical in several scenarios are stepped once and counted in each.
    """
    runs: dict[Hashable, _UnitRun] = {}
    members: dict[str, list[_UnitRun]] = {}
    for name, (topo, rule) in scenarios.items():
        members[name] = []
        for unit in split(topo, rule):
            unit_run = runs.get(unit.signature)
            if unit_run is None:
                unit_run = runs[unit.signature] = _UnitRun(unit, tick, launch_delay)
            members[name].append(unit_run)
    by_lane: dict[str, list[_UnitRun]] = {}
    for unit_run in runs.values():
        for key in unit_run.unit.lane_keys:
            by_lane.setdefault(key, []).append(unit_run)
    scenario_of: dict[int, list[int]] = {}
    names = list(scenarios)
    for s, name in enumerate(names):
        for unit_run in members[name]:
            scenario_of.setdefault(id(unit_run), []).append(s)
    totals = [[0.0, 0.0, 0.0, 0.0] for _ in names]
    series = [Series([], [], [], [], []) for _ in names]
    ticks = trace.tick_count(tick)
    all_runs = list(runs.values())
    for k, batch in enumerate(changes(trace, tick)):
        now = k * tick
        for lane, value in batch:
            for unit_run in by_lane.get(lane, ()):
                if unit_run.demand.get(lane, 0.0) != value:
                    unit_run.demand[lane] = value
                    unit_run.version += 1
        for unit_run in all_runs:
            delta = unit_run.step(k, now)
            if delta is not None:
                for s in scenario_of[id(unit_run)]:
                    acc = totals[s]
                    for x in range(4):
                        acc[x] += delta[x]
        for s in range(len(names)):
            acc, out = totals[s], series[s]
            out.times.append(now)
            out.demand.append(acc[0])
            out.served.append(acc[1])
            out.capacity.append(acc[2])
            out.replicas.append(acc[3])
    for unit_run in all_runs:
        unit_run._flush(ticks)
    hours = tick / 3600.0
    return {name: _result(members[name], hours, series[s]) for s, name in enumerate(names)}


def _result(unit_runs: Sequence[_UnitRun], hours: float, series: Series) -> RunResult:
    lanes: dict[str, LaneFigures] = {}
    pools: dict[str, PoolFigures] = {}
    served_units = capacity_units = demand_total = served_total = 0.0
    replica_hours = 0.0
    actions = 0
    for r in unit_runs:
        unit = r.unit
        for i, (key, cost) in enumerate(zip(unit.lane_keys, unit.cost_sums, strict=True)):
            demand, served = r.sum_e[i] * hours, r.sum_alloc[i] * hours
            lanes[key] = LaneFigures(demand, served, max(demand - served, 0.0))
            demand_total += demand
            served_total += served
            served_units += served * cost
        for p, name in enumerate(unit.pool_names):
            figures = PoolFigures(r.sum_capacity[p] * hours, r.sum_replicas[p] * hours, r.peak[p])
            pools[name] = figures
            capacity_units += figures.capacity_hours
            replica_hours += figures.replica_hours
        actions += r.actions
    return RunResult(
        lanes=lanes,
        pools=pools,
        served_ratio=served_total / demand_total if demand_total > 0 else 1.0,
        utilization=served_units / capacity_units if capacity_units > 0 else 0.0,
        replica_hours=replica_hours,
        scale_actions=actions,
        series=series,
    )
