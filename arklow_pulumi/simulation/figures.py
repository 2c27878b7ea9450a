"""What a replay reports: per lane, per pool and per resource figures, the run's summary, and
its series per tick (for charts).

Lane figures are unit-hours (units × tick hours summed over ticks); pool and resource figures
are in *pool units* (a lane's work × its cost in that resource), also per hour of replay:

- a lane's ``demand`` = Σ min(demand, limit), ``served`` = Σ allocation, ``held`` =
  demand − served (never below 0), ``admitted`` = Σ admission;
- a pool's ``capacity`` (Σ static + in-service units), ``demand``, ``served``, ``held`` and
  ``admitted`` (its lanes' figures × their cost in its resource), ``utilization`` =
  served / capacity (0 without capacity), ``replica_hours`` (Σ in-service replicas), the
  highest in-service count at one tick, the time its targets all ran their max in service
  (every tick for a pool without targets: it cannot grow) and the ticks it was constrained;
- a resource's figures are its pools' summed, except the peak (the highest Σ in-service
  replicas of its pools at one tick), the time at max (ticks when every pool of it was at its
  max) and the constrained ticks (ticks when any pool of it was constrained), read from every
  tick's totals as the replay goes (:mod:`.aggregating`).

The series (for charts) hold at most a bounded number of points per column, each a tick or the
mean of a bucket of consecutive ticks (:mod:`.aggregating`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from arklow_pulumi.core.allocating import pool_sums
from arklow_pulumi.simulation.columns import Sums
from arklow_pulumi.simulation.series import Folded, Series, Tally
from arklow_pulumi.simulation.stepping import UnitRun


@dataclass(frozen=True, slots=True)
class LaneFigures:
    """Unit-hours over the trace: ``demand`` = Σ min(demand, limit), ``served + held = demand``;
    ``admitted`` = Σ admission (what the lane may run; it may pass its demand)."""

    demand: float
    served: float
    held: float
    admitted: float = 0.0


@dataclass(frozen=True, slots=True)
class PoolFigures:
    """A pool's (or a resource's) figures over the trace, see the module doc."""

    capacity_hours: float
    replica_hours: float
    peak_replicas: int
    resource: str = ""
    demand_hours: float = 0.0
    served_hours: float = 0.0
    held_hours: float = 0.0
    admitted_hours: float = 0.0
    time_at_max_s: float = 0.0
    constrained_ticks: int = 0
    # (tick, target) pairs decided for each reason (core.policy.REASONS); a pool's only
    reasons: Mapping[str, int] = field(default_factory=dict)

    @property
    def utilization(self) -> float:
        return self.served_hours / self.capacity_hours if self.capacity_hours > 0 else 0.0


@dataclass(frozen=True, slots=True)
class RunResult:
    lanes: dict[str, LaneFigures]
    pools: dict[str, PoolFigures]
    served_ratio: float
    utilization: float
    replica_hours: float
    scale_actions: int
    series: Series
    resources: dict[str, PoolFigures]
    peak_replicas: int = 0  # the highest Σ in-service replicas over all pools at one tick


def result(
    members: Sequence[tuple[UnitRun, bool]],
    scenario: int,
    hours: float,
    tick: float,
    folded: Folded,
) -> RunResult:
    """A scenario's figures from its unit runs (each with whether it stopped counting for the
    scenario mid-replay: its figures kept then count) and its folded totals per tick. A lane or
    pool counted by two runs (before and after a switch) has their figures added, its peak the
    higher."""
    lanes: dict[str, LaneFigures] = {}
    pools: dict[str, PoolFigures] = {}
    served_units = capacity_units = demand_total = served_total = 0.0
    replica_hours = 0.0
    actions = 0
    for r, cut in members:
        sums = r.kept[scenario] if cut else r.sums
        unit = r.unit
        e, alloc, admit = sums.e, sums.alloc, sums.admit
        for i, (key, cost) in enumerate(zip(unit.lane_keys, unit.cost_sums, strict=True)):
            demand, served = e[i] * hours, alloc[i] * hours
            lane = LaneFigures(demand, served, max(demand - served, 0.0), admit[i] * hours)
            lanes[key] = _lane_sum(lanes[key], lane) if key in lanes else lane
            demand_total += demand
            served_total += served
            served_units += served * cost
        for name, figures in _pools(r, sums, hours, tick).items():
            pools[name] = _pool_sum(pools[name], figures) if name in pools else figures
            capacity_units += figures.capacity_hours
            replica_hours += figures.replica_hours
        actions += sums.actions
    return RunResult(
        lanes=lanes,
        pools=pools,
        served_ratio=served_total / demand_total if demand_total > 0 else 1.0,
        utilization=served_units / capacity_units if capacity_units > 0 else 0.0,
        replica_hours=replica_hours,
        scale_actions=actions,
        series=folded.series,
        resources=_resources(pools, folded.tallies, tick),
        peak_replicas=int(folded.peak),
    )


def pool_units(
    e: Sequence[float],
    alloc: Sequence[float],
    admit: Sequence[float],
    lane_pools: Sequence[Sequence[tuple[int, float]]],
    pools: int,
) -> tuple[list[float], list[float], list[float], list[float]]:
    """Each pool's demand, served, held and admitted units from its lanes' ``e``, allocation
    and admission (a tick's, or sums over ticks): Σ figure × the lane's cost in the pool."""
    held = [x - a if x > a else 0.0 for x, a in zip(e, alloc, strict=True)]
    return (
        pool_sums(e, lane_pools, pools),
        pool_sums(alloc, lane_pools, pools),
        pool_sums(held, lane_pools, pools),
        pool_sums(admit, lane_pools, pools),
    )


def _pools(r: UnitRun, sums: Sums, hours: float, tick: float) -> dict[str, PoolFigures]:
    unit = r.unit
    demand, served, held, admitted = pool_units(
        sums.e, sums.alloc, sums.admit, unit.lane_pools, len(unit.pool_names)
    )
    capacity, replicas, at_max, constrained = (
        sums.capacity,
        sums.replicas,
        sums.at_max,
        sums.constrained,
    )
    return {
        name: PoolFigures(
            capacity_hours=capacity[p] * hours,
            replica_hours=replicas[p] * hours,
            peak_replicas=sums.peak[p],
            resource=r.resources[p],
            demand_hours=demand[p] * hours,
            served_hours=served[p] * hours,
            held_hours=held[p] * hours,
            admitted_hours=admitted[p] * hours,
            time_at_max_s=at_max[p] * tick,
            constrained_ticks=constrained[p],
            reasons={reason: n for (q, reason), n in sums.reasons.items() if q == p},
        )
        for p, name in enumerate(unit.pool_names)
    }


def _lane_sum(a: LaneFigures, b: LaneFigures) -> LaneFigures:
    demand, served = a.demand + b.demand, a.served + b.served
    return LaneFigures(demand, served, max(demand - served, 0.0), a.admitted + b.admitted)


def _pool_sum(a: PoolFigures, b: PoolFigures) -> PoolFigures:
    return PoolFigures(
        capacity_hours=a.capacity_hours + b.capacity_hours,
        replica_hours=a.replica_hours + b.replica_hours,
        peak_replicas=max(a.peak_replicas, b.peak_replicas),
        resource=b.resource,
        demand_hours=a.demand_hours + b.demand_hours,
        served_hours=a.served_hours + b.served_hours,
        held_hours=a.held_hours + b.held_hours,
        admitted_hours=a.admitted_hours + b.admitted_hours,
        time_at_max_s=a.time_at_max_s + b.time_at_max_s,
        constrained_ticks=a.constrained_ticks + b.constrained_ticks,
        reasons={r: a.reasons.get(r, 0) + b.reasons.get(r, 0) for r in {*a.reasons, *b.reasons}},
    )


def _resources(
    pools: dict[str, PoolFigures], tallies: Mapping[str, Tally], tick: float
) -> dict[str, PoolFigures]:
    """Each resource's pools summed; peak, time at max and constrained ticks from its tally."""
    out: dict[str, PoolFigures] = {}
    for name, s in tallies.items():
        mine = [p for p in pools.values() if p.resource == name]
        out[name] = PoolFigures(
            capacity_hours=sum(p.capacity_hours for p in mine),
            replica_hours=sum(p.replica_hours for p in mine),
            peak_replicas=int(s.peak),
            resource=name,
            demand_hours=sum(p.demand_hours for p in mine),
            served_hours=sum(p.served_hours for p in mine),
            held_hours=sum(p.held_hours for p in mine),
            admitted_hours=sum(p.admitted_hours for p in mine),
            time_at_max_s=s.full_ticks * tick,
            constrained_ticks=s.constrained_ticks,
        )
    return out
